/* SPDX-License-Identifier: GPL-2.0-or-later */
/* double-config.h: what the library doubles (tests/nvml-double,
 * tests/rsmi-double) share, so that both read their text file the same
 * way: where the file is, its comment and blank lines, and the two
 * directives every double knows:
 *   fail CALL CODE [INDEX]   the call named CALL returns CODE (for one
 *                            device INDEX only, when given)
 *   log PATH                 append "init PID" to PATH while the file is read
 * Header only (static inline): each double is one shared object built from
 * one source, and nothing of this is ever installed. */
#ifndef RDZV_TESTS_DOUBLE_CONFIG_H
#define RDZV_TESTS_DOUBLE_CONFIG_H

#include <dlfcn.h> /* dladdr: the includer defines _GNU_SOURCE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DOUBLE_FAILS_MAX 8

struct double_fails {
	struct {
		char call[64];
		unsigned code;
		int index; /* -1: every device */
	} fail[DOUBLE_FAILS_MAX];
	unsigned n;
};

/* The code the call named call answers for device index (-1: a call about
 * no device), 0 when no fail directive names it. */
static inline unsigned double_failing(const struct double_fails *t, const char *call, int index)
{
	unsigned i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->fail[i].call, call) == 0
		    && (t->fail[i].index < 0 || t->fail[i].index == index))
			return t->fail[i].code;
	return 0;
}

/* The data file: $env, else file in the directory of the shared object
 * that holds anchor, so that a process whose environment a test does not
 * set finds a per-node file beside a per-node copy. NULL when neither. */
static inline const char *double_data_path(const char *env, const char *file, const void *anchor,
                                           char *buf, size_t len)
{
	const char *val = getenv(env);
	Dl_info info;
	char *slash;

	if (val && *val)
		return val;
	if (!dladdr(anchor, &info) || !info.dli_fname)
		return NULL;
	snprintf(buf, len, "%s", info.dli_fname);
	if (!(slash = strrchr(buf, '/')))
		return NULL;
	snprintf(slash + 1, len - (size_t)(slash + 1 - buf), "%s", file);
	return buf;
}

/* The next line of f that is the double's own (its newline cut off),
 * counting lines in *lineno; comments and blank lines are passed over, and
 * fail and log directives are done here. 0 at the end of the file. */
static inline int double_next(FILE *f, char *line, int len, unsigned *lineno,
                              struct double_fails *fails)
{
	while (fgets(line, len, f)) {
		char logpath[400], call[64];
		unsigned code;
		int k, idx;

		++*lineno;
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if ((k = sscanf(line, "fail %63s %u %d", call, &code, &idx)) >= 2) {
			if (fails->n < DOUBLE_FAILS_MAX) {
				snprintf(fails->fail[fails->n].call, sizeof(fails->fail[0].call), "%s",
				         call);
				fails->fail[fails->n].code = code;
				fails->fail[fails->n].index = k == 3 ? idx : -1;
				fails->n++;
			}
			continue;
		}
		if (sscanf(line, "log %399s", logpath) == 1) {
			FILE *lf = fopen(logpath, "a");

			if (lf) {
				fprintf(lf, "init %ld\n", (long)getpid());
				fclose(lf);
			}
			continue;
		}
		return 1;
	}
	return 0;
}

/* What a double reads: its name (for stderr), the environment variable
 * and file name of double_data_path, an object of the double (whose
 * shared object's directory holds the file), and own, for the double's own
 * lines: own returns 0 when it took the line, 1 when the double has no
 * room for more (the rest is not read), -1 when the line is bad. */
struct double_file {
	const char *name, *env, *file;
	const void *anchor;
	int (*own)(const char *line);
};

/* Reads d's file into fails and, through d->own, the double's own lines.
 * -1 when there is no file or a line is bad, said on stderr. */
static inline int double_load(const struct double_file *d, struct double_fails *fails)
{
	char pathbuf[4096], line[512];
	const char *path = double_data_path(d->env, d->file, d->anchor, pathbuf, sizeof(pathbuf));
	FILE *f = path ? fopen(path, "r") : NULL;
	unsigned lineno = 0;
	int rc = 0;

	if (!f) {
		fprintf(stderr, "%s: no data file (%s)\n", d->name, path ? path : "?");
		return -1;
	}
	while (rc == 0 && double_next(f, line, (int)sizeof(line), &lineno, fails))
		if ((rc = d->own(line)) < 0)
			fprintf(stderr, "%s: %s:%u: bad line\n", d->name, path, lineno);
	fclose(f);
	return rc < 0 ? -1 : 0;
}

/* The library's init call (named call), on a state the double has just
 * zeroed: reads the file afresh (no_file when it cannot be), then answers
 * as a fail directive says; *inited when all went well. */
static inline unsigned double_init(const struct double_file *d, struct double_fails *fails,
                                   int *inited, const char *call, unsigned no_file)
{
	unsigned rc;

	if (double_load(d, fails) < 0)
		return no_file;
	if ((rc = double_failing(fails, call, -1)) == 0)
		*inited = 1;
	return rc;
}

#endif

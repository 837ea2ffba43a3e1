/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-topo-cache: the node model cache (topocache.h). A model read back
 * from the cache gives the same table as the XML itself; a stale, foreign,
 * linked or malformed entry is never used; only root writes. Runs on the
 * real p4d, jwb0004 and p6e-gb200 topologies (copied, so that the test can
 * change the file's identity). */
#define _GNU_SOURCE
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "topo.h"
#include "topocache.h"

static char dir[4096], tmp[] = "/tmp/rdzv-topocache.XXXXXX";

/* The whole table of a model as text. */
static char *table_text(const struct rdzv_topo *t)
{
	static char out[65536];
	char err[256], line[4096], gpus[256];
	struct rdzv_bind_req req = { 0 };
	struct rdzv_bind_table *tab = NULL;
	size_t i, used = 0;

	rdzv_topo_gpu_list(t, gpus, sizeof(gpus));
	req.step_gpus = gpus;
	req.ntasks = (unsigned)(rdzv_topo_gpu_count(t) ? rdzv_topo_gpu_count(t) : 1);
	out[0] = '\0';
	if (rdzv_bind_compute(t, &req, &tab, err, sizeof(err)) < 0)
		return strcpy(out, err);
	for (i = 0; i < rdzv_topo_gpu_count(t) && rdzv_topo_format_gpu(t, i, line, sizeof(line)) == 0; i++)
		used += (size_t)snprintf(out + used, sizeof(out) - used, "%s\n", line);
	for (i = 0; rdzv_topo_format_nic(t, i, line, sizeof(line)) == 0; i++)
		used += (size_t)snprintf(out + used, sizeof(out) - used, "%s\n", line);
	if (rdzv_bind_format_node(tab, line, sizeof(line)) == 0)
		used += (size_t)snprintf(out + used, sizeof(out) - used, "%s\n", line);
	for (i = 0; i < tab->nrows && rdzv_bind_format_row(tab, i, line, sizeof(line)) == 0; i++)
		used += (size_t)snprintf(out + used, sizeof(out) - used, "%s\n", line);
	rdzv_bind_table_destroy(tab);
	return out;
}

static void copy(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int a = open(from, O_RDONLY), b = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	while (a >= 0 && b >= 0 && (n = read(a, buf, sizeof(buf))) > 0)
		if (write(b, buf, (size_t)n) != n)
			break;
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
}

static enum rdzv_cache_outcome load(const char *xml, const char *cdir, char *note, size_t len,
                                    char **text)
{
	struct rdzv_topo *t = NULL;
	enum rdzv_cache_outcome how = RDZV_CACHE_OFF;
	char err[256];

	if (rdzv_topo_load_cached(xml, cdir, &t, &how, note, len, err, sizeof(err)) < 0) {
		diag("%s", err);
		return (enum rdzv_cache_outcome)-1;
	}
	if (text)
		*text = strdup(table_text(t));
	rdzv_topo_destroy(t);
	return how;
}

/* The one entry file in cdir. */
static int entry_path(const char *cdir, char *buf, size_t len)
{
	char cmd[4300];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls %s/topo-*.model 2>/dev/null | head -n 1", cdir);
	if (!(p = popen(cmd, "r")) || !fgets(buf, (int)len, p)) {
		if (p)
			pclose(p);
		return -1;
	}
	pclose(p);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static void check(const char *file)
{
	char xml[4200], src[4200], cdir[4200], entry[4200], note[512], key[2048], err[256];
	char *direct = NULL, *cached = NULL, *text;
	struct rdzv_topo *t = NULL, *back = NULL;
	struct timespec later[2];
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;

	snprintf(src, sizeof(src), "%s/%s", dir, file);
	snprintf(xml, sizeof(xml), "%s/%s", tmp, base);
	snprintf(cdir, sizeof(cdir), "%s/cache-%s", tmp, base);
	copy(src, xml);

	/* Serialized and read back: the same table. */
	if (!ok(rdzv_topo_load(xml, &t, err, sizeof(err)) == 0, "%s loads", file))
		return;
	rdzv_topo_cache_key(xml, key, sizeof(key), err, sizeof(err));
	text = rdzv_topo_serialize(t, key);
	ok(text && rdzv_topo_deserialize(text, key, &back, err, sizeof(err)) == 0,
	   "%s: the model reads back", file);
	direct = strdup(table_text(t));
	if (back)
		is_str(table_text(back), direct, "... and gives the same GPUs, NICs and table as the XML");
	rdzv_topo_destroy(back);
	back = NULL;
	is_int(text ? rdzv_topo_deserialize(text, "hwloc 0 another key", &back, err, sizeof(err)) : -9,
	       1, "a model under another key is stale, not used");
	if (text) {
		char *cut = strdup(text);

		cut[strlen(cut) / 2] = '\0';
		is_int(rdzv_topo_deserialize(cut, key, &back, err, sizeof(err)), -1,
		       "a truncated model is refused");
		free(cut);
	}
	if (text && strstr(text, "\nallowed ")) {
		/* A cpu list no machine has (reversed, past CPUS_MAX, not a list)
		 * is refused before hwloc grows a bitmap for it (issue 48). */
		static const char *const bad[] = { "4-3", "0-4294967295", "0-3\003x", "1,,2", "7-" };
		size_t k;

		for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			char *at = strstr(text, "\nallowed ") + 9, *eol = strchr(at, '\n');
			size_t head = (size_t)(at - text);
			char *edit = malloc(strlen(text) + 64);

			snprintf(edit, strlen(text) + 64, "%.*s%s%s", (int)head, text, bad[k],
			         eol ? eol : "");
			back = NULL;
			ok(rdzv_topo_deserialize(edit, key, &back, err, sizeof(err)) == -1,
			   "allowed %s: refused", bad[k]);
			rdzv_topo_destroy(back);
			free(edit);
		}
	}
	free(text);
	rdzv_topo_destroy(t);

	/* Through the cache directory. */
	if (geteuid() != 0) {
		is_int(load(xml, cdir, note, sizeof(note), NULL), RDZV_CACHE_MISS,
		       "not root: the XML is parsed, nothing written");
		free(direct);
		return;
	}
	is_int(load(xml, cdir, note, sizeof(note), NULL), RDZV_CACHE_WRITTEN,
	       "first step: parsed and written");
	is_int(load(xml, cdir, note, sizeof(note), &cached), RDZV_CACHE_HIT, "next step: a hit");
	is_str(cached, direct, "the hit gives the XML's table");
	free(cached);
	/* The admin edits the file: its identity changes, the entry is stale. */
	clock_gettime(CLOCK_REALTIME, &later[0]);
	later[0].tv_sec += 5;
	later[1] = later[0];
	utimensat(AT_FDCWD, xml, later, 0);
	is_int(load(xml, cdir, note, sizeof(note), NULL), RDZV_CACHE_WRITTEN,
	       "a changed XML makes the entry stale: parsed and rewritten");
	is_int(load(xml, cdir, note, sizeof(note), NULL), RDZV_CACHE_HIT, "... then a hit again");
	/* A user's file in its place (not root's): never used. */
	if (entry_path(cdir, entry, sizeof(entry)) == 0) {
		ok(chown(entry, 65534, 65534) == 0, "the entry given to nobody");
		is_int(load(xml, cdir, note, sizeof(note), NULL), RDZV_CACHE_WRITTEN,
		       "an entry not owned by root is not used (rewritten by root)");
		ok(strstr(note, "not a root-only regular file") != NULL, "... and the note says why (%s)", note);
		chmod(entry, 0666);
		is_int(load(xml, cdir, note, sizeof(note), NULL), RDZV_CACHE_WRITTEN,
		       "a world-writable entry is not used");
		unlink(entry);
		ok(symlink(src, entry) == 0, "the entry replaced by a symbolic link");
		ok(load(xml, cdir, note, sizeof(note), NULL) == RDZV_CACHE_WRITTEN && strstr(note, entry),
		   "a link is never followed (%s)", note);
	}
	chmod(cdir, 0777);
	is_int(load(xml, cdir, note, sizeof(note), NULL), RDZV_CACHE_MISS,
	       "a directory others can write is not used at all");
	ok(strstr(note, "not a root-only directory") != NULL, "... and the note says why (%s)", note);
	free(direct);
}

int main(void)
{
	const char *env = getenv("RDZV_TOPOLOGIES"), *top = getenv("top_srcdir");
	struct stat st;
	char cmd[200];

	if (env)
		snprintf(dir, sizeof(dir), "%s", env);
	else
		snprintf(dir, sizeof(dir), "%s/tests/topo/fixtures", top ? top : "..");
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		{ printf("Bail out! no topology fixtures at %s: they belong to the repository (tests/topo/fixtures)\n", dir); return 1; }
	if (!mkdtemp(tmp))
		skip_all("cannot make a temporary directory");
	{
		enum rdzv_cache_outcome how;
		struct rdzv_topo *t = NULL;
		char note[64], err[256];

		ok(rdzv_topo_load_cached("/nonexistent.xml", tmp, &t, &how, note, sizeof(note), err,
		                         sizeof(err)) < 0 && !t && strstr(err, "/nonexistent.xml"),
		   "a missing XML is refused, named, cache or not (%s)", err);
	}
	check("aws-ofi-nccl__tests__unit__fixtures__topology__p4d__topology.xml");
	check("psmgmt__tests__hwloc__topo.jwb0004.xml");
	/* c2c nearness and the ports' fabric (EFA) travel through the cache. */
	check("gb200/aws-ofi-nccl__tests__unit__fixtures__topology__p6e-gb200__topology.xml");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd) != 0)
		diag("could not remove %s", tmp);
	return done_testing();
}

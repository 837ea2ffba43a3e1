/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-stability: doc/stability.md cannot drift from the code. A node's
 * record is built by lib/admin/record.c with every optional part present
 * (a task with each outcome of a variable, an exit and a signal, a
 * profile), and a metrics file by lib/admin/metrics.c with every family;
 * every field path of the record (a.b for members, a[].b inside arrays)
 * and every metric's name, labels and type must be a row of the document's
 * tables, and every row must still exist. The formats the document names
 * (the record's rdzv_record, srun's hand-over format) are the code's, and
 * the release it names is configure.ac's, as are the man pages', the
 * Debian changelog's and NEWS.md's. */
#include "config.h"
#include "envset.h"
#include "handover.h"
#include "json.h"
#include "metrics.h"
#include "record.h"
#include "tap.h"
#include "recfix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAMES_MAX 128
#define NAME_LEN 96

struct names {
	size_t n;
	char v[NAMES_MAX][NAME_LEN];
	char extra[NAMES_MAX][NAME_LEN]; /* metrics: "labels type" */
};

static int names_has(const struct names *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->v[i], name) == 0)
			return (int)i;
	return -1;
}

static void names_add(struct names *s, const char *name, const char *extra)
{
	if (names_has(s, name) >= 0 || s->n >= NAMES_MAX)
		return;
	snprintf(s->v[s->n], NAME_LEN, "%s", name);
	snprintf(s->extra[s->n], NAME_LEN, "%s", extra ? extra : "");
	s->n++;
}

static char *slurp(const char *rel)
{
	const char *top = getenv("top_srcdir");
	char path[4096];
	char *buf;
	long n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", top && *top ? top : ".", rel);
	if (!(f = fopen(path, "r")))
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The record's field paths: every member of every object, arrays as []. */
static void walk(const struct rdzv_json *j, const char *prefix, struct names *out)
{
	const struct rdzv_json *k;
	char path[NAME_LEN];

	for (k = j->kid; k; k = k->next) {
		if (j->type == RDZV_JSON_OBJ) {
			snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", k->key);
			names_add(out, path, NULL);
		} else {
			snprintf(path, sizeof(path), "%s[]", prefix);
		}
		if (k->type == RDZV_JSON_OBJ || k->type == RDZV_JSON_ARR)
			walk(k, path, out);
	}
}

/* A node's record with every optional part, as its field paths. */
static int record_fields(struct names *out)
{
	struct rdzv_record_exit ex[2] = { { 0, 0x100, 1000 }, { 1, 9, 1200 } }; /* exit 1, SIGKILL */
	struct rdzv_record_node n;
	struct rdzv_envset *env = recfix_task_env();
	struct rdzv_jw task, w;
	struct rdzv_json *j;
	const char *parts[1];
	int rc = -1;

	rdzv_jw_init(&task, RDZV_RECORD_TASK_MAX);
	rdzv_record_task_json(&task, 0, 0, "0-3", env, NULL);
	recfix_node(&n, ex, 2);
	n.master_addr = "n1";
	n.port_source = "derived";
	n.plugin_version = n.srun_version = PACKAGE_VERSION;
	n.slurm_version = "22.05.8";
	n.profile_default = "h100";
	n.bind_mode = "gpu";
	parts[0] = rdzv_jw_text(&task);
	n.tasks = parts;
	n.ntasks_parts = 1;
	n.start = 1765000000;
	n.end = 1765000060;
	n.gpu_fault = "GPU 1 of node n1 (rank 1): Xid 79, GPU has fallen off the bus";
	n.gpu_fault_kind = "xid_node";
	rdzv_jw_init(&w, RDZV_RECORD_MAX);
	if (parts[0] && rdzv_record_node_json(&n, &w) == 0
	    && (j = rdzv_json_parse(rdzv_jw_text(&w), w.len, NULL, 0))) {
		walk(j, "", out);
		rdzv_json_free(j);
		rc = 0;
	}
	rdzv_jw_free(&w);
	rdzv_jw_free(&task);
	rdzv_envset_destroy(env);
	return rc;
}

/* Every family of a metrics file after a failed step with a profile:
 * name -> "label,label type" (labels "-" for none), from its TYPE line and
 * its first sample. */
static int metric_names(struct names *out)
{
	static struct rdzv_metrics m;
	static struct names types;
	struct rdzv_metrics_step st;
	static char text[16384];
	char *line, *save = NULL;
	size_t i;

	recfix_failed_step(&st, "h100");
	st.bind_fallback = 1;
	st.record_error = 1;
	st.gpu_fault = "xid_node";
	if (rdzv_metrics_step(&m, &st) < 0 || rdzv_metrics_text(&m, text, sizeof(text)) < 0)
		return -1;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[NAME_LEN], labels[NAME_LEN] = "", type[32], extra[NAME_LEN];
		const char *p;
		int k;

		if (sscanf(line, "# TYPE %95s %31s", name, type) == 2)
			names_add(&types, name, type);
		if (line[0] == '#')
			continue;
		i = strcspn(line, "{ ");
		snprintf(name, sizeof(name), "%.*s", (int)i, line);
		for (p = line[i] == '{' ? line + i + 1 : NULL; p && *p && *p != '}';) {
			size_t eq = strcspn(p, "=");
			const char *q;

			snprintf(labels + strlen(labels), sizeof(labels) - strlen(labels), "%s%.*s",
			         *labels ? "," : "", (int)eq, p);
			/* past the quoted value */
			if (!(q = strchr(p + eq + 2, '"')))
				break;
			p = q + 1 + (q[1] == ',');
		}
		k = names_has(&types, name);
		snprintf(extra, sizeof(extra), "%s %s", *labels ? labels : "-",
		         k >= 0 ? types.extra[k] : "untyped");
		names_add(out, name, extra);
	}
	return 0;
}

/* The rows of the document's tables under a heading containing title: the
 * first column in backticks; for metrics, "labels type" from the second
 * and third columns (labels in backticks, comma-separated, or "-"). */
static void doc_rows(const char *doc, const char *title, struct names *out, int metrics)
{
	const char *line = doc;
	int in = 0;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);

		if (line[0] == '#') {
			char head[256];

			snprintf(head, sizeof(head), "%.*s", (int)len, line);
			in = strstr(head, title) != NULL;
		} else if (in && len > 4 && strncmp(line, "| `", 3) == 0) {
			const char *a = line + 3, *b = memchr(a, '`', len - 3);
			char name[NAME_LEN], extra[NAME_LEN] = "";

			if (b && (size_t)(b - a) < sizeof(name)) {
				snprintf(name, sizeof(name), "%.*s", (int)(b - a), a);
				if (metrics) {
					const char *c2 = memchr(b, '|', len - (size_t)(b - line)), *c3, *c4;
					char labels[NAME_LEN] = "", type[32] = "";
					const char *p;

					c3 = c2 ? memchr(c2 + 1, '|', len - (size_t)(c2 + 1 - line)) : NULL;
					c4 = c3 ? memchr(c3 + 1, '|', len - (size_t)(c3 + 1 - line)) : NULL;
					for (p = c2; p && c3 && p < c3; p++) {
						const char *q;

						if (*p != '`' || !(q = memchr(p + 1, '`', (size_t)(c3 - p - 1))))
							continue;
						snprintf(labels + strlen(labels), sizeof(labels) - strlen(labels),
						         "%s%.*s", *labels ? "," : "", (int)(q - p - 1), p + 1);
						p = q;
					}
					if (c3 && c4)
						sscanf(c3 + 1, " %31[a-z]", type);
					snprintf(extra, sizeof(extra), "%s %s", *labels ? labels : "-", type);
				}
				names_add(out, name, extra);
			}
		}
		line = end ? end + 1 : NULL;
	}
}

static void compare(const char *what, const struct names *code, const struct names *doc)
{
	size_t i, missing = 0, gone = 0, differ = 0;

	for (i = 0; i < code->n; i++) {
		int k = names_has(doc, code->v[i]);

		if (k < 0) {
			diag("%s %s is not in doc/stability.md", what, code->v[i]);
			missing++;
		} else if (strcmp(code->extra[i], doc->extra[k]) != 0) {
			diag("%s %s: the code has '%s', doc/stability.md '%s'", what, code->v[i],
			     code->extra[i], doc->extra[k]);
			differ++;
		}
	}
	for (i = 0; i < doc->n; i++)
		if (names_has(code, doc->v[i]) < 0) {
			diag("%s %s is in doc/stability.md but the code no longer makes it", what,
			     doc->v[i]);
			gone++;
		}
	ok(code->n > 0 && !missing, "every %s the code makes is documented (%zu, %zu not)", what,
	   code->n, missing);
	ok(doc->n > 0 && !gone, "every documented %s still exists (%zu rows, %zu gone)", what,
	   doc->n, gone);
	if (code->extra[0][0] || (doc->n && doc->extra[0][0]))
		ok(!differ, "every %s's labels and type are as documented (%zu differ)", what, differ);
}

/* Whether text holds needle. */
static int has(const char *text, const char *needle)
{
	return text && strstr(text, needle) != NULL;
}

static void versions(const char *doc)
{
	static const char *const pages[] = { "doc/rdzv.8", "doc/rdzv-hang.1", "doc/rdzv-hostfile.1",
		                             "doc/rdzv-preflight.1", "doc/rdzv-profile.1",
		                             "doc/rdzv-report.1", "doc/rdzv-retry.1", "doc/rdzv-topo.1",
		                             NULL };
	char want[128];
	char *t;
	int i, bad = 0;

	snprintf(want, sizeof(want), "`\"rdzv_record\": %d`", RDZV_RECORD_FORMAT);
	ok(has(doc, want), "the document names the record's format, %s", want);
	snprintf(want, sizeof(want), "format=%d", RDZV_HANDOVER_FORMAT);
	ok(has(doc, want), "the document names srun's hand-over format, %s", want);
	snprintf(want, sizeof(want), "\"spank-rdzv " PACKAGE_VERSION "\"");
	for (i = 0; pages[i]; i++) {
		t = slurp(pages[i]);
		if (!has(t, want)) {
			diag("%s does not name %s in its .TH line", pages[i], want);
			bad++;
		}
		free(t);
	}
	ok(!bad, "every man page names release " PACKAGE_VERSION " (%d do not)", bad);
	t = slurp("debian/changelog");
	ok(t && strncmp(t, "spank-rdzv (" PACKAGE_VERSION "-", strlen("spank-rdzv (" PACKAGE_VERSION "-"))
	   == 0, "debian/changelog's first entry is release " PACKAGE_VERSION);
	free(t);
	t = slurp("NEWS.md");
	ok(has(t, "\n## " PACKAGE_VERSION), "NEWS.md has a section for release " PACKAGE_VERSION);
	free(t);
}

int main(void)
{
	static struct names code_rec, doc_rec, code_met, doc_met;
	char *doc = slurp("doc/stability.md");

	if (!ok(doc != NULL, "doc/stability.md is read ($top_srcdir/doc/stability.md)"))
		return done_testing();
	ok(record_fields(&code_rec) == 0, "a node's record is built with every optional part");
	doc_rows(doc, "Record fields", &doc_rec, 0);
	compare("record field", &code_rec, &doc_rec);
	ok(metric_names(&code_met) == 0, "a metrics file is built with every family");
	doc_rows(doc, "Metric names", &doc_met, 1);
	compare("metric", &code_met, &doc_met);
	versions(doc);
	free(doc);
	return done_testing();
}

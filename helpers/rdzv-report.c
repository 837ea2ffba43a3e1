/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rdzv-report: a step's record in words, after the job is gone.
 *
 *   rdzv-report [--dir DIR] [--json | --vars] JOB[.STEP]
 *
 * Reads the nodes' records of the step (or of every step of the job) from
 * the site's record_dir= (DIR, else $RDZV_RECORD_DIR, else
 * RDZV_RECORD_DIR_DEFAULT): JOB.STEP.NODE.json, one per node (record.h).
 * Prints, per step: mode, world, rank 0's host and port, versions, the NCCL
 * profile, the outcome (every rank's exit; the first failure first, by the
 * nodes' clocks), then each task's CPUs and variables with where each came
 * from. --vars: one "RANK NAME=VALUE" line per variable (the value as the
 * task got it; "(unset)" when removed), for scripts. --json: the records as
 * one JSON array. Exit: 0, 1 no record of it, 2 bad usage. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "record.h"
#include "util.h"
#include "util.h"

struct rec {
	uint32_t step, node_rank;
	char *text;
	struct rdzv_json *j;
};

static int by_step_node(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	return x->node_rank < y->node_rank ? -1 : x->node_rank > y->node_rank;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: rdzv-report [--dir DIR] [--json | --vars] JOB[.STEP]\n"
	        "       rdzv-report --help | --version\n"
	        "  a step's record (spank-rdzv's record_dir=), in words; default DIR: "
	        "$RDZV_RECORD_DIR, else %s\n", RDZV_RECORD_DIR_DEFAULT);
}

/* "JOB" or "JOB.STEP". */
static int parse_id(const char *s, uint32_t *job, uint32_t *step, int *has_step)
{
	const char *p = s;

	if (rdzv_read_u32(&p, UINT32_MAX, job) < 0)
		return -1;
	*has_step = 0;
	if (*p == '.') {
		p++;
		if (rdzv_read_u32(&p, UINT32_MAX, step) < 0)
			return -1;
		*has_step = 1;
	}
	return *p ? -1 : 0;
}

static const char *str_or(const struct rdzv_json *o, const char *k, const char *dflt)
{
	const char *v = rdzv_json_str(o, k);

	return v ? v : dflt;
}

static uint32_t u32_or(const struct rdzv_json *o, const char *k, uint32_t dflt)
{
	uint32_t v;

	return rdzv_json_u32(o, k, &v) == 0 ? v : dflt;
}

static void exit_words(const struct rdzv_json *x, char *buf, size_t len)
{
	const struct rdzv_json *code = rdzv_json_get(x, "exit_code"), *sig = rdzv_json_get(x, "signal");

	if (code && code->type == RDZV_JSON_NUM)
		snprintf(buf, len, "exit code %d", (int)code->num);
	else if (sig && sig->type == RDZV_JSON_NUM)
		snprintf(buf, len, "signal %d", (int)sig->num);
	else
		snprintf(buf, len, "status %s", "?");
}

static int failed(const struct rdzv_json *x)
{
	const struct rdzv_json *code = rdzv_json_get(x, "exit_code");

	return !(code && code->type == RDZV_JSON_NUM && code->num == 0);
}

static void then_failures(const struct rec *r, size_t n, const struct rdzv_json *first,
                          double first_t);

/* The step's outcome: every exit of every node, the earliest failure first. */
static void outcome(const struct rec *r, size_t n)
{
	const struct rdzv_json *first = NULL;
	const char *first_node = NULL;
	double first_t = 0;
	uint32_t world = u32_or(r[0].j, "world_size", 0), ok_n = 0, bad_n = 0;
	size_t i;
	char w[64];

	for (i = 0; i < n; i++) {
		const struct rdzv_json *x, *ex = rdzv_json_get(r[i].j, "exits");

		for (x = ex && ex->type == RDZV_JSON_ARR ? ex->kid : NULL; x; x = x->next) {
			const struct rdzv_json *t = rdzv_json_get(x, "time_ms");

			if (!failed(x)) {
				ok_n++;
				continue;
			}
			bad_n++;
			if (t && t->type == RDZV_JSON_NUM && (!first || t->num < first_t)) {
				first = x;
				first_t = t->num;
				first_node = str_or(r[i].j, "node", "?");
			}
		}
	}
	if (!bad_n) {
		printf("  outcome: every rank recorded exited 0 (%u of %u)\n", ok_n, world);
		return;
	}
	exit_words(first, w, sizeof(w));
	printf("  outcome: rank %u on %s failed first: %s; %u rank(s) failed, %u exited 0, "
	       "of %u\n", u32_or(first, "rank", 0), first_node, w, bad_n, ok_n, world);
	then_failures(r, n, first, first_t);
}

struct later {
	const struct rdzv_json *x;
	const char *node;
	double t;
};

static int by_time(const void *a, const void *b)
{
	const struct later *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

/* The other failures, in the order the nodes saw them. */
static void then_failures(const struct rec *r, size_t n, const struct rdzv_json *first,
                          double first_t)
{
	struct later *l = NULL;
	size_t i, k = 0, cap = 0;
	char w[64];

	for (i = 0; i < n; i++) {
		const struct rdzv_json *x, *ex = rdzv_json_get(r[i].j, "exits");

		for (x = ex && ex->type == RDZV_JSON_ARR ? ex->kid : NULL; x; x = x->next) {
			const struct rdzv_json *t = rdzv_json_get(x, "time_ms");

			if (!failed(x) || x == first)
				continue;
			if (k == cap) {
				struct later *nl = realloc(l, (cap = cap ? cap * 2 : 16) * sizeof(*l));

				if (!nl)
					goto out;
				l = nl;
			}
			l[k].x = x;
			l[k].node = str_or(r[i].j, "node", "?");
			l[k++].t = t && t->type == RDZV_JSON_NUM ? t->num : first_t;
		}
	}
	qsort(l, k, sizeof(*l), by_time);
	for (i = 0; i < k; i++) {
		exit_words(l[i].x, w, sizeof(w));
		printf("    then rank %u on %s: %s (%+.3f s)\n", u32_or(l[i].x, "rank", 0), l[i].node, w,
		       (l[i].t - first_t) / 1000.0);
	}
out:
	free(l);
}

static void tasks_words(const struct rdzv_json *node, int vars_only)
{
	const struct rdzv_json *t, *ts = rdzv_json_get(node, "tasks");
	uint32_t lost = u32_or(node, "tasks_left_out", 0);

	for (t = ts && ts->type == RDZV_JSON_ARR ? ts->kid : NULL; t; t = t->next) {
		const struct rdzv_json *v, *vs = rdzv_json_get(t, "variables");
		uint32_t rank = u32_or(t, "rank", 0);

		if (!vars_only)
			printf("  %s rank %u (local %u), cpus %s:\n", str_or(node, "node", "?"), rank,
			       u32_or(t, "local_rank", 0), str_or(t, "cpus", "unknown"));
		for (v = vs && vs->type == RDZV_JSON_ARR ? vs->kid : NULL; v; v = v->next) {
			const char *name = str_or(v, "name", "?"), *val = rdzv_json_str(v, "value");
			const char *out = str_or(v, "outcome", "?");
			int gone = !val || strncmp(out, "unset", 5) == 0;

			if (vars_only) {
				printf("%u %s=%s\n", rank, name, gone ? "(unset)" : val);
				continue;
			}
			printf("    %s=%s  [%s, %s: %s", name, gone ? "(unset)" : val,
			       str_or(v, "source", "?"), str_or(v, "policy", "?"), out);
			if (rdzv_json_str(v, "user_value"))
				printf("; the user's value was %s", rdzv_json_str(v, "user_value"));
			if (rdzv_json_str(v, "plugin_value"))
				printf("; the plugin's would have been %s", rdzv_json_str(v, "plugin_value"));
			printf("]\n");
		}
	}
	if (lost && !vars_only)
		printf("  %s: %u task(s) without a part (ended before their variables were set, "
		       "or the record's size limit)\n", str_or(node, "node", "?"), lost);
}

static void step_words(uint32_t job, const struct rec *r, size_t n)
{
	const struct rdzv_json *f = r[0].j, *p = rdzv_json_get(f, "profile");
	size_t i;

	printf("step %u.%u: mode %s, world size %u on %u node(s), rank 0 on %s (MASTER_ADDR %s, "
	       "port %u: %s)\n", job, r[0].step, str_or(f, "mode", "none"),
	       u32_or(f, "world_size", 0), u32_or(f, "nnodes", 0), str_or(f, "rank0_host", "?"),
	       str_or(f, "master_addr", "?"), u32_or(f, "port", 0), str_or(f, "port_source", "?"));
	printf("  spank-rdzv %s on the nodes, %s in srun; Slurm %s; binding %s; NCCL profile %s",
	       str_or(f, "plugin_version", "?"), str_or(f, "srun_plugin_version", "(none)"),
	       str_or(f, "slurm_version", "?"), str_or(f, "bind", "?"), str_or(p, "name", "none"));
	if (rdzv_json_str(p, "default"))
		printf(" (default %s)", rdzv_json_str(p, "default"));
	if (rdzv_json_str(p, "hash"))
		printf(", resolved hash %s", rdzv_json_str(p, "hash"));
	printf("\n  ran %s to %s; records from %zu of %u node(s):", str_or(f, "start", "?"),
	       str_or(f, "end", "?"), n, u32_or(f, "nnodes", 0));
	for (i = 0; i < n; i++)
		printf(" %s", str_or(r[i].j, "node", "?"));
	printf("\n");
	for (i = 0; i < n; i++) {
		const struct rdzv_json *refused = rdzv_json_get(r[i].j, "refused_by_srun");

		if (refused && refused->type == RDZV_JSON_BOOL && refused->b) {
			printf("  refused by srun before any task ran (srun said why)\n");
			break;
		}
		if (rdzv_json_str(r[i].j, "error"))
			printf("  %s refused the step: %s\n", str_or(r[i].j, "node", "?"),
			       rdzv_json_str(r[i].j, "error"));
	}
	outcome(r, n);
	for (i = 0; i < n; i++)
		tasks_words(r[i].j, 0);
}


/* Every decoded string and key of a record, in place, with its control
 * bytes as '?': the tasks' parts hold what a user's program exported, and
 * a "\u001b" there must not reach the reader's terminal as an escape. */
static void printable(struct rdzv_json *j)
{
	for (; j; j = j->next) {
		if (j->key)
			rdzv_text_printable(j->key, strlen(j->key) + 1, j->key);
		if (j->type == RDZV_JSON_STR && j->str)
			rdzv_text_printable(j->str, strlen(j->str) + 1, j->str);
		printable(j->kid);
	}
}
/* The records of job (and step) in dir, parsed, sorted by step and node rank. */
static int load(const char *dir, uint32_t job, uint32_t step, int has_step, struct rec **out,
                size_t *nout)
{
	char prefix[48], path[4096], err[256];
	struct rec *r = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	DIR *d;

	*out = NULL;
	*nout = 0;
	if (!(d = opendir(dir))) {
		fprintf(stderr, "rdzv-report: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (has_step)
		snprintf(prefix, sizeof(prefix), "%u.%u.", job, step);
	else
		snprintf(prefix, sizeof(prefix), "%u.", job);
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		const char *p;
		uint32_t s;
		char *text;

		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || len < 6
		    || strcmp(e->d_name + len - 5, ".json") != 0)
			continue;
		p = e->d_name + strlen(prefix);
		if (!has_step) {
			if (rdzv_read_u32(&p, UINT32_MAX, &s) < 0 || *p != '.')
				continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!(text = rdzv_read_head(path, RDZV_RECORD_MAX + 2))) {
			fprintf(stderr, "rdzv-report: cannot read %s\n", path);
			continue;
		}
		if (n == cap) {
			struct rec *nr = realloc(r, (cap = cap ? cap * 2 : 16) * sizeof(*r));

			if (!nr) {
				free(text);
				break;
			}
			r = nr;
		}
		r[n].text = text;
		if (!(r[n].j = rdzv_json_parse(text, strlen(text), err, sizeof(err)))
		    || r[n].j->type != RDZV_JSON_OBJ
		    || u32_or(r[n].j, "rdzv_record", 0) != RDZV_RECORD_FORMAT) {
			fprintf(stderr, "rdzv-report: %s: not a record of this version (%s)\n", path,
			        r[n].j ? "format" : err);
			rdzv_json_free(r[n].j);
			free(text);
			continue;
		}
		printable(r[n].j);
		r[n].step = u32_or(r[n].j, "step", 0);
		r[n].node_rank = u32_or(r[n].j, "node_rank", 0);
		n++;
	}
	closedir(d);
	if (n)
		qsort(r, n, sizeof(*r), by_step_node);
	*out = r;
	*nout = n;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "dir", required_argument, NULL, 'd' },
		                              { "json", no_argument, NULL, 'j' },
		                              { "vars", no_argument, NULL, 'v' },
		                              { "help", no_argument, NULL, 'h' },
		                              { "version", no_argument, NULL, 'V' },
		                              { NULL, 0, NULL, 0 } };
	const char *dir = getenv("RDZV_RECORD_DIR");
	uint32_t job = 0, step = 0;
	int c, has_step = 0, json = 0, vars = 0;
	struct rec *r;
	size_t n, i, from;

	if (!dir || !*dir)
		dir = RDZV_RECORD_DIR_DEFAULT;
	while ((c = getopt_long(argc, argv, "d:jvh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'v':
			vars = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			rdzv_print_version("rdzv-report");
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1 || (json && vars)
	    || parse_id(argv[optind], &job, &step, &has_step) < 0) {
		if (optind == argc - 1 && !(json && vars))
			fprintf(stderr, "rdzv-report: %s: expected JOB or JOB.STEP (numbers)\n",
			        argv[optind]);
		usage(stderr);
		return 2;
	}
	if (load(dir, job, step, has_step, &r, &n) < 0)
		return 1;
	if (!n) {
		fprintf(stderr, "rdzv-report: no record of %s in %s\n", argv[optind], dir);
		free(r);
		return 1;
	}
	if (json) {
		printf("[");
		for (i = 0; i < n; i++)
			printf("%s%s", i ? ",\n" : "", r[i].text);
		printf("]\n");
	}
	for (from = 0; !json && from < n; from = i) {
		for (i = from; i < n && r[i].step == r[from].step; i++)
			;
		if (vars) {
			size_t k;

			for (k = from; k < i; k++)
				tasks_words(r[k].j, 1);
		} else {
			step_words(job, r + from, i - from);
		}
	}
	for (i = 0; i < n; i++) {
		rdzv_json_free(r[i].j);
		free(r[i].text);
	}
	free(r);
	return 0;
}

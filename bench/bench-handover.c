/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench-handover.c: what srun and each node spend on a step's node order and
 * NVLink domain map, from the files Slurm's answers would give:
 *
 *   bench-handover [--header] [--case NAME] [--reps N] [--wall] [--save DIR]
 *                  NODES TOPO LAYOUT
 *
 * NODES   the step's node list, one line (slurm_step_layout_t node_list);
 * TOPO    Slurm's topology print (scontrol show topology, topology/block):
 *         "BlockName=b1 BlockIndex=0 Nodes=n[1,3] BlockSize=2" lines;
 * LAYOUT  one line per node of the step, in node list order: the node's task
 *         ids separated by blanks (slurm_step_layout_t tids[]); the tasks
 *         per node (SLURM_STEP_TASKS_PER_NODE) are read from it.
 * bench/gen-handover.py writes the three for GB200 and H100 clusters.
 *
 * srun: what spank/srun.c does once per step under nvlink_domain=block:
 * the node order (layout_order), rank 0's host, the domain map and the
 * step's node names (layout_domains), the map's text (set_domains_var),
 * Megatron's groups checked by domain (TP, EP, ETP inside a node), the step
 * plan's text, and both put into the step's environment as srun hands them
 * over (SLURM_RDZV_*, in parts when long: lib/step/handover.h). node: what
 * spank/remote.c does on the step's last node: both taken back out of the
 * environment (parts joined and checked), the plan parsed, the node's place
 * in rank order, its own name, the map parsed and the node's place in its
 * domain.
 * Prints one row: nodes, case, order bytes, map bytes, srun ms, node ms
 * (medians of --reps runs, default 5; the process's CPU time, which other
 * processes on a shared machine do not stretch; --wall: the wall clock's),
 * handed over: yes when srun produced
 * both texts and the node read them back, no (the reason on stderr).
 * --save DIR writes srun's texts there (order, map, plan). */
#include "config.h"
#include "bench.h"
#include "domain.h"
#include "handover.h"
#include "../tests/unit/memenv.h"
#include "hostlist.h"
#include "master.h"
#include "megatron.h"
#include "nodeorder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct layout {
	uint32_t nnodes, ntasks;
	uint16_t *tasks;
	uint32_t **tids;
};

struct ctx {
	char *list, *topo, tpn[64];
	struct layout lay;
	/* srun's output, read by the node */
	char *order, *map, *plan;
	size_t order_len, map_len;
	uint32_t node_rank, domain_size;
};

/* The step's environment between srun and a node (tests/unit/memenv.h):
 * srun puts the plan and the map in it (in parts when long, handover.h), the
 * node takes them out. Values are copied on the way in and out, as srun's
 * setenv and spank_getenv copy; the node's unset is left out so that every
 * repetition finds them. */
static void node_unset(void *ctx, const char *name)
{
	(void)ctx;
	(void)name;
}

static const struct rdzv_ho_env node_env = { memenv_get, memenv_set, node_unset, NULL };
#define srun_env memenv_ops

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (cap - len < 65536) {
			char *nb = realloc(buf, cap += 1 << 20);

			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/* LAYOUT's lines into tasks[]/tids[]; SLURM_STEP_TASKS_PER_NODE-like tpn
 * ("4(x32768)" when every node has as many, else refused: the bench's
 * generator never writes that). */
static int read_layout(char *text, struct layout *l, char *tpn, size_t tpnlen)
{
	char *p = text, *line;
	uint32_t cap = 0;

	memset(l, 0, sizeof(*l));
	while ((line = strsep(&p, "\n")) != NULL) {
		uint32_t ids[1024], k = 0;
		char *tok;

		while ((tok = strsep(&line, " \t")) != NULL)
			if (*tok && k < 1024)
				ids[k++] = (uint32_t)strtoul(tok, NULL, 10);
		if (k == 0)
			continue;
		if (l->nnodes == cap) {
			cap = cap ? cap * 2 : 1024;
			if (!(l->tasks = realloc(l->tasks, cap * sizeof(*l->tasks)))
			    || !(l->tids = realloc(l->tids, cap * sizeof(*l->tids))))
				return -1;
		}
		l->tasks[l->nnodes] = (uint16_t)k;
		if (!(l->tids[l->nnodes] = malloc(k * sizeof(uint32_t))))
			return -1;
		memcpy(l->tids[l->nnodes], ids, k * sizeof(uint32_t));
		if (l->tasks[l->nnodes] != l->tasks[0])
			return -1;
		l->ntasks += k;
		l->nnodes++;
	}
	if (l->nnodes == 0)
		return -1;
	snprintf(tpn, tpnlen, "%u(x%u)", l->tasks[0], l->nnodes);
	return 0;
}

static int name_add(const char *host, void *arg)
{
	char ***at = arg;

	if (!(**at = strdup(host)))
		return 1;
	(*at)++;
	return 0;
}

/* srun's texts: the order and the plan (layout_order, local_plan). */
static int srun_order(struct ctx *c, uint32_t *master, struct rdzv_plan *plan, char *err,
                      size_t errlen)
{
	const struct layout *l = &c->lay;

	if (rdzv_order_from_layout(l->nnodes, l->ntasks, l->tasks, l->tids, master, &c->order,
	                           err, errlen) < 0)
		return -1;
	c->order_len = strlen(c->order);
	if (rdzv_hostlist_nth(c->list, *master, plan->host, sizeof(plan->host), err, errlen) < 0)
		return -1;
	return 0;
}

static int srun_plan(struct ctx *c, struct rdzv_plan *plan, char *err, size_t errlen)
{
	plan->order_known = 1;
	plan->order = c->order;
	if (!(c->plan = rdzv_plan_text(plan))) {
		snprintf(err, errlen, "out of memory for the plan");
		return -1;
	}
	return 0;
}

static int srun_map(struct ctx *c, const struct rdzv_domains *d, char *err, size_t errlen)
{
	if (rdzv_domains_text(1, 2, d, &c->map, err, errlen) < 0)
		return -1;
	c->map_len = strlen(c->map);
	return 0;
}

/* Megatron's groups checked by domain as srun.c's mode check does
 * (rdzv_megatron_check_domains): TP = a node's tasks, EP = half of them of
 * ETP = 2 each; groups that a random node order keeps inside a node, so
 * that every group of the step is checked. */
static int megatron_groups(const struct rdzv_domains *d, const struct layout *l,
                           const uint32_t *rank_node, char **names, char *err, size_t errlen)
{
	struct rdzv_megatron_layout ml;
	struct rdzv_megatron_domains md;

	memset(&ml, 0, sizeof(ml));
	memset(&md, 0, sizeof(md));
	ml.tp.n = l->tasks[0];
	ml.pp.n = ml.cp.n = 1;
	ml.etp.n = l->tasks[0] >= 2 ? 2 : 1;
	ml.ep.n = l->tasks[0] / ml.etp.n;
	md.d = d;
	md.rank_node = rank_node;
	md.node_names = names;
	md.ntasks = l->ntasks;
	md.source = "bench";
	md.tasks_per_node = l->tasks[0];
	return rdzv_megatron_check_domains(&ml, l->ntasks, &md, err, errlen);
}

static void srun_free(struct ctx *c)
{
	free(c->order);
	free(c->map);
	free(c->plan);
	c->order = c->map = c->plan = NULL;
}

static int srun_work(void *p, char *err, size_t errlen)
{
	struct ctx *c = p;
	const struct layout *l = &c->lay;
	struct rdzv_domains d;
	struct rdzv_plan plan;
	uint32_t master = 0, *rank_node = NULL, i, j;
	char **names = NULL, **at;
	int rv = -1;

	srun_free(c);
	memset(&plan, 0, sizeof(plan));
	memset(&d, 0, sizeof(d));
	plan.job_id = 1;
	plan.step_id = 2;
	plan.port = 29500;
	if (srun_order(c, &master, &plan, err, errlen) < 0
	    || rdzv_domains_from_blocks(c->topo, c->list, &d, err, errlen) < 0)
		goto out;
	if (!(names = calloc(l->nnodes, sizeof(char *)))
	    || !(rank_node = calloc(l->ntasks, sizeof(uint32_t))))
		goto out;
	at = names;
	if (rdzv_hostlist_each(c->list, name_add, &at, err, errlen) != 0)
		goto out;
	for (i = 0; i < l->nnodes; i++)
		for (j = 0; j < l->tasks[i]; j++)
			rank_node[l->tids[i][j]] = i;
	if (srun_map(c, &d, err, errlen) < 0
	    || megatron_groups(&d, l, rank_node, names, err, errlen) < 0
	    || srun_plan(c, &plan, err, errlen) < 0
	    || rdzv_handover_put(&srun_env, RDZV_HO_PLAN, c->plan, err, errlen) < 0
	    || rdzv_handover_put(&srun_env, RDZV_HO_DOMAINS, c->map, err, errlen) < 0)
		goto out;
	rv = 0;
out:
	if (names)
		for (i = 0; i < l->nnodes; i++)
			free(names[i]);
	free(names);
	free(rank_node);
	rdzv_domains_free(&d);
	return rv;
}

static int node_work(void *p, char *err, size_t errlen)
{
	struct ctx *c = p;
	struct rdzv_plan plan;
	struct rdzv_domains d;
	uint32_t node = c->lay.nnodes - 1, job, step, base, nodes;
	char host[RDZV_HOST_MAX], *ptext = NULL, *mtext = NULL;
	int rv = -1;

	/* What srun handed over, out of the step's environment. */
	if (rdzv_handover_take(&node_env, RDZV_HO_PLAN, &ptext, err, errlen) != 1
	    || rdzv_handover_take(&node_env, RDZV_HO_DOMAINS, &mtext, err, errlen) != 1
	    || strcmp(ptext, c->plan) != 0 || strcmp(mtext, c->map) != 0) {
		snprintf(err, errlen, "the hand-over did not give the node srun's texts back");
		free(ptext);
		free(mtext);
		return -1;
	}
	free(ptext);
	free(mtext);
	if (rdzv_plan_parse(c->plan, &plan, err, errlen) < 0
	    || rdzv_order_position(plan.order, c->lay.nnodes, node, &c->node_rank, err,
	                           errlen) < 0
	    || rdzv_hostlist_nth(c->list, node, host, sizeof(host), err, errlen) < 0
	    || rdzv_domains_parse(c->map, c->lay.nnodes, &job, &step, &d, err, errlen) < 0)
		return -1;
	rv = rdzv_domain_place(&d, node, plan.order, c->tpn, &c->domain_size, &base, &nodes,
	                       err, errlen);
	rdzv_domains_free(&d);
	return rv;
}

static int save_one(const char *dir, const char *name, const char *text)
{
	char path[4096];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!text || !(f = fopen(path, "w")))
		return -1;
	rc = fprintf(f, "%s\n", text) < 0;
	return fclose(f) != 0 || rc ? -1 : 0;
}

static int save_texts(const char *dir, const struct ctx *c)
{
	return save_one(dir, "order", c->order) < 0 || save_one(dir, "map", c->map) < 0
	       || save_one(dir, "plan", c->plan) < 0 ? -1 : 0;
}

static int use_wall;

/* Now, in ms: the process's CPU time, or with --wall the monotonic clock. */
static double now_ms(void)
{
	struct timespec ts;

	if (use_wall)
		return bench_now_us() / 1000;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double median_ms(int (*work)(void *, char *, size_t), struct ctx *c, unsigned reps,
                        char *err, size_t errlen)
{
	double v[64];
	struct bench_stat s;
	unsigned r;

	for (r = 0; r < reps; r++) {
		double t0 = now_ms();

		if (work(c, err, errlen) != 0)
			return -1;
		v[r] = now_ms() - t0;
	}
	bench_stat_of(v, reps, &s);
	return s.median;
}

int main(int argc, char **argv)
{
	struct ctx c;
	const char *kase = "-", *save = NULL;
	unsigned reps = 5;
	double srun_ms = -1, node_ms = -1;
	char err[1024] = "", *layout;
	int i = 1;

	memset(&c, 0, sizeof(c));
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--header") == 0) {
			printf("%8s  %-16s %12s %12s %12s %10s  %s\n", "nodes", "case", "order bytes",
			       "map bytes", "srun ms", "node ms", "handed over");
			if (argc == 2)
				return 0;
		} else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
			kase = argv[++i];
		} else if (strcmp(argv[i], "--save") == 0 && i + 1 < argc) {
			save = argv[++i];
		} else if (strcmp(argv[i], "--wall") == 0) {
			use_wall = 1;
		} else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
			reps = (unsigned)strtoul(argv[++i], NULL, 10);
			if (reps < 1 || reps > 64)
				reps = 5;
		}
	}
	if (argc - i != 3) {
		fprintf(stderr, "usage: bench-handover [--header] [--case NAME] [--reps N] [--wall] "
		        "[--save DIR] NODES TOPO LAYOUT\n");
		return 2;
	}
	if (!(c.list = slurp(argv[i])) || !(c.topo = slurp(argv[i + 1]))
	    || !(layout = slurp(argv[i + 2])) || read_layout(layout, &c.lay, c.tpn,
	                                                     sizeof(c.tpn)) < 0) {
		fprintf(stderr, "bench-handover: cannot read %s, %s or %s (one line of task ids "
		        "per node, as many on every node)\n", argv[i], argv[i + 1], argv[i + 2]);
		return 2;
	}
	c.list[strcspn(c.list, "\n")] = '\0';
	srun_ms = median_ms(srun_work, &c, reps, err, sizeof(err));
	if (srun_ms >= 0)
		node_ms = median_ms(node_work, &c, reps, err, sizeof(err));
	if (srun_ms < 0)
		printf("%8u  %-16s %12s %12s %12s %10s  no\n", c.lay.nnodes, kase, "-", "-", "-",
		       "-");
	else if (node_ms < 0)
		printf("%8u  %-16s %12zu %12zu %12.2f %10s  no\n", c.lay.nnodes, kase, c.order_len,
		       c.map_len, srun_ms, "-");
	else
		printf("%8u  %-16s %12zu %12zu %12.2f %10.2f  yes\n", c.lay.nnodes, kase,
		       c.order_len, c.map_len, srun_ms, node_ms);
	if (err[0])
		fprintf(stderr, "bench-handover: %u nodes, %s: %s\n", c.lay.nnodes, kase, err);
	if (save && save_texts(save, &c) < 0)
		fprintf(stderr, "bench-handover: cannot write into %s\n", save);
	srun_free(&c);
	return 0;
}

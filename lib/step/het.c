/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
/* het.c: a heterogeneous step's global numbering from its environment
 * (het.h). */
#include "config.h"
#include "het.h"
#include "hostlist.h"
#include "layout.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HET_COMP_MAX 128 /* Slurm's MAX_HET_JOB_COMPONENTS */
#define HET_NODES_MAX 131072u /* twice the largest step Slurm runs */

struct hosts {
	char **name;
	int32_t *comp;   /* component index (of the allocation) or -1 */
	uint32_t *tasks;
	uint32_t n, max;
};

static int host_add(const char *host, void *ctx)
{
	struct hosts *h = ctx;

	if (h->n >= h->max || !(h->name[h->n] = strdup(host)))
		return 1;
	h->n++;
	return 0;
}

static void hosts_free(struct hosts *h)
{
	uint32_t i;

	for (i = 0; h->name && i < h->n; i++)
		free(h->name[i]);
	free(h->name);
	free(h->comp);
	free(h->tasks);
}

/* BASE_HET_GROUP_K, or its older name BASE_PACK_GROUP_K (what an srun A : B
 * job gets on 22.05). */
static const char *group_var(const char *(*get)(void *, const char *), void *ctx,
                             const char *base, uint32_t k)
{
	char name[80];
	const char *v;

	snprintf(name, sizeof(name), "%s_HET_GROUP_%u", base, k);
	if ((v = get(ctx, name)))
		return v;
	snprintf(name, sizeof(name), "%s_PACK_GROUP_%u", base, k);
	return get(ctx, name);
}

static int env_u32(const char *(*get)(void *, const char *), void *ctx, const char *name,
                   uint32_t min, uint32_t max, uint32_t *out)
{
	const char *v = get(ctx, name);
	uint64_t x;

	if (!v || rdzv_parse_u64(v, min, max, &x) < 0)
		return -1;
	*out = (uint32_t)x;
	return 0;
}

/* The step's nodes, in the list's order, with their tasks and component. */
static int read_hosts(const char *(*get)(void *, const char *), void *ctx, uint32_t ncomp,
                      struct hosts *h, char *err, size_t errlen)
{
	const char *list = get(ctx, "SLURM_STEP_NODELIST"), *tpn = get(ctx, "SLURM_STEP_TASKS_PER_NODE");
	uint32_t i, k;
	long n;

	if (!list || !tpn)
		return rdzv_err(err, errlen, "heterogeneous step without SLURM_STEP_NODELIST or "
		                "SLURM_STEP_TASKS_PER_NODE");
	if ((n = rdzv_hostlist_count(list, err, errlen)) <= 0)
		return -1;
	if ((unsigned long)n > HET_NODES_MAX)
		return rdzv_err(err, errlen, "heterogeneous step of %ld nodes: more than the %u "
		                "this plugin numbers", n, HET_NODES_MAX);
	h->max = (uint32_t)n;
	if (!(h->name = calloc(h->max, sizeof(*h->name))) || !(h->comp = calloc(h->max, sizeof(*h->comp)))
	    || !(h->tasks = calloc(h->max, sizeof(*h->tasks))))
		return rdzv_err(err, errlen, "out of memory");
	if (rdzv_hostlist_each(list, host_add, h, err, errlen) != 0 || h->n != h->max)
		return rdzv_err(err, errlen, "cannot walk SLURM_STEP_NODELIST");
	for (i = 0; i < h->n; i++)
		h->comp[i] = -1;
	if (rdzv_tpn_expand(tpn, h->tasks, h->n, err, errlen) < 0)
		return -1;
	for (k = 0; k < ncomp; k++) {
		const char *jl;

		if (!(jl = group_var(get, ctx, "SLURM_JOB_NODELIST", k)))
			return rdzv_err(err, errlen, "heterogeneous step without "
			                "SLURM_JOB_NODELIST_HET_GROUP_%u", k);
		for (i = 0; i < h->n; i++)
			if (h->comp[i] < 0 && rdzv_hostlist_has(jl, h->name[i], NULL, 0) == 1)
				h->comp[i] = (int32_t)k;
	}
	for (i = 0; i < h->n; i++)
		if (h->comp[i] < 0)
			return rdzv_err(err, errlen, "node %s of the heterogeneous step is in none of "
			                "its components' node lists", h->name[i]);
	return 0;
}

/* The component (of the allocation) whose job id is job. */
static int find_comp(const char *(*get)(void *, const char *), void *ctx, uint32_t ncomp,
                     uint32_t job)
{
	uint64_t id;
	uint32_t k;

	for (k = 0; k < ncomp; k++) {
		const char *v = group_var(get, ctx, "SLURM_JOB_ID", k);

		if (!v)
			v = group_var(get, ctx, "SLURM_JOBID", k);
		if (v && rdzv_parse_u64(v, 1, UINT32_MAX, &id) == 0 && id == job)
			return (int)k;
	}
	return -1;
}

int rdzv_het_read(const char *(*get)(void *ctx, const char *name), void *ctx,
                  uint32_t comp_job, uint32_t comp_node, uint32_t comp_nnodes,
                  uint32_t comp_ntasks, struct rdzv_het *het, char *err, size_t errlen)
{
	struct hosts h;
	unsigned char present[HET_COMP_MAX] = { 0 };
	uint32_t c, ncomp, step_tasks, i, mine_nodes = 0, mine_tasks = 0, total = 0;
	int32_t seen = -1;
	int k, rv = -1;

	memset(het, 0, sizeof(*het));
	memset(&h, 0, sizeof(h));
	if (env_u32(get, ctx, "SLURM_HET_SIZE", 2, HET_COMP_MAX, &ncomp) < 0
	    || env_u32(get, ctx, "SLURM_STEP_NUM_TASKS", 1, UINT32_MAX, &step_tasks) < 0
	    || step_tasks == comp_ntasks)
		return 0; /* not het, or a step inside one component */
	if (env_u32(get, ctx, "SLURM_JOB_ID", 1, UINT32_MAX, &het->leader_job) < 0)
		return rdzv_err(err, errlen, "heterogeneous step without SLURM_JOB_ID");
	if ((k = find_comp(get, ctx, ncomp, comp_job)) < 0)
		return rdzv_err(err, errlen, "heterogeneous step: this node's job %u is none of "
		                "SLURM_JOB_ID_HET_GROUP_0..%u", comp_job, ncomp - 1);
	if (read_hosts(get, ctx, ncomp, &h, err, errlen) < 0)
		goto out;
	/* Components in order; in each, its nodes in the list's order. */
	for (i = 0; i < h.n; i++) {
		total += h.tasks[i];
		if (h.comp[i] < k) {
			het->node_offset++;
			het->task_offset += h.tasks[i];
		} else if (h.comp[i] == k) {
			if (mine_nodes == comp_node)
				snprintf(het->node, sizeof(het->node), "%s", h.name[i]);
			mine_nodes++;
			mine_tasks += h.tasks[i];
		}
		if (seen < 0 || h.comp[i] < seen) {
			seen = h.comp[i];
			snprintf(het->master, sizeof(het->master), "%s", h.name[i]);
		}
	}
	for (i = 0; i < h.n; i++)
		present[h.comp[i]] = 1;
	for (c = 0; c < ncomp; c++) {
		het->comp += c < (uint32_t)k && present[c];
		het->ncomp += present[c];
	}
	if (mine_nodes != comp_nnodes || mine_tasks != comp_ntasks || !het->node[0]) {
		rdzv_err(err, errlen, "heterogeneous step: Slurm gives this component %u nodes and "
		         "%u tasks, its nodes in SLURM_STEP_NODELIST hold %u and %u (components "
		         "that share nodes cannot be numbered)", comp_nnodes, comp_ntasks,
		         mine_nodes, mine_tasks);
		goto out;
	}
	if (total != step_tasks) {
		rdzv_err(err, errlen, "heterogeneous step: SLURM_STEP_TASKS_PER_NODE holds %u tasks, "
		         "SLURM_STEP_NUM_TASKS says %u", total, step_tasks);
		goto out;
	}
	het->nnodes = h.n;
	het->ntasks = total;
	rv = 1;
out:
	hosts_free(&h);
	return rv;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/modes/: what each mode sets (torch, Megatron, launchers, frameworks,
 * containers), srun's verdict on Megatron's groups over the domains, and the
 * plugstack arguments that choose them. Uses lib/domains/, lib/step/,
 * lib/common/. */
/* megatron.c: see megatron.h. */
#include "config.h"
#include "megatron.h"
#include "argscan.h"
#include "domain.h"
#include "layout.h"
#include "util.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const struct {
	const char *opt;
	const char *env;
	const char *what;
} dims[5] = {
	{ "--tensor-model-parallel-size", "TP_SIZE", "TP" },
	{ "--pipeline-model-parallel-size", "PP_SIZE", "PP" },
	{ "--context-parallel-size", "CP_SIZE", "CP" },
	{ "--expert-model-parallel-size", "EP_SIZE", "EP" },
	{ "--expert-tensor-parallel-size", NULL, "ETP" },
};

static int read_size(int argc, char *const *argv, char *const *envp, int d,
                     struct rdzv_megatron_size *sz, char *err, size_t errlen)
{
	const char *val;
	int rc;

	sz->n = 1;
	snprintf(sz->from, sizeof(sz->from), "default");
	rc = rdzv_argscan_uint(argc, argv, dims[d].opt, 1, RDZV_MEGATRON_SIZE_MAX, &sz->n,
	                       err, errlen);
	if (rc < 0)
		return -1;
	if (rc > 0) {
		snprintf(sz->from, sizeof(sz->from), "%s", dims[d].opt);
		return 0;
	}
	val = dims[d].env ? rdzv_envp_get(envp, dims[d].env) : NULL;
	if (!val)
		return 0;
	if (rdzv_parse_u64(val, 1, RDZV_MEGATRON_SIZE_MAX, &sz->n) < 0)
		return rdzv_err(err, errlen, "%s='%.32s' in the environment is not a whole number "
		                "from 1 to %u (it sets Megatron's %s size)", dims[d].env, val,
		                RDZV_MEGATRON_SIZE_MAX, dims[d].what);
	snprintf(sz->from, sizeof(sz->from), "%s", dims[d].env);
	return 0;
}

int rdzv_megatron_read(int argc, char *const *argv, char *const *envp,
                       struct rdzv_megatron_layout *l, char *err, size_t errlen)
{
	struct rdzv_argval v;
	int rc;

	memset(l, 0, sizeof(*l));
	if (read_size(argc, argv, envp, 0, &l->tp, err, errlen) < 0
	    || read_size(argc, argv, envp, 1, &l->pp, err, errlen) < 0
	    || read_size(argc, argv, envp, 2, &l->cp, err, errlen) < 0
	    || read_size(argc, argv, envp, 3, &l->ep, err, errlen) < 0
	    || read_size(argc, argv, envp, 4, &l->etp, err, errlen) < 0)
		return -1;
	/* Megatron: expert_tensor_parallel_size defaults to the TP size. */
	if (strcmp(l->etp.from, "default") == 0) {
		l->etp.n = l->tp.n;
		snprintf(l->etp.from, sizeof(l->etp.from), "TP's size");
	}
	/* --fp8-format {e4m3,hybrid} (current Megatron); --fp8-hybrid and
	 * --fp8-e4m3 (older releases). */
	rc = rdzv_argscan_value(argc, argv, "--fp8-format", &v, err, errlen);
	if (rc < 0)
		return -1;
	if (rc > 0)
		snprintf(l->fp8, sizeof(l->fp8), "--fp8-format %.24s", v.value);
	else if (rdzv_argscan_flag(argc, argv, "--fp8-hybrid"))
		snprintf(l->fp8, sizeof(l->fp8), "--fp8-hybrid");
	else if (rdzv_argscan_flag(argc, argv, "--fp8-e4m3"))
		snprintf(l->fp8, sizeof(l->fp8), "--fp8-e4m3");
	l->fsdp = rdzv_argscan_flag(argc, argv, "--use-torch-fsdp2") > 0
	          || rdzv_argscan_flag(argc, argv, "--use-megatron-fsdp") > 0
	          || rdzv_argscan_flag(argc, argv, "--use-custom-fsdp") > 0;
	return 0;
}

enum dist { DIST_BLOCK, DIST_CYCLIC, DIST_PLANE, DIST_ARBITRARY, DIST_OTHER };

/* Slurm's node-level distribution is the part before ':' ("block:cyclic"
 * lays tasks on nodes by block). srun exports plane=N as "plane" plus
 * SLURM_DIST_PLANESIZE; "plane=N" is accepted too. */
static enum dist parse_dist(const char *d, uint32_t *plane)
{
	size_t n;

	if (!d || !*d)
		return DIST_BLOCK;
	n = strcspn(d, ":,");
	if (n == 5 && strncmp(d, "block", 5) == 0)
		return DIST_BLOCK;
	if (n == 6 && strncmp(d, "cyclic", 6) == 0)
		return DIST_CYCLIC;
	if (strncmp(d, "arbitrary", 9) == 0)
		return DIST_ARBITRARY;
	if (strncmp(d, "plane", 5) == 0) {
		uint64_t v;

		if (d[5] == '=' && rdzv_parse_u64n(d + 6, strcspn(d + 6, ":,"), 1, UINT32_MAX, &v) == 0)
			*plane = (uint32_t)v;
		return DIST_PLANE;
	}
	return DIST_OTHER;
}

/* The node with the fewest tasks, from the tasks-per-node string. */
static void tpn_smallest(const char *tpn, uint32_t *tasks, uint32_t *node)
{
	struct rdzv_tpn_iter r;

	*tasks = UINT32_MAX;
	*node = 0;
	rdzv_tpn_begin(&r, tpn);
	while (rdzv_tpn_next(&r, NULL, 0) > 0)
		if (r.tasks < *tasks) {
			*tasks = r.tasks;
			*node = r.node;
		}
}

/* Block layout: the first node boundary that falls inside a TP group. A
 * run of M nodes with N tasks each has its boundaries N apart, so N % TP
 * decides for the whole run (the first boundary is the one reported). */
static int check_block_tpn(uint64_t tp, const struct rdzv_megatron_place *p, char *err,
                           size_t errlen)
{
	struct rdzv_tpn_iter r;

	rdzv_tpn_begin(&r, p->tasks_per_node);
	while (rdzv_tpn_next(&r, NULL, 0) > 0) {
		uint64_t end = r.start + r.tasks, first;

		if (r.tasks % tp == 0 || end >= p->ntasks)
			continue;
		first = end - end % tp;
		return rdzv_err(err, errlen, "node %u holds %u tasks (ranks %llu..%llu), not a "
		                "multiple of TP=%llu: the tensor-parallel group of ranks %llu..%llu "
		                "would straddle nodes %u and %u; run a multiple of TP tasks on "
		                "every node (e.g. --ntasks-per-node=%llu)", r.node, r.tasks,
		                (unsigned long long)r.start, (unsigned long long)(end - 1),
		                (unsigned long long)tp, (unsigned long long)first,
		                (unsigned long long)(first + tp - 1), r.node, r.node + 1,
		                (unsigned long long)tp);
	}
	return 0;
}

/* Usable only when it describes this step (srun in an allocation may hold
 * the job's string when the step differs). */
static int tpn_matches(const struct rdzv_megatron_place *p)
{
	uint32_t nodes;
	uint64_t tasks;

	return p->tasks_per_node && *p->tasks_per_node
	       && rdzv_tpn_totals(p->tasks_per_node, &nodes, &tasks, NULL, 0) == 0
	       && nodes == p->nnodes && tasks == p->ntasks;
}

int rdzv_megatron_check_world(const struct rdzv_megatron_layout *l, uint32_t ntasks, char *err,
                              size_t errlen)
{
	uint64_t group = l->tp.n * l->pp.n * l->cp.n;

	if (ntasks == 0)
		return rdzv_err(err, errlen, "the step has no tasks");
	if (ntasks % group != 0)
		return rdzv_err(err, errlen, "world size %u (the step's tasks) is not divisible by "
		                "TP x PP x CP = %llu x %llu x %llu = %llu (from %s, %s, %s): "
		                "Megatron would stop in initialize_model_parallel; run a multiple of "
		                "%llu tasks or change the sizes", ntasks, (unsigned long long)l->tp.n,
		                (unsigned long long)l->pp.n, (unsigned long long)l->cp.n,
		                (unsigned long long)group, l->tp.from, l->pp.from, l->cp.from,
		                (unsigned long long)group);
	/* parallel_state.py: world % (ETP x EP x PP) for the expert groups. */
	if ((l->ep.n > 1 || l->etp.n != l->tp.n)
	    && ntasks % (l->etp.n * l->ep.n * l->pp.n) != 0)
		return rdzv_err(err, errlen, "world size %u is not divisible by ETP x EP x PP = "
		                "%llu x %llu x %llu = %llu (from %s, %s, %s): Megatron would stop "
		                "forming its expert-parallel groups", ntasks,
		                (unsigned long long)l->etp.n, (unsigned long long)l->ep.n,
		                (unsigned long long)l->pp.n,
		                (unsigned long long)(l->etp.n * l->ep.n * l->pp.n), l->etp.from,
		                l->ep.from, l->pp.from);
	return 0;
}

int rdzv_megatron_check(const struct rdzv_megatron_layout *l,
                        const struct rdzv_megatron_place *p, char *err, size_t errlen)
{
	uint64_t tp = l->tp.n;
	uint32_t plane = p->plane_size;
	enum dist d = parse_dist(p->distribution, &plane);
	int have_tpn = tpn_matches(p);
	uint32_t small = UINT32_MAX, small_node = 0;

	if (rdzv_megatron_check_world(l, p->ntasks, err, errlen) < 0)
		return -1;
	if (tp == 1 || p->nnodes <= 1 || p->by_domain)
		return 0; /* a TP group of one, everything on one node, or NVLink beyond
		           * the node: groups are checked by domain (srun) */
	if (d == DIST_ARBITRARY || d == DIST_OTHER)
		return 0; /* placement unknown here: only divisibility is checked */
	if (have_tpn)
		tpn_smallest(p->tasks_per_node, &small, &small_node);
	else if (p->local_ntasks) {
		small = p->local_ntasks;
		small_node = p->node_id;
	}
	if (small < tp)
		return rdzv_err(err, errlen, "TP=%llu is larger than the %u tasks on node %u: a "
		                "tensor-parallel group must stay on one node (NVLink, or xGMI between "
		                "AMD GPUs); run TP or a "
		                "multiple of TP tasks per node", (unsigned long long)tp, small,
		                small_node);
	switch (d) {
	case DIST_CYCLIC:
		return rdzv_err(err, errlen, "--distribution=%.32s places consecutive ranks on "
		                "different nodes, so every tensor-parallel group (TP=%llu consecutive "
		                "ranks) would straddle nodes: use --distribution=block",
		                p->distribution, (unsigned long long)tp);
	case DIST_PLANE:
		if (plane && plane % tp != 0)
			return rdzv_err(err, errlen, "--distribution=plane=%u places blocks of %u "
			                "consecutive ranks per node, not a multiple of TP=%llu: "
			                "tensor-parallel groups would straddle nodes; use a plane size "
			                "that is a multiple of TP, or --distribution=block", plane,
			                plane, (unsigned long long)tp);
		return 0;
	case DIST_BLOCK:
		if (have_tpn)
			return check_block_tpn(tp, p, err, errlen);
		if (p->local_ntasks && p->local_ntasks % tp != 0)
			return rdzv_err(err, errlen, "node %u holds %u tasks, not a multiple of "
			                "TP=%llu: a tensor-parallel group would straddle it and a "
			                "neighbouring node; run a multiple of TP tasks on every node",
			                p->node_id, p->local_ntasks, (unsigned long long)tp);
		return 0;
	default:
		return 0;
	}
}

int rdzv_megatron_check_domains(const struct rdzv_megatron_layout *l, uint32_t ntasks,
                                const struct rdzv_megatron_domains *md, char *err,
                                size_t errlen)
{
	struct {
		uint64_t stride, n;
		const char *name, *opt;
		const struct rdzv_megatron_size *sz;
	} g[4] = {
		{ 1, l->tp.n, "tensor-parallel", "TP", &l->tp },
		{ l->tp.n, l->cp.n, "context-parallel", "CP", &l->cp },
		{ l->etp.n, l->ep.n, "expert-parallel", "EP", &l->ep },
		{ 1, l->etp.n, "expert-tensor-parallel", "ETP", &l->etp },
	};
	char what[160], msg[1536];
	size_t i;

	if (!md || !md->d || !md->rank_node)
		return 0;
	if (md->ntasks != ntasks)
		return rdzv_err(err, errlen, "the step layout has %u tasks, the step %u: its NVLink "
		                "domains cannot be checked", md->ntasks, ntasks);
	for (i = 0; i < 4; i++) {
		uint64_t span = g[i].stride * g[i].n;

		if (g[i].n <= 1 || (i == 3 && l->etp.n == l->tp.n))
			continue;
		snprintf(what, sizeof(what), "%s=%llu (%s)", g[i].opt, (unsigned long long)g[i].n,
		         g[i].sz->from);
		if (rdzv_domain_check_groups(md->d, ntasks, md->rank_node, md->node_names,
		                             g[i].stride, g[i].n, what, msg, sizeof(msg)) == 0)
			continue;
		if (md->tasks_per_node && span % md->tasks_per_node == 0
		    && (!md->max_domain_nodes || span / md->tasks_per_node <= md->max_domain_nodes))
			return rdzv_err(err, errlen, "%s; a %s group must stay inside one NVLink "
			                "domain (%s): with %u tasks per node a group of %llu ranks "
			                "needs %llu nodes of one domain; ask Slurm for them with "
			                "--segment=%llu (sbatch from 25.05, srun from 25.11) or name "
			                "them with -w", msg, g[i].name,
			                md->source, md->tasks_per_node, (unsigned long long)span,
			                (unsigned long long)(span / md->tasks_per_node),
			                (unsigned long long)(span / md->tasks_per_node));
		if (md->tasks_per_node && md->max_domain_nodes)
			return rdzv_err(err, errlen, "%s; a %s group must stay inside one NVLink "
			                "domain (%s), but its %llu ranks need more than the %u nodes "
			                "of %u tasks the largest domain holds: lower %s", msg,
			                g[i].name, md->source, (unsigned long long)span,
			                md->max_domain_nodes, md->tasks_per_node, g[i].opt);
		return rdzv_err(err, errlen, "%s; a %s group must stay inside one NVLink domain "
		                "(%s)", msg, g[i].name, md->source);
	}
	return 0;
}

/* Case-insensitive substring test. */
static int has(const char *s, const char *needle)
{
	size_t n = strlen(needle);

	for (; *s; s++) {
		size_t i;

		for (i = 0; i < n && s[i]; i++)
			if (tolower((unsigned char)s[i]) != tolower((unsigned char)needle[i]))
				break;
		if (i == n)
			return 1;
	}
	return 0;
}

/* FP8 tensor cores arrived with compute capability 8.9 (Ada) and 9.0
 * (Hopper); AMD with CDNA3 (MI300). Newer names first: "RTX 6000 Ada" must
 * not fall to the older "RTX 6000" family. First match wins. */
static const struct {
	const char *pat;
	int fp8;
} gpu_table[] = {
	{ "H100", 1 }, { "H200", 1 }, { "H800", 1 }, { "H20", 1 }, { "GH200", 1 },
	{ "B100", 1 }, { "B200", 1 }, { "B300", 1 }, { "GB200", 1 }, { "GB300", 1 },
	{ "Blackwell", 1 }, { "RTX PRO", 1 }, { "RTX 50", 1 },
	{ "Ada", 1 }, { "L40", 1 }, { "L4", 1 }, { "L20", 1 }, { "RTX 40", 1 },
	{ "MI300", 1 }, { "MI325", 1 }, { "MI350", 1 }, { "MI355", 1 },
	{ "A100", 0 }, { "A800", 0 }, { "A40", 0 }, { "A30", 0 }, { "A10", 0 }, { "A16", 0 },
	{ "A2", 0 }, { "V100", 0 }, { "T4", 0 }, { "P100", 0 }, { "P40", 0 }, { "P4", 0 },
	{ "K80", 0 }, { "M60", 0 }, { "M40", 0 }, { "GTX", 0 }, { "RTX 20", 0 },
	{ "RTX 30", 0 }, { "RTX A", 0 }, { "Quadro", 0 }, { "TITAN", 0 }, { "MI2", 0 },
	{ "MI100", 0 }, { "MI50", 0 }, { "Radeon", 0 },
};

int rdzv_gpu_fp8_capable(const char *model)
{
	size_t i;

	if (!model || !*model)
		return -1;
	for (i = 0; i < sizeof(gpu_table) / sizeof(gpu_table[0]); i++)
		if (has(model, gpu_table[i].pat))
			return gpu_table[i].fp8;
	return -1;
}

int rdzv_megatron_fp8_warning(const struct rdzv_megatron_layout *l, const char *gpu_model,
                              char *msg, size_t msglen)
{
	if (!l->fp8[0] || rdzv_gpu_fp8_capable(gpu_model) != 0)
		return 0;
	if (msg && msglen)
		snprintf(msg, msglen, "%s asks for FP8, but this node's GPUs are %s, which have no "
		         "FP8 tensor cores (FP8 needs Ada, Hopper or newer): Transformer Engine "
		         "will refuse FP8 there; drop the FP8 options or run on newer GPUs",
		         l->fp8, gpu_model);
	return 1;
}

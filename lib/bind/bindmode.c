/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/bind/: the node's topology, each task's GPU, NICs and cores, the node
 * check and its GPU gate. Uses lib/modes/, lib/step/, lib/gpu/, lib/common/. */
#include "config.h"
#include "bindmode.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	unsigned flags;
} words[] = {
	{ "auto", RDZV_BIND_AUTO },
	{ "gpu", RDZV_BIND_GPU },
	{ "nic", RDZV_BIND_NIC },
	{ "cpu", RDZV_BIND_CPU },
	{ "isolate", RDZV_BIND_ISOLATE | RDZV_BIND_GPU },
	{ "verbose", RDZV_BIND_VERBOSE },
	{ "dry-run", RDZV_BIND_DRYRUN },
	{ "none", 0 },
};

#define WHAT_MASK RDZV_BIND_AUTO

const char *rdzv_bind_mode_names(void)
{
	return "auto, gpu, nic, cpu, isolate, verbose, dry-run, none";
}

int rdzv_bind_mode_parse(const char *s, unsigned *flags, char *err, size_t errlen)
{
	unsigned f = 0, what = 0;
	const char *p = s;
	int none = 0, nwords = 0;

	if (!s || !*s)
		return rdzv_err(err, errlen, "--rdzv-bind: empty value (valid: %s)",
		                rdzv_bind_mode_names());
	for (;;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p), i;

		for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (strlen(words[i].name) == n && strncmp(words[i].name, p, n) == 0)
				break;
		if (i == sizeof(words) / sizeof(words[0]))
			return rdzv_err(err, errlen, "--rdzv-bind=%s: unknown word '%.*s' (valid: %s, "
			                "comma-separated)", s, (int)n, p, rdzv_bind_mode_names());
		none |= words[i].flags == 0;
		f |= words[i].flags;
		/* isolate implies gpu but is a modifier: alone it means auto. */
		if (words[i].flags & WHAT_MASK && !(words[i].flags & RDZV_BIND_ISOLATE))
			what |= words[i].flags;
		nwords++;
		if (!end)
			break;
		p = end + 1;
	}
	if (none && nwords > 1)
		return rdzv_err(err, errlen, "--rdzv-bind=%s: none cannot be combined with other "
		                "words (valid: %s)", s, rdzv_bind_mode_names());
	if (!none && !what)
		f |= RDZV_BIND_AUTO;
	*flags = f;
	return 0;
}

int rdzv_bind_fill(const struct rdzv_bind_table *tab, size_t i, unsigned flags,
                   const char *task_visible, const char *step_visible,
                   struct rdzv_envset *env, int *isolated, char *err, size_t errlen)
{
	*isolated = 0;
	if (i >= tab->nrows)
		return rdzv_err(err, errlen, "task %zu has no row (%zu tasks)", i, tab->nrows);
	return rdzv_bind_fill_row(tab, &tab->rows[i], flags, task_visible, step_visible, env,
	                          isolated, err, errlen);
}

int rdzv_bind_fill_row(const struct rdzv_bind_table *tab, const struct rdzv_bind_row *r,
                       unsigned flags, const char *task_visible, const char *step_visible,
                       struct rdzv_envset *env, int *isolated, char *err, size_t errlen)
{
	const char *origin = "binding";

	*isolated = 0;
	if (r->gpu < 0 || (flags & RDZV_BIND_DRYRUN))
		return 0;
	if (flags & RDZV_BIND_GPU) {
		/* CUDA numbers devices fastest-first unless told otherwise; the
		 * indices Slurm and this table use are PCI bus-id positions.
		 * ROCr numbers them in PCI bus order already. */
		if (!tab->amd
		    && rdzv_envset_add(env, "CUDA_DEVICE_ORDER", "PCI_BUS_ID", RDZV_SET_DEFAULT, origin,
		                       err, errlen) < 0)
			return -1;
		/* On AMD nodes the one variable narrowed is ROCR_VISIBLE_DEVICES:
		 * ROCr filters first, and HIP_VISIBLE_DEVICES or
		 * CUDA_VISIBLE_DEVICES would select again among what is left. */
		if ((flags & RDZV_BIND_ISOLATE)
		    && ((!task_visible && !step_visible)
		        || (task_visible && step_visible && strcmp(task_visible, step_visible) == 0))) {
			if (rdzv_envset_add(env, tab->amd ? "ROCR_VISIBLE_DEVICES" : "CUDA_VISIBLE_DEVICES",
			                    r->visible, RDZV_SET_ENFORCE, origin, err, errlen) < 0)
				return -1;
			*isolated = 1;
		}
	}
	if (flags & RDZV_BIND_NIC) {
		if (tab->nccl_ib_hca[0]
		    && rdzv_envset_add(env, "NCCL_IB_HCA", tab->nccl_ib_hca, RDZV_SET_DEFAULT, origin,
		                       err, errlen) < 0)
			return -1;
		if (r->ucx[0]
		    && rdzv_envset_add(env, "UCX_NET_DEVICES", r->ucx, RDZV_SET_DEFAULT, origin, err,
		                       errlen) < 0)
			return -1;
	}
	return 0;
}

/* Slurm's gres/gpu without an env flag writes one list to all four of
 * CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, ZE_AFFINITY_MASK and
 * GPU_DEVICE_ORDINAL (gres_common.c: common_gres_set_env, per step and
 * narrowed alike per task); with amd_gpu_env only ROCR_VISIBLE_DEVICES. A
 * user would not set GPU_DEVICE_ORDINAL to the same list as well, so the
 * first three equal is Slurm's no-flag mode. */
static int same(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

int rdzv_bind_amd_visibility(const struct rdzv_amd_vis *v, struct rdzv_envset *env, char *warn,
                             size_t warnlen, char *err, size_t errlen)
{
	static const char origin[] = "binding";
	const struct {
		const char *name, *value;
	} again[] = {
		{ "HIP_VISIBLE_DEVICES", v->hip },
		{ "CUDA_VISIBLE_DEVICES", v->cuda },
		{ "GPU_DEVICE_ORDINAL", v->gpu_ordinal },
	};
	size_t i, used = 0;

	if (warnlen)
		warn[0] = '\0';
	if (!v->rocr)
		return 0;
	if (same(v->cuda, v->rocr) && same(v->gpu_ordinal, v->rocr)) {
		if (rdzv_envset_add(env, "CUDA_VISIBLE_DEVICES", NULL, RDZV_SET_UNSET, origin, err,
		                    errlen) < 0
		    || rdzv_envset_add(env, "GPU_DEVICE_ORDINAL", NULL, RDZV_SET_UNSET, origin, err,
		                       errlen) < 0
		    || (same(v->ze, v->rocr)
		        && rdzv_envset_add(env, "ZE_AFFINITY_MASK", NULL, RDZV_SET_UNSET, origin, err,
		                           errlen) < 0))
			return -1;
		if (!v->hip)
			return 0;
		/* only the user's HIP_VISIBLE_DEVICES is left to name */
		used = (size_t)snprintf(warn, warnlen, "HIP_VISIBLE_DEVICES=%.64s", v->hip);
	} else {
		for (i = 0; i < sizeof(again) / sizeof(again[0]); i++)
			if (again[i].value && used < warnlen)
				used += (size_t)snprintf(warn + used, warnlen - used, "%s%s=%.64s",
				                         used ? ", " : "", again[i].name, again[i].value);
	}
	if (used && used < warnlen)
		snprintf(warn + used, warnlen - used, " (not Slurm's) select%s again among the GPUs "
		         "ROCR_VISIBLE_DEVICES=%.64s leaves, by position in that list; kept",
		         strchr(warn, ',') ? "" : "s", v->rocr);
	return 0;
}

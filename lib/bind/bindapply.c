/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/bind/: the node's topology, each task's GPU, NICs and cores, the node
 * check and its GPU gate. Uses lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* bindapply.c: what binding does to the calling process (a task in
 * task_init, slurmstepd in user_init): read and set CPU affinity. The
 * table itself is computed without system calls in bindtable.c. */
#define _GNU_SOURCE
#include "config.h"
#include "cpumask.h"
#include "topo.h"
#include "util.h"

#include <errno.h>
#include <hwloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rdzv_bind_apply_cpus(const struct rdzv_bind_table *tab, size_t i, int dry_run,
                         enum rdzv_cpu_outcome *out, char *err, size_t errlen)
{
	*out = RDZV_CPU_NOTHING;
	if (i >= tab->nrows)
		return rdzv_err(err, errlen, "task %zu has no row (%zu tasks)", i, tab->nrows);
	return rdzv_bind_apply_row(tab, &tab->rows[i], dry_run, out, err, errlen);
}

int rdzv_bind_apply_row(const struct rdzv_bind_table *tab, const struct rdzv_bind_row *r,
                        int dry_run, enum rdzv_cpu_outcome *out, char *err, size_t errlen)
{
	const struct rdzv_cpumask *step = tab->step_mask;
	cpu_set_t *cur = NULL, *both = NULL;
	int rv = -1;

	*out = RDZV_CPU_NOTHING;
	if (!r->mask)
		return 0;
	cur = CPU_ALLOC(step->size * 8);
	both = CPU_ALLOC(step->size * 8);
	if (!cur || !both) {
		rdzv_err(err, errlen, "out of memory");
		goto fail;
	}
	if (sched_getaffinity(0, step->size, cur) < 0) {
		rdzv_err(err, errlen, "sched_getaffinity: %s", strerror(errno));
		goto fail;
	}
	/* Narrower than the step: Slurm's task/affinity (it runs before
	 * SPANK's task_init), a cgroup or the user bound it. Keep that. */
	if (!CPU_EQUAL_S(step->size, cur, step->set)) {
		CPU_AND_S(step->size, both, cur, r->gpu_mask->set);
		*out = CPU_COUNT_S(step->size, both) ? RDZV_CPU_KEPT : RDZV_CPU_KEPT_FAR;
		rv = 0;
		goto fail;
	}
	if (!dry_run && sched_setaffinity(0, r->mask->size, r->mask->set) < 0) {
		rdzv_err(err, errlen, "sched_setaffinity(%s): %s", r->cpus, strerror(errno));
		goto fail;
	}
	*out = RDZV_CPU_BOUND;
	rv = 0;
fail:
	if (cur)
		CPU_FREE(cur);
	if (both)
		CPU_FREE(both);
	return rv;
}

int rdzv_affinity_cpulist(char *buf, size_t len, char *err, size_t errlen)
{
	hwloc_bitmap_t b = NULL;
	cpu_set_t *set = NULL;
	size_t ncpus = MASK_CPUS_MIN, size = 0, c;
	int rv = -1;

	/* Grow until the kernel accepts the size (above nr_cpu_ids). */
	for (;;) {
		if (!(set = CPU_ALLOC(ncpus))) {
			rdzv_err(err, errlen, "out of memory");
			goto fail;
		}
		size = CPU_ALLOC_SIZE(ncpus);
		if (sched_getaffinity(0, size, set) == 0)
			break;
		CPU_FREE(set);
		set = NULL;
		if (errno != EINVAL || ncpus >= (1u << 20)) {
			rdzv_err(err, errlen, "sched_getaffinity: %s", strerror(errno));
			goto fail;
		}
		ncpus *= 2;
	}
	if (!(b = hwloc_bitmap_alloc())) {
		rdzv_err(err, errlen, "out of memory");
		goto fail;
	}
	for (c = 0; c < ncpus; c++)
		if (CPU_ISSET_S(c, size, set))
			hwloc_bitmap_set(b, (unsigned)c);
	if (hwloc_bitmap_list_snprintf(buf, len, b) >= (int)len) {
		rdzv_err(err, errlen, "CPU list too long");
		goto fail;
	}
	rv = 0;
fail:
	if (set)
		CPU_FREE(set);
	hwloc_bitmap_free(b);
	return rv;
}

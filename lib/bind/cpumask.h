/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/bind/: the node's topology, each task's GPU, NICs and cores, the node
 * check and its GPU gate. Uses lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* cpumask.h: a CPU set in the form sched_setaffinity takes, shared by
 * bindtable.c (which computes the masks) and bindapply.c (which applies
 * them). */
#ifndef RDZV_CPUMASK_H
#define RDZV_CPUMASK_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stddef.h>

/* Masks cover at least this many CPUs so that sched_getaffinity accepts
 * them on any kernel (it refuses a mask shorter than nr_cpu_ids; Debian
 * builds with NR_CPUS=8192). */
#define MASK_CPUS_MIN 8192

struct rdzv_cpumask {
	size_t size; /* bytes, as CPU_*_S take it */
	cpu_set_t *set;
};

#endif

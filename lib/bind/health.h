/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/bind/: the node's topology, each task's GPU, NICs and cores, the node
 * check and its GPU gate. Uses lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* health.h: a node's quick check as a job starts on it (health_check=yes,
 * slurm_spank_job_prolog) and as `rdzv-preflight --node` (NHC, by hand).
 *
 *   GPUs      each GPU device file gres.conf names for the node exists and
 *             is a character device; with the NVIDIA driver loaded
 *             (ROOT/proc/driver/nvidia/gpus), each file's minor is one of
 *             the driver's GPUs (a GPU fallen off the bus leaves its
 *             /dev/nvidiaN behind but not its /proc entry)
 *   NVML      where libnvidia-ml loads: as many GPUs as gres.conf names,
 *             no page retirement or row remapping pending, no failed
 *             remapping (the faults NVIDIA's guide says need a reset or
 *             an RMA), and each GPU's recovery action none where NVML
 *             gives one (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION)
 *   NICs      each RDMA port the binding would use (the topology's, ACTIVE
 *             or of unknown state there) is ACTIVE now:
 *             ROOT/sys/class/infiniband/DEV/ports/PORT/state
 * The first fault is the reason, in words short enough for a node's drain
 * reason. The whole check runs in a child process bounded in time
 * (health_timeout=): a check that runs out of it is its own outcome, not a
 * fault of the node's GPUs (NVML's first initialisation without persistence
 * mode takes seconds per GPU), and the caller decides what it does; a check
 * that cannot start its child (pipe2, fork) is not run in-process, where
 * nothing would bound it. */
#ifndef RDZV_HEALTH_H
#define RDZV_HEALTH_H

#include <stddef.h>

#include "topo.h"

#define RDZV_HEALTH_REASON_MAX 200

enum rdzv_health_outcome {
	RDZV_HEALTH_OK = 0,         /* healthy */
	RDZV_HEALTH_FAULT = 1,      /* a fault of the node: fault says which */
	RDZV_HEALTH_UNFINISHED = 2, /* ran out of time: fault says after how long */
	RDZV_HEALTH_NOT_RUN = 3,    /* no child for it (pipe2, fork): fault says why */
};

struct rdzv_health_req {
	const char *root;         /* prefix of /proc and /sys; NULL or "": "/" */
	const char *gres_conf;    /* NULL: no GPU check */
	const char *node;         /* Slurm's name of the node (gres.conf NodeName=) */
	const struct rdzv_topo *topo; /* the NICs; NULL: no NIC check */
	const char *nvml_library; /* NULL or "": libnvidia-ml.so.1; not loadable: skipped */
};

struct rdzv_health {
	int gpus;                          /* device files checked */
	int nvml_gpus;                     /* GPUs NVML reported; -1 not asked */
	int nics;                          /* ports checked */
	char fault[RDZV_HEALTH_REASON_MAX];/* the first fault; "" healthy */
	char notes[512];                   /* what was not checked, and why */
	long ms;                           /* how long the check took */
};

/* The check, in this process. Returns 1 with fault set, else 0. */
int rdzv_health_check(const struct rdzv_health_req *r, struct rdzv_health *out);

/* The check in a child process, given timeout_ms (health_timeout=): the
 * outcome, with fault set for all but RDZV_HEALTH_OK:
 *   RDZV_HEALTH_UNFINISHED  "node check unfinished after 60 s
 *                           (health_timeout=60s)": the child is killed
 *   RDZV_HEALTH_NOT_RUN     "node check not run: cannot fork: ...", never
 *                           run in this process instead */
enum rdzv_health_outcome rdzv_health_run(const struct rdzv_health_req *r, long timeout_ms,
                                         struct rdzv_health *out);

#endif

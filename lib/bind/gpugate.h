/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/bind/: the node's topology, each task's GPU, NICs and cores, the node
 * check and its GPU gate. Uses lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* gpugate.h: the health gate's look at the GPU drivers' reports
 * (gpufault.h) with the admin's settings (kmsg=, xid_table=,
 * gpu_state_dir=, identity_root=), beside the node check of health.h:
 * rdzv_node.so's prolog and epilog (health_check=yes) and rdzv-preflight
 * --node. A report since the cursor that is the node's fault (an Xid whose
 * action is a reset, a reboot, a drain or support; an AMD uncorrectable
 * RAS count rising) is the fault, naming Slurm's GPU number where the
 * topology and gres.conf give it, the PCI address, the Xid and its
 * meaning. The application's own Xids are notes. Runs as root; reads the
 * kernel log only, bounded (kmsg.h), and writes only its cursor. */
#ifndef RDZV_GPUGATE_H
#define RDZV_GPUGATE_H

#include <stddef.h>

#include "conf.h"
#include "topo.h"

#define RDZV_GPUGATE_FAULT_MAX 200

struct rdzv_gpugate_req {
	const struct rdzv_conf *conf;
	const char *node;             /* Slurm's name (for %n and gres.conf) */
	const char *gres_conf;        /* NULL: GPUs named by PCI address only */
	const struct rdzv_topo *topo; /* NULL: likewise */
	int keep;                     /* 1: the cursor moves on and is saved (the
	                                 gate); 0: a look that changes nothing */
};

struct rdzv_gpugate {
	char fault[RDZV_GPUGATE_FAULT_MAX]; /* "" none */
	char notes[512];                    /* application reports, what was not looked at */
	char error[300];                    /* the admin's to mend: a broken Xid table, a
	                                       kernel log that cannot be read ("" none) */
	int reports;
	long ms;
};

/* Returns 1 with fault set, else 0. */
int rdzv_gpugate_run(const struct rdzv_gpugate_req *r, struct rdzv_gpugate *out);

/* Slurm's GPU number of the GPU at pci ("0000:3b:00") through the identity
 * chain of topo and gres.conf, or -1. */
int rdzv_gpu_slurm_index(const struct rdzv_topo *topo, const char *root, const char *gres_conf,
                         const char *node, const char *pci);

#endif

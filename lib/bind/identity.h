/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/bind/: the node's topology, each task's GPU, NICs and cores, the node
 * check and its GPU gate. Uses lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* identity.h: which PCI device each of Slurm's GPU numbers stands for.
 *
 * Slurm numbers a node's GPUs by the position of their device files in its
 * gres list (SLURM_STEP_GPUS, and CUDA_VISIBLE_DEVICES without
 * ConstrainDevices): gres.conf order without AutoDetect, NVML's order (PCI
 * bus order) with AutoDetect=nvml (doc/binding.md, "How Slurm numbers
 * GPUs", with the source lines). The chain read here:
 *   Slurm index k -> gres.conf's k-th GPU device file (/dev/nvidiaN)
 *     -> its minor number (stat of the device; its name when it is not one)
 *     -> the bus id whose /proc/driver/nvidia/gpus/BUSID/information says
 *        "Device Minor: N" (checked against sysfs's vendor when present)
 *     -> the topology's CUDA GPU with that bus id.
 * On a node whose GPUs are AMD's (rdzv_topo_gpus_amd) the files are DRM
 * nodes, /dev/dri/renderDN or cardN (char 226:N), and the link to the bus
 * id is sysfs's: ROOT/sys/class/drm/renderDN/device points at the PCI
 * function; the k-th render node of a function with several logical GPUs
 * (MI300 partitions) is its k-th GPU. AutoDetect=rsmi numbers GPUs in ROCm
 * SMI's order, PCI bus order.
 * /proc and /sys are read under a root prefix, so tests point it at fixture
 * trees; gres.conf and its device files are Slurm's configuration and are
 * read where it names them. When a link cannot be read, the whole map falls back to the
 * positional rule (index k = the k-th CUDA GPU in PCI bus-id order) and
 * `why` says which link failed. */
#ifndef RDZV_IDENTITY_H
#define RDZV_IDENTITY_H

#include <stddef.h>

#include "topo.h"

#define RDZV_UUID_MAX 96
#define RDZV_DEVPATH_MAX 256

enum rdzv_id_source {
	RDZV_ID_POSITION, /* positional rule (a link could not be read) */
	RDZV_ID_NVML,     /* AutoDetect=nvml: Slurm's order is NVML's, PCI bus order */
	RDZV_ID_DEVICE,   /* gres file -> minor of the device node -> /proc bus id */
	RDZV_ID_NAME,     /* gres file -> minor from its name nvidiaN -> /proc bus id */
	RDZV_ID_RSMI,     /* AutoDetect=rsmi: Slurm's order is ROCm SMI's, PCI bus order */
};

const char *rdzv_id_source_name(enum rdzv_id_source s);

struct rdzv_gpu_id {
	int gpu;                        /* topology GPU (PCI order); -1 unknown */
	int minor;                      /* -1 unknown */
	char busid[RDZV_BUSID_MAX];     /* "" unknown */
	char uuid[RDZV_UUID_MAX];       /* GPU UUID from /proc; "" unknown */
	char file[RDZV_DEVPATH_MAX];    /* gres.conf's device file; "" none */
	enum rdzv_id_source source;
	int sysfs;                      /* the bus id was confirmed in sysfs */
};

struct rdzv_proc_gpu {
	char busid[RDZV_BUSID_MAX];
	int minor;
	char uuid[RDZV_UUID_MAX];
	int gpu;                        /* topology GPU; -1 not in the topology */
};

struct rdzv_identity {
	size_t n;                 /* Slurm's GPU numbers 0..n-1 on this node */
	struct rdzv_gpu_id *v;
	int positional;           /* v follows the positional rule */
	char why[512];            /* how the map was established, or why not */
	size_t nproc;             /* the NVIDIA driver's GPUs, for UUID lookups;
	                           * on AMD nodes the DRM nodes (no UUID) */
	struct rdzv_proc_gpu *proc;
	int amd;                  /* the GPUs are AMD's: DRM device numbers */
};

struct rdzv_identity_req {
	const char *root;      /* prefix of /proc and /sys; NULL or "": "/" */
	const char *gres_conf; /* gres.conf; NULL: none known */
	const char *node;      /* Slurm's name of this node, for NodeName= lines */
};

/* Read the chain for the GPUs of topology t. Only running out of memory
 * is an error (-1); an unreadable link gives a positional map with why
 * set. */
int rdzv_identity_read(const struct rdzv_topo *t, const struct rdzv_identity_req *req,
                       struct rdzv_identity **out, char *err, size_t errlen);

/* The positional map of t (no file read). */
int rdzv_identity_positional(const struct rdzv_topo *t, const char *why,
                             struct rdzv_identity **out, char *err, size_t errlen);

/* The GPU device files of node in Slurm's order, from gres.conf conf
 * (Name=gpu File= or MultipleFiles= lines naming the node, or none).
 * Returns the count with *files malloc'ed, 0 with *nvml set when
 * AutoDetect numbers them (AutoDetect=nvml, or rsmi when amd), -1 with why
 * when gres.conf cannot be read or names no GPU file for the node. */
long rdzv_gres_gpu_files(const char *conf, const char *node, int amd,
                         char (**files)[RDZV_DEVPATH_MAX], int *nvml, char *why, size_t whylen);

/* gres.conf: given (the admin's gres_conf=) when not empty, else beside
 * this process's $SLURM_CONF (slurmd's and slurmstepd's own), else
 * /etc/slurm/gres.conf. buf holds the second. */
const char *rdzv_gres_conf_path(const char *given, char *buf, size_t len);

void rdzv_identity_destroy(struct rdzv_identity *id); /* accepts NULL */

/* The topology GPU of Slurm's GPU number k, or -1. */
int rdzv_identity_gpu(const struct rdzv_identity *id, unsigned long k);

/* The topology GPU of a CUDA UUID: "GPU-<uuid>" through /proc's GPU UUID,
 * a legacy MIG name "MIG-GPU-<uuid>/<gi>/<ci>" through its parent GPU's.
 * Returns -1 when it cannot be resolved (a MIG-<uuid> of the current form
 * names no parent: only the step's own list can place it). */
int rdzv_identity_uuid(const struct rdzv_identity *id, const char *uuid);

/* Is s a CUDA UUID entry (GPU-..., MIG-...)? */
int rdzv_is_uuid(const char *s);

/* The topology GPUs the calling task's devices cgroup allows (cgroup v1:
 * ROOT/proc/self/cgroup names it, ROOT/sys/fs/cgroup/devices/PATH/
 * devices.list lists "c 195:N rwm" per NVIDIA minor, "c 226:N rwm" per
 * DRM node on AMD nodes). Slurm's task/cgroup
 * with ConstrainDevices narrows it per task, so it names the task's own
 * GPUs even where its CUDA_VISIBLE_DEVICES does not (22.05 numbers each
 * task's list from 0). Returns the count (0: not constrained, "a *:*" or
 * cgroup v2, unreadable), gpus[] filled up to max. */
size_t rdzv_identity_cgroup_gpus(const struct rdzv_identity *id, const char *root, int *gpus,
                                 size_t max);

/* How topology GPU g's identity was established, one line:
 * "slurm 2 file /dev/nvidia5 minor 5 busid 0000:10:1c.0 source device+proc+sysfs",
 * or "slurm 2 source position (why...)". Returns 0, or -1 when buf is too
 * small. */
int rdzv_identity_format(const struct rdzv_identity *id, size_t g, char *buf, size_t len);

#endif

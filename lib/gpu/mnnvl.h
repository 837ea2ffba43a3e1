/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/gpu/: the GPU vendors' libraries (NVML, ROCm SMI, opened at run time),
 * the NVLink fabric, the kernel's GPU fault lines (Xid). Uses lib/common/. */
/* mnnvl.h: is this node ready for multi-node NVLink (MNNVL)? What a site
 * profile's "require mnnvl" checks on every node of a step before any task
 * starts (doc/profiles.md, "Multi-node NVLink"):
 *
 *  1. an IMEX channel: CUDA's cross-node memory export (what NCCL's MNNVL
 *     transport uses) needs a channel device
 *     /dev/nvidia-caps-imex-channels/channelN, which nobody creates by
 *     default: Slurm's switch/nvidia_imex makes one per job, or a prolog
 *     does (NVIDIA's IMEX guide, "IMEX Channels");
 *  2. every GPU's fabric registration completed, without a health fault,
 *     and all GPUs in one NVLink domain (fabric.h).
 *
 * The channels found are what the tasks get as NVIDIA_IMEX_CHANNELS (the
 * NVIDIA container toolkit's variable: which channels a container sees). */
#ifndef RDZV_MNNVL_H
#define RDZV_MNNVL_H

#include <stddef.h>

#define RDZV_IMEX_DIR "/dev/nvidia-caps-imex-channels"
#define RDZV_IMEX_LIST_MAX 32 /* channels one job may be handed; more is refused */

/* The IMEX channels under root (a prefix of /dev for fixture trees, as
 * identity_root=; NULL or "" for "/"): entries channelN of
 * root/dev/nvidia-caps-imex-channels that are character devices the job's
 * user may open (read and write, by the caller's effective ids). list gets
 * them in ascending order, comma separated ("0", "0,5"); more than
 * RDZV_IMEX_LIST_MAX is refused, never widened to "all". Returns how many
 * (>= 1), or -1 with the reason naming the path: no directory, or no usable
 * channelN character device in it (with what is there instead). */
int rdzv_imex_channels(const char *root, char *list, size_t len, char *err, size_t errlen);

struct rdzv_mnnvl_result {
	char channels[256];  /* NVIDIA_IMEX_CHANNELS value */
	int nchannels;
	unsigned ngpus;      /* GPUs checked */
	char domain[64];     /* "CLUSTER-UUID.clique" (rdzv_fabric_domain_name) */
};

/* The node's whole check: IMEX channel first (no NVML needed to fail it),
 * then NVML's fabric info (library as rdzv_fabric_read). Returns 0 with
 * res filled, or -1 with the reason in err. */
int rdzv_mnnvl_check(const char *root, const char *library, struct rdzv_mnnvl_result *res,
                     char *err, size_t errlen);

/* The same check with NVML read through o (fabric.h): at most once per
 * node, whoever asks first. */
struct rdzv_fabric_once;
int rdzv_mnnvl_check_once(const char *root, struct rdzv_fabric_once *o, const char *library,
                          struct rdzv_mnnvl_result *res, char *err, size_t errlen);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/modes/: what each mode sets (torch, Megatron, launchers, frameworks,
 * containers), srun's verdict on Megatron's groups over the domains, and the
 * plugstack arguments that choose them. Uses lib/domains/, lib/step/,
 * lib/common/. */
/* fill.h: variables several modes add the same way (modes.c, frameworks.c). */
#ifndef RDZV_FILL_H
#define RDZV_FILL_H

#include <stddef.h>

#include "envset.h"
#include "step.h"

/* GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME (=NAME, exact) naming step->ifname,
 * as defaults, when it is known; every mode that meets at MASTER_ADDR adds them. */
int rdzv_fill_netif(const struct rdzv_step *step, struct rdzv_envset *env, char *err,
                    size_t errlen);

/* RDZV_NVLINK_DOMAIN, RDZV_NVLINK_DOMAIN_SIZE, RDZV_NVLINK_DOMAIN_RANK when
 * the node's NVLink domain is known; nothing otherwise. */
int rdzv_fill_domain(const struct rdzv_step *step, const struct rdzv_task *t,
                     struct rdzv_envset *env, char *err, size_t errlen);

#endif

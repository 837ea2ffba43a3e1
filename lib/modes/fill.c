/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/modes/: what each mode sets (torch, Megatron, launchers, frameworks,
 * containers), srun's verdict on Megatron's groups over the domains, and the
 * plugstack arguments that choose them. Uses lib/domains/, lib/step/,
 * lib/common/. */
/* fill.c: see fill.h. */
#include "config.h"
#include "fill.h"

#define ORIGIN "rdzv"

int rdzv_fill_netif(const struct rdzv_step *s, struct rdzv_envset *env, char *err, size_t errlen)
{
	if (!s->ifname[0])
		return 0;
	/* Gloo takes interface names; NCCL a prefix unless written "=NAME". */
	if (rdzv_envset_addf(env, ORIGIN, "GLOO_SOCKET_IFNAME", err, errlen, "%s", s->ifname) < 0
	    || rdzv_envset_addf(env, ORIGIN, "NCCL_SOCKET_IFNAME", err, errlen, "=%s", s->ifname) < 0)
		return -1;
	return 0;
}

int rdzv_fill_domain(const struct rdzv_step *s, const struct rdzv_task *t,
                     struct rdzv_envset *env, char *err, size_t errlen)
{
	if (!s->domain[0])
		return 0;
	if (rdzv_envset_addf(env, ORIGIN, "RDZV_NVLINK_DOMAIN", err, errlen, "%s", s->domain) < 0)
		return -1;
	if (!s->domain_size) /* nvml: the node's own domain only */
		return 0;
	if (rdzv_envset_addf(env, ORIGIN, "RDZV_NVLINK_DOMAIN_SIZE", err, errlen, "%u",
	                        s->domain_size) < 0
	    || rdzv_envset_addf(env, ORIGIN, "RDZV_NVLINK_DOMAIN_RANK", err, errlen, "%u",
	                        s->domain_base + t->local_rank) < 0)
		return -1;
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/modes/: what each mode sets (torch, Megatron, launchers, frameworks,
 * containers), srun's verdict on Megatron's groups over the domains, and the
 * plugstack arguments that choose them. Uses lib/domains/, lib/step/,
 * lib/common/. */
/* domain_verdict.h: srun's verdict under nvlink_domain=nvml, once every
 * node of the step has told the domain its GPUs report (domain.h's wire):
 * the step's domains from the nodes' answers, and Megatron's groups
 * checked against them. Plain C, so that unit tests and fuzzers reach the
 * decision; spank/domains.c only carries the datagrams. */
#ifndef RDZV_DOMAIN_VERDICT_H
#define RDZV_DOMAIN_VERDICT_H

#include <stddef.h>
#include <stdint.h>

#include "domain.h"
#include "megatron.h"

/* The step's domains from what the nodes said (names[nnodes], "" for a
 * node without a fabric): nodes naming the same domain share it; a node
 * without a fabric is a domain of its own, named after it (node_names)
 * with "(node)" appended. Domains in name order, never nodes times
 * domains. Returns 0, or -1 (out of memory) with d empty. */
int rdzv_domains_from_reports(uint32_t nnodes, const char (*names)[RDZV_DOMAIN_NAME_MAX],
                              char *const *node_names, struct rdzv_domains *d, char *err,
                              size_t errlen);

/* The verdict on the step's groups of layout l: 1 (every group inside one
 * domain) or 0 with why in msg (a group spanning domains, or no memory).
 * rank_node[ntasks]: each rank's node id. */
int rdzv_domains_verdict(const struct rdzv_megatron_layout *l, uint32_t nnodes, uint32_t ntasks,
                         const char (*names)[RDZV_DOMAIN_NAME_MAX], const uint32_t *rank_node,
                         char *const *node_names, char *msg, size_t msglen);

#endif

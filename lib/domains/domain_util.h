/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/domains/: NVLink domains: the setting, Slurm's blocks, the step's domain
 * map, the group check, a node's report. Uses lib/step/, lib/common/. */
/* domain_util.h: what the files of domain.h's code share among
 * themselves, not part of its interface (domain_util.c). */
#ifndef RDZV_DOMAIN_UTIL_H
#define RDZV_DOMAIN_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "domain.h"
#include "util.h"

/* A domain name: what Slurm accepts for a block name that we can carry in
 * RDZV_STEP_DOMAINS and a variable: letters, digits, '.', '_', '-'. */
int rdzv_domain_name_ok(const char *s, size_t n);

/* One domain more in d, its name and its whole nodes (0 unknown). */
int rdzv_domains_add(struct rdzv_domains *d, const char *name, uint32_t nodes);

/* Append printf output at *used; -1 when it does not fit. */
int rdzv_domain_put(char *buf, size_t len, size_t *used, const char *fmt, ...) RDZV_PRINTF(4, 5);

/* Numbers of the map and the asks: below UINT32_MAX (rdzv_read_u32). */
#define ID_MAX (UINT32_MAX - 1)

#endif

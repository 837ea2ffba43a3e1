/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/profile/: site NCCL profiles: the files, their variables, which one
 * applies. Uses lib/common/. */
/* profile_policy.h: the enforced part of a step's profile, carried into the
 * task so that NCCL's environment plugin (nccl/rdzv-env.c) can keep
 * answering it after the program changed its own environment.
 *
 * RDZV_NCCL_POLICY holds records separated by RS (0x1e): "NAME=VALUE" for
 * an enforced variable, "NAME" for an unset one. Profile values never hold
 * control bytes (the parser refuses them), so RS cannot occur inside one. */
#ifndef RDZV_PROFILE_POLICY_H
#define RDZV_PROFILE_POLICY_H

#include <stddef.h>

#include "envset.h"

#define RDZV_POLICY_VAR "RDZV_NCCL_POLICY"
#define RDZV_POLICY_SEP '\x1e'

/* Encode the ENFORCE and UNSET entries of set into buf[len]. Returns the
 * number of records (0: nothing to carry, buf = ""), or -1 when buf is too
 * small or an entry cannot be encoded. */
int rdzv_policy_encode(const struct rdzv_envset *set, char *buf, size_t len, char *err,
                       size_t errlen);

/* A decoded policy: owns one copy of the text, cut in place. */
struct rdzv_nccl_policy;

/* Decode s (may be NULL: an empty policy). Malformed records (an invalid
 * name) are skipped: the plugin must never break NCCL. NULL only when out
 * of memory. */
struct rdzv_nccl_policy *rdzv_policy_decode(const char *s);
void rdzv_policy_free(struct rdzv_nccl_policy *p); /* accepts NULL */

/* 1 with *value set when name is enforced, 2 when it is unset (*value =
 * NULL), 0 when the policy says nothing about it. */
int rdzv_policy_get(const struct rdzv_nccl_policy *p, const char *name, const char **value);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rdzv-env.c: libnccl-env-rdzv.so, an NCCL environment plugin (NCCL 2.28+,
 * NCCL_ENV_PLUGIN) that keeps a step's enforced profile entries in force
 * inside the process: every NCCL_* lookup goes through getEnv, which answers
 * enforced variables from the policy rdzv.so recorded when the task started
 * (RDZV_NCCL_POLICY), reports unset ones as absent, and passes everything
 * else to getenv. So a program that re-exports NCCL_IB_HCA (os.environ in a
 * training script) before NCCL initialises still gets the admin's value.
 *
 * It guards against accidents, not against a user who sets out to defeat
 * it: they could clear RDZV_NCCL_POLICY or NCCL_ENV_PLUGIN too.
 *
 * The v1 interface is NCCL's documented plugin ABI (plugins/env/README.md
 * in NCCL's sources): a struct named ncclEnvPlugin_v1 of a name and three
 * functions. NCCL's headers do not ship it, so it is declared here; result
 * codes are NCCL's ncclResult_t values (an int-sized enum, 0 = success). If
 * init fails, NCCL falls back to its internal plugin (plain getenv). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "profile_policy.h"

enum { RDZV_NCCL_SUCCESS = 0, RDZV_NCCL_SYSTEM_ERROR = 2 };

struct rdzv_nccl_env_v1 {
	const char *name;
	int (*init)(uint8_t major, uint8_t minor, uint8_t patch, const char *suffix);
	int (*finalize)(void);
	const char *(*getEnv)(const char *name);
};

static struct rdzv_nccl_policy *policy;

static int env_init(uint8_t major, uint8_t minor, uint8_t patch, const char *suffix)
{
	(void)major;
	(void)minor;
	(void)patch;
	(void)suffix;
	rdzv_policy_free(policy);
	/* Read once: the policy is the one the task started with. */
	policy = rdzv_policy_decode(getenv(RDZV_POLICY_VAR));
	return policy ? RDZV_NCCL_SUCCESS : RDZV_NCCL_SYSTEM_ERROR;
}

static int env_finalize(void)
{
	rdzv_policy_free(policy);
	policy = NULL;
	return RDZV_NCCL_SUCCESS;
}

/* Pointers returned stay valid until finalize: they point into the decoded
 * policy, or into the environment exactly as NCCL's own plugin's do. */
static const char *env_get(const char *name)
{
	const char *v;

	switch (rdzv_policy_get(policy, name, &v)) {
	case 1:
		return v;
	case 2:
		return NULL;
	default:
		return getenv(name);
	}
}

__attribute__((visibility("default"))) const struct rdzv_nccl_env_v1 ncclEnvPlugin_v1 = {
	"rdzv", env_init, env_finalize, env_get,
};

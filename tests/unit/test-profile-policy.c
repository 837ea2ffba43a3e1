/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-profile-policy: the enforced entries carried to NCCL's environment
 * plugin, and the plugin itself (libnccl-env-rdzv.so, loaded with dlopen as
 * NCCL loads it): enforced variables keep the admin's value after the
 * program changed its environment, unset ones stay absent, others pass. */
#include "config.h"
#include "profile_policy.h"
#include "tap.h"

#include <dlfcn.h>
#include <stdint.h>

struct env_v1 {
	const char *name;
	int (*init)(uint8_t, uint8_t, uint8_t, const char *);
	int (*finalize)(void);
	const char *(*getEnv)(const char *);
};

static void test_codec(void)
{
	struct rdzv_envset *set = rdzv_envset_create();
	struct rdzv_nccl_policy *p;
	const char *v;
	char buf[256], small[8], err[256];

	/* bad input first */
	p = rdzv_policy_decode("=x\x1e" "1BAD=y\x1e\x1e" "OK=1");
	ok(p && rdzv_policy_get(p, "OK", &v) == 1 && strcmp(v, "1") == 0,
	   "malformed records are skipped, good ones kept");
	ok(rdzv_policy_get(p, "", &v) == 0 && rdzv_policy_get(p, NULL, &v) == 0,
	   "empty and NULL names are not in any policy");
	rdzv_policy_free(p);
	p = rdzv_policy_decode(NULL);
	ok(p && rdzv_policy_get(p, "NCCL_IB_HCA", &v) == 0, "no policy says nothing");
	rdzv_policy_free(p);
	rdzv_policy_free(NULL);
	ok(rdzv_policy_get(NULL, "X", &v) == 0, "a NULL policy says nothing");

	rdzv_envset_add(set, "NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1", RDZV_SET_ENFORCE, "p", err,
	                sizeof(err));
	rdzv_envset_add(set, "NCCL_DEBUG", "WARN", RDZV_SET_DEFAULT, "p", err, sizeof(err));
	rdzv_envset_add(set, "NCCL_P2P_DISABLE", NULL, RDZV_SET_UNSET, "p", err, sizeof(err));
	rdzv_envset_add(set, "NCCL_EMPTY", "", RDZV_SET_ENFORCE, "p", err, sizeof(err));
	ok(rdzv_policy_encode(set, small, sizeof(small), err, sizeof(err)) < 0,
	   "encoding into a short buffer fails (%s)", err);
	is_int(rdzv_policy_encode(set, buf, sizeof(buf), err, sizeof(err)), 3,
	       "three records: two enforced, one unset (defaults are not policy)");
	is_str(buf, "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1\x1eNCCL_P2P_DISABLE\x1eNCCL_EMPTY=",
	       "the encoding");
	p = rdzv_policy_decode(buf);
	ok(p && rdzv_policy_get(p, "NCCL_IB_HCA", &v) == 1 && strcmp(v, "=mlx5_0:1,mlx5_1:1") == 0,
	   "an enforced value survives the round trip, '=' included");
	ok(rdzv_policy_get(p, "NCCL_P2P_DISABLE", &v) == 2 && v == NULL, "an unset entry");
	ok(rdzv_policy_get(p, "NCCL_EMPTY", &v) == 1 && v && !*v, "an enforced empty value");
	ok(rdzv_policy_get(p, "NCCL_DEBUG", &v) == 0, "a default is not in the policy");
	rdzv_policy_free(p);
	rdzv_envset_destroy(set);
	ok(rdzv_policy_encode(NULL, buf, sizeof(buf), err, sizeof(err)) == 0 && !buf[0],
	   "an empty set encodes to nothing");
}

static void test_plugin(void)
{
	const char *top = getenv("top_builddir");
	char path[4096];
	const struct env_v1 *env;
	const char *v;
	void *lib;

	snprintf(path, sizeof(path), "%s/nccl/.libs/libnccl-env-rdzv.so", top ? top : ".");
	if (!(lib = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
		diag("not built: %s", dlerror());
		ok(0, "libnccl-env-rdzv.so loads");
		return;
	}
	env = dlsym(lib, "ncclEnvPlugin_v1");
	ok(env && env->name && strcmp(env->name, "rdzv") == 0 && env->init && env->finalize
	   && env->getEnv, "the plugin exports ncclEnvPlugin_v1 named rdzv");
	if (!env)
		return;
	ok(dlsym(lib, "rdzv_policy_decode") == NULL, "it exports nothing else");
	setenv(RDZV_POLICY_VAR, "NCCL_IB_HCA==mlx5_0:1\x1eNCCL_P2P_DISABLE", 1);
	setenv("NCCL_IB_HCA", "=mlx5_0:1", 1);
	is_int(env->init(2, 28, 9, ""), 0, "init succeeds");
	/* the program re-exports after launch */
	setenv("NCCL_IB_HCA", "mlx5_7", 1);
	setenv("NCCL_P2P_DISABLE", "1", 1);
	setenv("NCCL_DEBUG", "TRACE", 1);
	setenv(RDZV_POLICY_VAR, "", 1);
	v = env->getEnv("NCCL_IB_HCA");
	is_str(v, "=mlx5_0:1", "an enforced variable keeps the admin's value after a re-export");
	ok(env->getEnv("NCCL_P2P_DISABLE") == NULL, "an unset variable stays absent after a re-export");
	v = env->getEnv("NCCL_DEBUG");
	is_str(v, "TRACE", "other variables are the process's own");
	ok(env->getEnv("NCCL_NOT_SET_ANYWHERE") == NULL, "an absent variable is absent");
	is_int(env->finalize(), 0, "finalize succeeds");
	unsetenv(RDZV_POLICY_VAR);
	is_int(env->init(2, 28, 9, ""), 0, "init without a policy succeeds");
	v = env->getEnv("NCCL_IB_HCA");
	is_str(v, "mlx5_7", "without a policy the plugin is plain getenv");
	env->finalize();
	dlclose(lib);
}

int main(void)
{
	test_codec();
	test_plugin();
	return done_testing();
}

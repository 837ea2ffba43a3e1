/* profile.c: glue of site NCCL profiles (not implemented yet: no-ops). */
#include "config.h"
#include "plugin.h"
#include "hooks.h"

int rdzv_profile_option(const char *val, char *err, size_t errlen)
{
	return 0;
}

int rdzv_profile_local(spank_t sp, char *err, size_t errlen)
{
	return 0;
}

int rdzv_profile_user_init(spank_t sp, char *err, size_t errlen)
{
	return 0;
}

int rdzv_profile_task_init(spank_t sp, const struct rdzv_task *t, struct rdzv_envset *env,
                           char *err, size_t errlen)
{
	return 0;
}

const char *rdzv_profile_hca_allow(void)
{
	return NULL;
}

void rdzv_profile_exit(void)
{
}

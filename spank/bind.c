/* bind.c: glue of topology-aware binding (not implemented yet: no-ops). */
#include "config.h"
#include "plugin.h"
#include "hooks.h"

int rdzv_bind_option(const char *val, char *err, size_t errlen)
{
	return 0;
}

int rdzv_bind_local(spank_t sp, char *err, size_t errlen)
{
	return 0;
}

int rdzv_bind_user_init(spank_t sp, const struct rdzv_step *step, char *err, size_t errlen)
{
	return 0;
}

int rdzv_bind_task_init(spank_t sp, const struct rdzv_step *step, const struct rdzv_task *t,
                        struct rdzv_envset *env, char *err, size_t errlen)
{
	return 0;
}

void rdzv_bind_exit(void)
{
}

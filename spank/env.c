/* env.c: reading the job's environment, shared by the glue files. */
#include "config.h"
#include "plugin.h"

int rdzv_job_getenv(spank_t sp, const char *name, char *buf, size_t len)
{
	spank_err_t rc = spank_getenv(sp, name, buf, (int)len);

	if (rc == ESPANK_SUCCESS)
		return 1;
	return rc == ESPANK_ENV_NOEXIST ? 0 : -1;
}

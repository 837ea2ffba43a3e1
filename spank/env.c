/* env.c: reading the job's environment, shared by the glue files. */
#include "config.h"
#include "plugin.h"

#include <stdlib.h>

int rdzv_job_getenv(spank_t sp, const char *name, char *buf, size_t len)
{
	spank_err_t rc = spank_getenv(sp, name, buf, (int)len);

	if (rc == ESPANK_SUCCESS)
		return 1;
	return rc == ESPANK_ENV_NOEXIST ? 0 : -1;
}

/* Node lists of large steps outgrow any fixed buffer (1 MB of uncompressed
 * names is 100,000 nodes): grow until the value fits, to 16 MiB. */
int rdzv_job_getenv_dup(spank_t sp, const char *name, char **out)
{
	size_t len;

	*out = NULL;
	for (len = 4096; len <= ((size_t)16 << 20); len *= 4) {
		char *buf = malloc(len);
		spank_err_t rc;

		if (!buf)
			return -1;
		rc = spank_getenv(sp, name, buf, (int)len);
		if (rc == ESPANK_SUCCESS) {
			*out = buf;
			return 1;
		}
		free(buf);
		if (rc == ESPANK_ENV_NOEXIST)
			return 0;
		if (rc != ESPANK_NOSPACE)
			return -1;
	}
	return -1;
}

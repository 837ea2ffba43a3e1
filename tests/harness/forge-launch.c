/* SPDX-License-Identifier: GPL-2.0-or-later */
/* forge-launch.c: a user's modified srun (issue 45's attacker with its own
 * libslurm client), as an LD_PRELOAD library for the real srun. For each
 * RDZV_FORGE_NAME=VALUE in srun's own environment, the environment srun
 * hands to slurm_step_launch gets NAME=VALUE instead of its own NAME.
 * libslurm sends that environment to every slurmstepd of the step (src/api/
 * step_launch.c: params->env, to which env_array_for_step adds only the
 * SLURM_STEP_* variables and the launcher's ports), so a variable forged here
 * is exactly what a rewritten client could send; the step's credential, job
 * and step ids and node list stay Slurm's. tests/0131 uses it. */
#include "config.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>

#define FORGE "RDZV_FORGE_"

extern char **environ;

typedef int (*launch_fn)(slurm_step_ctx_t *, const slurm_step_launch_params_t *,
                         const slurm_step_launch_callbacks_t *);

/* Whether entry e ("NAME=...") sets name (n bytes). */
static int sets(const char *e, const char *name, size_t n)
{
	return strncmp(e, name, n) == 0 && e[n] == '=';
}

int slurm_step_launch(slurm_step_ctx_t *ctx, const slurm_step_launch_params_t *params,
                      const slurm_step_launch_callbacks_t *callbacks)
{
	launch_fn real = (launch_fn)(uintptr_t)dlsym(RTLD_NEXT, "slurm_step_launch");
	slurm_step_launch_params_t p = *params;
	char **src = params->env ? params->env : environ, **env;
	size_t n = 0, m = 0, i, j;
	int rc;

	if (!real)
		return -1;
	for (i = 0; src[i]; i++)
		n++;
	for (i = 0; environ[i]; i++)
		m++;
	if (!(env = calloc(n + m + 1, sizeof(*env))))
		return -1;
	for (i = 0; i < n; i++)
		env[i] = src[i];
	for (j = 0; environ[j]; j++) {
		const char *f = environ[j], *name, *eq;
		size_t len;

		if (strncmp(f, FORGE, strlen(FORGE)) != 0 || !(eq = strchr(f, '=')))
			continue;
		name = f + strlen(FORGE);
		len = (size_t)(eq - name);
		for (i = 0; i < n && !sets(env[i], name, len); i++)
			;
		env[i] = (char *)(uintptr_t)name; /* "NAME=VALUE" within the RDZV_FORGE_ entry */
		if (i == n)
			n++;
	}
	env[n] = NULL;
	p.env = env;
	p.envc = (uint32_t)n;
	rc = real(ctx, &p, callbacks);
	free(env);
	return rc;
}

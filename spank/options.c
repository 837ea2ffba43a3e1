/* SPDX-License-Identifier: GPL-2.0-or-later */
/* options.c: the option table, registered in a loop from init so that
 * sbatch and salloc know the options too (a spank_options symbol only works
 * for srun). Slurm calls each callback twice, once for the value found in
 * the environment (e.g. #SBATCH --rdzv=torch exported to the job) and once
 * for the command line, so the setters only overwrite: the last one wins,
 * and an explicit srun option beats the batch script's. A callback that
 * returns -1 stops srun/sbatch before anything launches. */
#include "config.h"
#include "plugin.h"
#include "hooks.h"

#include <stdio.h>

enum { OPT_MODE, OPT_PORT, OPT_VERBOSE, OPT_BIND, OPT_PROFILE, OPT_DEBUG, OPT_TIMEOUT, OPT_GRACE };

static int report(int rc, const char *err)
{
	if (rc < 0)
		slurm_error(RDZV_TAG ": %s", err);
	return rc;
}

static int opt_cb(int val, const char *arg, int remote)
{
	char err[RDZV_ERRLEN];

	switch (val) {
	case OPT_MODE:
		rdzv.mode_from_srun = remote; /* srun's command line had --rdzv */
		return report(rdzv_opt_mode(&rdzv.opts, arg, err, sizeof(err)), err);
	case OPT_PORT:
		return report(rdzv_opt_port(&rdzv.opts, arg, err, sizeof(err)), err);
	case OPT_VERBOSE:
		rdzv.opts.verbose = 1;
		return 0;
	case OPT_BIND:
		return report(rdzv_bind_option(arg, err, sizeof(err)), err);
	case OPT_PROFILE:
		return report(rdzv_profile_option(arg, err, sizeof(err)), err);
	case OPT_DEBUG:
		return report(rdzv_opt_debug(&rdzv.opts, arg, err, sizeof(err)), err);
	case OPT_TIMEOUT:
		return report(rdzv_opt_collective_timeout(&rdzv.opts, arg, err, sizeof(err)), err);
	case OPT_GRACE:
		return report(rdzv_opt_collective_grace(&rdzv.opts, arg, err, sizeof(err)), err);
	}
	return -1;
}

static struct spank_option options[] = {
	{ "rdzv", "MODE", NULL /* mode_usage(): every mode of the table */,
	  1, OPT_MODE, opt_cb },
	{ "rdzv-port", "PORT",
	  RDZV_TAG ": rendezvous port (1024-65535) instead of the reserved or derived one",
	  1, OPT_PORT, opt_cb },
	{ "rdzv-verbose", NULL,
	  RDZV_TAG ": print, once per node, the variables set for each task and where they came from",
	  0, OPT_VERBOSE, opt_cb },
	{ "rdzv-bind", "MODE",
	  RDZV_TAG ": bind each task to its GPU, NICs and CPU cores from the node's topology",
	  1, OPT_BIND, opt_cb },
	{ "nccl-profile", "NAME",
	  RDZV_TAG ": site NCCL profile to apply (list: show the profiles; none: no default profile)",
	  1, OPT_PROFILE, opt_cb },
	{ "rdzv-debug", "WHAT",
	  RDZV_TAG ": hang: let rdzv-hang ask every Python process of the step where it is "
	  "(faulthandler on a signal); off: not (default)",
	  1, OPT_DEBUG, opt_cb },
	{ "rdzv-collective-timeout", "TIME",
	  RDZV_TAG ": how long a torch.distributed collective waits by default (e.g. 300, 5m; "
	  "default: PyTorch's); a timeout then names the rank that never arrived (arms "
	  "--rdzv-debug=hang)",
	  1, OPT_TIMEOUT, opt_cb },
	{ "rdzv-collective-grace", "TIME",
	  RDZV_TAG ": once a rank's collective failed or timed out, how long the step may go on "
	  "before srun stops it, naming the rank that never joined (default 30s; off: never)",
	  1, OPT_GRACE, opt_cb },
	SPANK_OPTIONS_TABLE_END
};

/* --rdzv's help names every mode from the mode table (rdzv_mode_names()), so
 * that a new mode cannot be missing from srun --help. */
static char *mode_usage(void)
{
	static char usage[512];

	if (!usage[0])
		snprintf(usage, sizeof(usage), RDZV_TAG ": rendezvous variables for each task: %s "
		         "(torchrun: one task per node running torchrun, PET_*; the others one task "
		         "per rank; see rdzv(8))", rdzv_mode_names());
	return usage;
}

int rdzv_options_register(spank_t sp)
{
	struct spank_option *o;

	options[0].usage = mode_usage(); /* "rdzv" */
	for (o = options; o->name; o++) {
		spank_err_t rc = spank_option_register(sp, o);

		if (rc != ESPANK_SUCCESS) {
			slurm_error(RDZV_TAG ": cannot register --%s: %s", o->name, spank_strerror(rc));
			return -1;
		}
	}
	return 0;
}

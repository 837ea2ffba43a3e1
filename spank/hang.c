/* hang.c: the glue of --rdzv-debug=hang (issue 27; lib/rdzv/hang.h,
 * rdzv-hang(1)).
 *
 *   slurmstepd, task_init (as the user, in the task before exec): when the
 *   user (--rdzv-debug=hang) or the site (debug=hang) asks for it, makes the
 *   step's directory TMP/rdzv-hang.UID/JOB.STEP (the user's own, 0700;
 *   refused when someone else's is in the way) and exports
 *     RDZV_HANG_DIR=that directory, RDZV_HANG_SIGNAL=41,
 *     PYTHONPATH=hang_python=[:the task's PYTHONPATH]
 *   so that every Python process of the task, torchrun's workers included,
 *   registers faulthandler there (helpers/python/sitecustomize.py).
 *   Nothing is set, made or read when it is off. Runs as the user: the
 *   directory and files are the user's, under the user's TMPDIR. */
#include "config.h"
#include "plugin.h"
#include "hooks.h"
#include "hang.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir DIR 0700, or an existing one that is a directory of this user's
 * that nobody else can write. Returns 0 or -1 with err. */
static int own_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot make %s: %s", dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()
	    || (st.st_mode & 022)) {
		snprintf(err, errlen, "%s is not a directory of this user's that only this user can "
		         "write: not used", dir);
		return -1;
	}
	return 0;
}

int rdzv_hang_armed(void)
{
	return rdzv.opts.debug_hang >= 0 ? rdzv.opts.debug_hang : rdzv.conf.debug_hang;
}

int rdzv_hang_task_init(spank_t sp, uint32_t rank, int first_local, char *err, size_t errlen)
{
	char tmp[RDZV_PATH_MAX], dir[RDZV_PATH_MAX + 64], step_dir[RDZV_PATH_MAX + 96];
	char sig[16], *pp = NULL, *path = NULL;
	uint32_t job = 0, step = 0;
	size_t need;
	int rc;

	(void)rank;
	if (!rdzv_hang_armed())
		return 0;
	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS
	    || spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS)
		return 0;
	/* The task's TMPDIR when it is an absolute path, else /tmp. */
	if (rdzv_job_getenv(sp, "TMPDIR", tmp, sizeof(tmp)) <= 0 || tmp[0] != '/')
		snprintf(tmp, sizeof(tmp), "/tmp");
	snprintf(dir, sizeof(dir), "%s/rdzv-hang.%u", tmp, (unsigned)getuid());
	snprintf(step_dir, sizeof(step_dir), "%s/%u.%u", dir, job, step);
	if (own_dir(dir, err, errlen) < 0 || own_dir(step_dir, err, errlen) < 0) {
		/* Not fatal: the step runs, unarmed; said once per node. */
		if (first_local)
			fprintf(stderr, RDZV_TAG ": warning: --rdzv-debug=hang: %s; rdzv-hang will not "
			        "see this node's ranks\n", err);
		err[0] = '\0';
		return 0;
	}
	snprintf(sig, sizeof(sig), "%d", RDZV_HANG_SIGNAL);
	rc = rdzv_job_getenv_dup(sp, "PYTHONPATH", &pp);
	need = strlen(rdzv.conf.hang_python) + (rc > 0 && pp && *pp ? strlen(pp) + 1 : 0) + 1;
	if (!(path = malloc(need))) {
		free(pp);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (rc > 0 && pp && *pp)
		snprintf(path, need, "%s:%s", rdzv.conf.hang_python, pp);
	else
		snprintf(path, need, "%s", rdzv.conf.hang_python);
	rc = spank_setenv(sp, "RDZV_HANG_DIR", step_dir, 1) != ESPANK_SUCCESS
	     || spank_setenv(sp, "RDZV_HANG_SIGNAL", sig, 1) != ESPANK_SUCCESS
	     || spank_setenv(sp, "PYTHONPATH", path, 1) != ESPANK_SUCCESS;
	free(path);
	free(pp);
	if (rc) {
		snprintf(err, errlen, "--rdzv-debug=hang: cannot set the task's environment");
		return -1;
	}
	if (rdzv.verbose && first_local)
		fprintf(stderr, RDZV_TAG ": %s:   debug=hang: RDZV_HANG_DIR=%s, PYTHONPATH starts with %s\n",
		        rdzv.nodename[0] ? rdzv.nodename : "?", step_dir, rdzv.conf.hang_python);
	return 0;
}

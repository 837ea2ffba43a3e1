/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rdzv-harness.c: loads a SPANK plugin with dlopen the way Slurm 22.05
 * does (src/common/plugin.c, src/common/plugstack.c) and drives its hooks
 * for one node of a step, without Slurm. The spank_* and slurm_* functions
 * the plugin calls are defined here and exported (-rdynamic), as slurmstepd
 * and srun export theirs.
 *
 * Order per context, as plugstack.c calls them:
 *   remote (slurmstepd): init -> option callbacks (remote=1, failures only
 *     logged) -> init_post_opt -> user_init -> per task, in a forked child:
 *     task_init, then the child prints its environment -> exit
 *   local (srun): init -> option callbacks (remote=0, a failure stops srun)
 *     -> init_post_opt -> local_user_init -> exit
 *   allocator (sbatch/salloc): init -> options -> init_post_opt -> exit
 * With -r required (the default) a hook returning < 0 fails the step and
 * the later hooks are not called; with -r optional its return is ignored.
 *
 * Output (stdout, one fact per line, for tests to grep):
 *   hook NAME rc=N
 *   option --NAME[=VALUE] rc=N
 *   task LOCALID gtid=G status=S      (S: the child's exit status)
 *   env G NAME=VALUE                   (the task's environment at exec)
 *   step failed in NAME                (required plugin, hook < 0)
 * Log calls go to stderr as "LEVEL: message". Exit status: 0 when the step
 * ran to the end, 1 when it failed, 2 on a harness error. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slurm/slurm_version.h>
#include <slurm/spank.h>

#define MAX_OPTS 64
#define MAX_GIVEN 64

enum phase {
	PH_INIT,
	PH_INIT_POST_OPT,
	PH_LOCAL_USER_INIT,
	PH_USER_INIT,
	PH_TASK_INIT,
	PH_EXIT,
};

struct spank_handle {
	unsigned magic;
	enum phase phase;
	int task; /* local task id, -1 outside a task */
};
#define HANDLE_MAGIC 0x00a5a500u

/* The simulated step: one node's view. */
static struct {
	spank_context_t ctx;
	int required;
	uint32_t job_id, step_id, nnodes, node_id, ntasks, local_ntasks;
	uint32_t gtids[1024];
	uint16_t ncpus;
	uint32_t cpus_per_task;
	char *alloc_cores;
	int argc;
	char **argv;
	char **env;     /* the job's environment (remote) */
	size_t nenv;
	char **ctl_env; /* job control environment (local) */
	size_t nctl;
} step;

static struct spank_option registered[MAX_OPTS];
static int nregistered;

struct given {
	char *name;
	char *value; /* NULL: option without argument */
	int found;
};
static struct given given[MAX_GIVEN];
static int ngiven;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("rdzv-harness: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p)
		die("out of memory");
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die("out of memory");
	return p;
}

/* ---- environment arrays (getenvp/setenvf/unsetenvp of Slurm's env.c) ---- */

static char **env_find(char **env, size_t n, const char *name)
{
	size_t len = strlen(name), i;

	for (i = 0; i < n; i++)
		if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
			return &env[i];
	return NULL;
}

static const char *env_get(char **env, size_t n, const char *name)
{
	char **e = env_find(env, n, name);

	return e ? *e + strlen(name) + 1 : NULL;
}

static void env_set(char ***env, size_t *n, const char *name, const char *value)
{
	char **e = env_find(*env, *n, name);
	size_t len = strlen(name) + strlen(value) + 2;
	char *entry = xmalloc(len);
	char **grown;

	snprintf(entry, len, "%s=%s", name, value);
	if (e) {
		free(*e);
		*e = entry;
		return;
	}
	if (!(grown = realloc(*env, (*n + 2) * sizeof(char *))))
		die("out of memory");
	*env = grown;
	(*env)[(*n)++] = entry;
	(*env)[*n] = NULL;
}

static void env_unset(char **env, size_t *n, const char *name)
{
	char **e = env_find(env, *n, name);

	if (!e)
		return;
	free(*e);
	memmove(e, e + 1, (size_t)((env + *n) - e) * sizeof(char *));
	(*n)--;
}

static void env_free(char **env, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(env[i]);
	free(env);
}

/* ---- the SPANK API, as the plugin sees it ---- */

static int valid(spank_t sp)
{
	return sp && sp->magic == HANDLE_MAGIC;
}

spank_context_t spank_context(void)
{
	return step.ctx;
}

int spank_remote(spank_t sp)
{
	if (!valid(sp))
		return -1;
	return step.ctx == S_CTX_REMOTE;
}

int spank_symbol_supported(const char *name)
{
	static const char *const syms[] = {
		"slurm_spank_init", "slurm_spank_job_prolog", "slurm_spank_init_post_opt",
		"slurm_spank_local_user_init", "slurm_spank_user_init",
		"slurm_spank_task_init_privileged", "slurm_spank_task_init",
		"slurm_spank_task_post_fork", "slurm_spank_task_exit", "slurm_spank_job_epilog",
		"slurm_spank_slurmd_exit", "slurm_spank_exit", NULL
	};
	int i;

	if (!name)
		return -1;
	for (i = 0; syms[i]; i++)
		if (strcmp(syms[i], name) == 0)
			return 1;
	return 0;
}

const char *spank_strerror(spank_err_t err)
{
	switch ((int)err) {
	case ESPANK_SUCCESS: return "Success";
	case ESPANK_ERROR: return "Generic error";
	case ESPANK_BAD_ARG: return "Bad argument";
	case ESPANK_NOT_TASK: return "Not in task context";
	case ESPANK_ENV_EXISTS: return "Environment variable exists";
	case ESPANK_ENV_NOEXIST: return "No such environment variable";
	case ESPANK_NOSPACE: return "Buffer too small";
	case ESPANK_NOT_REMOTE: return "Valid only in remote context";
	case ESPANK_NOEXIST: return "Id/PID does not exist on this node";
	case ESPANK_NOT_EXECD: return "Lookup by PID requested, but no tasks running";
	case ESPANK_NOT_AVAIL: return "Item not available from this callback";
	case ESPANK_NOT_LOCAL: return "Valid only in local or allocator context";
	}
	return "Unknown error";
}

spank_err_t spank_option_register(spank_t sp, struct spank_option *opt)
{
	int i;

	if (!valid(sp) || sp->phase != PH_INIT)
		return ESPANK_BAD_ARG;
	if (!opt || !opt->name || !opt->usage)
		return ESPANK_BAD_ARG;
	if (strlen(opt->name) > SPANK_OPTION_MAXLEN)
		return ESPANK_NOSPACE;
	for (i = 0; i < nregistered; i++)
		if (strcmp(registered[i].name, opt->name) == 0)
			die("option --%s registered twice", opt->name);
	if (nregistered == MAX_OPTS)
		die("too many options");
	registered[nregistered++] = *opt;
	printf("register --%s%s%s\n", opt->name, opt->has_arg ? "=" : "",
	       opt->has_arg && opt->arginfo ? opt->arginfo : "");
	return ESPANK_SUCCESS;
}

spank_err_t spank_option_getopt(spank_t sp, struct spank_option *opt, char **argp)
{
	int i;

	if (argp)
		*argp = NULL;
	if (!valid(sp))
		return ESPANK_BAD_ARG;
	if (sp->phase == PH_INIT || sp->phase == PH_INIT_POST_OPT || sp->phase == PH_EXIT)
		return ESPANK_NOT_AVAIL;
	if (!opt || !opt->name || (opt->has_arg && !argp))
		return ESPANK_BAD_ARG;
	for (i = ngiven - 1; i >= 0; i--) {
		if (strcmp(given[i].name, opt->name) == 0 && given[i].found) {
			if (opt->has_arg)
				*argp = given[i].value;
			return ESPANK_SUCCESS;
		}
	}
	return ESPANK_ERROR;
}

/* Which items a context may read: plugstack.c's _check_spank_item_validity. */
static spank_err_t item_valid(spank_t sp, spank_item_t item)
{
	switch (item) {
	case S_SLURM_VERSION:
	case S_SLURM_VERSION_MAJOR:
	case S_SLURM_VERSION_MINOR:
	case S_SLURM_VERSION_MICRO:
		return ESPANK_SUCCESS;
	default:
		break;
	}
	if (step.ctx == S_CTX_LOCAL) {
		switch (item) {
		case S_JOB_UID: case S_JOB_GID: case S_JOB_ID: case S_JOB_STEPID:
		case S_JOB_ARGV: case S_JOB_ENV: case S_JOB_TOTAL_TASK_COUNT: case S_JOB_NNODES:
			/* srun has the job only from local_user_init on. */
			return sp->phase == PH_LOCAL_USER_INIT ? ESPANK_SUCCESS : ESPANK_NOT_AVAIL;
		default:
			return ESPANK_NOT_REMOTE;
		}
	}
	if (step.ctx == S_CTX_ALLOCATOR) {
		if (item == S_JOB_UID || item == S_JOB_GID)
			return ESPANK_NOT_AVAIL;
		return ESPANK_NOT_REMOTE;
	}
	return ESPANK_SUCCESS;
}

/* Slurm hands out its own (non-const) strings for the version items. */
static char slurm_version[16], version_major[8], version_minor[8], version_micro[8];

static int local_to_global(uint32_t local, uint32_t *global)
{
	if (local >= step.local_ntasks)
		return -1;
	*global = step.gtids[local];
	return 0;
}

spank_err_t spank_get_item(spank_t sp, spank_item_t item, ...)
{
	va_list ap;
	spank_err_t rc;
	uint32_t u, *pu;
	int *pi;
	uint16_t *p16;
	uint64_t *p64;
	char ***pav;
	char **ps;
	uid_t *puid;
	gid_t *pgid;
	pid_t *ppid;

	if (!valid(sp))
		return ESPANK_BAD_ARG;
	if ((rc = item_valid(sp, item)) != ESPANK_SUCCESS)
		return rc;
	va_start(ap, item);
	switch (item) {
	case S_JOB_UID:
		puid = va_arg(ap, uid_t *);
		*puid = getuid();
		break;
	case S_JOB_GID:
		pgid = va_arg(ap, gid_t *);
		*pgid = getgid();
		break;
	case S_JOB_ID:
		*va_arg(ap, uint32_t *) = step.job_id;
		break;
	case S_JOB_STEPID:
		*va_arg(ap, uint32_t *) = step.step_id;
		break;
	case S_JOB_NNODES:
		*va_arg(ap, uint32_t *) = step.nnodes;
		break;
	case S_JOB_NODEID:
		*va_arg(ap, uint32_t *) = step.node_id;
		break;
	case S_JOB_LOCAL_TASK_COUNT:
		*va_arg(ap, uint32_t *) = step.local_ntasks;
		break;
	case S_JOB_TOTAL_TASK_COUNT:
		*va_arg(ap, uint32_t *) = step.ntasks;
		break;
	case S_JOB_NCPUS:
		p16 = va_arg(ap, uint16_t *);
		*p16 = step.ncpus;
		break;
	case S_STEP_CPUS_PER_TASK:
		*va_arg(ap, uint32_t *) = step.cpus_per_task;
		break;
	case S_JOB_ARGV:
		pi = va_arg(ap, int *);
		pav = va_arg(ap, char ***);
		*pi = step.argc;
		*pav = step.argv;
		break;
	case S_JOB_ENV:
		pav = va_arg(ap, char ***);
		*pav = step.ctx == S_CTX_REMOTE ? step.env : NULL;
		break;
	case S_TASK_ID:
		pi = va_arg(ap, int *);
		*pi = sp->task;
		if (sp->task < 0)
			rc = ESPANK_NOT_TASK;
		break;
	case S_TASK_GLOBAL_ID:
		pu = va_arg(ap, uint32_t *);
		if (sp->task < 0)
			rc = ESPANK_NOT_TASK;
		else
			*pu = step.gtids[sp->task];
		break;
	case S_TASK_PID:
		ppid = va_arg(ap, pid_t *);
		*ppid = sp->task < 0 ? 0 : getpid();
		if (sp->task < 0)
			rc = ESPANK_NOT_TASK;
		break;
	case S_JOB_LOCAL_TO_GLOBAL_ID:
		u = va_arg(ap, uint32_t);
		pu = va_arg(ap, uint32_t *);
		*pu = (uint32_t)-1;
		if (local_to_global(u, pu) < 0)
			rc = ESPANK_NOEXIST;
		break;
	case S_JOB_GLOBAL_TO_LOCAL_ID:
		u = va_arg(ap, uint32_t);
		pu = va_arg(ap, uint32_t *);
		*pu = (uint32_t)-1;
		rc = ESPANK_NOEXIST;
		for (uint32_t i = 0; i < step.local_ntasks; i++) {
			if (step.gtids[i] == u) {
				*pu = i;
				rc = ESPANK_SUCCESS;
			}
		}
		break;
	case S_JOB_ALLOC_CORES:
	case S_STEP_ALLOC_CORES:
		ps = va_arg(ap, char **);
		*ps = step.alloc_cores;
		break;
	case S_JOB_ALLOC_MEM:
	case S_STEP_ALLOC_MEM:
		p64 = va_arg(ap, uint64_t *);
		*p64 = 1024;
		break;
	case S_SLURM_RESTART_COUNT:
	case S_JOB_ARRAY_ID:
	case S_JOB_ARRAY_TASK_ID:
		*va_arg(ap, uint32_t *) = 0;
		break;
	case S_SLURM_VERSION:
		*va_arg(ap, char **) = slurm_version;
		break;
	case S_SLURM_VERSION_MAJOR:
		*va_arg(ap, char **) = version_major;
		break;
	case S_SLURM_VERSION_MINOR:
		*va_arg(ap, char **) = version_minor;
		break;
	case S_SLURM_VERSION_MICRO:
		*va_arg(ap, char **) = version_micro;
		break;
	default:
		rc = ESPANK_BAD_ARG;
		break;
	}
	va_end(ap);
	return rc;
}

static spank_err_t env_access(spank_t sp)
{
	if (!valid(sp))
		return ESPANK_BAD_ARG;
	if (step.ctx != S_CTX_REMOTE)
		return ESPANK_NOT_REMOTE;
	return ESPANK_SUCCESS;
}

spank_err_t spank_getenv(spank_t sp, const char *var, char *buf, int len)
{
	spank_err_t rc = env_access(sp);
	const char *v;

	if (rc != ESPANK_SUCCESS)
		return rc;
	if (len < 0 || !var)
		return ESPANK_BAD_ARG;
	if (!(v = env_get(step.env, step.nenv, var)))
		return ESPANK_ENV_NOEXIST;
	/* strlcpy semantics, as Slurm: truncated copy, then NOSPACE. */
	if (len > 0) {
		snprintf(buf, (size_t)len, "%s", v);
	}
	if (strlen(v) >= (size_t)len)
		return ESPANK_NOSPACE;
	return ESPANK_SUCCESS;
}

spank_err_t spank_setenv(spank_t sp, const char *var, const char *val, int overwrite)
{
	spank_err_t rc = env_access(sp);

	if (rc != ESPANK_SUCCESS)
		return rc;
	if (!var || !val)
		return ESPANK_BAD_ARG;
	if (env_get(step.env, step.nenv, var) && !overwrite)
		return ESPANK_ENV_EXISTS;
	env_set(&step.env, &step.nenv, var, val);
	return ESPANK_SUCCESS;
}

spank_err_t spank_unsetenv(spank_t sp, const char *var)
{
	spank_err_t rc = env_access(sp);

	if (rc != ESPANK_SUCCESS)
		return rc;
	if (!var)
		return ESPANK_BAD_ARG;
	env_unset(step.env, &step.nenv, var);
	return ESPANK_SUCCESS;
}

static spank_err_t ctl_access(spank_t sp)
{
	if (!valid(sp))
		return ESPANK_BAD_ARG;
	if (step.ctx == S_CTX_REMOTE)
		return ESPANK_NOT_LOCAL;
	return ESPANK_SUCCESS;
}

spank_err_t spank_job_control_setenv(spank_t sp, const char *name, const char *value,
                                     int overwrite)
{
	spank_err_t rc = ctl_access(sp);

	if (rc != ESPANK_SUCCESS)
		return rc;
	if (!name || !value)
		return ESPANK_BAD_ARG;
	if (env_get(step.ctl_env, step.nctl, name) && !overwrite)
		return ESPANK_ENV_EXISTS;
	env_set(&step.ctl_env, &step.nctl, name, value);
	return ESPANK_SUCCESS;
}

spank_err_t spank_job_control_getenv(spank_t sp, const char *name, char *buf, int len)
{
	spank_err_t rc = ctl_access(sp);
	const char *v;

	if (rc != ESPANK_SUCCESS)
		return rc;
	if (!name || !buf || len <= 0)
		return ESPANK_BAD_ARG;
	if (!(v = env_get(step.ctl_env, step.nctl, name)))
		return ESPANK_ENV_NOEXIST;
	snprintf(buf, (size_t)len, "%s", v);
	return strlen(v) >= (size_t)len ? ESPANK_NOSPACE : ESPANK_SUCCESS;
}

spank_err_t spank_job_control_unsetenv(spank_t sp, const char *name)
{
	spank_err_t rc = ctl_access(sp);

	if (rc != ESPANK_SUCCESS)
		return rc;
	if (!name)
		return ESPANK_BAD_ARG;
	env_unset(step.ctl_env, &step.nctl, name);
	return ESPANK_SUCCESS;
}

/* ---- Slurm's log functions ---- */

static void vlog(const char *level, const char *fmt, va_list ap)
{
	if (level)
		fprintf(stderr, "%s: ", level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

#define LOGFN(fn, level)                      \
	void fn(const char *fmt, ...)         \
	{                                     \
		va_list ap;                   \
		va_start(ap, fmt);            \
		vlog(level, fmt, ap);         \
		va_end(ap);                   \
	}
LOGFN(slurm_info, "info")
LOGFN(slurm_error, "error")
LOGFN(slurm_verbose, "verbose")
LOGFN(slurm_debug, "debug")
LOGFN(slurm_debug2, "debug2")
LOGFN(slurm_debug3, "debug3")
LOGFN(slurm_spank_log, NULL)

/* ---- the driver ---- */

static void *plugin;
static int plugin_ac;
static char **plugin_av;

static int call_hook(const char *name, enum phase ph, int task)
{
	char sym[64];
	struct spank_handle h = { HANDLE_MAGIC, ph, task };
	spank_f *fn;
	int rc;

	snprintf(sym, sizeof(sym), "slurm_spank_%s", name);
	*(void **)(&fn) = dlsym(plugin, sym);
	if (!fn)
		return 0;
	rc = fn(&h, plugin_ac, plugin_av);
	printf("hook %s rc=%d\n", name, rc);
	fflush(stdout);
	return rc;
}

/* plugstack.c: a required plugin's failing hook ends the sequence. */
static int failed(const char *name, int rc)
{
	if (rc < 0 && step.required) {
		printf("step failed in %s\n", name);
		return 1;
	}
	return 0;
}

static int process_options(void)
{
	int i, j;

	for (i = 0; i < ngiven; i++) {
		struct spank_option *o = NULL;
		int rc;

		for (j = 0; j < nregistered; j++)
			if (strcmp(registered[j].name, given[i].name) == 0)
				o = &registered[j];
		if (!o) {
			/* srun: "unrecognized option"; slurmstepd: logged, ignored. */
			printf("option --%s unknown\n", given[i].name);
			if (step.ctx != S_CTX_REMOTE)
				return -1;
			continue;
		}
		rc = o->cb ? o->cb(o->val, given[i].value ? given[i].value : "",
		                   step.ctx == S_CTX_REMOTE) : 0;
		printf("option --%s%s%s rc=%d\n", given[i].name, given[i].value ? "=" : "",
		       given[i].value ? given[i].value : "", rc);
		fflush(stdout);
		if (rc == 0)
			given[i].found = 1;
		/* srun/sbatch stop on a refused value; slurmstepd only logs
		 * ("spank: failed to process option") and carries on. */
		if (rc != 0 && step.ctx != S_CTX_REMOTE)
			return -1;
	}
	return 0;
}

static int run_task(int local)
{
	pid_t pid;
	int status = 0;

	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		size_t i;
		int rc = call_hook("task_init", PH_TASK_INIT, local);

		if (rc < 0 && step.required)
			_exit(1);
		/* What the task would exec with. */
		for (i = 0; i < step.nenv; i++)
			printf("env %u %s\n", step.gtids[local], step.env[i]);
		fflush(stdout);
		/* Free before exiting so that valgrind's leak check of the
		 * child sees only what the plugin itself kept. */
		env_free(step.env, step.nenv);
		exit(0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	printf("task %d gtid=%u status=%d\n", local, step.gtids[local],
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	fflush(stdout);
	return 0;
}

/* Slurm's plugin loader (src/common/plugin.c): dlopen, then the plugin_*
 * symbols must be there and the version must match this Slurm's
 * major.minor. */
static void load(const char *path)
{
	const char *type, *name;
	const unsigned *version;

	if (!(plugin = dlopen(path, RTLD_LAZY)))
		die("dlopen %s: %s", path, dlerror());
	if (!(type = dlsym(plugin, "plugin_type")) || strcmp(type, "spank") != 0)
		die("%s: plugin_type is missing or not \"spank\"", path);
	if (!(name = dlsym(plugin, "plugin_name")))
		die("%s: no plugin_name", path);
	if (!(version = dlsym(plugin, "plugin_version")))
		die("%s: no plugin_version", path);
	if (SLURM_VERSION_MAJOR(*version) != SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER)
	    || SLURM_VERSION_MINOR(*version) != SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER))
		die("%s: built for Slurm %u.%u, this is %u.%u", path,
		    SLURM_VERSION_MAJOR(*version), SLURM_VERSION_MINOR(*version),
		    SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER),
		    SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER));
	printf("loaded %s\n", name);
}

static uint32_t num(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || end == s || v > UINT32_MAX)
		die("bad %s '%s'", what, s);
	return (uint32_t)v;
}

static void usage(void)
{
	fputs("usage: rdzv-harness [-C remote|local|allocator] [-r required|optional]\n"
	      "         [-j JOBID] [-s STEPID] [-N NNODES] [-n NODEID] [-t NTASKS]\n"
	      "         [-l LOCAL_NTASKS] [-g FIRST_GTID] [-c CORES] [-e NAME=VALUE]...\n"
	      "         [-o NAME[=VALUE]]... [-a ARGV]... [-H NODENAME]\n"
	      "         PLUGIN.so [PLUGSTACK_ARG...]\n",
	      stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *path, *self = "localhost";
	uint32_t first = 0, i;
	int c, rc = 0;

	step.ctx = S_CTX_REMOTE;
	step.required = 1;
	step.job_id = 1234;
	step.step_id = 0;
	step.nnodes = 1;
	step.ntasks = 4;
	step.local_ntasks = 4;
	step.ncpus = 8;
	step.cpus_per_task = 1;
	snprintf(slurm_version, sizeof(slurm_version), "%u.%02u.%u",
	         SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER), SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER),
	         SLURM_VERSION_MICRO(SLURM_VERSION_NUMBER));
	snprintf(version_major, sizeof(version_major), "%u", SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER));
	snprintf(version_minor, sizeof(version_minor), "%02u", SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER));
	snprintf(version_micro, sizeof(version_micro), "%u", SLURM_VERSION_MICRO(SLURM_VERSION_NUMBER));
	step.env = xmalloc(sizeof(char *));
	step.ctl_env = xmalloc(sizeof(char *));
	while ((c = getopt(argc, argv, "+C:r:j:s:N:n:t:l:g:c:e:o:a:H:")) != -1) {
		char *eq;

		switch (c) {
		case 'C':
			if (strcmp(optarg, "remote") == 0)
				step.ctx = S_CTX_REMOTE;
			else if (strcmp(optarg, "local") == 0)
				step.ctx = S_CTX_LOCAL;
			else if (strcmp(optarg, "allocator") == 0)
				step.ctx = S_CTX_ALLOCATOR;
			else
				usage();
			break;
		case 'r':
			step.required = strcmp(optarg, "optional") != 0;
			break;
		case 'j': step.job_id = num(optarg, "job id"); break;
		case 's': step.step_id = num(optarg, "step id"); break;
		case 'N': step.nnodes = num(optarg, "node count"); break;
		case 'n': step.node_id = num(optarg, "node id"); break;
		case 't': step.ntasks = num(optarg, "task count"); break;
		case 'l': step.local_ntasks = num(optarg, "local task count"); break;
		case 'g': first = num(optarg, "first global task id"); break;
		case 'c': step.alloc_cores = optarg; break;
		case 'H': self = optarg; break;
		case 'e':
			if (!(eq = strchr(optarg, '=')))
				usage();
			*eq = '\0';
			env_set(&step.env, &step.nenv, optarg, eq + 1);
			*eq = '=';
			break;
		case 'o':
			if (ngiven == MAX_GIVEN)
				die("too many -o");
			given[ngiven].name = xstrdup(optarg);
			if ((eq = strchr(given[ngiven].name, '='))) {
				*eq = '\0';
				given[ngiven].value = eq + 1;
			}
			ngiven++;
			break;
		case 'a': {
			char **av = realloc(step.argv, (size_t)(step.argc + 2) * sizeof(char *));

			if (!av)
				die("out of memory");
			step.argv = av;
			step.argv[step.argc++] = optarg;
			step.argv[step.argc] = NULL;
			break;
		}
		default:
			usage();
		}
	}
	if (optind >= argc)
		usage();
	/* slurmstepd sets its own SLURMD_NODENAME (slurmd's name for the node,
	 * -H here) before it loads any plugin (src/slurmd/slurmstepd/
	 * slurmstepd.c); the job's environment (-e) is another array. */
	if (step.ctx == S_CTX_REMOTE && setenv("SLURMD_NODENAME", self, 1) < 0)
		die("setenv: %s", strerror(errno));
	/* srun and sbatch see the user's environment as their own. */
	if (step.ctx != S_CTX_REMOTE) {
		size_t k;

		for (k = 0; k < step.nenv; k++) {
			char *eq = strchr(step.env[k], '=');

			*eq = '\0';
			if (setenv(step.env[k], eq + 1, 1) < 0)
				die("setenv: %s", strerror(errno));
			*eq = '=';
		}
	}
	if (step.local_ntasks > sizeof(step.gtids) / sizeof(step.gtids[0]))
		die("at most %zu local tasks", sizeof(step.gtids) / sizeof(step.gtids[0]));
	for (i = 0; i < step.local_ntasks; i++)
		step.gtids[i] = first + i;
	path = argv[optind];
	/* plugstack.c hands the arguments after the path as a NULL-terminated
	 * vector it owns; the plugin must not keep pointers into it past exit. */
	plugin_ac = argc - optind - 1;
	plugin_av = xmalloc((size_t)(plugin_ac + 1) * sizeof(char *));
	for (c = 0; c < plugin_ac; c++)
		plugin_av[c] = xstrdup(argv[optind + 1 + c]);
	load(path);

	if (failed("init", call_hook("init", PH_INIT, -1))) {
		rc = 1;
		goto out;
	}
	if (process_options() < 0) {
		printf("step failed in options\n");
		rc = 1;
		goto out;
	}
	if (failed("init_post_opt", call_hook("init_post_opt", PH_INIT_POST_OPT, -1))) {
		rc = 1;
		goto out;
	}
	if (step.ctx == S_CTX_LOCAL) {
		if (failed("local_user_init", call_hook("local_user_init", PH_LOCAL_USER_INIT, -1)))
			rc = 1;
		goto out;
	}
	if (step.ctx != S_CTX_REMOTE)
		goto out;
	if (failed("user_init", call_hook("user_init", PH_USER_INIT, -1))) {
		rc = 1;
		goto out;
	}
	for (i = 0; i < step.local_ntasks; i++)
		run_task((int)i);
out:
	call_hook("exit", PH_EXIT, -1);
	dlclose(plugin);
	for (c = 0; c < plugin_ac; c++)
		free(plugin_av[c]);
	free(plugin_av);
	for (c = 0; c < ngiven; c++)
		free(given[c].name);
	free(step.argv);
	env_free(step.env, step.nenv);
	env_free(step.ctl_env, step.nctl);
	return rc;
}

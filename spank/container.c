/* SPDX-License-Identifier: GPL-2.0-or-later */
/* container.c: glue of the container rule (logic and the reasons behind it
 * in lib/modes/container.h; what the user sees in doc/containers.md).
 *
 *   srun (init_post_opt): a step that asks pyxis for a container while
 *     plugstack.conf loads rdzv.so before spank_pyxis.so is refused, with
 *     the order that works: pyxis would overwrite the plugin's variables
 *     after it set them, and nothing later in the task can answer.
 *   slurmstepd user_init (once per node): when pyxis is loaded before
 *     rdzv.so, keep a copy of the step's environment (what the user
 *     exported) and the identity of slurmstepd's mount namespace.
 *   task_init, before the plugin applies its variables: a task whose mount
 *     namespace changed has joined pyxis's container (pyxis's task_init ran
 *     first); the names the container changed get the user's values back,
 *     so the ordinary precedence decides.
 *   task_init, after applying: rank 0 says which of the container's values
 *     were replaced; each node's first task says when the NCCL environment
 *     plugin the profile enforces is not visible inside the container.
 *   task_init, last: every variable the task got is also given as
 *     APPTAINERENV_NAME (rdzv_container_apptainer), for Apptainer, which
 *     applies an image's %environment over the task's environment. The
 *     task's command line is not looked at: `singularity`, a wrapper
 *     script or `bash -c` start apptainer just as well. */
#define _GNU_SOURCE 1 /* dl_iterate_phdr, RTLD_NOLOAD */
#include "config.h"
#include "plugin.h"
#include "hooks.h"
#include "container_hooks.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container.h"
#include "util.h"

#define NS_PATH "/proc/self/ns/mnt"

static struct {
	char **user_env;          /* the step's environment at user_init */
	int have_ns;
	int pyxis_first;          /* pyxis's task_init runs before ours */
	dev_t ns_dev;
	ino_t ns_ino;
	int inside;               /* this task joined a container */
	struct rdzv_container_changes ch;
} ctr;

struct names {
	char **v;
	size_t n, cap;
	int oom;
};

/* The SPANK plugins loaded in this process, in load order: Slurm loads the
 * plugstack.conf lines in order, so dl_iterate_phdr's order is theirs.
 * RTLD_NOLOAD only looks up an object that is already loaded. */
static int add_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	struct names *nm = data;
	const char *pname;
	void *h;

	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;
	if (!(h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD)))
		return 0;
	if (dlsym(h, "slurm_spank_init") && (pname = dlsym(h, "plugin_name"))) {
		if (nm->n == nm->cap) {
			size_t cap = nm->cap ? nm->cap * 2 : 8;
			char **nv = realloc(nm->v, cap * sizeof(*nv));

			if (!nv) {
				nm->oom = 1;
				dlclose(h);
				return 1;
			}
			nm->v = nv;
			nm->cap = cap;
		}
		if (!(nm->v[nm->n] = strdup(pname)))
			nm->oom = 1;
		else
			nm->n++;
	}
	dlclose(h);
	return nm->oom;
}

static enum rdzv_container_order loaded_order(void)
{
	struct names nm = { NULL, 0, 0, 0 };
	enum rdzv_container_order o;
	size_t i;

	dl_iterate_phdr(add_loaded, &nm);
	o = rdzv_container_order((const char *const *)nm.v, nm.n);
	for (i = 0; i < nm.n; i++)
		free(nm.v[i]);
	free(nm.v);
	return o;
}

static const char *local_get(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

static const char *remote_get(void *ctx, const char *name)
{
	static char buf[256];

	return rdzv_job_getenv(ctx, name, buf, sizeof(buf)) > 0 ? buf : NULL;
}

/* Would the plugin set anything in this step's tasks? */
static int has_work(void)
{
	const struct rdzv_mode *mode = rdzv_mode_resolve(&rdzv.opts, &rdzv.conf);
	const char *bind = rdzv_bind_resolve(&rdzv.opts, &rdzv.conf);

	return (mode && mode->fill) || (bind[0] && strcmp(bind, "none") != 0)
	       || (rdzv.conf.profiles[0] && strcmp(rdzv.opts.profile, "none") != 0);
}

static int refuse_order(char *err, size_t errlen)
{
	return rdzv_err(err, errlen, "this step asks pyxis for a container, but plugstack.conf "
	                "loads rdzv.so before spank_pyxis.so: pyxis would then overwrite the "
	                "step's rendezvous, binding and enforced profile variables with the "
	                "container's (the image's ENV, enroot hooks) after rdzv set them. List "
	                "rdzv.so after spank_pyxis.so in plugstack.conf (doc/containers.md)");
}

int rdzv_container_local(spank_t sp, char *err, size_t errlen)
{
	(void)sp;
	if (spank_context() != S_CTX_LOCAL || !has_work()
	    || !rdzv_container_requested(local_get, NULL))
		return 0;
	return loaded_order() == RDZV_ORDER_RDZV_FIRST ? refuse_order(err, errlen) : 0;
}

static void free_env(void)
{
	size_t i;

	for (i = 0; ctr.user_env && ctr.user_env[i]; i++)
		free(ctr.user_env[i]);
	free(ctr.user_env);
	ctr.user_env = NULL;
}

int rdzv_container_user_init(spank_t sp, char *err, size_t errlen)
{
	enum rdzv_container_order order = loaded_order();
	char **envp = NULL;
	struct stat st;
	size_t n = 0, i;

	free_env();
	/* Only pyxis, listed before us, is taken to have joined a container:
	 * a mount namespace entered for another reason (job_container/tmpfs)
	 * must not change what the plugin decides. */
	ctr.pyxis_first = order == RDZV_ORDER_PYXIS_FIRST;
	if (stat(NS_PATH, &st) == 0) {
		ctr.have_ns = 1;
		ctr.ns_dev = st.st_dev;
		ctr.ns_ino = st.st_ino;
	}
	/* srun refused this already; a plugstack.conf that differs on this
	 * node is only caught when pyxis's own variables ask for the image
	 * (Slurm removes the _SLURM_SPANK_OPTION_ copies before init_post_opt). */
	if (order == RDZV_ORDER_RDZV_FIRST && has_work() && rdzv_container_requested(remote_get, sp))
		return refuse_order(err, errlen);
	if (!ctr.pyxis_first)
		return 0;
	/* S_JOB_ENV is slurmstepd's array, which it may change or free after
	 * this hook (spank_setenv reallocates it): keep a copy. */
	if (spank_get_item(sp, S_JOB_ENV, &envp) != ESPANK_SUCCESS || !envp)
		return 0;
	while (envp[n])
		n++;
	if (!(ctr.user_env = calloc(n + 1, sizeof(char *))))
		return rdzv_err(err, errlen, "out of memory copying the step's environment");
	for (i = 0; i < n; i++)
		if (!(ctr.user_env[i] = strdup(envp[i]))) {
			free_env();
			return rdzv_err(err, errlen, "out of memory copying the step's environment");
		}
	return 0;
}

int rdzv_container_joined(void)
{
	struct stat st;

	return ctr.pyxis_first && ctr.have_ns
	       && (stat(NS_PATH, &st) != 0 || st.st_dev != ctr.ns_dev || st.st_ino != ctr.ns_ino);
}

int rdzv_container_restore_task(spank_t sp, const struct rdzv_envset *env,
                                const struct rdzv_env_ops *ops, char *err, size_t errlen)
{
	(void)sp;
	ctr.inside = rdzv_container_joined();
	if (!ctr.inside)
		return 0;
	return rdzv_container_restore(env, ctr.user_env, ops, &ctr.ch, err, errlen) < 0 ? -1 : 0;
}

void rdzv_container_report_task(spank_t sp, const struct rdzv_task *t,
                                const struct rdzv_envset *env)
{
	char text[2048];
	const struct rdzv_env_entry *e;
	int n;

	(void)sp;
	if (!ctr.inside)
		return;
	n = rdzv_container_replaced(&ctr.ch, env, text, sizeof(text));
	if (n > 0 && t->rank == 0)
		fprintf(stderr, RDZV_TAG ": warning: inside the container, %d variable%s set by the "
		        "image's ENV or an enroot hook %s replaced: %s\n", n, n > 1 ? "s" : "",
		        n > 1 ? "were" : "was", text);
	else if (rdzv.verbose && t->local_rank == 0 && ctr.ch.n > 0)
		fprintf(stderr, RDZV_TAG ": inside the container: %zu variable%s set by the image or "
		        "an enroot hook agree%s with the step's\n", ctr.ch.n, ctr.ch.n > 1 ? "s" : "",
		        ctr.ch.n > 1 ? "" : "s");
	/* Runs in the container's mount namespace: the path is the one NCCL
	 * will dlopen there. */
	e = rdzv_envset_find(env, "NCCL_ENV_PLUGIN");
	if (e && e->value && (e->outcome == RDZV_OUT_SET || e->outcome == RDZV_OUT_ENFORCED)
	    && t->local_rank == 0 && access(e->value, R_OK) != 0)
		fprintf(stderr, RDZV_TAG ": warning: %s: NCCL_ENV_PLUGIN=%s is not visible inside the "
		        "container, so NCCL there cannot load it and the profile's enforced entries "
		        "are not kept against the application; the administrator mounts it with an "
		        "enroot mounts.d line (doc/containers.md)\n",
		        rdzv.nodename[0] ? rdzv.nodename : "?", e->value);
	fflush(stderr);
	rdzv_container_changes_free(&ctr.ch);
}

int rdzv_container_carry_task(spank_t sp, const struct rdzv_task *t,
                              const struct rdzv_envset *env, const struct rdzv_envset *late,
                              const struct rdzv_env_ops *ops, char *err, size_t errlen)
{
	struct rdzv_apptainer_stats st;
	char note[512];

	(void)sp;
	if (!rdzv.conf.container_env)
		return 0;
	memset(&st, 0, sizeof(st));
	if (rdzv_container_apptainer(env, ops, &st, err, errlen) < 0
	    || (late && rdzv_container_apptainer(late, ops, &st, err, errlen) < 0))
		return -1;
	if (rdzv.verbose && t->local_rank == 0) {
		rdzv_container_apptainer_note(&st, note, sizeof(note));
		if (note[0])
			fprintf(stderr, RDZV_TAG ": %s: %s\n", rdzv.nodename[0] ? rdzv.nodename : "?",
			        note);
		fflush(stderr);
	}
	return 0;
}

void rdzv_container_exit(void)
{
	free_env();
	rdzv_container_changes_free(&ctr.ch);
}

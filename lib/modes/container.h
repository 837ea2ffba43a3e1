/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/modes/: what each mode sets (torch, Megatron, launchers, frameworks,
 * containers), srun's verdict on Megatron's groups over the domains, and the
 * plugstack arguments that choose them. Uses lib/domains/, lib/step/,
 * lib/common/. */
/* container.h: the step's rendezvous inside a container: pyxis + enroot
 * (the first part), Apptainer and Singularity (rdzv_container_apptainer,
 * at the end).
 *
 * pyxis: this rule follows pyxis 0.24's behaviour as read in its source; it
 * is not exercised end to end here, since no Debian suite packages pyxis or
 * enroot (doc/containers.md). What pyxis 0.24 does in its task_init (pyxis_slurmstepd.c): the node's
 * first task starts the container (`enroot start`, whose environment is the
 * container's: the image's ENV from its /etc/environment, enroot's
 * environ.d, the names given to --container-env, and what enroot hooks such
 * as 50-slurm-pytorch.sh append); then every task copies each variable of
 * the container's environment over its own (spank_setenv overwrite=1),
 * except the names given to --container-env; then, when PYTORCH_VERSION is
 * set, RANK=SLURM_PROCID and LOCAL_RANK=SLURM_LOCALID; then it joins the
 * container's namespaces. A plugin whose task_init runs after pyxis's (it
 * is listed after pyxis in plugstack.conf) sees all of that and runs inside
 * the container's mount namespace; one listed before pyxis has its values
 * overwritten afterwards and cannot answer.
 *
 * The rule (doc/containers.md): inside a container the plugin decides
 * exactly as outside. Every name the plugin is about to set that the
 * container changed (its value differs from what the step carried into
 * user_init, which is what the user exported) first gets the user's value
 * back, or is removed when the user had none: a variable the image declares
 * or a hook sets is not a user's export. The ordinary precedence then runs
 * (the user's export beats the plugin's default, enforced entries always
 * win), and every value the container had set that the task does not keep
 * is reported. An order that cannot be made correct (rdzv before pyxis) is
 * refused. */
#ifndef RDZV_CONTAINER_H
#define RDZV_CONTAINER_H

#include <stddef.h>

#include "envset.h"

/* One name the container changed before the plugin's task_init. */
struct rdzv_container_change {
	char *name;
	char *container_value; /* what the container's environment set */
	char *user_value;      /* what the user's step had; NULL: unset */
};

struct rdzv_container_changes {
	struct rdzv_container_change *v;
	size_t n;
};

/* Put back the user's values (user_envp: the step's environment as
 * user_init saw it, NULL-terminated "NAME=value") for every name of set
 * whose current value (ops->get) differs, and record each change in ch
 * (emptied first). Returns the number of changes, or -1 with the variable
 * named in err. */
int rdzv_container_restore(const struct rdzv_envset *set, char *const *user_envp,
                           const struct rdzv_env_ops *ops,
                           struct rdzv_container_changes *ch, char *err, size_t errlen);

/* After rdzv_envset_apply(set): the changes whose container value the task
 * does not keep, as "NAME=container -> value (origin)" separated by "; ",
 * into buf. Returns how many were replaced (0: the container agreed with
 * the plugin everywhere). A text longer than len is cut. */
int rdzv_container_replaced(const struct rdzv_container_changes *ch,
                            const struct rdzv_envset *set, char *buf, size_t len);

void rdzv_container_changes_free(struct rdzv_container_changes *ch); /* accepts NULL */

/* Where rdzv stands against pyxis in plugstack order, from the SPANK
 * plugins' names (plugin_name) in the order Slurm loaded them. */
enum rdzv_container_order {
	RDZV_ORDER_NO_PYXIS,    /* pyxis not loaded: nothing to decide */
	RDZV_ORDER_PYXIS_FIRST, /* rdzv after pyxis: the rule holds */
	RDZV_ORDER_RDZV_FIRST,  /* rdzv before pyxis: cannot be made correct */
};
enum rdzv_container_order rdzv_container_order(const char *const *names, size_t n);

/* Does the step ask pyxis for a container? get is getenv-like over srun's
 * (or the step's) environment: Slurm exports each SPANK option given on the
 * command line as _SLURM_SPANK_OPTION_<plugin>_<option> before any
 * init_post_opt runs, and pyxis also reads PYXIS_CONTAINER_IMAGE and
 * PYXIS_CONTAINER_NAME. Returns 1 or 0. */
int rdzv_container_requested(const char *(*get)(void *ctx, const char *name), void *ctx);

/* Apptainer (and Singularity, which in Debian is Apptainer) applies the
 * image's %environment (a converted Docker image's ENV) over the task's
 * environment after the plugin has set it: under `srun --rdzv=torch
 * apptainer exec IMAGE ...` an image declaring RANK=0 WORLD_SIZE=1
 * MASTER_ADDR=localhost would give every task those. A host variable
 * APPTAINERENV_NAME=value gives NAME=value inside the container, over the
 * image's, and is kept by --cleanenv (measured with Apptainer 1.4.5,
 * doc/containers.md). The plugin cannot see that a task will
 * run apptainer (a wrapper script, `singularity`), so every task gets them.
 *
 * For every entry of set, after rdzv_envset_apply (its outcome known):
 *  - the task ends with NAME=value (set, enforced, or the user's export
 *    kept): APPTAINERENV_NAME and SINGULARITYENV_NAME get that same value,
 *    unless the user exported either of them and the entry is not ENFORCE:
 *    the user's are kept, as their NAME would be. An ENFORCE entry (the
 *    profile's enforce, the plugin's identity variables) overwrites both;
 *  - the entry removes NAME (UNSET): the user's APPTAINERENV_NAME and
 *    SINGULARITYENV_NAME go too (the host cannot remove an image's own).
 * Both prefixes, always equal: SingularityCE reads only SINGULARITYENV_;
 * Apptainer 1.4.5 reads both and prints nothing when they agree, but an
 * INFO line for a SINGULARITYENV_ name alone and two WARNINGs when they
 * differ (measured; doc/containers.md). Names are never longer than
 * envset's 128 bytes. Counts are added to st (not zeroed), so the glue can
 * call this for each of a task's sets. Returns 0, or -1 with the variable
 * named in err. */
#define RDZV_APPTAINER_PREFIX "APPTAINERENV_"
#define RDZV_SINGULARITY_PREFIX "SINGULARITYENV_"

struct rdzv_apptainer_stats {
	unsigned set;      /* names given both copies */
	unsigned kept;     /* the user's APPTAINERENV_/SINGULARITYENV_NAME kept */
	unsigned removed;  /* the user's copies removed (UNSET entries) */
	char kept_names[256]; /* "NAME NAME ..." of kept ones, cut when long */
};

int rdzv_container_apptainer(const struct rdzv_envset *set, const struct rdzv_env_ops *ops,
                             struct rdzv_apptainer_stats *st, char *err, size_t errlen);

/* The --rdzv-verbose line (no "rdzv: " tag, no newline) for st: "" when
 * nothing was carried. */
void rdzv_container_apptainer_note(const struct rdzv_apptainer_stats *st, char *buf,
                                   size_t len);

/* Apptainer's binds: Apptainer reads APPTAINER_BIND (and
 * SINGULARITY_BIND) from the environment of the `apptainer` command, a
 * comma-separated list of SRC[:DST[:OPTS]]. The value for base (the user's,
 * NULL or "" for none) with each of entries appended after it, comma
 * separated, unless it is already there as a whole entry (a step started
 * from an armed step's task). Returns a malloc()ed string, NULL when out of
 * memory. */
char *rdzv_container_bind_append(const char *base, const char *const *entries, size_t n);

/* 1 when path can be one side of such an entry (absolute, no ',' or ':',
 * which the list cannot carry), 0 when not. */
int rdzv_container_bind_path_ok(const char *path);

/* The task's program (argv, argc words) runs an Apptainer or Singularity
 * image with the host's environment cleaned (apptainer|singularity
 * exec|run|shell|test ... --cleanenv, -e, --containall, -C, or a short
 * cluster holding e or C) and gives the image no PYTHONPATH of its own
 * (no --env naming PYTHONPATH, no --env-file): the runtime's name as
 * argv[0] spells it (its last part), else NULL. Such an image never sees
 * the PYTHONPATH the plugin points at hang_python=: srun says so when the
 * user asked for --rdzv-collective-timeout or --rdzv-debug=hang. */
const char *rdzv_container_cleans_pythonpath(int argc, char *const *argv);

#endif

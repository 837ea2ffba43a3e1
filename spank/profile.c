/* SPDX-License-Identifier: GPL-2.0-or-later */
/* profile.c: glue of site NCCL profiles (logic in lib/profile/.c).
 *
 *   option callback (every context): remember --nccl-profile, check syntax
 *   srun/sbatch (init_post_opt): "list" prints and exits 0; a name must be
 *     an existing profile that loads cleanly, else srun stops here
 *   slurmstepd user_init (as the user, once per node): pick and resolve
 *     into one envset that every task of the node copies ("multinode"
 *     lines by the step's node count)
 *   task_init: copy the entries into the task's set; node 0's first task
 *     says which profile applied, once per step
 *   "require mnnvl": user_init checks the node once per step
 *     (IMEX channel, NVML fabric: lib/gpu/mnnvl.c) and fails the node's
 *     tasks naming the node and the reason; task_init gives each task
 *     NVIDIA_IMEX_CHANNELS
 *
 * Files are read as the job's user (user_init runs after slurmstepd drops
 * privileges), so profiles must be readable by all users; they are not
 * secret, and requiring root ownership and no group/other write is what
 * protects them. */
#include "config.h"
#include "plugin.h"
#include "hooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnnvl.h"
#include "profile.h"
#include "profile_policy.h"
#include "record.h"
#include "util.h"

#define PARTITION_MAX 256

static struct {
	char opt[RDZV_NAME_MAX];     /* --nccl-profile value; "" not given */
	struct rdzv_envset *resolved; /* user_init's result for this node */
	struct rdzv_profile_pick pick;
	char partition[PARTITION_MAX];
	char *policy;                 /* RDZV_NCCL_POLICY for the NCCL env plugin */
	char imex[256];               /* NVIDIA_IMEX_CHANNELS under "require mnnvl"; "" none */
} prof;

int rdzv_profile_option(const char *val, char *err, size_t errlen)
{
	char why[256];

	if (!val || !*val)
		return rdzv_err(err, errlen, "--nccl-profile needs a value: a profile name, list or "
		                "none");
	if (strcmp(val, "list") != 0 && strcmp(val, "none") != 0
	    && rdzv_profile_name_check(val, why, sizeof(why)) < 0)
		return rdzv_err(err, errlen, "invalid --nccl-profile: %s", why);
	snprintf(prof.opt, sizeof(prof.opt), "%s", val);
	snprintf(rdzv.opts.profile, sizeof(rdzv.opts.profile), "%s", val);
	return 0;
}

static int open_dir(struct rdzv_profile_dir *d, char *err, size_t errlen)
{
	char why[RDZV_ERRLEN];

	/* Root owns the admin's directory; nobody else is trusted. */
	if (rdzv_profile_dir_open(d, rdzv.conf.profiles, 0, why, sizeof(why)) < 0)
		return rdzv_err(err, errlen, "NCCL profiles (plugstack profiles=): %s", why);
	return 0;
}

/* "a, b, c" into buf, for the error that lists the valid names. */
static void names_text(const struct rdzv_profile_dir *d, char *buf, size_t len)
{
	char **names = NULL;
	size_t off = 0;
	int n, i;

	buf[0] = '\0';
	if ((n = rdzv_profile_dir_names(d, &names, NULL, 0)) < 0)
		return;
	for (i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", names[i]);
	if (n == 0)
		snprintf(buf, len, "(none)");
	rdzv_profile_names_free(names, n);
}

static int exists(const struct rdzv_profile_dir *d, const char *name)
{
	char **names = NULL;
	int n, i, found = 0;

	if ((n = rdzv_profile_dir_names(d, &names, NULL, 0)) < 0)
		return 0;
	for (i = 0; i < n; i++)
		found |= strcmp(names[i], name) == 0;
	rdzv_profile_names_free(names, n);
	return found;
}

int rdzv_profile_local(spank_t sp, char *err, size_t errlen)
{
	struct rdzv_profile_dir d;
	struct rdzv_profile_pick pick;
	struct rdzv_profile_source src = { rdzv_profile_dir_read, &d };
	struct rdzv_envset *scratch = NULL;
	struct rdzv_notes notes;
	const char *partition = getenv("SLURM_JOB_PARTITION");
	int listing = strcmp(prof.opt, "list") == 0, rv = -1;
	size_t i;

	(void)sp;
	rdzv_notes_init(&notes);
	if (!rdzv.conf.profiles[0]) {
		if (listing) {
			printf(RDZV_TAG ": no NCCL profiles are configured on this cluster\n");
			fflush(stdout);
			exit(0);
		}
		if (prof.opt[0] && strcmp(prof.opt, "none") != 0)
			return rdzv_err(err, errlen, "--nccl-profile=%s: no NCCL profiles are configured "
			                "on this cluster", prof.opt);
		return 0;
	}
	if (open_dir(&d, err, errlen) < 0)
		return -1;
	if (rdzv_profile_pick(listing ? NULL : prof.opt, partition, rdzv.conf.profile,
	                      rdzv.conf.partition_profiles, &pick, err, errlen) < 0)
		return -1;
	if (listing) {
		/* SPANK has no "stop here successfully": exiting from srun's or
		 * sbatch's init_post_opt is the way (nothing was allocated yet). */
		if (rdzv_profile_print_list(stdout, &d, &pick, partition, rdzv.conf.profile,
		                            rdzv.conf.partition_profiles, err, errlen) < 0)
			return -1;
		fflush(stdout);
		exit(0);
	}
	if (pick.why == RDZV_PICK_USER && !exists(&d, pick.chosen)) {
		char valid[RDZV_ERRLEN / 2];

		names_text(&d, valid, sizeof(valid));
		return rdzv_err(err, errlen, "--nccl-profile=%s: no such profile (available: %s; or "
		                "none, list)", pick.chosen, valid);
	}
	/* Load what the step will load, so that a broken profile stops srun
	 * with file:line instead of failing every task on the nodes. */
	if (!(scratch = rdzv_envset_create()))
		return rdzv_err(err, errlen, "out of memory");
	if (rdzv_profile_resolve(&pick, &src, scratch, &notes, err, errlen) < 0)
		goto fail;
	if (rdzv.opts.verbose > 0)
		for (i = 0; i < notes.n; i++)
			slurm_info(RDZV_TAG ": %s", notes.v[i]);
	rv = 0;
fail:
	rdzv_envset_destroy(scratch);
	rdzv_notes_clear(&notes);
	return rv;
}

/* When the profile enforces NCCL_ENV_PLUGIN (the admin installed
 * libnccl-env-rdzv.so), hand the enforced entries to it: NCCL then keeps
 * them even if the program changes its environment before NCCL starts. */
static int carry_policy(char *err, size_t errlen)
{
	const struct rdzv_env_entry *e = rdzv_envset_find(prof.resolved, "NCCL_ENV_PLUGIN");

	free(prof.policy);
	prof.policy = NULL;
	if (!e || e->policy != RDZV_SET_ENFORCE)
		return 0;
	if (!(prof.policy = malloc(RDZV_VALUE_MAX)))
		return rdzv_err(err, errlen, "out of memory");
	if (rdzv_policy_encode(prof.resolved, prof.policy, RDZV_VALUE_MAX, err, errlen) < 0)
		return -1;
	return 0;
}

/* "require mnnvl": this node, once per step, before any task starts. The
 * NVML library and the /dev prefix are the admin's (plugstack.conf). */
static int check_mnnvl(const struct rdzv_profile_needs *needs, char *err, size_t errlen)
{
	struct rdzv_mnnvl_result res;
	char lib[RDZV_PATH_MAX], why[RDZV_ERRLEN];
	const char *node = rdzv.nodename[0] ? rdzv.nodename : "?";

	lib[0] = '\0';
	if (rdzv.conf.nvml_library[0]
	    && rdzv_path_node(rdzv.conf.nvml_library, rdzv.stepd_node, lib, sizeof(lib), why,
	                      sizeof(why)) < 0)
		return rdzv_err(err, errlen, "MNNVL: node %s: plugstack nvml_library: %s", node, why);
	if (rdzv_mnnvl_check_once(rdzv.conf.identity_root[0] ? rdzv.conf.identity_root : NULL,
	                          &rdzv_node_fabric, lib, &res, why, sizeof(why)) < 0)
		return rdzv_err(err, errlen, "MNNVL: node %s is not ready for multi-node NVLink: %s "
		                "(required by %s)", node, why, needs->mnnvl_where);
	snprintf(prof.imex, sizeof(prof.imex), "%s", res.channels);
	slurm_verbose(RDZV_TAG ": step %u.%u: node %s ready for multi-node NVLink: %u GPUs in "
	              "NVLink domain %s, IMEX channels %s", rdzv.step.job_id, rdzv.step.step_id,
	              node, res.ngpus, res.domain[0] ? res.domain : "?", res.channels);
	return 0;
}

int rdzv_profile_user_init(spank_t sp, char *err, size_t errlen)
{
	struct rdzv_profile_dir d;
	struct rdzv_profile_source src = { rdzv_profile_dir_read, &d };
	struct rdzv_profile_needs needs;
	struct rdzv_notes notes;
	size_t i;
	int rv = -1;

	rdzv_envset_destroy(prof.resolved);
	prof.resolved = NULL;
	prof.imex[0] = '\0';
	memset(&prof.pick, 0, sizeof(prof.pick));
	if (!rdzv.conf.profiles[0]) {
		if (prof.opt[0] && strcmp(prof.opt, "none") != 0)
			return rdzv_err(err, errlen, "--nccl-profile=%s: this node has no NCCL profiles "
			                "configured", prof.opt);
		return 0;
	}
	if (strcmp(prof.opt, "list") == 0)
		return rdzv_err(err, errlen, "--nccl-profile=list only lists the profiles");
	if (rdzv_job_getenv(sp, "SLURM_JOB_PARTITION", prof.partition, sizeof(prof.partition)) <= 0)
		prof.partition[0] = '\0';
	rdzv_notes_init(&notes);
	if (open_dir(&d, err, errlen) < 0)
		goto fail;
	if (rdzv_profile_pick(prof.opt, prof.partition, rdzv.conf.profile,
	                      rdzv.conf.partition_profiles, &prof.pick, err, errlen) < 0)
		goto fail;
	/* "multinode" lines count in steps on several nodes (the whole step's
	 * count for a heterogeneous one, remote.c het_facts); every node
	 * resolves with the same count, so every task agrees. */
	prof.pick.nnodes = rdzv.step.nnodes;
	if (!(prof.resolved = rdzv_envset_create())) {
		rdzv_err(err, errlen, "out of memory");
		goto fail;
	}
	if (rdzv_profile_resolve_needs(&prof.pick, &src, prof.resolved, &needs, &notes, err,
	                               errlen) < 0)
		goto fail;
	for (i = 0; i < notes.n; i++)
		slurm_verbose(RDZV_TAG ": %s", notes.v[i]);
	if (carry_policy(err, errlen) < 0)
		goto fail;
	if (needs.mnnvl && check_mnnvl(&needs, err, errlen) < 0)
		goto fail;
	rv = 0;
fail:
	if (rv < 0) {
		rdzv_envset_destroy(prof.resolved);
		prof.resolved = NULL;
	}
	rdzv_notes_clear(&notes);
	return rv;
}

/* One line per step: node 0's first task writes it to its stderr, which is
 * what the user reads (srun's output, the batch job's .out file). */
static void say_which(void)
{
	const struct rdzv_profile_pick *k = &prof.pick;
	char also[RDZV_NAME_MAX + 64] = "";
	const char *dw = k->deflt_why == RDZV_PICK_PARTITION ? "partition default" : "site default";

	/* srun/salloc -p A,B before Slurm 24.11.3: SLURM_JOB_PARTITION is the
	 * list (lib/profile: rdzv_partition_map_lookup). */
	if (k->partition_ambiguous && k->why != RDZV_PICK_USER && k->why != RDZV_PICK_USER_NONE)
		fprintf(stderr, RDZV_TAG ": warning: step %u.%u: SLURM_JOB_PARTITION=%s names several "
		        "partitions whose NCCL profile defaults differ (srun/salloc -p A,B before Slurm "
		        "24.11.3); none of them applies: choose one with --nccl-profile\n",
		        rdzv.step.job_id, rdzv.step.step_id, prof.partition);
	if (!k->chosen[0] && !k->deflt[0]) {
		fflush(stderr);
		return;
	}
	if (k->deflt[0] && strcmp(k->deflt, k->chosen) != 0)
		snprintf(also, sizeof(also), "; enforced entries of %s (%s) %s", k->deflt, dw,
		         k->chosen[0] ? "also apply" : "apply");
	if (k->why == RDZV_PICK_USER_NONE)
		fprintf(stderr, RDZV_TAG ": step %u.%u: no NCCL profile (--nccl-profile=none)%s\n",
		        rdzv.step.job_id, rdzv.step.step_id, also);
	else if (k->why == RDZV_PICK_PARTITION)
		fprintf(stderr, RDZV_TAG ": step %u.%u: NCCL profile %s (default of partition %s)%s\n",
		        rdzv.step.job_id, rdzv.step.step_id, k->chosen, prof.partition, also);
	else
		fprintf(stderr, RDZV_TAG ": step %u.%u: NCCL profile %s (%s)%s\n", rdzv.step.job_id,
		        rdzv.step.step_id, k->chosen, rdzv_pick_why_name(k->why), also);
	fflush(stderr);
}

int rdzv_profile_task_init(spank_t sp, const struct rdzv_task *t, struct rdzv_envset *env,
                           char *err, size_t errlen)
{
	size_t i;

	(void)sp;
	if (!prof.resolved)
		return 0;
	for (i = 0; i < prof.resolved->n; i++) {
		const struct rdzv_env_entry *e = &prof.resolved->v[i];

		if (rdzv_envset_add(env, e->name, e->value, e->policy, e->origin, err, errlen) < 0)
			return -1;
	}
	if (prof.policy && rdzv_envset_add(env, RDZV_POLICY_VAR, prof.policy, RDZV_SET_ENFORCE,
	                                   "profile (for NCCL's env plugin)", err, errlen) < 0)
		return -1;
	/* The channels the check found, for containers (the NVIDIA container
	 * toolkit reads it; Apptainer gets it as APPTAINERENV_, container.c).
	 * A default: a user who exported a choice keeps it. */
	if (prof.imex[0] && rdzv_envset_add(env, "NVIDIA_IMEX_CHANNELS", prof.imex,
	                                    RDZV_SET_DEFAULT, "MNNVL (this node's IMEX channels)",
	                                    err, errlen) < 0)
		return -1;
	if (rdzv.step.node_id == 0 && t->local_rank == 0)
		say_which();
	return 0;
}

void rdzv_profile_record_info(const char **name, const char **deflt, uint64_t *hash)
{
	*name = prof.resolved && prof.pick.chosen[0] ? prof.pick.chosen : NULL;
	*deflt = prof.resolved && prof.pick.deflt[0] ? prof.pick.deflt : NULL;
	*hash = prof.resolved ? rdzv_record_env_hash(prof.resolved) : 0;
}

const char *rdzv_profile_hca_allow(void)
{
	const struct rdzv_env_entry *e = rdzv_envset_find(prof.resolved, "NCCL_IB_HCA");

	return e && e->policy != RDZV_SET_UNSET ? e->value : NULL;
}

void rdzv_profile_exit(void)
{
	rdzv_envset_destroy(prof.resolved);
	prof.resolved = NULL;
	free(prof.policy);
	prof.policy = NULL;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* srun.c: what srun does for a step, in order, in one place.
 *
 *   slurm_spank_init       srun's command line read once (rdzv_srun_argv);
 *                          whether a failed rank stops the step decided
 *                          before srun reads SLURM_KILL_BAD_EXIT (failure.c)
 *   init_post_opt          the step is marked as srun's (handover.h); what
 *                          the command line alone decides is refused before
 *                          srun asks for an allocation
 *   local_user_init        rdzv_srun_user_init: the step's facts read once
 *                          into a struct rdzv_srun_step, then, in order:
 *                          layout and node order, topology blocks, the plan
 *                          for the nodes, the mode's checks, the NVLink
 *                          domain exchange, the failure channel, the hang
 *                          channel
 *   exit                   the same undone in reverse: the hang channel
 *                          (its verdict), the failure channel (its line),
 *                          the domain exchange
 *
 * Everything a user can get wrong is refused here, on the submit host,
 * before the step's tasks exist: an error stops srun with a non-zero exit.
 * What srun asks slurmctld is in slurmctld.c; the channels are
 * lib/step/channel.h's, their messages failure.c's, hang.c's and
 * domains.c's. */
#include "config.h"
#include "plugin.h"
#include "slurmctld.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "domain.h"
#include "handover.h"
#include "hostlist.h"
#include "launcher.h"
#include "master.h"
#include "megatron.h"
#include "port.h"
#include "srunargs.h"
#include "util.h"

#define HOSTFILE_MAX 65536

extern char **environ;

/* srun's own command line (SPANK gives plugins only the task's program),
 * read by rdzv_srun_init, once, for every hook after it. */
static struct {
	char *buf;
	char **argv;
	int argc; /* -1: unreadable */
} cmd = { NULL, NULL, -1 };

/* The step's NVLink domains by Slurm's topology blocks (nvlink_domain=block),
 * for the mode's whole-step check. */
struct block_domains {
	struct rdzv_domains d;
	struct rdzv_megatron_domains md;
	int known;
};

static const struct rdzv_mode *resolved_mode(void)
{
	return rdzv_mode_resolve(&rdzv.opts, &rdzv.conf);
}

void rdzv_srun_init(void)
{
	cmd.argc = rdzv_srun_argv(&cmd.buf, &cmd.argv);
	rdzv_failure_srun_init(cmd.argc, cmd.argv);
}

/* Megatron's world size against TP x PP x CP where srun's command line
 * fixes it (srun -n 4, -N 2 --ntasks-per-node=2): the same refusal as the
 * one local_user_init makes with the step's real count, before any step.
 * Not for a heterogeneous line (sz is its first component) nor with
 * -n/-N left to the allocation. at: the program's index in srun's line. */
static int megatron_world(const struct rdzv_srun_size *sz, int at, char *err, size_t errlen)
{
	struct rdzv_megatron_layout ml;
	unsigned long n = rdzv_srun_exact_tasks(sz);
	char msg[RDZV_ERRLEN];
	int i;

	if (!n || n > UINT32_MAX)
		return 0;
	for (i = at; i < cmd.argc; i++)
		if (strcmp(cmd.argv[i], ":") == 0)
			return 0;
	if (rdzv_megatron_read(cmd.argc - at, cmd.argv + at, environ, &ml, msg, sizeof(msg)) < 0)
		return 0; /* said with the step's facts in local_user_init */
	if (rdzv_megatron_check_world(&ml, (uint32_t)n, msg, sizeof(msg)) < 0)
		return rdzv_err(err, errlen, "--rdzv=megatron layout check: %s", msg);
	return 0;
}

/* What srun's own command line already decides, refused here, before srun
 * asks for an allocation: a refusal after it (local_user_init) leaves the
 * job holding its nodes, and srun's allocation shepherd holding the
 * terminal, for about 20 s. A framework launcher (deepspeed, torchrun, ...)
 * under a one-task-per-rank mode in a step that certainly has several tasks
 * (-n, -N, --ntasks-per-node), and a one-launcher-per-node mode asked for
 * more tasks than nodes, and Megatron's world size where the line fixes it.
 * What the command line leaves open is checked again
 * in local_user_init with the step's real counts. */
static int early_check(const struct rdzv_mode *mode, char *err, size_t errlen)
{
	struct rdzv_srun_size sz;
	unsigned long min;
	int at;

	if (!mode || !mode->fill
	    || !(mode->flags & (RDZV_MODE_REFUSES_LAUNCHERS | RDZV_MODE_ONE_TASK_PER_NODE)))
		return 0;
	if (cmd.argc <= 0 || rdzv_srun_size(cmd.argc, cmd.argv, &sz) < 0)
		return 0; /* srun refuses a malformed line itself */
	min = rdzv_srun_min_tasks(&sz);
	if ((mode->flags & RDZV_MODE_ONE_TASK_PER_NODE)
	    && (sz.per_node > 1 || (sz.ntasks && sz.nodes_max && sz.ntasks > sz.nodes_max)))
		return rdzv_err(err, errlen, "--rdzv=%s runs one launcher per node, but this step "
		                "asks for %s (launchers on one node would collide): use srun "
		                "--ntasks-per-node=1", mode->name,
		                sz.per_node > 1 ? "several tasks per node" : "more tasks than nodes");
	at = rdzv_srun_command_index(cmd.argc, cmd.argv);
	if ((mode->flags & RDZV_MODE_REFUSES_LAUNCHERS) && min > 1 && at > 0
	    && rdzv_launcher_check(mode->name, cmd.argc - at, cmd.argv + at, environ,
	                           (uint32_t)min, err, errlen) < 0)
		return -1;
	if (strcmp(mode->name, "megatron") == 0 && at > 0)
		return megatron_world(&sz, at, err, errlen);
	return 0;
}

int rdzv_srun_init_post_opt(spank_t sp)
{
	char err[RDZV_ERRLEN];

	if (rdzv_local_opts() < 0)
		return -1;
	/* srun marks its steps with its version and hand-over format
	 * (handover.h): a batch script's srun without the plugin is not taken
	 * for one with it, and a node that cannot read the format refuses. */
	{
		char mark[96];

		if (rdzv_srun_mark_format(PACKAGE_VERSION, mark, sizeof(mark)) == 0)
			setenv(RDZV_HO_SRUN, mark, 1);
	}
	/* Before srun asks for an allocation: whether it will make one. */
	rdzv.srun_allocates = !getenv("SLURM_JOB_ID") && !getenv("SLURM_JOBID") && cmd.argc > 0
	                      && rdzv_srun_names_job(cmd.argc, cmd.argv) == 0;
	if (early_check(resolved_mode(), err, sizeof(err)) < 0) {
		slurm_error(RDZV_TAG ": %s", err);
		return -1;
	}
	return rdzv_local_checks(sp);
}

/* The step's partition: srun's own -p/--partition, else the allocation's
 * (SLURM_JOB_PARTITION, set inside salloc and sbatch). A list of partitions
 * names none (the job runs in one of them): NULL, as without one. */
static const char *step_partition(void)
{
	const char *part = getenv("SLURM_JOB_PARTITION"), *opt = NULL;
	struct rdzv_srun_args it;
	struct rdzv_srun_arg a;

	rdzv_srun_args_init(&it, cmd.argc > 0 ? cmd.argc : 0, cmd.argv);
	while (cmd.argc > 0 && rdzv_srun_args_next(&it, &a, NULL, 0) > 0)
		if (rdzv_srun_arg_is(&a, 'p', "partition", 4) && a.value)
			opt = a.value;
	if (opt)
		part = opt;
	return part && *part && !strchr(part, ',') ? part : NULL;
}

/* Everything srun needs of the step, read once: the mode, the ids, the
 * counts, the program (srun's own array, valid during local_user_init),
 * the partition. */
static void read_step(spank_t sp, struct rdzv_srun_step *s)
{
	int at;

	memset(s, 0, sizeof(*s));
	s->mode = resolved_mode();
	s->has_ids = spank_get_item(sp, S_JOB_ID, &s->job) == ESPANK_SUCCESS
	             && spank_get_item(sp, S_JOB_STEPID, &s->step) == ESPANK_SUCCESS;
	s->has_counts = spank_get_item(sp, S_JOB_NNODES, &s->nnodes) == ESPANK_SUCCESS
	                && spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &s->ntasks) == ESPANK_SUCCESS;
	s->argc = cmd.argc;
	s->argv = cmd.argv;
	if (spank_get_item(sp, S_JOB_ARGV, &s->prog_argc, &s->prog_argv) != ESPANK_SUCCESS
	    || s->prog_argc <= 0) {
		/* The task's command from srun's own command line. */
		at = cmd.argc > 0 ? rdzv_srun_command_index(cmd.argc, cmd.argv) : -1;
		s->prog_argc = at > 0 ? cmd.argc - at : 0;
		s->prog_argv = at > 0 ? cmd.argv + at : NULL;
	}
	s->partition = step_partition();
}

/* The node of rank 0 under -m arbitrary: srun lays task i on the i-th host of
 * -w/--nodelist or -F/--nodefile, or, when neither is given, of the file
 * named by SLURM_HOSTFILE (srun's own option check: -w wins over
 * SLURM_HOSTFILE). Only srun knows: nothing of it reaches the
 * nodes' environment (SLURM_STEP_NODELIST is sorted). Read here, as the
 * user, on the submit host. */
static int arbitrary_first_host(const struct rdzv_srun_step *s, char *host, size_t hostlen,
                                char *err, size_t errlen)
{
	char *text = NULL, value[8192];
	const char *hostfile = getenv("SLURM_HOSTFILE"), *from, *path;
	int is_file = 0, rc, rv = -1;

	if (s->argc < 0)
		return rdzv_err(err, errlen, "-m arbitrary: cannot read srun's command line");
	rc = rdzv_srun_arg_nodelist(s->argc, s->argv, value, sizeof(value), &is_file, err, errlen);
	if (rc < 0)
		return -1;
	if (rc == 0 && !(hostfile && *hostfile))
		return rdzv_err(err, errlen, "-m arbitrary without -w/--nodelist, -F/--nodefile or "
		                "SLURM_HOSTFILE: the node of rank 0 is unknown");
	from = rc > 0 ? (is_file ? "srun's node file" : "srun -w") : "SLURM_HOSTFILE";
	if (rc > 0 && !is_file)
		return rdzv_hostlist_nth(value, 0, host, hostlen, err, errlen) < 0 ? -1 : 0;
	path = rc > 0 ? value : hostfile;
	if (!(text = rdzv_read_head(path, HOSTFILE_MAX)))
		return rdzv_err(err, errlen, "-m arbitrary: cannot read %s %.200s", from, path);
	if (rdzv_hostfile_first(text, host, hostlen, err, errlen) == 0)
		rv = 0;
	free(text);
	return rv;
}

/* Whether host is one of the job's nodes (SLURM_NODELIST in srun: the
 * allocation's, or the step's when srun made the allocation). 1 yes, 0 no,
 * -1 unknown. A guard against misreading srun's command line; the list is
 * searched, never walked host by host, so its size costs nothing. */
static int in_step(const char *host)
{
	const char *list = getenv("SLURM_NODELIST");

	if (!list)
		return -1;
	return rdzv_hostlist_has(list, host, NULL, 0);
}

/* nvlink_domain=block: the layout's nodes by Slurm's topology blocks (a
 * second look-up, of the topology, only where the site said so; a map
 * guessed wrong would let groups cross racks). */
static int topology_blocks(const struct rdzv_srun_step *s, const struct rdzv_srun_layout *lay,
                           struct block_domains *bd, char *err, size_t errlen)
{
	char *text = NULL;
	uint32_t i;
	int rc;

	if (rdzv_slurm_topo_blocks(s->partition, rdzv.opts.verbose > 0, &text, err, errlen) < 0)
		return -1;
	rc = rdzv_domains_from_blocks(text, lay->node_list, &bd->d, err, errlen);
	free(text);
	if (rc < 0)
		return -1;
	if (bd->d.nnodes != lay->nnodes) {
		rdzv_err(err, errlen, "the step layout's node list names %u nodes, not %u",
		         bd->d.nnodes, lay->nnodes);
		rdzv_domains_free(&bd->d);
		return -1;
	}
	bd->md.d = &bd->d;
	bd->md.rank_node = lay->rank_node;
	bd->md.node_names = lay->node_names;
	bd->md.ntasks = lay->ntasks;
	bd->md.source = "nvlink_domain=block: Slurm's topology blocks";
	bd->md.tasks_per_node = lay->tasks_per_node;
	for (i = 0; i < bd->d.ndomains; i++)
		if (bd->d.domain_nodes[i] > bd->md.max_domain_nodes)
			bd->md.max_domain_nodes = bd->d.domain_nodes[i];
	bd->known = 1;
	return 0;
}

/* The step's domain map for the nodes (domain.h: RDZV_STEP_DOMAINS), in
 * srun's environment as the plan is; --rdzv-verbose shows it. */
static int hand_over_domains(const struct rdzv_srun_step *s, const struct block_domains *bd,
                             char *err, size_t errlen)
{
	char *text = NULL;

	if (rdzv_domains_text(s->job, s->step, &bd->d, &text, err, errlen) < 0)
		return -1;
	if (rdzv_handover_put(&rdzv_env_process, RDZV_HO_DOMAINS, text, err, errlen) < 0) {
		free(text);
		return -1;
	}
	if (rdzv.opts.verbose > 0)
		fprintf(stderr, RDZV_TAG ": step %u.%u NVLink domains (nvlink_domain=block, Slurm's "
		        "topology blocks; node ids of the step): %s\n", s->job, s->step,
		        strchr(text, ':') + 1);
	free(text);
	return 0;
}

/* Decide the step's port, and under -m arbitrary rank 0's host, once, here,
 * and hand them to the nodes (master.h: the step plan). The nodes only check
 * them: nodes whose ip_local_port_range differ would otherwise derive
 * different ports, and only srun knows an arbitrary layout. lay: the step's
 * layout, or NULL without one (why). */
static int hand_over_plan(const struct rdzv_srun_step *s, const struct rdzv_srun_layout *lay,
                          const char *why, char *err, size_t errlen)
{
	struct rdzv_plan plan;
	struct rdzv_port_range eph, *ephp = NULL;
	const char *dist = getenv("SLURM_DISTRIBUTION"), *list = getenv("SLURM_NODELIST");
	char *text;
	int rc;

	memset(&plan, 0, sizeof(plan));
	plan.job_id = s->job;
	plan.step_id = s->step;
	if (lay) {
		plan.order_known = 1;
		plan.order = lay->order;
		snprintf(plan.host, sizeof(plan.host), "%s", lay->host);
	} else {
		slurm_verbose(RDZV_TAG ": no step layout (%s): rank 0's node from srun's command "
		              "line and the node list", why);
	}
	if (!lay && dist && strncmp(dist, "arbitrary", 9) == 0) {
		if (arbitrary_first_host(s, plan.host, sizeof(plan.host), err, errlen) < 0)
			return -1;
		if (in_step(plan.host) == 0)
			return rdzv_err(err, errlen, "-m arbitrary: rank 0's host %s is not one of the "
			                "job's nodes (%.200s)", plan.host, list ? list : "?");
	}
	/* Otherwise (no layout) the host stays empty: srun sees the allocation's
	 * node list here (SLURM_NODELIST), not the step's, and SPANK gives srun
	 * no item with it; the nodes take node 0 of SLURM_STEP_NODELIST, the
	 * same string on every node, and the node running task 0 checks it. */
	if (rdzv.opts.port) {
		plan.port = rdzv.opts.port;
		plan.port_from_option = 1;
	} else {
		if (rdzv_ephemeral_range_read("/proc/sys/net/ipv4/ip_local_port_range", &eph) == 0)
			ephp = &eph;
		if (rdzv_port_derive(s->job, s->step, &rdzv.conf.port_range, ephp, &plan.port, err,
		                     errlen) < 0)
			return -1;
	}
	if (!(text = rdzv_plan_text(&plan)))
		return rdzv_err(err, errlen, "out of memory for the step plan");
	/* srun's own environment: spank_setenv is for the remote context; srun
	 * merges its environ into the step's after local_user_init, before it
	 * launches, under every --export for a SLURM_ name (handover.h). */
	rc = rdzv_handover_put(&rdzv_env_process, RDZV_HO_PLAN, text, err, errlen);
	free(text);
	return rc;
}

/* The mode's whole-step check (Megatron's layout) with what srun knows:
 * the command line, task and node counts, and srun's environment, where
 * srun has already rewritten SLURM_TASKS_PER_NODE and SLURM_DISTRIBUTION
 * for this step (SLURM_STEP_TASKS_PER_NODE does not exist here yet). Tasks
 * per node and the GPU model are unknown: the nodes check those again.
 * *exchange: nvlink_domain=nvml, Megatron's groups across nodes are
 * checked when the nodes have told srun their domains (domains.c), with
 * *ml. Returns 0, or -1 said. */
static int mode_checks(const struct rdzv_srun_step *s, const struct rdzv_srun_layout *lay,
                       const struct block_domains *bd, struct rdzv_megatron_layout *ml,
                       int *exchange)
{
	const struct rdzv_mode *mode = s->mode;
	struct rdzv_step st;
	char err[RDZV_ERRLEN];
	int rc;

	*exchange = 0;
	if ((!(mode->flags & RDZV_MODE_ONE_TASK_PER_NODE) && !mode->check) || !s->has_counts)
		return 0; /* without counts: checked again on the nodes */
	if ((mode->flags & RDZV_MODE_ONE_TASK_PER_NODE) && s->ntasks > s->nnodes) {
		slurm_error(RDZV_TAG ": --rdzv=%s runs one launcher per node, but this step has "
		            "%u tasks on %u nodes (launchers on one node would collide): use "
		            "srun --ntasks-per-node=1", mode->name, s->ntasks, s->nnodes);
		return -1;
	}
	memset(&st, 0, sizeof(st));
	st.nnodes = s->nnodes;
	st.ntasks = s->ntasks;
	st.gpus_on_node = -1;
	st.argc = s->prog_argc;
	st.argv = s->prog_argv;
	st.envp = environ;
	st.nvlink_domain = (int)rdzv.conf.nvlink_domain;
	st.md = bd->known ? &bd->md : NULL;
	st.domain_exchange = rdzv.conf.nvlink_domain == RDZV_NVLINK_NVML && s->nnodes > 1
	                     && lay && lay->rank_node && lay->ntasks == s->ntasks
	                     && strcmp(mode->name, "megatron") == 0
	                     && rdzv_megatron_read(st.argc, st.argv, st.envp, ml, err,
	                                           sizeof(err)) == 0
	                     && (ml->tp.n > 1 || ml->cp.n > 1 || ml->ep.n > 1 || ml->etp.n > 1);
	rc = rdzv_mode_check_step(mode, &st, err, sizeof(err));
	if (rc < 0) {
		slurm_error(RDZV_TAG ": %s", err);
		return -1;
	}
	if (rc > 0)
		slurm_spank_log(RDZV_TAG ": warning: %s", err);
	*exchange = st.domain_exchange;
	return 0;
}

/* nvlink_domain=nvml: srun listens for the nodes' domains (domains.c takes
 * the layout's ranks by node over). */
static int domain_exchange(const struct rdzv_srun_step *s, struct rdzv_srun_layout *lay,
                           const struct rdzv_megatron_layout *ml)
{
	char err[RDZV_ERRLEN], why[RDZV_ERRLEN];

	if (!s->has_ids) {
		slurm_error(RDZV_TAG ": nvlink_domain=nvml: no job or step id");
		return -1;
	}
	if (rdzv_domains_srun_start(s->job, s->step, s->nnodes, s->ntasks, ml, &lay->rank_node,
	                            &lay->node_names, why, sizeof(why)) < 0) {
		rdzv_err(err, sizeof(err), "nvlink_domain=nvml: %s", why);
		slurm_error(RDZV_TAG ": %s", err);
		return -1;
	}
	return 0;
}

/* A step refused here, after srun made its own allocation for it: srun
 * only aborts the step and exits, and the job holds its nodes until
 * slurmctld notices srun is gone, so the user's next srun queues behind it.
 * The job was made for this step alone: complete it, as srun does when its
 * step ends. Never a job srun did not make (salloc, sbatch, --jobid). */
static void release_own_allocation(const struct rdzv_srun_step *s)
{
	if (rdzv.srun_allocates && s->has_ids && s->job && rdzv_slurm_complete_job(s->job) == 0)
		slurm_verbose(RDZV_TAG ": released job %u, made by srun for the refused step", s->job);
}

/* Every refusal of a step srun has created (its reason already said) ends
 * here. Refusing in this hook would leave the step in slurmctld: srun
 * aborts the launch and exits, its shepherd's kill finds no slurmstepd, and
 * the step holds its CPUs and GPUs until the job ends, so the next srun of a
 * salloc or batch script waits ("Requested nodes are busy"). So:
 *   - srun made the job for this step alone: the job is completed and srun
 *     refuses (-1), nothing launches;
 *   - the job is the user's (salloc, sbatch, --jobid): the step launches
 *     marked refused (handover.h); each node ends every task before exec
 *     (remote.c), the step ends in slurmctld as a failed step does, the
 *     allocation stays, and srun exits 1 (0 here).
 * srun would print each node's "Exited with exit code 1": once is enough
 * (SLURM_SRUN_REDUCE_TASK_EXIT_MSG, srun(1); the user's own value wins). */
static int refuse_step(const struct rdzv_srun_step *s)
{
	char mark[32];

	if (rdzv.srun_allocates || !s->has_ids) {
		release_own_allocation(s);
		return -1;
	}
	if (rdzv_refused_format(s->job, s->step, mark, sizeof(mark)) < 0
	    || rdzv_handover_put(&rdzv_env_process, RDZV_HO_REFUSED, mark, NULL, 0) < 0)
		return -1;
	setenv("SLURM_SRUN_REDUCE_TASK_EXIT_MSG", "1", 0);
	slurm_spank_log(RDZV_TAG ": step %u.%u does not run: its tasks end before they start, "
	                "so that Slurm ends the step and job %u keeps its nodes for the next",
	                s->job, s->step, s->job);
	return 0;
}

static long us_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (long)((t1.tv_sec - t0->tv_sec) * 1000000L + (t1.tv_nsec - t0->tv_nsec) / 1000);
}

/* Whether the step's NVLink domains, where the site asks for them, are
 * known after the layout: laid is rdzv_slurm_step_layout's (-2: the
 * domains failed, derr). 0, or -1 with err. */
static int domains_known(int laid, const char *derr, const char *why, char *err, size_t errlen)
{
	if (laid == -2)
		return rdzv_err(err, errlen, "nvlink_domain=%s: %s",
		                rdzv_nvlink_domain_name(rdzv.conf.nvlink_domain), derr);
	if (laid == -1 && rdzv.conf.nvlink_domain == RDZV_NVLINK_BLOCK)
		return rdzv_err(err, errlen, "nvlink_domain=block: no step layout from slurmctld "
		                "(%s), so the step's NVLink domains are unknown", why);
	return 0;
}

/* --rdzv-verbose: one line in srun's own stderr (make bench reads it). */
static void say_layout(const struct rdzv_srun_step *s, int laid, long us, const char *why)
{
	if (rdzv.opts.verbose > 0)
		fprintf(stderr, RDZV_TAG ": step %u.%u layout from slurmctld in %ld us%s%s\n", s->job,
		        s->step, us, laid == 0 ? "" : ": ", laid == 0 ? "" : why);
}

/* srun, local_user_init: the step's work, in order. Each step that fails
 * refuses the step (srun exits non-zero before anything launches); the two
 * channels open whatever happened, as the nodes of a refused step still
 * report. */
int rdzv_srun_user_init(spank_t sp)
{
	struct rdzv_srun_step s;
	struct rdzv_srun_layout lay;
	struct block_domains bd;
	struct rdzv_megatron_layout ml;
	struct timespec t0;
	char err[RDZV_ERRLEN], why[RDZV_ERRLEN], derr[RDZV_ERRLEN];
	int rc = 0, laid = -1, exchange = 0;
	long us;

	/* What srun knows of the step, once; no earlier step's hand-over. */
	read_step(sp, &s);
	rdzv_srun_handover_clear();
	memset(&lay, 0, sizeof(lay));
	memset(&bd, 0, sizeof(bd));
	if (!s.mode || !s.mode->fill)
		goto channels;
	if (s.has_ids) { /* without ids the nodes decide alone, as without srun's plugin */
		/* 1. Layout and node order: one look-up of slurmctld per step, here
		 * only, never from the nodes; without it, what srun's command line
		 * says. */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		/* Each rank's node: NVLink domains need it; so does the grace of an
		 * armed step, to name a rank that never joined (not a reason to
		 * refuse the step). */
		laid = rdzv_slurm_step_layout(s.job, s.step, rdzv.conf.nvlink_domain != RDZV_NVLINK_NODE
		                                                 || rdzv_hang_armed(),
		                              &lay, derr, sizeof(derr), why, sizeof(why));
		if (laid == -2 && rdzv.conf.nvlink_domain == RDZV_NVLINK_NODE) {
			rdzv_srun_layout_drop_ranks(&lay); /* partial: the grace names no node */
			laid = 0;
		}
		us = us_since(&t0);
		/* 2. Topology blocks: the step's NVLink domains (nvlink_domain=block). */
		if (laid == 0 && rdzv.conf.nvlink_domain == RDZV_NVLINK_BLOCK && lay.nnodes > 0
		    && topology_blocks(&s, &lay, &bd, derr, sizeof(derr)) < 0)
			laid = -2;
		/* 3. The plan for the nodes: the domain map, rank 0's host, the node
		 * order, the port. */
		if (domains_known(laid, derr, why, err, sizeof(err)) < 0
		    || (bd.known && hand_over_domains(&s, &bd, err, sizeof(err)) < 0))
			goto plan_refused;
		say_layout(&s, laid, us, why);
		if (hand_over_plan(&s, laid == 0 ? &lay : NULL, why, err, sizeof(err)) < 0)
			goto plan_refused;
	}
	/* 4. The mode's checks with the step's real counts. */
	if (mode_checks(&s, laid == 0 ? &lay : NULL, &bd, &ml, &exchange) < 0)
		goto refused;
	/* 5. nvlink_domain=nvml: the nodes tell srun their domains. */
	if (exchange && domain_exchange(&s, &lay, &ml) < 0)
		goto refused;
	goto channels;
plan_refused:
	slurm_error(RDZV_TAG ": --rdzv=%s: %s", s.mode->name, err);
refused:
	rc = refuse_step(&s);
channels:
	rdzv_domains_free(&bd.d);
	/* 6. The grace of a failed collective: each rank's node, taken over. */
	if (rdzv_hang_armed())
		rdzv_grace_srun_start(&s, laid == 0 ? &lay : NULL);
	rdzv_srun_layout_free(&lay);
	/* 7. The failure channel: the nodes' reports of a failed rank. */
	rdzv_failure_srun_start(&s);
	/* 8. The hang channel: the asks of ranks whose collective timed out. */
	rdzv_hang_srun_start(&s);
	return rc;
}

/* srun, exit: local_user_init's work undone in reverse. */
void rdzv_srun_exit(void)
{
	int timed_out = 0, said;
	const char *verdict;

	rdzv_grace_srun_quiesce(); /* before the listener closes (a running rdzv-hang is stopped) */
	verdict = rdzv_hang_srun_stop(&timed_out);
	said = rdzv_grace_srun_stop();

	rdzv_failure_srun_stop(verdict, timed_out, said); /* the verdict joins the failure line */
	rdzv_domains_srun_stop();
	free(cmd.argv);
	free(cmd.buf);
	cmd.argv = NULL;
	cmd.buf = NULL;
	cmd.argc = -1;
}

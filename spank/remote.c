/* SPDX-License-Identifier: GPL-2.0-or-later */
/* remote.c: slurmstepd. user_init runs once per node, as the user, and does
 * all the work that is the same for every task of the node (master host and
 * its one name lookup, port, checks); task_init only fills and applies the
 * task's row.
 *
 * Failure semantics (tested in tests/0025-*.t, documented in README):
 * a failure found in user_init is logged once per node with slurm_error
 * (slurmstepd forwards it to srun's stderr), saved, and user_init returns 0;
 * task_init then ends every task before exec with status 1, local task 0
 * printing the reason on its stderr. The job step fails at once, never hangs
 * in init_process_group, and the node is not drained, whether rdzv.so is
 * "required" or "optional":
 *  - Slurm 22.05 ignores an optional plugin's return codes, so the plugin
 *    cannot rely on them to stop tasks that would hang without variables;
 *  - a required plugin's failing user_init makes srun report "Slurmd could
 *    not execve job" yet exit 0 (observed on 22.05), which scripts take for
 *    success. */
#include "config.h"
#include "plugin.h"
#include "handover.h"
#include "het.h"
#include "hooks.h"
#include "container_hooks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "domain.h"
#include "fabric.h" /* nvlink_domain=nvml */
#include "mnnvl.h"
#include "hostlist.h"
#include "master.h"
#include "netif.h"
#include "nodeorder.h"
#include "port.h"
#include "rank0.h"
#include "failure.h" /* rdzv_restart_count */
#include "util.h"

/* Slurm's special step ids (slurm.h: SLURM_PENDING_STEP .. SLURM_BATCH_SCRIPT)
 * all sit at the top of the range. The batch and extern steps must stay
 * untouched: srun inside a batch script would otherwise inherit RANK=0 and
 * friends as if the user had exported them. */
#define SPECIAL_STEP_MIN 0xfffffff0u

#define HOSTFILE_MAX 65536
#define EPHEMERAL_PATH "/proc/sys/net/ipv4/ip_local_port_range"

/* A warning from the mode's whole-step check (FP8 on an old GPU...), printed
 * by rank 0's task so the user sees it once. */
static char mode_warning[RDZV_ERRLEN];

struct rdzv_fabric_once rdzv_node_fabric;

struct task_env {
	spank_t sp;
};

static int env_get(void *ctx, const char *name, char *buf, size_t len)
{
	return rdzv_job_getenv(((struct task_env *)ctx)->sp, name, buf, len);
}

static int env_set(void *ctx, const char *name, const char *value)
{
	return spank_setenv(((struct task_env *)ctx)->sp, name, value, 1) == ESPANK_SUCCESS ? 0 : -1;
}

static int env_unset(void *ctx, const char *name)
{
	return spank_unsetenv(((struct task_env *)ctx)->sp, name) == ESPANK_SUCCESS ? 0 : -1;
}

/* A decimal variable of the job's environment: 1 read, 0 absent, -1 bad. */
static int env_u32(spank_t sp, const char *name, uint32_t *out)
{
	char buf[32];
	uint64_t v;
	int rc = rdzv_job_getenv(sp, name, buf, sizeof(buf));

	if (rc <= 0)
		return rc;
	if (rdzv_parse_u64(buf, 0, UINT32_MAX, &v) < 0)
		return -1;
	*out = (uint32_t)v;
	return 1;
}

static int count_list(const char *s)
{
	int n = 0;

	if (!*s)
		return 0;
	for (n = 1; *s; s++)
		n += *s == ',';
	return n;
}

/* Entries of the task's own CUDA_VISIBLE_DEVICES (Slurm narrows it per task
 * with --gpus-per-task or --gpu-bind before task_init), else, on AMD nodes
 * where binding leaves it the only one, ROCR_VISIBLE_DEVICES; or -1. */
static int task_visible_gpus(spank_t sp)
{
	char buf[1024];

	if (rdzv_job_getenv(sp, "CUDA_VISIBLE_DEVICES", buf, sizeof(buf)) > 0
	    || rdzv_job_getenv(sp, "ROCR_VISIBLE_DEVICES", buf, sizeof(buf)) > 0)
		return count_list(buf);
	return -1;
}

/* S_JOB_ARGV belongs to slurmstepd, which may free or reuse it after this
 * hook: keep a copy. */
static int copy_argv(spank_t sp, struct rdzv_step *st)
{
	char **av = NULL;
	int ac = 0, i;

	if (spank_get_item(sp, S_JOB_ARGV, &ac, &av) != ESPANK_SUCCESS || ac <= 0 || !av)
		return 0;
	if (!(st->argv = calloc((size_t)ac + 1, sizeof(char *))))
		return -1;
	for (i = 0; i < ac; i++)
		if (!(st->argv[i] = strdup(av[i] ? av[i] : "")))
			return -1;
	st->argc = ac;
	return 0;
}

static void free_argv(struct rdzv_step *st)
{
	int i;

	for (i = 0; st->argv && st->argv[i]; i++)
		free(st->argv[i]);
	free(st->argv);
	st->argv = NULL;
	st->argc = 0;
}

static int step_facts(spank_t sp, struct rdzv_step *st, char *err, size_t errlen)
{
	char restart[32];

	if (spank_get_item(sp, S_JOB_ID, &st->slurm_job_id) != ESPANK_SUCCESS
	    || spank_get_item(sp, S_JOB_STEPID, &st->step_id) != ESPANK_SUCCESS
	    || spank_get_item(sp, S_JOB_NNODES, &st->nnodes) != ESPANK_SUCCESS
	    || spank_get_item(sp, S_JOB_NODEID, &st->node_id) != ESPANK_SUCCESS
	    || spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &st->ntasks) != ESPANK_SUCCESS
	    || spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &st->local_ntasks) != ESPANK_SUCCESS)
		return rdzv_err(err, errlen, "cannot read the step's ids and task counts from Slurm");
	st->job_id = st->slurm_job_id;
	if (st->nnodes == 0 || st->ntasks == 0 || st->node_id >= st->nnodes
	    || st->local_ntasks == 0 || st->local_ntasks > st->ntasks)
		return rdzv_err(err, errlen,
		                "contradictory step facts from Slurm: node %u of %u, %u of %u tasks",
		                st->node_id, st->nnodes, st->local_ntasks, st->ntasks);
	/* TORCHELASTIC_RESTART_COUNT: a requeued batch job's count, a fact of
	 * the step like the others, known before any mode reads the step. */
	st->restart_count = rdzv_job_getenv(sp, "SLURM_RESTART_COUNT", restart,
	                                    sizeof(restart)) > 0 ? rdzv_restart_count(restart) : 0;
	return 0;
}

/* Why srun handed this step no plan, as far as the node can tell: srun's
 * mark (RDZV_HO_SRUN) says its plugin ran; --rdzv from srun's command line
 * says srun had some rdzv plugin; neither, that the mode is the site's or
 * RDZV_MODE's and srun may have none. With advice, what to do about it. */
static const char *no_plan_cause(int advice)
{
	if (rdzv.srun_has_plugin)
		return advice ? "srun loads the plugin but ran no per-step hook for this step "
		                "(srun --async): run the step with srun itself, not srun --async"
		              : "srun ran no per-step hook: srun --async";
	if (rdzv.mode_from_srun)
		return advice ? "srun's rdzv plugin on the submit host is an earlier spank-rdzv, "
		                "whose hand-over does not reach the nodes under --export=NONE or "
		                "--export=VAR: install this version there, or run with --export=ALL"
		              : "srun's plugin is an earlier spank-rdzv";
	return advice ? "srun on the submit host does not load the plugin (the mode is the "
	                "site's or RDZV_MODE's): add rdzv.so to the submit host's plugstack.conf"
	              : "srun does not load the plugin";
}

/* A heterogeneous step (het.h): the whole step's counts, this node's global
 * id and its component's first task, from the step's environment. */
static struct rdzv_het het;

static const char *envp_get(void *ctx, const char *name)
{
	return rdzv_envp_get(ctx, name);
}

static int het_facts(spank_t sp, char *err, size_t errlen)
{
	struct rdzv_step *st = &rdzv.step;
	char **envp = NULL;
	int rc;

	if (spank_get_item(sp, S_JOB_ENV, &envp) != ESPANK_SUCCESS || !envp)
		return 0;
	rc = rdzv_het_read(envp_get, envp, st->job_id, st->node_id, st->nnodes, st->ntasks, &het,
	                   err, errlen);
	if (rc <= 0)
		return rc;
	st->het = 1;
	st->job_id = het.leader_job; /* the same on every component: ports, run id */
	st->node_id += het.node_offset;
	st->nnodes = het.nnodes;
	st->ntasks = het.ntasks;
	st->task_offset = het.task_offset;
	return 0;
}

/* The mode's whole-step check (Megatron's layout...), after binding so that
 * it knows the GPU model. A warning (rc 1) is kept for rank 0 to print. */
static int check_step(spank_t sp, struct rdzv_step *st, char *err, size_t errlen)
{
	int check;

	snprintf(st->gpu_model, sizeof(st->gpu_model), "%s", rdzv_bind_gpu_model());
	/* The step's environment, borrowed for the check only (it reads
	 * SLURM_STEP_TASKS_PER_NODE, TP_SIZE...). */
	if (spank_get_item(sp, S_JOB_ENV, &st->envp) != ESPANK_SUCCESS)
		st->envp = NULL;
	check = rdzv_mode_check_step(rdzv.mode, st, err, errlen);
	st->envp = NULL;
	if (check > 0)
		snprintf(mode_warning, sizeof(mode_warning), "%s", err);
	return check < 0 ? -1 : 0;
}

/* The step plan srun handed over (local.c), when it is this step's
 * (rank0.h). Returns 1 (plan read), 0 (none for this step: srun ran without
 * the plugin, or the variable was inherited from another step) or -1 (a
 * plan for this step that does not parse). The variable is removed from the
 * tasks' environment: a step started from inside a task must not see it. */
static int read_plan(spank_t sp, const struct rdzv_step *st, struct rdzv_plan *plan,
                     char **text, char *err, size_t errlen)
{
	char *t = NULL;
	int rc = rdzv_step_take(sp, RDZV_HO_PLAN, RDZV_STEP_PLAN_VAR, &t, err, errlen);

	*text = NULL;
	if (rc <= 0)
		return rc;
	rc = rdzv_rank0_plan(t, st->job_id, st->step_id, st->nnodes, plan, err, errlen);
	if (rc <= 0)
		free(t);
	else
		*text = t; /* plan->order points into t, kept by the caller */
	return rc;
}

/* This node's NVLink domain from srun's map (domain.h; nvlink_domain=block):
 * its name, the step's tasks in it, the index of the node's first
 * task among them. Without a map for this step (srun --async, a submit host
 * without the plugin) the domain stays unknown, said in --rdzv-verbose; a map
 * that does not parse refuses the step. */
static int read_domains(spank_t sp, struct rdzv_step *st, const char *order, char *err,
                        size_t errlen)
{
	struct rdzv_domains d;
	char *t = NULL, *tpn = NULL;
	uint32_t job = 0, step = 0;
	int rv = -1;

	st->domain[0] = '\0';
	if (rdzv_step_take(sp, RDZV_HO_DOMAINS, RDZV_STEP_DOMAINS_VAR, &t, err, errlen) < 0)
		return -1;
	if (!t) {
		snprintf(rdzv.domain_note, sizeof(rdzv.domain_note), "unknown: srun handed over no "
		         "domain map (%s); Megatron's groups were not checked by domain",
		         st->het ? "a heterogeneous step" : no_plan_cause(0));
		return 0;
	}
	if (rdzv_domains_parse(t, st->nnodes, &job, &step, &d, err, errlen) < 0) {
		free(t);
		return -1;
	}
	free(t);
	if (job != st->job_id || step != st->step_id) {
		snprintf(rdzv.domain_note, sizeof(rdzv.domain_note), "unknown: the domain map in "
		         "the environment is step %u.%u's, not this step's", job, step);
		rdzv_domains_free(&d);
		return 0;
	}
	if (rdzv_job_getenv_dup(sp, "SLURM_STEP_TASKS_PER_NODE", &tpn) < 0 || !tpn) {
		rdzv_err(err, errlen, "SLURM_STEP_TASKS_PER_NODE is missing");
		goto out;
	}
	if (rdzv_domain_place(&d, st->node_id, order, tpn, &st->domain_size, &st->domain_base,
	                      &st->domain_nodes, err, errlen) < 0)
		goto out;
	snprintf(st->domain, sizeof(st->domain), "%s", d.names[d.node_domain[st->node_id]]);
	snprintf(rdzv.domain_note, sizeof(rdzv.domain_note), "%s (nvlink_domain=block, Slurm's "
	         "topology blocks): %u of the step's nodes, %u tasks, this node's first task is "
	         "its %u", st->domain, st->domain_nodes, st->domain_size, st->domain_base);
	rv = 0;
out:
	free(tpn);
	rdzv_domains_free(&d);
	return rv;
}

/* This node's NVLink domain from its GPUs (nvlink_domain=nvml): NVML's
 * cluster UUID and clique, read once per node per step (fabric.h; the
 * same read serves "require mnnvl"). The step's other nodes are not seen
 * here: no size or index is exported. */
static int read_nvml_domain(struct rdzv_step *st, char *err, size_t errlen)
{
	char lib[RDZV_PATH_MAX], why[RDZV_ERRLEN];

	st->domain[0] = '\0';
	lib[0] = '\0';
	if (rdzv.conf.nvml_library[0]
	    && rdzv_path_node(rdzv.conf.nvml_library, rdzv.stepd_node, lib, sizeof(lib), why,
	                      sizeof(why)) < 0)
		return rdzv_err(err, errlen, "nvlink_domain=nvml: plugstack nvml_library: %s", why);
	return rdzv_fabric_node_domain(&rdzv_node_fabric, lib, rdzv.nodename, st->domain,
	                               sizeof(st->domain), rdzv.domain_note,
	                               sizeof(rdzv.domain_note), err, errlen);
}

/* Whether this node runs global task 0 (Slurm's own answer, per task: the
 * node's tasks only, so it costs nothing that grows with the step). */
static int runs_task0(spank_t sp, const struct rdzv_step *st)
{
	uint32_t lid, gid;

	for (lid = 0; lid < st->local_ntasks; lid++)
		if (spank_get_item(sp, S_JOB_LOCAL_TO_GLOBAL_ID, lid, &gid) == ESPANK_SUCCESS
		    && gid + st->task_offset == 0)
			return 1;
	return 0;
}

/* MASTER_ADDR/MASTER_PORT (or the mode's equivalents) the user exported are
 * kept, a deliberate choice, but checked like the plugin's own: the address
 * resolves here and names rank 0's node, the port is in range. A stale
 * export fails every task at once, naming the variable, where it would
 * otherwise hang in init_process_group. */
static int check_user_address(spank_t sp, const struct rdzv_step *st, char *err, size_t errlen)
{
	const struct rdzv_mode *m = rdzv.mode;
	char val[RDZV_HOST_MAX + 16], host[RDZV_HOST_MAX];
	uint16_t port;
	int rc;

	if (m->addr_var && (rc = rdzv_job_getenv(sp, m->addr_var, val, sizeof(val))) != 0) {
		if (rc < 0)
			return rdzv_err(err, errlen, "%s (exported) is too long", m->addr_var);
		if (strcmp(val, st->master_addr) != 0
		    && rdzv_master_check_user(m->addr_var, val, st->master_host, err, errlen) < 0)
			return -1;
	}
	if (m->port_var && (rc = rdzv_job_getenv(sp, m->port_var, val, sizeof(val))) != 0) {
		if (rc < 0 || rdzv_port_parse(val, &port, NULL, 0) < 0)
			return rdzv_err(err, errlen, "%s=%.32s (exported) is not a port %d-%d: unset "
			                "it (the plugin sets it)", m->port_var, rc < 0 ? "..." : val,
			                RDZV_PORT_MIN, RDZV_PORT_MAX);
	}
	if (m->hostport_var && (rc = rdzv_job_getenv(sp, m->hostport_var, val, sizeof(val))) != 0) {
		char why[RDZV_ERRLEN];

		if (rc < 0 || rdzv_hostport_split(val, host, sizeof(host), &port, why,
		                                  sizeof(why)) < 0)
			return rdzv_err(err, errlen, "%s=%.64s (exported): %s; unset it (the plugin "
			                "sets it)", m->hostport_var, rc < 0 ? "..." : val,
			                rc < 0 ? "too long" : why);
		if (strcmp(host, st->master_addr) != 0
		    && rdzv_master_check_user(m->hostport_var, host, st->master_host, err,
		                              errlen) < 0)
			return -1;
	}
	return 0;
}

/* Steps across the components of a heterogeneous job are run by one
 * slurmstepd per component, each with its own job id, node ids and task
 * count (the component's), while the step's environment describes the
 * whole step: the two disagree. Observed on 22.05; a step inside one
 * component agrees and is handled like any other. */
static int counts_agree(spank_t sp, const struct rdzv_step *st, char *err, size_t errlen)
{
	uint32_t env_tasks = 0, env_nodes = 0;

	if (env_u32(sp, "SLURM_STEP_NUM_TASKS", &env_tasks) > 0
	    && env_u32(sp, "SLURM_STEP_NUM_NODES", &env_nodes) > 0
	    && (env_tasks != st->ntasks || env_nodes != st->nnodes))
		return rdzv_err(err, errlen,
		                "contradictory step facts: Slurm's plugin interface says %u tasks on "
		                "%u nodes, SLURM_STEP_NUM_TASKS/NODES say %u on %u",
		                st->ntasks, st->nnodes, env_tasks, env_nodes);
	return 0;
}

/* Rank 0's node and port (rank0.h), from srun's plan or the step's facts. */
static int place_rank0(spank_t sp, const char *nodelist, const struct rdzv_plan *plan,
                       struct rdzv_rank0 *r, char *err, size_t errlen)
{
	struct rdzv_step *st = &rdzv.step;
	struct rdzv_rank0_in in;
	char dist[64], resv[128], hostfile[RDZV_PATH_MAX];
	char *hosttext = NULL;
	int rc;

	if (rdzv_job_getenv(sp, "SLURM_DISTRIBUTION", dist, sizeof(dist)) <= 0)
		dist[0] = '\0';
	if (rdzv_job_getenv(sp, "SLURM_STEP_RESV_PORTS", resv, sizeof(resv)) <= 0)
		resv[0] = '\0';
	memset(&in, 0, sizeof(in));
	in.plan = plan;
	in.het = st->het ? &het : NULL;
	in.nodelist = nodelist;
	in.dist = dist;
	in.resv = resv;
	in.job_id = st->job_id;
	in.step_id = st->step_id;
	in.nnodes = st->nnodes;
	in.node_id = st->node_id;
	in.option_port = rdzv.opts.port;
	in.range = &rdzv.conf.port_range;
	in.ephemeral_path = EPHEMERAL_PATH;
	in.cause = no_plan_cause(0);
	in.advice = no_plan_cause(1);
	/* Without a plan under -m arbitrary, the hostfile names rank 0's node. */
	if (!plan && !st->het && strncmp(dist, "arbitrary", 9) == 0
	    && rdzv_job_getenv(sp, "SLURM_HOSTFILE", hostfile, sizeof(hostfile)) > 0)
		hosttext = rdzv_read_head(hostfile, HOSTFILE_MAX); /* as the user: user_init */
	in.hosttext = hosttext;
	rc = rdzv_rank0_place(&in, r, err, errlen);
	free(hosttext);
	if (rc < 0)
		return -1;
	snprintf(st->master_host, sizeof(st->master_host), "%s", r->host);
	st->node_rank = r->node_rank;
	st->port = r->port;
	snprintf(rdzv.order_source, sizeof(rdzv.order_source), "%s", r->order_source);
	return 0;
}

/* This node's NVLink domain, by the site's nvlink_domain= rule. */
static int node_domain(spank_t sp, struct rdzv_step *st, const struct rdzv_plan *plan, char *err,
                       size_t errlen)
{
	st->nvlink_domain = (int)rdzv.conf.nvlink_domain;
	rdzv.domain_note[0] = '\0';
	if (rdzv.conf.nvlink_domain == RDZV_NVLINK_BLOCK)
		return read_domains(sp, st, plan && plan->order_known ? plan->order : "", err,
		                    errlen);
	if (rdzv.conf.nvlink_domain == RDZV_NVLINK_NVML
	    && (read_nvml_domain(st, err, errlen) < 0
	        || rdzv_domains_node_ask(sp, st, rdzv.nodename[0] ? rdzv.nodename : "?", err,
	                                 errlen) < 0))
		return -1;
	return 0;
}

/* rank 0's address, and the interface through which this node reaches
 * rank 0's node: one routing look-up per node per step (netif.h). Not
 * finding one only leaves GLOO_SOCKET_IFNAME/NCCL_SOCKET_IFNAME to the
 * frameworks. */
static int master_route(struct rdzv_step *st, char *err, size_t errlen)
{
	struct sockaddr_storage master_sa;
	unsigned master_salen = 0;
	char local[64], why[RDZV_ERRLEN];

	if (rdzv_master_addr_sa(st->master_host, rdzv.conf.addr_form, st->master_addr,
	                        sizeof(st->master_addr), &master_sa, &master_salen, err, errlen) < 0)
		return -1;
	st->ifname[0] = '\0';
	if (!master_salen)
		snprintf(rdzv.if_note, sizeof(rdzv.if_note), "no address to route to");
	else if (rdzv_netif_toward((struct sockaddr *)&master_sa, (socklen_t)master_salen, st->ifname,
	                           sizeof(st->ifname), local, sizeof(local), why,
	                           sizeof(why)) < 0) {
		st->ifname[0] = '\0';
		snprintf(rdzv.if_note, sizeof(rdzv.if_note), "no interface found: %s", why);
	} else
		snprintf(rdzv.if_note, sizeof(rdzv.if_note), "%s (this node's %s), the kernel's "
		         "route to %s", st->ifname, local, st->master_addr);
	return 0;
}

/* The node's resources the modes read: GPUs, CPUs per task, the command. */
static int step_resources(spank_t sp, struct rdzv_step *st, char *err, size_t errlen)
{
	char gpus[1024];

	st->gpus_on_node = -1;
	if (rdzv_job_getenv(sp, "SLURM_STEP_GPUS", gpus, sizeof(gpus)) > 0
	    || rdzv_job_getenv(sp, "CUDA_VISIBLE_DEVICES", gpus, sizeof(gpus)) > 0
	    || rdzv_job_getenv(sp, "ROCR_VISIBLE_DEVICES", gpus, sizeof(gpus)) > 0)
		st->gpus_on_node = count_list(gpus);
	if (spank_get_item(sp, S_STEP_CPUS_PER_TASK, &st->cpus_per_task) != ESPANK_SUCCESS)
		st->cpus_per_task = 0;
	if (copy_argv(sp, st) < 0)
		return rdzv_err(err, errlen, "out of memory copying the command line");
	return 0;
}

/* The node's share of the step, once per node: in order, rank 0's node and
 * port, the NVLink domain, the check that task 0 is where rank 0 was
 * placed, rank 0's address and the route to it, the user's own exports,
 * the node's resources. */
static int compute_step(spank_t sp, const char *nodelist, char *err, size_t errlen)
{
	struct rdzv_step *st = &rdzv.step;
	struct rdzv_plan plan;
	struct rdzv_rank0 r;
	char *plantext = NULL;
	int rv = -1, rc;

	if (counts_agree(sp, st, err, errlen) < 0)
		return -1;
	if (!nodelist)
		return rdzv_err(err, errlen, "SLURM_STEP_NODELIST is missing");
	/* A het step's plan, if any, reached one component only (het.h). */
	rc = st->het ? 0 : read_plan(sp, st, &plan, &plantext, err, errlen);
	if (rc < 0 || place_rank0(sp, nodelist, rc > 0 ? &plan : NULL, &r, err, errlen) < 0)
		goto fail;
	if (node_domain(sp, st, rc > 0 ? &plan : NULL, err, errlen) < 0)
		goto fail;
	if (rdzv_rank0_check_task0(runs_task0(sp, st), rdzv.nodename, &r, st->het, rc > 0,
	                           no_plan_cause(1), err, errlen) < 0)
		goto fail;
	rdzv_rank0_port_note(&r, rdzv.verbose, EPHEMERAL_PATH, rdzv.port_source,
	                     sizeof(rdzv.port_source));
	if (master_route(st, err, errlen) < 0 || check_user_address(sp, st, err, errlen) < 0
	    || step_resources(sp, st, err, errlen) < 0)
		goto fail;
	rv = 0;
fail:
	free(plantext);
	return rv;
}

/* Whether srun refused this step after creating it (handover.h): its mark
 * names this job and step. The mark leaves the tasks' environment. */
static int step_refused(spank_t sp, uint32_t step)
{
	char *text = NULL;
	uint32_t job = 0, mjob, mstep;
	int yes;

	if (rdzv_step_take(sp, RDZV_HO_REFUSED, NULL, &text, NULL, 0) <= 0)
		return 0;
	yes = spank_get_item(sp, S_JOB_ID, &job) == ESPANK_SUCCESS
	      && rdzv_refused_parse(text, &mjob, &mstep) == 0 && mjob == job && mstep == step;
	free(text);
	return yes;
}

static void save_error(const char *what, const char *err)
{
	char clean[RDZV_ERRLEN];

	if (!rdzv.error[0])
		snprintf(rdzv.error, sizeof(rdzv.error), "%s%s", what, err);
	/* The reason may quote the user's values (a MASTER_PORT, a host):
	 * slurmd's log gets them printable, on this one line. */
	slurm_error(RDZV_TAG ": step %u.%u: %s%s", rdzv.step.job_id, rdzv.step.step_id, what,
	            rdzv_text_printable(clean, sizeof(clean), err));
}

int rdzv_remote_user_init(spank_t sp)
{
	char err[RDZV_ERRLEN];
	char *nodelist = NULL;
	int rc;

	rdzv.error[0] = '\0';
	if (rdzv.conf.env_fallback) {
		char buf[64];

		/* The environment fallback, read from the job's environment. The
		 * value was validated by srun; a bad one here only means "unset". */
		if (!rdzv.opts.mode && rdzv_job_getenv(sp, "RDZV_MODE", buf, sizeof(buf)) > 0)
			rdzv.opts.mode = rdzv_mode_find(buf);
		if (!rdzv.opts.port && rdzv_job_getenv(sp, "RDZV_PORT", buf, sizeof(buf)) > 0)
			rdzv_port_parse(buf, &rdzv.opts.port, NULL, 0);
		if (rdzv.opts.verbose < 0 && rdzv_job_getenv(sp, "RDZV_VERBOSE", buf, sizeof(buf)) > 0)
			rdzv.opts.verbose = rdzv_parse_bool(buf) > 0;
	}
	rdzv.mode = rdzv_mode_resolve(&rdzv.opts, &rdzv.conf);
	rdzv.verbose = rdzv.opts.verbose > 0;
	if (spank_get_item(sp, S_JOB_STEPID, &rdzv.step.step_id) != ESPANK_SUCCESS
	    || rdzv.step.step_id >= SPECIAL_STEP_MIN)
		return 0; /* batch, extern, interactive steps: nothing to do */
	rdzv.active = 1;
	if (step_facts(sp, &rdzv.step, err, sizeof(err)) < 0) {
		save_error("", err);
		return 0;
	}
	/* Only a mode numbers the step: without one, a het step the plugin
	 * cannot number runs as Slurm runs it. */
	if (het_facts(sp, err, sizeof(err)) < 0) {
		if (rdzv.mode && rdzv.mode->fill) {
			save_error("", err);
			return 0;
		}
		slurm_verbose(RDZV_TAG ": %s", err);
	}
	/* A plugstack line refused here only (see slurm_spank_init): a step
	 * that asked for a mode fails with the message; others run as if the
	 * plugin were not there. */
	if (rdzv.conf_error[0]) {
		if (rdzv.opts.mode && rdzv.opts.mode->fill)
			save_error("", rdzv.conf_error);
		else
			rdzv.active = 0;
		return 0;
	}
	/* This node's name for the user's own step: the step's node list at
	 * our index (read once, for any list length). The client assembled
	 * that list (issue 45): root's names use slurmd's own (stepd_node). */
	if (rdzv_job_getenv_dup(sp, "SLURM_STEP_NODELIST", &nodelist) < 0) {
		save_error("", "cannot read SLURM_STEP_NODELIST");
		return 0;
	}
	if (rdzv.step.het)
		snprintf(rdzv.nodename, sizeof(rdzv.nodename), "%s", het.node);
	else if (!nodelist || rdzv_hostlist_nth(nodelist, rdzv.step.node_id, rdzv.nodename,
	                                        sizeof(rdzv.nodename), NULL, 0) < 0)
		rdzv.nodename[0] = '\0';
	if (!rdzv.stepd_node[0] && rdzv_stepd_node(rdzv.stepd_node, sizeof(rdzv.stepd_node)) < 0)
		slurm_error(RDZV_TAG ": step %u.%u: slurmstepd has no SLURMD_NODENAME of its own: "
		            "no record, metrics, DCGM claim or %%n path for this step",
		            rdzv.step.slurm_job_id, rdzv.step.step_id);
	{
		char *mark = NULL;

		unsigned format = 0;

		rdzv.srun_has_plugin = rdzv_step_take(sp, RDZV_HO_SRUN, NULL, &mark, NULL, 0) > 0;
		rdzv.srun_version[0] = '\0';
		/* A rolling upgrade: srun of one release, this node of another.
		 * A format this node reads runs (said at verbose level when the
		 * versions differ); one it cannot read is refused, before any
		 * of srun's texts is read. */
		if (rdzv.srun_has_plugin && mark) {
			/* A mark of no known shape is of no format this node reads. */
			if (rdzv_srun_mark_parse(mark, rdzv.srun_version, sizeof(rdzv.srun_version),
			                         &format) < 0) {
				snprintf(rdzv.srun_version, sizeof(rdzv.srun_version), "(unknown: %.16s)",
				         mark);
				format = 0;
			}
			if (!rdzv_srun_mark_readable(rdzv.srun_version, format, PACKAGE_VERSION, err,
			                             sizeof(err))) {
				free(mark);
				if (rdzv.mode && rdzv.mode->fill) {
					free(nodelist);
					save_error("", err);
					return 0;
				}
				slurm_verbose(RDZV_TAG ": %s (no mode: nothing of srun's is read)", err);
				mark = NULL;
			} else if (strcmp(rdzv.srun_version, PACKAGE_VERSION) != 0)
				slurm_verbose(RDZV_TAG ": srun's spank-rdzv is %s (hand-over format %u), "
				              "this node's %s: read", rdzv.srun_version, format,
				              PACKAGE_VERSION);
		}
		free(mark);
	}
	/* Refused by srun, which said why: no work for it on this node; every
	 * task ends before exec (task_init), so the step ends in slurmctld. */
	if (step_refused(sp, rdzv.step.step_id)) {
		rdzv.refused = 1;
		rdzv.active = 0;
		free(nodelist);
		slurm_verbose(RDZV_TAG ": step %u.%u refused by srun: its tasks end before exec",
		              rdzv.step.job_id, rdzv.step.step_id);
		return 0;
	}
	if (rdzv.mode && rdzv.mode->fill) {
		rc = compute_step(sp, nodelist, err, sizeof(err));
		free(nodelist);
		if (rc < 0) {
			save_error("", err);
			return 0;
		}
		slurm_verbose(RDZV_TAG ": step %u.%u mode %s master %s (%s) port %u from %s",
		              rdzv.step.job_id, rdzv.step.step_id, rdzv.mode->name,
		              rdzv.step.master_host, rdzv.step.master_addr, rdzv.step.port,
		              rdzv.port_source);
	} else {
		free(nodelist);
	}
	if (rdzv_container_user_init(sp, err, sizeof(err)) < 0) {
		save_error("", err);
		return 0;
	}
	if (rdzv_profile_user_init(sp, err, sizeof(err)) < 0) {
		save_error("profile: ", err);
		return 0;
	}
	if (rdzv_bind_user_init(sp, &rdzv.step, err, sizeof(err)) < 0) {
		save_error("binding: ", err);
		return 0;
	}
	if (rdzv.mode && rdzv.mode->fill && check_step(sp, &rdzv.step, err, sizeof(err)) < 0)
		save_error("", err);
	return 0;
}

/* The node's table, printed once per node by its first task (the user sees
 * the task's stderr; slurmstepd's own log would not reach them). Variables
 * that differ between the node's tasks get one row per task, recomputed here
 * with the mode's fill (a pure function); the others are printed once, with
 * where they came from and whether the user's own value won. Binding prints
 * its own per-task rows in its verbose mode. */
/* Values of two tasks' entries; an UNSET entry has none (lightning's
 * TORCHELASTIC_RUN_ID). */
static int differs(const char *a, const char *b)
{
	return (a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0);
}

static void print_table(spank_t sp, const struct rdzv_envset *env, const struct rdzv_envset *late)
{
	const struct rdzv_step *st = &rdzv.step;
	const char *node = rdzv.nodename[0] ? rdzv.nodename : "?";
	struct rdzv_envset **rows = NULL;
	char err[RDZV_ERRLEN], note[RDZV_ERRLEN];
	uint32_t lid;
	size_t i;

	fprintf(stderr, RDZV_TAG ": %s: node %u of %u, step %u.%u, mode %s, %u tasks, "
	        "rank 0 on %s (MASTER_ADDR %s), port %u from %s\n", node, st->node_id, st->nnodes,
	        st->job_id, st->step_id, rdzv.mode ? rdzv.mode->name : "off", st->local_ntasks,
	        st->master_host, st->master_addr, st->port, rdzv.port_source);
	fprintf(stderr, RDZV_TAG ": %s:   node %u in rank order (SLURM_NODEID %u); rank 0's node "
	        "and the order from %s\n", node, st->node_rank, st->node_id, rdzv.order_source);
	fprintf(stderr, RDZV_TAG ": %s:   interface toward rank 0's node: %s\n", node,
	        rdzv.if_note[0] ? rdzv.if_note : "not looked up");
	if (rdzv.domain_note[0])
		fprintf(stderr, RDZV_TAG ": %s:   NVLink domain: %s\n", node, rdzv.domain_note);
	if (rdzv.mode && rdzv.mode->fill && (rows = calloc(st->local_ntasks, sizeof(*rows)))) {
		for (lid = 0; lid < st->local_ntasks; lid++) {
			struct rdzv_task t = { .rank = 0, .local_rank = lid, .visible_gpus = -1 };

			if (spank_get_item(sp, S_JOB_LOCAL_TO_GLOBAL_ID, lid, &t.rank) != ESPANK_SUCCESS
			    || (t.rank += st->task_offset, !(rows[lid] = rdzv_envset_create()))
			    || rdzv.mode->fill(st, &t, rows[lid], err, sizeof(err)) < 0)
				break;
		}
		if (lid < st->local_ntasks) {
			for (lid = 0; lid < st->local_ntasks; lid++)
				rdzv_envset_destroy(rows[lid]);
			free(rows);
			rows = NULL;
		}
	}
	for (lid = 0; rows && lid < st->local_ntasks; lid++) {
		fprintf(stderr, RDZV_TAG ": %s:   task %u:", node, lid);
		for (i = 0; i < rows[lid]->n; i++) {
			const struct rdzv_env_entry *e = &rows[lid]->v[i];
			const struct rdzv_env_entry *e0 = rdzv_envset_find(rows[0], e->name);
			const struct rdzv_env_entry *e1 = rdzv_envset_find(rows[st->local_ntasks - 1], e->name);

			if (st->local_ntasks > 1 && e0 && e1 && differs(e0->value, e1->value))
				fprintf(stderr, " %s=%s", e->name, e->value);
		}
		fprintf(stderr, "\n");
	}
	if (rdzv.mode && rdzv.mode->explain && rdzv.mode->explain(st, note, sizeof(note)) > 0)
		fprintf(stderr, RDZV_TAG ": %s:   %s\n", node, note);
	for (i = 0; i < env->n; i++) {
		const struct rdzv_env_entry *e = &env->v[i];
		const struct rdzv_env_entry *e0 = rows ? rdzv_envset_find(rows[0], e->name) : NULL;
		const struct rdzv_env_entry *e1 = rows ? rdzv_envset_find(rows[st->local_ntasks - 1], e->name) : NULL;

		if (st->local_ntasks > 1 && e0 && e1 && differs(e0->value, e1->value)
		    && e->outcome == RDZV_OUT_SET)
			continue; /* shown in the task rows */
		if (e->outcome == RDZV_OUT_USER_KEPT)
			fprintf(stderr, RDZV_TAG ": %s:   %s=%s (the user's value; %s would set %s)\n",
			        node, e->name, e->user_value ? e->user_value : "", e->origin, e->value);
		else if (e->outcome == RDZV_OUT_ENFORCED)
			fprintf(stderr, RDZV_TAG ": %s:   %s=%s (%s, enforced over the user's %s)\n", node,
			        e->name, e->value, e->origin, e->user_value ? e->user_value : "");
		else if (e->outcome == RDZV_OUT_UNSET || e->outcome == RDZV_OUT_ABSENT)
			fprintf(stderr, RDZV_TAG ": %s:   %s unset (%s)\n", node, e->name, e->origin);
		else
			fprintf(stderr, RDZV_TAG ": %s:   %s=%s (%s)\n", node, e->name, e->value, e->origin);
	}
	for (i = 0; late && i < late->n; i++)
		fprintf(stderr, RDZV_TAG ": %s:   task %u: %s=%s (%s, after binding)\n", node, 0u,
		        late->v[i].name, late->v[i].value ? late->v[i].value : "", late->v[i].origin);
	for (lid = 0; rows && lid < st->local_ntasks; lid++)
		rdzv_envset_destroy(rows[lid]);
	free(rows);
	fflush(stderr);
}

static void fail_task(uint32_t rank, int print, const char *msg)
{
	if (print) {
		fprintf(stderr, RDZV_TAG ": error: task %u: %s\n", rank, msg);
		fflush(stderr);
	}
	/* Ends the task before exec, whether the plugin is required or
	 * optional (see the comment at the top of this file). */
	_exit(1);
}

/* A task of a step srun refused (srun said why): it ends before exec. One
 * task must fail, so that srun exits non-zero; only global rank 0 does, and
 * only after REFUSED_FAIL_MS, every other task exits 0 at once. A task that
 * fails makes srun kill the step (kill-on-bad-exit), and a kill that reaches
 * a node whose slurmstepd is still starting the step leaves the step in
 * slurmctld for 30 s to 2 min (seen on 22.05 under load: that node's
 * slurmstepd ends before the others have reported the step's end to it), the
 * very hold this path exists to avoid. Exits of 0 trigger no kill, and by
 * the time rank 0 fails the other nodes have started. */
#define REFUSED_FAIL_MS 1000
static void end_refused_task(spank_t sp)
{
	struct timespec t = { REFUSED_FAIL_MS / 1000, (REFUSED_FAIL_MS % 1000) * 1000000L };
	uint32_t rank = 1;

	if (spank_get_item(sp, S_TASK_GLOBAL_ID, &rank) != ESPANK_SUCCESS)
		rank = 1;
	rank += rdzv.step.task_offset;
	if (rank != 0)
		_exit(0);
	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
	_exit(1);
}

int rdzv_remote_task_init(spank_t sp)
{
	char err[RDZV_ERRLEN];
	struct rdzv_task t = { 0, 0, -1 };
	struct rdzv_envset *env = NULL, *late = NULL;
	char stale[1024];
	struct task_env tenv = { sp };
	struct rdzv_env_ops ops = { env_get, env_set, env_unset, &tenv };
	int local_id = 0;

	/* --rdzv-debug=hang or a collective timeout: the task, with or
	 * without a mode (a user's own torchrun); a torchrun agent, for the
	 * warning signals it forwards; off, three comparisons. */
	int agent = rdzv.active && rdzv.mode && (rdzv.mode->flags & RDZV_MODE_ONE_TASK_PER_NODE);

	if (rdzv.refused)
		end_refused_task(sp);
	if (rdzv_hang_armed() || rdzv_hang_timeout() || agent) {
		uint32_t r = 0;

		if (spank_get_item(sp, S_TASK_GLOBAL_ID, &r) != ESPANK_SUCCESS
		    || spank_get_item(sp, S_TASK_ID, &local_id) != ESPANK_SUCCESS)
			fail_task(0, 1, "cannot read the task's ids from Slurm");
		r += rdzv.step.task_offset;
		int hr = rdzv_hang_task_init(sp, r, local_id == 0, agent, err, sizeof(err));

		if (hr < 0)
			fail_task(r, hr == -1, err); /* -2: said by the node's first task */
	}
	if (!rdzv.active)
		return 0;
	if (spank_get_item(sp, S_TASK_GLOBAL_ID, &t.rank) != ESPANK_SUCCESS
	    || spank_get_item(sp, S_TASK_ID, &local_id) != ESPANK_SUCCESS)
		fail_task(0, 1, "cannot read the task's ids from Slurm");
	t.rank += rdzv.step.task_offset;
	t.local_rank = (uint32_t)local_id;
	t.visible_gpus = task_visible_gpus(sp);
	if (rdzv.error[0])
		fail_task(t.rank, t.local_rank == 0, rdzv.error);
	if (!(env = rdzv_envset_create()))
		fail_task(t.rank, 1, "out of memory");
	if ((rdzv.mode && rdzv.mode->fill
	     && rdzv.mode->fill(&rdzv.step, &t, env, err, sizeof(err)) < 0)
	    || rdzv_profile_task_init(sp, &t, env, err, sizeof(err)) < 0
	    || rdzv_bind_task_init(sp, &rdzv.step, &t, env, err, sizeof(err)) < 0
	    || rdzv_container_restore_task(sp, env, &ops, err, sizeof(err)) < 0
	    || rdzv_envset_apply(env, &ops, err, sizeof(err)) < 0)
		fail_task(t.rank, 1, err);
	rdzv_container_report_task(sp, &t, env);
	/* Variables that follow the task's final environment (JAX's device
	 * ids follow CUDA_VISIBLE_DEVICES as binding left it). */
	if (rdzv.mode && rdzv.mode->fill_late) {
		t.visible_gpus = task_visible_gpus(sp);
		if (!(late = rdzv_envset_create())
		    || rdzv.mode->fill_late(&rdzv.step, &t, late, err, sizeof(err)) < 0
		    || rdzv_envset_apply(late, &ops, err, sizeof(err)) < 0)
			fail_task(t.rank, 1, late ? err : "out of memory");
	}
	if (rdzv.verbose && t.local_rank == 0 && env->n > 0)
		print_table(sp, env, late);
	if (rdzv_container_carry_task(sp, &t, env, late, &ops, err, sizeof(err)) < 0)
		fail_task(t.rank, 1, err); /* Apptainer */
	rdzv_record_task(&t, env, late); /* the step's record: what this task got */
	/* Exported identity variables the step replaced, and exported
	 * addresses it kept: one line, from rank 0, verbose or not (a stale
	 * RANK=0 in a batch script is worth knowing about). */
	if (t.rank == 0 && rdzv_envset_stale(env, stale, sizeof(stale)) != 0)
		fprintf(stderr, RDZV_TAG ": warning: %s\n", stale);
	if (mode_warning[0] && t.rank == 0)
		fprintf(stderr, RDZV_TAG ": warning: %s\n", mode_warning);
	fflush(stderr);
	rdzv_envset_destroy(env);
	rdzv_envset_destroy(late);
	return 0;
}

void rdzv_remote_exit(void)
{
	free_argv(&rdzv.step);
	rdzv_container_exit();
	rdzv_bind_exit();
	rdzv_profile_exit();
	rdzv_fabric_once_free(&rdzv_node_fabric);
}

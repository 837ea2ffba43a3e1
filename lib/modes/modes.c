/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/modes/: what each mode sets (torch, Megatron, launchers, frameworks,
 * containers), srun's verdict on Megatron's groups over the domains, and the
 * plugstack arguments that choose them. Uses lib/domains/, lib/step/,
 * lib/common/. */
/* modes.c: the mode table and the variables each mode sets.
 *
 * torch: what torchrun (torch.distributed.run, PyTorch 1.13-2.x) exports to
 * each worker, so that a script cannot tell srun from torchrun: RANK,
 * LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE,
 * ROLE_RANK, ROLE_WORLD_SIZE, ROLE_NAME, MASTER_ADDR, MASTER_PORT,
 * TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_MAX_RESTARTS, TORCHELASTIC_RUN_ID
 * (see torch/distributed/elastic/agent/server/local_elastic_agent.py), plus
 * NODE_RANK (Megatron-LM, Lightning), TORCHELASTIC_USE_AGENT_STORE=False (no
 * agent hosts a store: rank 0 does), TORCH_NCCL_ASYNC_ERROR_HANDLING and
 * OMP_NUM_THREADS as torchrun 2.x sets them. Identity variables replace a
 * user's exports; MASTER_ADDR/MASTER_PORT exported by the user are kept and
 * checked (spank/remote.c). tests/0029 compares all of it with real torchrun.
 *
 * torchrun: torchrun reads every flag from PET_<FLAG> (torch.distributed.run,
 * "env" defaults of its argparse actions), so one task per node running a
 * bare "torchrun train.py" gets its flags here. With the static rendezvous
 * the agent with node_rank 0 hosts the store, so PET_NODE_RANK is the task's
 * global rank and PET_MASTER_ADDR its node: true for every distribution.
 *
 * deepspeed, megatron, jax: see the comments above their fill functions and
 * doc/modes.md. */
#include "config.h"
#include "modes.h"
#include "argscan.h"
#include "frameworks.h" /* lightning, launcher checks */
#include "domain.h"
#include "megatron.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

#define ORIGIN "rdzv"

#define ID(name, ...) rdzv_envset_addfx(env, ORIGIN, RDZV_SET_ENFORCE, RDZV_ENV_IDENTITY, name, \
                                       err, errlen, __VA_ARGS__)
#define AT(name, ...) rdzv_envset_addfx(env, ORIGIN, RDZV_SET_DEFAULT, RDZV_ENV_ADDRESS, name, \
                                       err, errlen, __VA_ARGS__)

/* OMP_NUM_THREADS as torchrun sets it (torch/distributed/run.py: 1 when a
 * node runs more than one worker and the user did not set it), except that
 * a task Slurm gave several CPUs (--cpus-per-task) gets that count. One task
 * on a node gets nothing: OpenMP then sizes itself to the task's CPUs. */
static int fill_omp(const struct rdzv_step *s, struct rdzv_envset *env, char *err,
                    size_t errlen)
{
	if (s->local_ntasks <= 1)
		return 0;
	return rdzv_envset_addf(env, ORIGIN, "OMP_NUM_THREADS", err, errlen, "%u",
	                        s->cpus_per_task > 1 ? s->cpus_per_task : 1);
}

int rdzv_fill_torch(const struct rdzv_step *s, const struct rdzv_task *t,
                    struct rdzv_envset *env, char *err, size_t errlen)
{
	/* Identity comes from the step, always: an exported RANK=0 left over in
	 * a batch script would otherwise make ranks wait for peers that never
	 * come (30 minutes, PyTorch's default timeout). Replacements are named
	 * in one warning (remote.c). TORCHELASTIC_USE_AGENT_STORE=False too:
	 * with True (inherited from a torchrun worker's environment) rank 0
	 * would wait for a store that only a torchrun agent hosts. */
	if (ID("RANK", "%u", t->rank) < 0
	    || ID("LOCAL_RANK", "%u", t->local_rank) < 0
	    || ID("WORLD_SIZE", "%u", s->ntasks) < 0
	    || ID("LOCAL_WORLD_SIZE", "%u", s->local_ntasks) < 0
	    || ID("GROUP_RANK", "%u", s->node_rank) < 0
	    || ID("GROUP_WORLD_SIZE", "%u", s->nnodes) < 0
	    || ID("ROLE_RANK", "%u", t->rank) < 0
	    || ID("ROLE_WORLD_SIZE", "%u", s->ntasks) < 0
	    || ID("NODE_RANK", "%u", s->node_rank) < 0
	    || ID("TORCHELASTIC_USE_AGENT_STORE", "False") < 0
	    || rdzv_envset_addf(env, ORIGIN, "ROLE_NAME", err, errlen, "default") < 0
	    || AT("MASTER_ADDR", "%s", s->master_addr) < 0
	    || AT("MASTER_PORT", "%u", s->port) < 0
	    || rdzv_envset_addf(env, ORIGIN, "TORCHELASTIC_RUN_ID", err, errlen, "slurm-%u.%u",
	                        s->job_id, s->step_id) < 0
	    || rdzv_envset_addf(env, ORIGIN, "TORCHELASTIC_RESTART_COUNT", err, errlen, "%u",
	                        s->restart_count) < 0
	    || rdzv_envset_addf(env, ORIGIN, "TORCHELASTIC_MAX_RESTARTS", err, errlen, "0") < 0
	    /* torchrun 2.x (local_elastic_agent.py): "1" unless the user set it */
	    || rdzv_envset_addf(env, ORIGIN, "TORCH_NCCL_ASYNC_ERROR_HANDLING", err, errlen,
	                        "1") < 0
	    || fill_omp(s, env, err, errlen) < 0
	    || rdzv_fill_netif(s, env, err, errlen) < 0
	    || rdzv_fill_domain(s, t, env, err, errlen) < 0)
		return -1;
	return 0;
}

/* PET_NPROC_PER_NODE: the step's GPUs on the node; without GPUs, one worker
 * (torchrun's "auto" would start one per CPU, rarely what a CPU step wants). */
static int fill_torchrun(const struct rdzv_step *s, const struct rdzv_task *t,
                         struct rdzv_envset *env, char *err, size_t errlen)
{
	int nproc = s->gpus_on_node > 0 ? s->gpus_on_node : 1;

	if (ID("PET_NNODES", "%u", s->nnodes) < 0
	    || ID("PET_NODE_RANK", "%u", t->rank) < 0
	    || rdzv_envset_addf(env, ORIGIN, "PET_NPROC_PER_NODE", err, errlen, "%d", nproc) < 0
	    || AT("PET_MASTER_ADDR", "%s", s->master_addr) < 0
	    || AT("PET_MASTER_PORT", "%u", s->port) < 0
	    || rdzv_envset_addf(env, ORIGIN, "PET_RDZV_ID", err, errlen, "slurm-%u.%u",
	                        s->job_id, s->step_id) < 0
	    || rdzv_fill_netif(s, env, err, errlen) < 0
	    || rdzv_fill_domain(s, t, env, err, errlen) < 0)
		return -1;
	return 0;
}

/* deepspeed: what DeepSpeed's per-node launcher exports to each worker
 * besides torch's variables (deepspeed/launcher/launch.py, main(): CROSS_RANK
 * = the node's rank, CROSS_SIZE = nodes, LOCAL_SIZE = workers on this node,
 * next to RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT). Code
 * written for that launcher reads them directly: e.g. Determined's
 * DistributedContext.from_deepspeed() does int(os.environ["CROSS_RANK"]).
 * What the launcher passes as --local_rank=N on the command line is in
 * LOCAL_RANK here; DeepSpeed's engine falls back to it when the argument is
 * absent (runtime/engine.py reads os.environ["LOCAL_RANK"]). */
static int fill_deepspeed(const struct rdzv_step *s, const struct rdzv_task *t,
                          struct rdzv_envset *env, char *err, size_t errlen)
{
	if (rdzv_fill_torch(s, t, env, err, errlen) < 0
	    || ID("CROSS_RANK", "%u", s->node_rank) < 0
	    || ID("CROSS_SIZE", "%u", s->nnodes) < 0
	    || ID("LOCAL_SIZE", "%u", s->local_ntasks) < 0)
		return -1;
	return 0;
}

/* megatron: torch's variables plus CUDA_DEVICE_MAX_CONNECTIONS=1, which
 * Megatron-LM's validate_args() asserts for tensor or context parallelism
 * before Blackwell (one hardware queue keeps its communication kernels
 * ordered ahead of the GEMMs they overlap with), and refuses with FSDP
 * (--use-torch-fsdp2, --use-megatron-fsdp). Set only when the command line
 * shows TP or CP > 1 and no FSDP (rdzv_megatron_connections). A DEFAULT like
 * every variable here: a user's export (e.g. 8 on Blackwell) wins. */
int rdzv_megatron_connections(const struct rdzv_step *s, char *why, size_t whylen)
{
	struct rdzv_megatron_layout l;
	char msg[256];
	const char *fsdp = rdzv_argscan_flag(s->argc, s->argv, "--use-torch-fsdp2") > 0
	                   ? "--use-torch-fsdp2"
	                   : rdzv_argscan_flag(s->argc, s->argv, "--use-megatron-fsdp") > 0
	                   ? "--use-megatron-fsdp"
	                   : rdzv_argscan_flag(s->argc, s->argv, "--use-custom-fsdp") > 0
	                   ? "--use-custom-fsdp" : NULL;

	if (fsdp) {
		snprintf(why, whylen, "CUDA_DEVICE_MAX_CONNECTIONS not set: the command line asks "
		         "for FSDP (%s), which Megatron refuses with it", fsdp);
		return 0;
	}
	/* The command line only (no TP_SIZE...): a size read from a variable
	 * says nothing about the flags the script will really pass. */
	if (rdzv_megatron_read(s->argc, s->argv, NULL, &l, msg, sizeof(msg)) < 0) {
		snprintf(why, whylen, "CUDA_DEVICE_MAX_CONNECTIONS not set: %s", msg);
		return 0;
	}
	if (l.tp.n > 1 || l.cp.n > 1) {
		snprintf(why, whylen, "CUDA_DEVICE_MAX_CONNECTIONS=1: the command line gives %s %llu",
		         l.tp.n > 1 ? l.tp.from : l.cp.from,
		         (unsigned long long)(l.tp.n > 1 ? l.tp.n : l.cp.n));
		return 1;
	}
	snprintf(why, whylen, "CUDA_DEVICE_MAX_CONNECTIONS not set: the command line shows no "
	         "tensor or context parallelism > 1 (a wrapper script hides its flags); export "
	         "it yourself when TP or CP > 1 without FSDP");
	return 0;
}

static int fill_megatron(const struct rdzv_step *s, const struct rdzv_task *t,
                         struct rdzv_envset *env, char *err, size_t errlen)
{
	char why[256];

	if (rdzv_fill_torch(s, t, env, err, errlen) < 0)
		return -1;
	if (rdzv_megatron_connections(s, why, sizeof(why)) > 0
	    && rdzv_envset_addf(env, ORIGIN, "CUDA_DEVICE_MAX_CONNECTIONS", err, errlen, "1") < 0)
		return -1;
	return 0;
}

static int explain_megatron(const struct rdzv_step *s, char *buf, size_t len)
{
	rdzv_megatron_connections(s, buf, len);
	return 1;
}

#define MSG_MAX 512

/* The layout check (lib/modes/megatron.h) on the step's command line and
 * environment, then the FP8 warning for this node's GPU model. */
static int check_megatron(const struct rdzv_step *s, char *err, size_t errlen)
{
	struct rdzv_megatron_layout l;
	struct rdzv_megatron_place p;
	const char *ps;
	char msg[MSG_MAX];
	uint64_t plane = 0;

	memset(&p, 0, sizeof(p));
	/* A framework launcher (torchrun, deepspeed, ...) as the command of a
	 * step of several tasks would split it into private worlds. */
	if (rdzv_check_launcher("megatron", s, err, errlen) < 0)
		return -1;
	if (rdzv_megatron_read(s->argc, s->argv, s->envp, &l, msg, sizeof(msg)) < 0)
		return rdzv_err(err, errlen, "--rdzv=megatron: %s", msg);
	p.ntasks = s->ntasks;
	p.nnodes = s->nnodes;
	p.local_ntasks = s->local_ntasks;
	p.node_id = s->node_id;
	p.tasks_per_node = rdzv_envp_get(s->envp, "SLURM_STEP_TASKS_PER_NODE");
	if (!p.tasks_per_node)
		p.tasks_per_node = rdzv_envp_get(s->envp, "SLURM_TASKS_PER_NODE");
	p.distribution = rdzv_envp_get(s->envp, "SLURM_DISTRIBUTION");
	ps = rdzv_envp_get(s->envp, "SLURM_DIST_PLANESIZE");
	if (ps && rdzv_parse_u64(ps, 1, UINT32_MAX, &plane) == 0)
		p.plane_size = (uint32_t)plane;
	/* NVLink beyond the node: groups are checked by domain where
	 * the step's layout and domains are known (srun), only the sizes on
	 * the nodes. */
	p.by_domain = s->nvlink_domain == RDZV_NVLINK_BLOCK
	              || (s->nvlink_domain == RDZV_NVLINK_NVML && (s->domain[0] || s->domain_exchange));
	if (rdzv_megatron_check(&l, &p, msg, sizeof(msg)) < 0)
		return rdzv_err(err, errlen, "--rdzv=megatron layout check: %s", msg);
	if (s->md && rdzv_megatron_check_domains(&l, s->ntasks, s->md, msg, sizeof(msg)) < 0)
		return rdzv_err(err, errlen, "--rdzv=megatron layout check: %s", msg);
	if (rdzv_megatron_fp8_warning(&l, s->gpu_model, msg, sizeof(msg)) > 0) {
		snprintf(err, errlen, "--rdzv=megatron: %s", msg);
		return 1;
	}
	return 0;
}

/* JAX_LOCAL_DEVICE_IDS: positions among the devices the task can see
 * (CUDA_VISIBLE_DEVICES numbering), never physical indexes. When Slurm
 * narrowed the task's CUDA_VISIBLE_DEVICES (it sees fewer GPUs than the step
 * has on the node), or one task runs per node, the task owns all it sees.
 * Otherwise the node's tasks share the visible list in equal blocks, or, with
 * fewer GPUs than tasks, round robin. Returns 0 with ids written, 1 when
 * there is nothing to say (no GPUs visible). */
static int jax_local_ids(const struct rdzv_step *s, const struct rdzv_task *t, char *buf,
                         size_t len)
{
	uint32_t first, count, i;
	size_t used = 0;
	int vis = t->visible_gpus;

	if (vis <= 0)
		return 1;
	if ((s->gpus_on_node > 0 && vis < s->gpus_on_node) || s->local_ntasks <= 1) {
		first = 0;
		count = (uint32_t)vis;
	} else if ((uint32_t)vis >= s->local_ntasks) {
		count = (uint32_t)vis / s->local_ntasks;
		first = t->local_rank * count;
	} else {
		first = t->local_rank % (uint32_t)vis;
		count = 1;
	}
	buf[0] = '\0';
	for (i = 0; i < count; i++) {
		int n = snprintf(buf + used, len - used, "%s%u", i ? "," : "", first + i);

		if (n < 0 || (size_t)n >= len - used)
			return 1;
		used += (size_t)n;
	}
	return 0;
}

/* jax: what jax.distributed.initialize() reads (jax/_src/distributed.py):
 * JAX_COORDINATOR_ADDRESS ("host:port" of process 0, which hosts the
 * coordination service) and JAX_LOCAL_DEVICE_IDS (comma list, read by JAX
 * releases from late 2024 on). Process count and id have no variable in JAX
 * itself: its Slurm detection (jax/_src/clusters/slurm_cluster.py) takes
 * SLURM_NTASKS and SLURM_PROCID, which srun already sets right; we add
 * JAX_NUM_PROCESSES and JAX_PROCESS_ID, the names of initialize()'s
 * arguments that launchers such as Kubeflow's JAX runtime export, for scripts
 * that pass them explicitly. The plugin's values fix two faults of that
 * detection: its coordinator port is derived from the job id inside the
 * ephemeral range (65535-4095..65535) and the same for every step of a job,
 * and it takes SLURM_LOCALID as the GPU index, which names a device the task
 * cannot see once Slurm narrowed CUDA_VISIBLE_DEVICES (--gpus-per-task). */
static int fill_jax(const struct rdzv_step *s, const struct rdzv_task *t,
                    struct rdzv_envset *env, char *err, size_t errlen)
{
	int v6 = strchr(s->master_addr, ':') != NULL;

	if (AT("JAX_COORDINATOR_ADDRESS", "%s%s%s:%u", v6 ? "[" : "", s->master_addr,
	       v6 ? "]" : "", s->port) < 0
	    || ID("JAX_NUM_PROCESSES", "%u", s->ntasks) < 0
	    || ID("JAX_PROCESS_ID", "%u", t->rank) < 0
	    || rdzv_fill_netif(s, env, err, errlen) < 0
	    || rdzv_fill_domain(s, t, env, err, errlen) < 0)
		return -1;
	return 0;
}

/* JAX_LOCAL_DEVICE_IDS, after binding: from the task's final
 * CUDA_VISIBLE_DEVICES, which --rdzv-bind=isolate may have narrowed to one
 * GPU after the mode's variables were computed. */
static int fill_jax_late(const struct rdzv_step *s, const struct rdzv_task *t,
                         struct rdzv_envset *env, char *err, size_t errlen)
{
	char ids[RDZV_VALUE_MAX];

	if (jax_local_ids(s, t, ids, sizeof(ids)) == 0
	    && rdzv_envset_addf(env, ORIGIN, "JAX_LOCAL_DEVICE_IDS", err, errlen, "%s", ids) < 0)
		return -1;
	return 0;
}

#define TORCH_ADDR "MASTER_ADDR", "MASTER_PORT", NULL

static const struct rdzv_mode modes[] = {
	{ "off", "the plugin sets nothing", 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL },
	{ "torch", "one task per rank, torch.distributed env:// variables",
	  RDZV_MODE_REFUSES_LAUNCHERS, rdzv_fill_torch,
	  rdzv_check_torch, NULL, NULL, TORCH_ADDR },
	{ "torchrun", "one task per node running torchrun, PET_* variables",
	  RDZV_MODE_ONE_TASK_PER_NODE, fill_torchrun, NULL, NULL, NULL, "PET_MASTER_ADDR",
	  "PET_MASTER_PORT", NULL },
	{ "deepspeed", "one task per rank, torch variables plus DeepSpeed's CROSS_RANK, "
	  "CROSS_SIZE, LOCAL_SIZE", RDZV_MODE_REFUSES_LAUNCHERS, fill_deepspeed, rdzv_check_deepspeed, NULL, NULL, TORCH_ADDR },
	{ "megatron", "one task per rank, torch variables plus CUDA_DEVICE_MAX_CONNECTIONS=1 "
	  "when the command line shows TP or CP > 1, layout checked before launch",
	  RDZV_MODE_REFUSES_LAUNCHERS, fill_megatron, check_megatron, NULL, explain_megatron, TORCH_ADDR },
	{ "jax", "one task per rank, JAX_COORDINATOR_ADDRESS, JAX_LOCAL_DEVICE_IDS and friends",
	  0, fill_jax, rdzv_check_jax, fill_jax_late, NULL, NULL, NULL, "JAX_COORDINATOR_ADDRESS" },
	{ "lightning", "one task per rank, what Lightning's SLURM environment reads (MASTER_ADDR, "
	  "MASTER_PORT), no TORCHELASTIC_*, its start-up refusals checked before launch",
	  RDZV_MODE_REFUSES_LAUNCHERS, rdzv_fill_lightning, rdzv_check_lightning, NULL, NULL, TORCH_ADDR },
	{ NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL },
};

const struct rdzv_mode *rdzv_modes(void)
{
	return modes;
}

const struct rdzv_mode *rdzv_mode_find(const char *name)
{
	const struct rdzv_mode *m;

	if (!name)
		return NULL;
	for (m = modes; m->name; m++)
		if (strcmp(m->name, name) == 0)
			return m;
	return NULL;
}

const char *rdzv_mode_names(void)
{
	static char names[256];
	const struct rdzv_mode *m;
	size_t used = 0;

	if (names[0])
		return names;
	for (m = modes; m->name; m++) {
		int n = snprintf(names + used, sizeof(names) - used, "%s%s",
		                 used ? ", " : "", m->name);
		if (n < 0 || (size_t)n >= sizeof(names) - used)
			break;
		used += (size_t)n;
	}
	return names;
}

int rdzv_mode_check_step(const struct rdzv_mode *mode, const struct rdzv_step *step,
                         char *err, size_t errlen)
{
	if ((mode->flags & RDZV_MODE_ONE_TASK_PER_NODE) && step->local_ntasks > 1)
		return rdzv_err(err, errlen,
		                "--rdzv=%s runs one launcher per node, but this node has %u tasks "
		                "(each would start its own workers and they would collide): "
		                "use srun --ntasks-per-node=1",
		                mode->name, step->local_ntasks);
	return mode->check ? mode->check(step, err, errlen) : 0;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-modes: the mode table and the variables torch and torchrun modes give
 * each task. Invalid input first. */
#include "config.h"
#include "modes.h"
#include "tap.h"
#include "failure.h"

#include <stdio.h>
#include <string.h>

static char err[512];

/* torchrun 2.x's worker variables (local_elastic_agent.py), NODE_RANK, and
 * OMP_NUM_THREADS on nodes with several tasks (run.py). A leading '!' marks
 * identity: an ENFORCE entry that replaces a stale export. */
static const char *torch_vars[] = {
	"!RANK", "!LOCAL_RANK", "!WORLD_SIZE", "!LOCAL_WORLD_SIZE", "!GROUP_RANK",
	"!GROUP_WORLD_SIZE", "!ROLE_RANK", "!ROLE_WORLD_SIZE", "ROLE_NAME", "!NODE_RANK",
	"MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT",
	"TORCHELASTIC_MAX_RESTARTS", "!TORCHELASTIC_USE_AGENT_STORE",
	"TORCH_NCCL_ASYNC_ERROR_HANDLING", NULL,
};

static const char *torchrun_vars[] = {
	"!PET_NNODES", "!PET_NODE_RANK", "PET_NPROC_PER_NODE", "PET_MASTER_ADDR",
	"PET_MASTER_PORT", "PET_RDZV_ID", NULL,
};

static const char *value(const struct rdzv_envset *set, const char *name)
{
	const struct rdzv_env_entry *e = rdzv_envset_find(set, name);

	return e ? e->value : NULL;
}

/* The set holds exactly the names listed (plus extra, may be NULL): "!NAME"
 * as an ENFORCE identity entry, others as DEFAULT entries. */
static int exactly(const struct rdzv_envset *set, const char *const *names, const char *extra)
{
	size_t i, n = 0;

	for (i = 0; names[i]; i++) {
		int id = names[i][0] == '!';
		const char *name = names[i] + id;
		const struct rdzv_env_entry *e = rdzv_envset_find(set, name);

		if (!e || !e->value
		    || e->policy != (id ? RDZV_SET_ENFORCE : RDZV_SET_DEFAULT)
		    || !!(e->flags & RDZV_ENV_IDENTITY) != id) {
			diag("%s missing or not a%s entry", name, id ? "n ENFORCE identity" : " DEFAULT");
			return 0;
		}
		n++;
	}
	if (extra) {
		if (!rdzv_envset_find(set, extra)) {
			diag("%s missing", extra);
			return 0;
		}
		n++;
	}
	if (set->n != n) {
		for (i = 0; i < set->n; i++)
			diag("set holds %s", set->v[i].name);
		return 0;
	}
	return 1;
}

/* Through memset: other fields of rdzv_task are zero (not given). */
static struct rdzv_task task(uint32_t rank, uint32_t local_rank)
{
	struct rdzv_task t;

	memset(&t, 0, sizeof(t));
	t.rank = rank;
	t.local_rank = local_rank;
	return t;
}

static void init_step(struct rdzv_step *s)
{
	memset(s, 0, sizeof(*s));
	s->job_id = 4242;
	s->step_id = 3;
	snprintf(s->master_host, sizeof(s->master_host), "n1");
	snprintf(s->master_addr, sizeof(s->master_addr), "n1.cluster");
	s->port = 29517;
	s->gpus_on_node = -1;
}

static void test_invalid(void)
{
	const struct rdzv_mode *torchrun = rdzv_mode_find("torchrun");
	const struct rdzv_mode *torch = rdzv_mode_find("torch");
	struct rdzv_step s;

	ok(rdzv_mode_find(NULL) == NULL, "no mode is called NULL");
	ok(rdzv_mode_find("") == NULL, "no mode is called ''");
	ok(rdzv_mode_find("Torch") == NULL, "mode names are case-sensitive");
	ok(rdzv_mode_find("torch ") == NULL, "mode names are matched whole");
	ok(rdzv_mode_find("torc") == NULL, "a prefix of a mode name is not a mode");
	if (!torch || !torchrun)
		skip_all("torch or torchrun mode missing");

	init_step(&s);
	s.nnodes = 2;
	s.ntasks = 16;
	s.local_ntasks = 8;
	err[0] = '\0';
	is_int(rdzv_mode_check_step(torchrun, &s, err, sizeof(err)), -1,
	       "torchrun mode refuses 8 tasks on a node");
	ok(strstr(err, "--ntasks-per-node=1") != NULL, "the message tells the user --ntasks-per-node=1");
	ok(strstr(err, "8 tasks") != NULL, "the message says how many tasks the node has");
	ok(strstr(err, "--rdzv=torchrun") != NULL, "the message names the mode");
	s.local_ntasks = 2;
	is_int(rdzv_mode_check_step(torchrun, &s, err, sizeof(err)), -1,
	       "torchrun mode refuses 2 tasks on a node");
	s.local_ntasks = 1;
	is_int(rdzv_mode_check_step(torchrun, &s, err, sizeof(err)), 0,
	       "torchrun mode accepts one task per node");
	s.local_ntasks = 8;
	is_int(rdzv_mode_check_step(torch, &s, err, sizeof(err)), 0,
	       "torch mode accepts 8 tasks on a node");
	is_int(rdzv_mode_check_step(rdzv_mode_find("off"), &s, err, sizeof(err)), 0,
	       "off mode accepts any step");
}

static void test_table(void)
{
	const struct rdzv_mode *m, *off = rdzv_mode_find("off");
	const char *names = rdzv_mode_names();
	int all = 1, n = 0;

	ok(off && off->fill == NULL, "off exists and sets nothing");
	ok(rdzv_mode_find("torch") && rdzv_mode_find("torch")->fill == rdzv_fill_torch,
	   "torch fills with rdzv_fill_torch");
	ok(rdzv_mode_find("torchrun")
	   && (rdzv_mode_find("torchrun")->flags & RDZV_MODE_ONE_TASK_PER_NODE),
	   "torchrun runs one task per node");
	ok(!(rdzv_mode_find("torch")->flags & RDZV_MODE_ONE_TASK_PER_NODE),
	   "torch runs one task per rank");
	for (m = rdzv_modes(); m->name; m++) {
		n++;
		all &= rdzv_mode_find(m->name) == m && strstr(names, m->name) != NULL
		       && m->summary && m->summary[0];
	}
	ok(all, "each of the %d modes is found by name, listed in the names and summarized", n);
	ok(strncmp(names, "off, torch, torchrun", 20) == 0, "the names start 'off, torch, torchrun' (%s)",
	   names);
	ok(rdzv_mode_names() == names, "the names are built once");
}

/* One task's torch variables on an uneven 3+2+1 layout (block). */
static void torch_task(const struct rdzv_step *s, uint32_t rank, uint32_t local_rank,
                       const char *label)
{
	struct rdzv_envset *set = rdzv_envset_create();
	struct rdzv_task t = task(rank, local_rank);
	char want[32];

	if (!set)
		skip_all("out of memory");
	if (!ok(rdzv_fill_torch(s, &t, set, err, sizeof(err)) == 0, "%s: torch fill succeeds", label)) {
		rdzv_envset_destroy(set);
		return;
	}
	ok(exactly(set, torch_vars, s->local_ntasks > 1 ? "OMP_NUM_THREADS" : NULL),
	   "%s: torch gives exactly torchrun's worker variables, NODE_RANK%s", label,
	   s->local_ntasks > 1 ? " and OMP_NUM_THREADS" : "");
	is_str(value(set, "TORCHELASTIC_USE_AGENT_STORE"), "False",
	       "TORCHELASTIC_USE_AGENT_STORE=False: no agent hosts a store");
	is_str(value(set, "TORCH_NCCL_ASYNC_ERROR_HANDLING"), "1",
	       "TORCH_NCCL_ASYNC_ERROR_HANDLING=1, torchrun 2.x's default");
	ok(rdzv_envset_find(set, "MASTER_ADDR")->flags & RDZV_ENV_ADDRESS,
	   "MASTER_ADDR is an address entry (a user's export is kept and reported)");
	if (s->local_ntasks > 1)
		is_str(value(set, "OMP_NUM_THREADS"), s->cpus_per_task > 1 ? "4" : "1",
		       s->cpus_per_task > 1 ? "OMP_NUM_THREADS is the task's CPUs (--cpus-per-task=4)"
		                            : "OMP_NUM_THREADS=1 with several tasks on the node");
	snprintf(want, sizeof(want), "%u", rank);
	is_str(value(set, "RANK"), want, "RANK is the global task id");
	is_str(value(set, "ROLE_RANK"), want, "ROLE_RANK is the global task id");
	snprintf(want, sizeof(want), "%u", local_rank);
	is_str(value(set, "LOCAL_RANK"), want, "LOCAL_RANK is the local task id");
	is_str(value(set, "WORLD_SIZE"), "6", "WORLD_SIZE is the step's tasks");
	is_str(value(set, "ROLE_WORLD_SIZE"), "6", "ROLE_WORLD_SIZE is the step's tasks");
	snprintf(want, sizeof(want), "%u", s->local_ntasks);
	is_str(value(set, "LOCAL_WORLD_SIZE"), want, "LOCAL_WORLD_SIZE is this node's tasks");
	snprintf(want, sizeof(want), "%u", s->node_rank);
	is_str(value(set, "GROUP_RANK"), want, "GROUP_RANK is the node's place in rank order");
	is_str(value(set, "NODE_RANK"), want, "NODE_RANK is the node's place in rank order");
	is_str(value(set, "GROUP_WORLD_SIZE"), "3", "GROUP_WORLD_SIZE is the step's nodes");
	is_str(value(set, "ROLE_NAME"), "default", "ROLE_NAME is torchrun's 'default'");
	is_str(value(set, "MASTER_ADDR"), "n1.cluster", "MASTER_ADDR is the step's master address");
	is_str(value(set, "MASTER_PORT"), "29517", "MASTER_PORT is the step's port");
	is_str(value(set, "TORCHELASTIC_RUN_ID"), "slurm-4242.3", "the run id names job and step");
	is_str(value(set, "TORCHELASTIC_RESTART_COUNT"), "0", "no restarts happened");
	is_str(value(set, "TORCHELASTIC_MAX_RESTARTS"), "0", "no restarts are allowed");
	rdzv_envset_destroy(set);
}

static void test_torch(void)
{
	struct rdzv_step s;
	/* tasks per node 3,2,1: node 0 ranks 0-2, node 1 ranks 3-4, node 2 rank 5 */
	static const uint32_t node_of[] = { 0, 0, 0, 1, 1, 2 }, local_of[] = { 0, 1, 2, 0, 1, 0 };
	static const uint32_t per_node[] = { 3, 2, 1 };
	uint32_t r;

	init_step(&s);
	s.nnodes = 3;
	s.ntasks = 6;
	for (r = 0; r < 6; r++) {
		char label[64];

		s.node_id = s.node_rank = node_of[r];
		s.local_ntasks = per_node[s.node_id];
		snprintf(label, sizeof(label), "3+2+1 layout, rank %u on node %u", r, s.node_id);
		torch_task(&s, r, local_of[r], label);
	}
	/* Slurm 26.05's topology order: node 2 of the node list holds ranks
	 * 0-2, so it is first in rank order; SLURM_NODEID stays 2. */
	s.node_id = 2;
	s.node_rank = 0;
	s.local_ntasks = 3;
	torch_task(&s, 0, 0, "topology order: node id 2 holds rank 0, GROUP_RANK 0");
	s.cpus_per_task = 4;
	s.node_id = s.node_rank = 0;
	s.local_ntasks = 3;
	torch_task(&s, 1, 1, "--cpus-per-task=4, 3 tasks on the node");
	s.cpus_per_task = 0;

	/* an admin's ENFORCE entry is not weakened by the mode's DEFAULT ones */
	{
		struct rdzv_envset *set = rdzv_envset_create();
		struct rdzv_task t = task(0, 0);

		if (!set)
			skip_all("out of memory");
		rdzv_envset_add(set, "MASTER_PORT", "1234", RDZV_SET_ENFORCE, "profile", err, sizeof(err));
		ok(rdzv_fill_torch(&s, &t, set, err, sizeof(err)) == 0
		   && strcmp(value(set, "MASTER_PORT"), "1234") == 0,
		   "an admin's ENFORCE entry survives the torch fill");
		rdzv_envset_destroy(set);
	}
	/* A requeued job: the node reads SLURM_RESTART_COUNT with the step's
	 * other facts (rdzv_restart_count), before any fill, and every task
	 * gets it. */
	{
		struct rdzv_envset *set = rdzv_envset_create();
		struct rdzv_task t = task(0, 0);

		if (!set)
			skip_all("out of memory");
		s.restart_count = rdzv_restart_count("3");
		ok(rdzv_fill_torch(&s, &t, set, err, sizeof(err)) == 0
		   && strcmp(value(set, "TORCHELASTIC_RESTART_COUNT"), "3") == 0,
		   "SLURM_RESTART_COUNT=3: TORCHELASTIC_RESTART_COUNT=3");
		rdzv_envset_destroy(set);
		s.restart_count = 0;
	}
}

static void torchrun_node(struct rdzv_step *s, uint32_t rank, int gpus, const char *want_nproc)
{
	const struct rdzv_mode *m = rdzv_mode_find("torchrun");
	struct rdzv_envset *set = rdzv_envset_create();
	struct rdzv_task t = task(rank, 0);
	char want[32];

	if (!set || !m)
		skip_all("out of memory or no torchrun mode");
	s->gpus_on_node = gpus;
	if (!ok(m->fill(s, &t, set, err, sizeof(err)) == 0, "torchrun fill succeeds for rank %u", rank)) {
		rdzv_envset_destroy(set);
		return;
	}
	ok(exactly(set, torchrun_vars, NULL), "torchrun gives exactly the PET_* variables (rank %u)", rank);
	ok(!rdzv_envset_find(set, "RANK") && !rdzv_envset_find(set, "MASTER_ADDR"),
	   "torchrun leaves RANK and MASTER_ADDR to torchrun itself");
	snprintf(want, sizeof(want), "%u", rank);
	is_str(value(set, "PET_NODE_RANK"), want, "PET_NODE_RANK is the task's global rank");
	is_str(value(set, "PET_NNODES"), "4", "PET_NNODES is the step's nodes");
	is_str(value(set, "PET_NPROC_PER_NODE"), want_nproc,
	       gpus > 0 ? "PET_NPROC_PER_NODE is the node's GPUs"
	                : "PET_NPROC_PER_NODE is 1 without GPUs");
	is_str(value(set, "PET_MASTER_ADDR"), "n1.cluster", "PET_MASTER_ADDR is the step's master");
	is_str(value(set, "PET_MASTER_PORT"), "29517", "PET_MASTER_PORT is the step's port");
	is_str(value(set, "PET_RDZV_ID"), "slurm-4242.3", "PET_RDZV_ID names job and step");
	rdzv_envset_destroy(set);
}

static void test_torchrun(void)
{
	struct rdzv_step s;

	init_step(&s);
	s.nnodes = 4;
	s.ntasks = 4;
	s.local_ntasks = 1;
	/* cyclic or arbitrary: node 2 may run rank 1; PET_NODE_RANK follows the rank */
	s.node_id = 2;
	torchrun_node(&s, 1, 8, "8");
	s.node_id = 0;
	torchrun_node(&s, 0, 4, "4");
	s.node_id = 3;
	torchrun_node(&s, 3, 0, "1");
	torchrun_node(&s, 3, -1, "1");
}

int main(void)
{
	test_invalid();
	test_table();
	test_torch();
	test_torchrun();
	return done_testing();
}

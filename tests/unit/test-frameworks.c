/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-frameworks.c: the lightning mode sets what Lightning's SLURM
 * environment reads and no TORCHELASTIC_*, its start-up refusals happen
 * before launch; the torch family refuses an unconfigured launcher in a step
 * of several tasks; deepspeed keeps LOCAL_SIZE the node's count and warns
 * about a leftover OMPI_COMM_WORLD_LOCAL_RANK; jax warns about a leftover
 * OMPI_MCA_orte_hnp_uri (facts: read from the frameworks' own sources). */
#include "config.h"
#include "tap.h"
#include "modes.h"
#include "util.h"
#include "modefix.h"

static struct rdzv_step step(uint32_t ntasks, uint32_t nnodes, uint32_t node, uint32_t local)
{
	return modefix_step(7, 1, 29600, ntasks, nnodes, node, local);
}

static int check(const char *mode, struct rdzv_step *s, char **argv, char **envp, char *err,
                 size_t errlen)
{
	int argc = 0;

	while (argv && argv[argc])
		argc++;
	s->argc = argc;
	s->argv = argv;
	s->envp = envp;
	err[0] = '\0';
	return rdzv_mode_check_step(rdzv_mode_find(mode), s, err, errlen);
}

static void lightning_fill(void)
{
	struct rdzv_step s = step(4, 2, 1, 2);
	struct rdzv_envset *env = fill("lightning", &s, 3, 1, -1);
	const struct rdzv_env_entry *e;
	size_t i;
	int torchelastic = 0;

	ok(rdzv_mode_find("lightning") != NULL, "--rdzv=lightning is a mode (%s)", rdzv_mode_names());
	ok(strstr(rdzv_mode_names(), "lightning") != NULL, "... named among the valid values");
	is_str(val(env, "MASTER_ADDR"), "n1", "MASTER_ADDR: rank 0's node (Lightning's SLURM environment reads it)");
	is_str(val(env, "MASTER_PORT"), "29600", "MASTER_PORT: the step's port (read, else job id % 1000 + 15000)");
	is_str(val(env, "RANK"), "3", "RANK for the script's own use");
	is_str(val(env, "LOCAL_RANK"), "1", "LOCAL_RANK");
	is_str(val(env, "WORLD_SIZE"), "4", "WORLD_SIZE");
	is_str(val(env, "NODE_RANK"), "1", "NODE_RANK");
	for (i = 0; env && i < env->n; i++)
		if (strncmp(env->v[i].name, "TORCHELASTIC_", 13) == 0 && env->v[i].policy != RDZV_SET_UNSET)
			torchelastic++;
	is_int(torchelastic, 0, "no TORCHELASTIC_* set (TORCHELASTIC_RUN_ID picks Lightning's TorchElastic environment)");
	e = rdzv_envset_find(env, "TORCHELASTIC_RUN_ID");
	ok(e && e->policy == RDZV_SET_UNSET, "a leftover TORCHELASTIC_RUN_ID is unset");
	ok(!val(env, "GROUP_RANK") && !val(env, "LOCAL_WORLD_SIZE"),
	   "no GROUP_RANK, LOCAL_WORLD_SIZE (with RANK, LOCAL_RANK: old Lightning's torchelastic test)");
	e = rdzv_envset_find(env, "MASTER_ADDR");
	ok(e && e->policy == RDZV_SET_DEFAULT && (e->flags & RDZV_ENV_ADDRESS),
	   "MASTER_ADDR is an address: an export is kept and checked, like torch's");
	e = rdzv_envset_find(env, "RANK");
	ok(e && e->policy == RDZV_SET_ENFORCE, "RANK is identity: a stale export is replaced");
	ok(rdzv_mode_find("lightning")->addr_var && strcmp(rdzv_mode_find("lightning")->addr_var, "MASTER_ADDR") == 0,
	   "an exported MASTER_ADDR is checked against rank 0's node");
	rdzv_envset_destroy(env);
}

static void lightning_check(void)
{
	struct rdzv_step s;
	char err[512], a0[] = "python", a1[] = "train.py";
	char *argv[] = { a0, a1, NULL };
	char tpn2[] = "SLURM_NTASKS_PER_NODE=2", tpn4[] = "SLURM_NTASKS_PER_NODE=4";
	char gpn2[] = "SLURM_GPUS_PER_NODE=2", gpnt[] = "SLURM_GPUS_PER_NODE=a100:2,v100:2";
	char jnb[] = "SLURM_JOB_NAME=bash", jni[] = "SLURM_JOB_NAME=interactive", jn[] = "SLURM_JOB_NAME=train";
	char *e_none[] = { NULL }, *e_tpn[] = { tpn2, NULL }, *e_gpu[] = { tpn2, gpn2, NULL };
	char *e_gpu4[] = { tpn4, gpn2, NULL }, *e_gput[] = { tpn4, gpnt, NULL };
	char *e_bash[] = { tpn2, jnb, NULL }, *e_int[] = { tpn2, jni, NULL }, *e_name[] = { tpn2, jn, NULL };

	/* srun: local_ntasks 0, srun's environ */
	s = step(4, 2, 0, 0);
	is_int(check("lightning", &s, argv, e_none, err, sizeof(err)), -1,
	       "srun -N2 -n4 without --ntasks-per-node: refused before launch");
	ok(strstr(err, "--ntasks-per-node=2") && strstr(err, "RuntimeError"),
	   "... naming Lightning's RuntimeError and srun -N2 --ntasks-per-node=2: %s", err);
	s = step(3, 2, 0, 0);
	is_int(check("lightning", &s, argv, e_none, err, sizeof(err)), -1, "3 tasks on 2 nodes: refused");
	ok(strstr(err, "do not divide evenly") != NULL, "... saying the tasks do not divide: %s", err);
	s = step(1, 1, 0, 0);
	is_int(check("lightning", &s, argv, e_none, err, sizeof(err)), 0,
	       "one task without --ntasks-per-node: Lightning accepts it");
	s = step(4, 2, 0, 0);
	is_int(check("lightning", &s, argv, e_tpn, err, sizeof(err)), 0, "--ntasks-per-node=2, no GPUs: fine");
	is_int(check("lightning", &s, argv, e_gpu, err, sizeof(err)), 0, "2 tasks and 2 GPUs per node: fine");
	s = step(8, 2, 0, 0);
	is_int(check("lightning", &s, argv, e_gpu4, err, sizeof(err)), -1,
	       "4 tasks per node, --gpus-per-node=2: refused in srun");
	ok(strstr(err, "4 tasks per node") && strstr(err, "2 GPUs per node")
	   && strstr(err, "--ntasks-per-node=2"), "... with both numbers and the fix: %s", err);
	is_int(check("lightning", &s, argv, e_gput, err, sizeof(err)), 0,
	       "typed GPU counts are summed (a100:2,v100:2 = 4 per node)");
	/* a node: its GPUs counted from SLURM_STEP_GPUS */
	s = step(8, 2, 1, 4);
	s.gpus_on_node = 2;
	is_int(check("lightning", &s, argv, e_gpu4, err, sizeof(err)), -1,
	       "on a node with 2 of the step's GPUs and 4 tasks per node: refused");
	s.gpus_on_node = 4;
	is_int(check("lightning", &s, argv, e_gpu4, err, sizeof(err)), 0, "... with 4 GPUs: fine");
	s = step(4, 2, 0, 2);
	is_int(check("lightning", &s, argv, e_bash, err, sizeof(err)), 1, "job named bash: a warning on the node");
	ok(strstr(err, "'bash'") && strstr(err, "-J NAME"), "... saying why and what to do: %s", err);
	is_int(check("lightning", &s, argv, e_int, err, sizeof(err)), 1, "job named interactive: a warning");
	is_int(check("lightning", &s, argv, e_name, err, sizeof(err)), 0, "job named train: nothing");
	s = step(4, 2, 0, 0);
	is_int(check("lightning", &s, argv, e_bash, err, sizeof(err)), 0, "... never in srun (the node has the step's name)");
	s = step(4, 2, 0, 0);
	is_int(check("lightning", &s, argv, NULL, err, sizeof(err)), 0, "environment unknown: no refusal");
}

static void launchers(void)
{
	struct rdzv_step s = step(4, 2, 0, 0);
	char err[512], ds[] = "deepspeed", tr[] = "torchrun", ac[] = "accelerate", la[] = "launch";
	char py[] = "train.py";
	char *v_ds[] = { ds, py, NULL }, *v_tr[] = { tr, py, NULL }, *v_ac[] = { ac, la, py, NULL };
	static const char *const family[] = { "torch", "deepspeed", "megatron", "lightning" };
	char tpn[] = "SLURM_NTASKS_PER_NODE=2", *envp[] = { tpn, NULL };
	size_t i;

	for (i = 0; i < 4; i++) {
		char name[64];

		snprintf(name, sizeof(name), "--rdzv=%s", family[i]);
		is_int(check(family[i], &s, v_ds, envp, err, sizeof(err)), -1, name);
		ok(strstr(err, "DeepSpeed's launcher") != NULL, "... deepspeed command refused: %s", err);
		is_int(check(family[i], &s, v_tr, envp, err, sizeof(err)), -1, "... torchrun refused");
		is_int(check(family[i], &s, v_ac, envp, err, sizeof(err)), -1, "... accelerate launch refused");
	}
	is_int(check("torchrun", &s, v_tr, envp, err, sizeof(err)), 0, "--rdzv=torchrun runs torchrun (not refused)");
	is_int(check("jax", &s, v_ds, envp, err, sizeof(err)), 0, "--rdzv=jax: not the torch family");
	s = step(1, 1, 0, 0);
	is_int(check("deepspeed", &s, v_ds, envp, err, sizeof(err)), 0,
	       "one task on one node: the deepspeed command works as on a workstation");
	s = step(4, 2, 1, 2);
	is_int(check("deepspeed", &s, v_ds, envp, err, sizeof(err)), -1, "refused on the nodes too (srun without the plugin)");
}

static void deepspeed(void)
{
	struct rdzv_step s = step(4, 2, 1, 2);
	struct rdzv_envset *env = fill("deepspeed", &s, 3, 1, -1);
	char err[512], a0[] = "python", a1[] = "train.py", *argv[] = { a0, a1, NULL };
	char o1[] = "OMPI_COMM_WORLD_LOCAL_RANK=1", o0[] = "OMPI_COMM_WORLD_LOCAL_RANK=0";
	char *e1[] = { o1, NULL }, *e0[] = { o0, NULL };

	is_str(val(env, "LOCAL_SIZE"), "2", "LOCAL_SIZE is the node's task count (2), never WORLD_SIZE (4)");
	ok(val(env, "LOCAL_SIZE") && val(env, "WORLD_SIZE") && strcmp(val(env, "LOCAL_SIZE"), val(env, "WORLD_SIZE")) != 0,
	   "... on a multi-node step (DeepSpeed's CPU path would wait for other nodes' shared memory)");
	rdzv_envset_destroy(env);
	s = step(5, 2, 1, 2); /* 3 + 2: rank 3 is local 0 on node 1 */
	env = fill("deepspeed", &s, 3, 0, -1);
	is_str(val(env, "LOCAL_RANK"), "0", "uneven 3+2: rank 3's LOCAL_RANK is 0 (DeepSpeed's RANK %% LOCAL_SIZE gives 1)");
	rdzv_envset_destroy(env);
	s = step(4, 2, 1, 2);
	is_int(check("deepspeed", &s, argv, e1, err, sizeof(err)), 1,
	       "OMPI_COMM_WORLD_LOCAL_RANK exported, 2 tasks on the node: a warning");
	ok(strstr(err, "OMPI_COMM_WORLD_LOCAL_RANK=1") && strstr(err, "asserts") && strstr(err, "unset"),
	   "... naming the variable, DeepSpeed's assert and the fix: %s", err);
	s = step(2, 2, 1, 1);
	is_int(check("deepspeed", &s, argv, e0, err, sizeof(err)), 0, "=0 with one task per node: equal, nothing");
	is_int(check("deepspeed", &s, argv, e1, err, sizeof(err)), 1, "=1 with one task per node: differs, a warning");
	s = step(4, 2, 0, 0);
	is_int(check("deepspeed", &s, argv, e1, err, sizeof(err)), 0, "... not in srun (the nodes warn, once, from rank 0)");
}

static void jax(void)
{
	struct rdzv_step s = step(4, 2, 0, 2);
	char err[512], a0[] = "python", *argv[] = { a0, NULL };
	char uri[] = "OMPI_MCA_orte_hnp_uri=1234.0;tcp://10.0.0.1:5000", *e[] = { uri, NULL }, *none[] = { NULL };

	is_int(check("jax", &s, argv, e, err, sizeof(err)), 1, "jax: OMPI_MCA_orte_hnp_uri exported gives a warning");
	ok(strstr(err, "OMPI_MCA_orte_hnp_uri") && strstr(err, "Open MPI") && strstr(err, "unset"),
	   "... naming the variable, JAX's Open MPI detection and the fix: %s", err);
	is_int(check("jax", &s, argv, none, err, sizeof(err)), 0, "... none without it");
	is_int(check("torch", &s, argv, e, err, sizeof(err)), 0, "... and none in torch mode");
}

int main(void)
{
	lightning_fill();
	lightning_check();
	launchers();
	deepspeed();
	jax();
	return done_testing();
}

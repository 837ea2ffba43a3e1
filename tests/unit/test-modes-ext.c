/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-modes-ext.c: the deepspeed, megatron and jax modes set exactly what
 * their frameworks read, and megatron's whole-step check refuses or warns
 * through rdzv_mode_check_step. */
#include "config.h"
#include "tap.h"
#include "modes.h"
#include "util.h"
#include "modefix.h"

static struct rdzv_step step(uint32_t ntasks, uint32_t nnodes, uint32_t node,
                             uint32_t local)
{
	return modefix_step(42, 3, 29511, ntasks, nnodes, node, local);
}

static void table(void)
{
	const char *names = rdzv_mode_names();

	ok(strstr(names, "deepspeed") && strstr(names, "megatron") && strstr(names, "jax"),
	   "the valid values named in srun's error include the new modes (%s)", names);
	ok(rdzv_mode_find("deepspeed") && rdzv_mode_find("megatron") && rdzv_mode_find("jax"),
	   "each new mode is one table entry");
	ok(rdzv_mode_find("megatron")->check != NULL && rdzv_mode_find("torchrun")->check == NULL,
	   "megatron has a whole-step check, torchrun none (torch's launcher check: test-frameworks)");
	ok(!rdzv_mode_find("Megatron") && !rdzv_mode_find("jax "), "names are exact");
}

static void deepspeed(void)
{
	struct rdzv_step s = step(16, 2, 1, 8);
	struct rdzv_envset *env = fill("deepspeed", &s, 11, 3, 8);

	ok(env != NULL, "deepspeed fills");
	is_str(val(env, "CROSS_RANK"), "1", "CROSS_RANK is the node index");
	is_str(val(env, "CROSS_SIZE"), "2", "CROSS_SIZE is the node count");
	is_str(val(env, "LOCAL_SIZE"), "8", "LOCAL_SIZE is the tasks on this node");
	is_str(val(env, "RANK"), "11", "RANK as in torch mode");
	is_str(val(env, "LOCAL_RANK"), "3", "LOCAL_RANK as in torch mode");
	is_str(val(env, "WORLD_SIZE"), "16", "WORLD_SIZE as in torch mode");
	is_str(val(env, "MASTER_ADDR"), "n1", "MASTER_ADDR as in torch mode");
	is_str(val(env, "MASTER_PORT"), "29511", "MASTER_PORT as in torch mode");
	is_str(val(env, "TORCHELASTIC_USE_AGENT_STORE"), "False",
	       "TORCHELASTIC_USE_AGENT_STORE=False as in torch mode");
	ok(rdzv_envset_find(env, "CROSS_RANK")->policy == RDZV_SET_ENFORCE
	   && (rdzv_envset_find(env, "CROSS_RANK")->flags & RDZV_ENV_IDENTITY)
	   && rdzv_envset_find(env, "CROSS_SIZE")->policy == RDZV_SET_ENFORCE
	   && rdzv_envset_find(env, "LOCAL_SIZE")->policy == RDZV_SET_ENFORCE,
	   "CROSS_RANK, CROSS_SIZE, LOCAL_SIZE are identity: they replace stale exports");
	rdzv_envset_destroy(env);

	s = step(6, 3, 2, 1); /* 3+2+1 */
	env = fill("deepspeed", &s, 5, 0, -1);
	is_str(val(env, "LOCAL_SIZE"), "1", "LOCAL_SIZE follows uneven nodes (3+2+1, last node)");
	rdzv_envset_destroy(env);
}

static struct rdzv_envset *megatron_with(struct rdzv_step *s, char **argv, int argc,
                                          char *why, size_t whylen)
{
	s->argc = argc;
	s->argv = argv;
	why[0] = '\0';
	rdzv_mode_find("megatron")->explain(s, why, whylen);
	return fill("megatron", s, 0, 0, 8);
}

static void megatron(void)
{
	struct rdzv_step s = step(16, 2, 0, 8);
	char a0[] = "python", tp[] = "--tensor-model-parallel-size", two[] = "2", one[] = "1";
	char cp[] = "--context-parallel-size", fsdp[] = "--use-torch-fsdp2", sh[] = "train.sh";
	char bad[] = "x";
	char *v_none[] = { a0, NULL }, *v_tp2[] = { a0, tp, two, NULL }, *v_tp1[] = { a0, tp, one, NULL };
	char *v_cp2[] = { a0, cp, two, NULL }, *v_fsdp[] = { a0, tp, two, fsdp, NULL };
	char *v_wrap[] = { sh, NULL }, *v_bad[] = { a0, tp, bad, NULL };
	char tpenv[] = "TP_SIZE=4";
	char *envp[] = { tpenv, NULL };
	char why[256];
	struct rdzv_envset *env;

	env = megatron_with(&s, v_tp2, 3, why, sizeof(why));
	is_str(val(env, "CUDA_DEVICE_MAX_CONNECTIONS"), "1",
	       "CUDA_DEVICE_MAX_CONNECTIONS=1 with --tensor-model-parallel-size 2");
	ok(strstr(why, "--tensor-model-parallel-size 2") != NULL,
	   "verbose output says why it was set (%s)", why);
	is_str(val(env, "RANK"), "0", "torch variables too");
	is_str(val(env, "NODE_RANK"), "0", "NODE_RANK (Megatron reads it in its launch scripts)");
	ok(rdzv_envset_find(env, "CUDA_DEVICE_MAX_CONNECTIONS")->policy == RDZV_SET_DEFAULT,
	   "a user's CUDA_DEVICE_MAX_CONNECTIONS wins (DEFAULT policy)");
	rdzv_envset_destroy(env);

	env = megatron_with(&s, v_cp2, 3, why, sizeof(why));
	is_str(val(env, "CUDA_DEVICE_MAX_CONNECTIONS"), "1",
	       "CUDA_DEVICE_MAX_CONNECTIONS=1 with --context-parallel-size 2");
	rdzv_envset_destroy(env);

	env = megatron_with(&s, v_tp1, 3, why, sizeof(why));
	ok(env && !val(env, "CUDA_DEVICE_MAX_CONNECTIONS"), "not set with TP 1 and no CP");
	rdzv_envset_destroy(env);

	env = megatron_with(&s, v_fsdp, 4, why, sizeof(why));
	ok(env && !val(env, "CUDA_DEVICE_MAX_CONNECTIONS"),
	   "not set with --use-torch-fsdp2 even with TP 2 (Megatron refuses 1 there)");
	ok(strstr(why, "--use-torch-fsdp2") != NULL, "verbose output names the FSDP flag (%s)", why);
	rdzv_envset_destroy(env);

	env = megatron_with(&s, v_wrap, 1, why, sizeof(why));
	ok(env && !val(env, "CUDA_DEVICE_MAX_CONNECTIONS"),
	   "not set for a wrapper (srun bash train.sh): the flags are not visible");
	ok(strstr(why, "no tensor or context parallelism") != NULL,
	   "verbose output says the command line showed no TP/CP (%s)", why);
	rdzv_envset_destroy(env);

	s.envp = envp;
	env = megatron_with(&s, v_none, 1, why, sizeof(why));
	ok(env && !val(env, "CUDA_DEVICE_MAX_CONNECTIONS"),
	   "TP_SIZE=4 in the environment alone does not set it (not the command line)");
	rdzv_envset_destroy(env);
	s.envp = NULL;

	env = megatron_with(&s, v_bad, 3, why, sizeof(why));
	ok(env && !val(env, "CUDA_DEVICE_MAX_CONNECTIONS"), "not set when the TP value is bad");
	rdzv_envset_destroy(env);

	env = megatron_with(&s, NULL, 0, why, sizeof(why));
	ok(env && !val(env, "CUDA_DEVICE_MAX_CONNECTIONS"), "not set without a command line");
	rdzv_envset_destroy(env);
}

static void megatron_check(void)
{
	const struct rdzv_mode *m = rdzv_mode_find("megatron");
	struct rdzv_step s = step(16, 2, 0, 8);
	char w0[] = "python", w1[] = "pretrain_gpt.py", w2[] = "--tensor-model-parallel-size",
	     w3[] = "16", w4[] = "--fp8-format", w5[] = "hybrid";
	char e0[] = "SLURM_STEP_TASKS_PER_NODE=8(x2)", e1[] = "SLURM_DISTRIBUTION=block",
	     e2[] = "TP_SIZE=4";
	char *argv[] = { w0, w1, w2, w3, NULL, NULL, NULL };
	char *envp[] = { e0, e1, NULL, NULL };
	char err[512];

	s.argc = 4;
	s.argv = argv;
	s.envp = envp;
	ok(rdzv_mode_check_step(m, &s, err, sizeof(err)) == -1
	   && strstr(err, "--rdzv=megatron layout check: TP=16 is larger than the 8 tasks"),
	   "TP=16 on 2 x 8 is refused through rdzv_mode_check_step (%s)", err);
	w3[0] = '8';
	w3[1] = '\0';
	is_int(rdzv_mode_check_step(m, &s, err, sizeof(err)), 0, "TP=8 on 2 x 8 passes");

	argv[4] = w4;
	argv[5] = w5;
	s.argc = 6;
	snprintf(s.gpu_model, sizeof(s.gpu_model), "NVIDIA A100-SXM4-40GB");
	ok(rdzv_mode_check_step(m, &s, err, sizeof(err)) == 1
	   && strstr(err, "NVIDIA A100-SXM4-40GB"),
	   "FP8 on A100: the step runs, with a warning naming the GPU (%s)", err);
	snprintf(s.gpu_model, sizeof(s.gpu_model), "NVIDIA H100 80GB HBM3");
	is_int(rdzv_mode_check_step(m, &s, err, sizeof(err)), 0, "FP8 on H100: no warning");

	/* A run.sh that reads TP_SIZE: nothing on the command line. */
	s.argc = 2;
	argv[2] = NULL;
	envp[2] = e2;
	s.ntasks = 6;
	s.local_ntasks = 3;
	e0[strlen("SLURM_STEP_TASKS_PER_NODE=")] = '\0'; /* empty: unknown */
	ok(rdzv_mode_check_step(m, &s, err, sizeof(err)) == -1 && strstr(err, "TP_SIZE"),
	   "TP_SIZE=4 with 6 tasks is refused, naming the variable (%s)", err);
	s.envp = NULL;
	is_int(rdzv_mode_check_step(m, &s, err, sizeof(err)), 0,
	       "without environment or options there is nothing to refuse");
	s.argv = NULL;
	s.argc = 0;
	is_int(rdzv_mode_check_step(m, &s, err, sizeof(err)), 0, "a step without argv passes");
	is_int(rdzv_mode_check_step(rdzv_mode_find("deepspeed"), &s, err, sizeof(err)), 0,
	       "modes without a check pass");
}

static void jax(void)
{
	struct rdzv_step s = step(8, 2, 1, 4);
	struct rdzv_envset *env;

	s.gpus_on_node = 4;
	env = fill("jax", &s, 6, 2, 4);
	is_str(val(env, "JAX_COORDINATOR_ADDRESS"), "n1:29511",
	       "JAX_COORDINATOR_ADDRESS is rank 0's node and the step's port");
	is_str(val(env, "JAX_NUM_PROCESSES"), "8", "JAX_NUM_PROCESSES is the world size");
	is_str(val(env, "JAX_PROCESS_ID"), "6", "JAX_PROCESS_ID is the global rank");
	is_str(val(env, "JAX_LOCAL_DEVICE_IDS"), "2",
	       "4 tasks sharing 4 visible GPUs: local rank 2 takes device 2");
	ok(!val(env, "RANK") && !val(env, "MASTER_ADDR"), "no torch variables in jax mode");
	rdzv_envset_destroy(env);

	env = fill("jax", &s, 6, 2, 1);
	is_str(val(env, "JAX_LOCAL_DEVICE_IDS"), "0",
	       "Slurm or --rdzv-bind=isolate narrowed CUDA_VISIBLE_DEVICES to one GPU: device 0, "
	       "not SLURM_LOCALID 2");
	rdzv_envset_destroy(env);
	{
		const struct rdzv_mode *m = rdzv_mode_find("jax");
		struct rdzv_task t = { 6, 2, 4 };
		char err[256];

		env = rdzv_envset_create();
		ok(env && m->fill(&s, &t, env, err, sizeof(err)) == 0
		   && !val(env, "JAX_LOCAL_DEVICE_IDS") && m->fill_late != NULL,
		   "JAX_LOCAL_DEVICE_IDS is not computed before binding, only after (fill_late)");
		rdzv_envset_destroy(env);
		ok(rdzv_envset_find(NULL, "x") == NULL, "(envset_find accepts NULL)");
	}

	s.local_ntasks = 1;
	s.gpus_on_node = 8;
	env = fill("jax", &s, 1, 0, 8);
	is_str(val(env, "JAX_LOCAL_DEVICE_IDS"), "0,1,2,3,4,5,6,7",
	       "one process per node owns all its GPUs");
	rdzv_envset_destroy(env);

	s.local_ntasks = 2;
	env = fill("jax", &s, 3, 1, 8);
	is_str(val(env, "JAX_LOCAL_DEVICE_IDS"), "4,5,6,7", "2 tasks on 8 GPUs: blocks of 4");
	rdzv_envset_destroy(env);

	s.local_ntasks = 4;
	s.gpus_on_node = 8;
	env = fill("jax", &s, 3, 3, 2);
	is_str(val(env, "JAX_LOCAL_DEVICE_IDS"), "0,1",
	       "--gpus-per-task=2: the task owns both GPUs it sees");
	rdzv_envset_destroy(env);

	s.gpus_on_node = 2;
	env = fill("jax", &s, 3, 3, 2);
	is_str(val(env, "JAX_LOCAL_DEVICE_IDS"), "1", "4 tasks on 2 GPUs: round robin");
	rdzv_envset_destroy(env);

	env = fill("jax", &s, 3, 3, -1);
	ok(env && !val(env, "JAX_LOCAL_DEVICE_IDS"), "no GPUs visible: no device ids");
	rdzv_envset_destroy(env);

	snprintf(s.master_addr, sizeof(s.master_addr), "fd00::1");
	env = fill("jax", &s, 0, 0, -1);
	is_str(val(env, "JAX_COORDINATOR_ADDRESS"), "[fd00::1]:29511",
	       "an IPv6 coordinator is bracketed");
	rdzv_envset_destroy(env);
}

static void envp(void)
{
	char a[] = "TP=1", b[] = "TP_SIZE=4", c[] = "TP_SIZE=8", d[] = "EMPTY=";
	char *e[] = { a, b, c, d, NULL };

	is_str(rdzv_envp_get(e, "TP_SIZE"), "4", "the first TP_SIZE, not the TP prefix");
	is_str(rdzv_envp_get(e, "EMPTY"), "", "an empty value is a value");
	ok(rdzv_envp_get(e, "TP_SIZ") == NULL, "a prefix of a name is not the name");
	ok(rdzv_envp_get(NULL, "TP") == NULL, "no environment: NULL");
}

int main(void)
{
	table();
	deepspeed();
	megatron();
	megatron_check();
	jax();
	envp();
	return done_testing();
}

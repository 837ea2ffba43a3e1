/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-megatron.c: Megatron's layout is read from argv (then TP_SIZE style
 * variables), and layouts that would stop Megatron or split a tensor-parallel
 * group across nodes are refused with the numbers in the message. */
#include "config.h"
#include "tap.h"
#include "megatron.h"

#define TP "--tensor-model-parallel-size"
#define PP "--pipeline-model-parallel-size"
#define CP "--context-parallel-size"

/* A command line from words separated by '|'. */
struct av {
	int n;
	char *v[32];
	char buf[1024];
};

static char **mk(struct av *a, const char *words)
{
	char *s;

	snprintf(a->buf, sizeof(a->buf), "%s", words);
	a->n = 0;
	for (s = a->buf; a->n < 31; s++) {
		a->v[a->n++] = s;
		if (!(s = strchr(s, '|')))
			break;
		*s = '\0';
	}
	a->v[a->n] = NULL;
	return a->v;
}

static struct av A, E;

static int rd(const char *argv, const char *env, struct rdzv_megatron_layout *l, char *err,
              size_t errlen)
{
	char **e = NULL;

	mk(&A, argv);
	if (env)
		e = mk(&E, env);
	return rdzv_megatron_read(A.n, A.v, e, l, err, errlen);
}

/* Check argv over a step given as "ntasks nnodes tpn dist plane local node". */
static int chk(const char *argv, uint32_t ntasks, uint32_t nnodes, const char *tpn,
               const char *dist, uint32_t plane, uint32_t local, char *err, size_t errlen)
{
	struct rdzv_megatron_layout l;
	struct rdzv_megatron_place p;

	if (rd(argv, NULL, &l, err, errlen) < 0)
		return -2;
	memset(&p, 0, sizeof(p));
	p.ntasks = ntasks;
	p.nnodes = nnodes;
	p.tasks_per_node = tpn;
	p.distribution = dist;
	p.plane_size = plane;
	p.local_ntasks = local;
	p.node_id = 1;
	return rdzv_megatron_check(&l, &p, err, errlen);
}

static void hostile(void)
{
	struct rdzv_megatron_layout l;
	char err[512];

	ok(rd("python|pretrain_gpt.py|" TP "=0", NULL, &l, err, sizeof(err)) < 0
	   && strstr(err, TP) && strstr(err, "out of range"), "TP=0 is refused (%s)", err);
	ok(rd("python|pretrain_gpt.py|" PP, NULL, &l, err, sizeof(err)) < 0
	   && strstr(err, PP) && strstr(err, "needs a value"), "a missing PP value is refused (%s)",
	   err);
	ok(rd("python|x.py|" CP "|-2", NULL, &l, err, sizeof(err)) < 0 && strstr(err, "-2"),
	   "a negative CP is refused (%s)", err);
	ok(rd("python|x.py|" TP "|184467440737095516160", NULL, &l, err, sizeof(err)) < 0
	   && strstr(err, "out of range"), "a huge TP is refused (%s)", err);
	ok(rd("python|x.py|" TP "|2097152", NULL, &l, err, sizeof(err)) < 0
	   && strstr(err, "1048576"), "a TP beyond any machine is refused with the bound (%s)", err);
	ok(rd("python|x.py|" TP "|8|" TP "|x", NULL, &l, err, sizeof(err)) < 0,
	   "a repeated flag with a bad second value is refused");
	ok(rd("bash|run.sh", "TP_SIZE=eight", &l, err, sizeof(err)) < 0
	   && strstr(err, "TP_SIZE='eight'"), "a bad TP_SIZE names the variable (%s)", err);
	ok(rd("bash|run.sh", "PP_SIZE=0", &l, err, sizeof(err)) < 0 && strstr(err, "PP_SIZE"),
	   "PP_SIZE=0 is refused (%s)", err);
	ok(rd("python|x.py|--fp8-format", NULL, &l, err, sizeof(err)) < 0
	   && strstr(err, "--fp8-format needs a value"), "--fp8-format without value is refused");
}

static void reading(void)
{
	struct rdzv_megatron_layout l;
	char err[512] = "";

	ok(rd("python|pretrain_gpt.py|--num-layers|24", NULL, &l, err, sizeof(err)) == 0
	   && l.tp.n == 1 && l.pp.n == 1 && l.cp.n == 1 && strcmp(l.tp.from, "default") == 0,
	   "without options every size is Megatron's default 1");
	ok(rd("python|pretrain_gpt.py|" TP "|8|" PP "=2|" CP "|2", NULL, &l, err, sizeof(err)) == 0
	   && l.tp.n == 8 && l.pp.n == 2 && l.cp.n == 2 && strcmp(l.pp.from, PP) == 0,
	   "both spellings are read");
	ok(rd("python|x.py|" TP "|2|" TP "=4", NULL, &l, err, sizeof(err)) == 0 && l.tp.n == 4,
	   "repeated: the last one wins (argparse)");
	ok(rd("bash|run.sh", "HOME=/root|TP_SIZE=4|PP_SIZE=2|CP_SIZE=1", &l, err, sizeof(err)) == 0
	   && l.tp.n == 4 && l.pp.n == 2 && strcmp(l.tp.from, "TP_SIZE") == 0,
	   "a run.sh's TP_SIZE/PP_SIZE variables are read when argv has no option");
	ok(rd("python|x.py|" TP "|8", "TP_SIZE=4", &l, err, sizeof(err)) == 0 && l.tp.n == 8
	   && strcmp(l.tp.from, TP) == 0, "the command line wins over the environment");
	ok(rd("python|x.py|--fp8-format|hybrid", NULL, &l, err, sizeof(err)) == 0
	   && strcmp(l.fp8, "--fp8-format hybrid") == 0, "--fp8-format is recorded");
	ok(rd("python|x.py|--fp8-hybrid", NULL, &l, err, sizeof(err)) == 0
	   && strcmp(l.fp8, "--fp8-hybrid") == 0, "--fp8-hybrid is recorded");
	ok(rd("python|x.py|--use-torch-fsdp2", NULL, &l, err, sizeof(err)) == 0 && l.fsdp,
	   "FSDP is noticed");
}

static void layouts(void)
{
	char err[512];
	const char *tp8pp2 = "python|pretrain_gpt.py|" TP "|8|" PP "|2";

	/* The seed's layout: TP=8, PP=2 on 2 nodes x 8 GPUs. */
	err[0] = '\0';
	is_int(chk(tp8pp2, 16, 2, "8(x2)", "block", 0, 0, err, sizeof(err)), 0,
	       "TP=8 PP=2 on 2 nodes x 8 tasks, block: accepted");
	is_int(chk(tp8pp2, 16, 2, NULL, NULL, 0, 8, err, sizeof(err)), 0,
	       "same, seen from one node without the tasks-per-node string");

	ok(chk("python|x.py|" TP "|16", 16, 2, "8(x2)", "block", 0, 0, err, sizeof(err)) < 0
	   && strstr(err, "TP=16 is larger than the 8 tasks on node 0"),
	   "TP=16 on nodes of 8 is refused (%s)", err);
	ok(chk("python|x.py|" TP "|16", 16, 2, NULL, NULL, 0, 8, err, sizeof(err)) < 0
	   && strstr(err, "TP=16 is larger than the 8 tasks on node 1"),
	   "... also from one node's view (%s)", err);
	ok(chk(tp8pp2, 12, 2, "6(x2)", "block", 0, 0, err, sizeof(err)) < 0
	   && strstr(err, "world size 12") && strstr(err, "8 x 2 x 1 = 16"),
	   "world size not divisible by TP x PP x CP is refused with the numbers (%s)", err);
	{
		struct rdzv_megatron_layout l;

		/* srun's early check: the world size alone, as the line fixes it. */
		ok(rd(tp8pp2, NULL, &l, err, sizeof(err)) == 0
		   && rdzv_megatron_check_world(&l, 12, err, sizeof(err)) < 0
		   && strstr(err, "world size 12 (the step's tasks) is not divisible by TP x PP x CP "
		                  "= 8 x 2 x 1 = 16"),
		   "world size alone: 12 against TP=8 PP=2 is refused with the numbers (%s)", err);
		ok(rdzv_megatron_check_world(&l, 32, err, sizeof(err)) == 0,
		   "... 32 is accepted (what only the layout decides is not checked here)");
		ok(rdzv_megatron_check_world(&l, 0, err, sizeof(err)) < 0
		   && strstr(err, "no tasks"), "... no tasks is refused (%s)", err);
		ok(rd("python|x.py|--expert-model-parallel-size|3", NULL, &l, err, sizeof(err)) == 0
		   && rdzv_megatron_check_world(&l, 4, err, sizeof(err)) < 0
		   && strstr(err, "ETP x EP x PP = 1 x 3 x 1 = 3"),
		   "... and the expert groups' product (%s)", err);
	}
	ok(chk("python|x.py|" TP "|4", 16, 3, "6,6,4", "block", 0, 0, err, sizeof(err)) < 0
	   && strstr(err, "node 0 holds 6 tasks (ranks 0..5)")
	   && strstr(err, "ranks 4..7 would straddle nodes 0 and 1"),
	   "a block layout whose boundary cuts a TP group is refused (%s)", err);
	is_int(chk("python|x.py|" TP "|4", 16, 3, "8,4(x2)", "block", 0, 0, err, sizeof(err)), 0,
	       "uneven nodes whose counts are multiples of TP are fine (8+4+4, TP=4)");
	ok(chk("python|x.py|" TP "|4", 16, 3, NULL, "block", 0, 6, err, sizeof(err)) < 0
	   && strstr(err, "node 1 holds 6 tasks, not a multiple of TP=4"),
	   "one node's view: its count must be a multiple of TP (%s)", err);
	ok(chk("python|x.py|" TP "|2", 8, 2, "4(x2)", "cyclic", 0, 0, err, sizeof(err)) < 0
	   && strstr(err, "--distribution=cyclic") && strstr(err, "--distribution=block"),
	   "cyclic distribution over 2 nodes with TP=2 is refused (%s)", err);
	ok(chk("python|x.py|" TP "|2", 8, 2, "4(x2)", "cyclic:block", 0, 0, err, sizeof(err)) < 0,
	   "cyclic:block is cyclic across nodes");
	is_int(chk("python|x.py|" TP "|2", 8, 2, "4(x2)", "block:cyclic", 0, 0, err, sizeof(err)),
	       0, "block:cyclic is block across nodes");
	is_int(chk("python|x.py|" TP "|4", 4, 1, "4", "cyclic", 0, 0, err, sizeof(err)), 0,
	       "cyclic on one node is harmless");
	is_int(chk("python|x.py|" PP "|2", 8, 2, "4(x2)", "cyclic", 0, 0, err, sizeof(err)), 0,
	       "cyclic with TP=1 is harmless");
	ok(chk("python|x.py|" TP "|4", 8, 2, "4(x2)", "plane", 2, 0, err, sizeof(err)) < 0
	   && strstr(err, "plane=2"), "plane=2 with TP=4 is refused (%s)", err);
	is_int(chk("python|x.py|" TP "|2", 8, 2, "4(x2)", "plane", 4, 0, err, sizeof(err)), 0,
	       "plane=4 with TP=2 is fine");
	is_int(chk("python|x.py|" TP "|2", 8, 2, "4(x2)", "plane=4", 0, 0, err, sizeof(err)), 0,
	       "plane=N spelled in the distribution is read");
	is_int(chk("python|x.py|" TP "|2", 8, 2, "5,3", "arbitrary", 0, 0, err, sizeof(err)), 0,
	       "arbitrary (hostfile) layouts are only checked for divisibility");
	ok(chk("python|x.py|" TP "|4", 8, 2, "5,3", "block", 0, 0, err, sizeof(err)) < 0
	   && strstr(err, "3 tasks on node 1"), "the smallest node is named (%s)", err);
	is_int(chk("python|x.py|" TP "|4", 8, 2, "3(x2)", "block", 0, 0, err, sizeof(err)), 0,
	       "a tasks-per-node string of another step (6 tasks, not 8) is ignored");
	/* Read as Slurm writes it: a walk that skipped the 'x' and the ')'
	 * would see 6 and 2 tasks here and refuse a TP group across nodes. */
	is_int(chk("python|x.py|" TP "|4", 8, 2, "6(y1),2", "block", 0, 0, err, sizeof(err)), 0,
	       "'6(y1),2' (no 'x') is not a tasks-per-node string: ignored");
	is_int(chk("python|x.py|" TP "|4", 8, 2, "6(x1,2", "block", 0, 0, err, sizeof(err)), 0,
	       "'6(x1,2' (no ')') is not a tasks-per-node string: ignored");
	is_int(chk("python|x.py|" TP "|4", 8, 2, "0,8", "block", 0, 0, err, sizeof(err)), 0,
	       "'0,8' (a node without tasks) is not a Slurm step's: ignored");
	ok(chk("python|x.py|" TP "|4", 8, 2, "6(x1),2", "block", 0, 0, err, sizeof(err)) < 0
	   && strstr(err, "2 tasks on node 1"), "'6(x1),2' is read (%s)", err);
	ok(chk("python|x.py|" TP "|3", 8, 2, "4(x2)", "block", 0, 0, err, sizeof(err)) < 0
	   && strstr(err, "world size 8"), "TP=3 does not divide 8");
	ok(chk("python|x.py|" TP "|1048576|" PP "|1048576|" CP "|1048576", 8, 2, "4(x2)", "block",
	       0, 0, err, sizeof(err)) < 0 && strstr(err, "world size 8"),
	   "the largest sizes multiply without overflow (%s)", err);
}

static void fp8(void)
{
	struct rdzv_megatron_layout l;
	char msg[512];

	is_int(rdzv_gpu_fp8_capable("NVIDIA H100 80GB HBM3"), 1, "H100 has FP8");
	is_int(rdzv_gpu_fp8_capable("NVIDIA H200"), 1, "H200 has FP8");
	is_int(rdzv_gpu_fp8_capable("NVIDIA L40S"), 1, "L40S (Ada) has FP8");
	is_int(rdzv_gpu_fp8_capable("NVIDIA RTX 6000 Ada Generation"), 1, "RTX 6000 Ada has FP8");
	is_int(rdzv_gpu_fp8_capable("NVIDIA B200"), 1, "B200 has FP8");
	is_int(rdzv_gpu_fp8_capable("NVIDIA A100-SXM4-40GB"), 0, "A100 has none");
	is_int(rdzv_gpu_fp8_capable("Tesla V100-SXM2-16GB"), 0, "V100 has none");
	is_int(rdzv_gpu_fp8_capable("Tesla T4"), 0, "T4 has none");
	is_int(rdzv_gpu_fp8_capable("Quadro RTX 6000"), 0, "Quadro RTX 6000 (Turing) has none");
	is_int(rdzv_gpu_fp8_capable("GeForce GTX 1070"), 0, "GTX 1070 has none");
	is_int(rdzv_gpu_fp8_capable("AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2"), 0,
	       "MI200 has none");
	/* hwloc's PCIDevice names (pci.ids), when NVML's GPUModel is absent. */
	is_int(rdzv_gpu_fp8_capable("GH100 [H200 SXM 141GB]"), 1, "PCI name of H200 has FP8");
	is_int(rdzv_gpu_fp8_capable("AD102GL [L40S]"), 1, "PCI name of L40S has FP8");
	is_int(rdzv_gpu_fp8_capable("GA100 [A100 SXM4 40GB]"), 0, "PCI name of A100 has none");
	is_int(rdzv_gpu_fp8_capable("GV100GL [Tesla V100 SXM2 16GB]"), 0, "PCI name of V100 has none");
	is_int(rdzv_gpu_fp8_capable("TU104GL [Tesla T4]"), 0, "PCI name of T4 has none");
	is_int(rdzv_gpu_fp8_capable("Frobnicator 9000"), -1, "an unknown model is unknown");
	is_int(rdzv_gpu_fp8_capable(""), -1, "no model is unknown");

	rd("python|x.py|--fp8-format|hybrid", NULL, &l, msg, sizeof(msg));
	ok(rdzv_megatron_fp8_warning(&l, "NVIDIA A100-SXM4-40GB", msg, sizeof(msg)) == 1
	   && strstr(msg, "NVIDIA A100-SXM4-40GB") && strstr(msg, "--fp8-format hybrid"),
	   "FP8 on A100 warns, naming the GPU and the option (%s)", msg);
	is_int(rdzv_megatron_fp8_warning(&l, "NVIDIA H100 80GB HBM3", msg, sizeof(msg)), 0,
	       "FP8 on H100: no warning");
	is_int(rdzv_megatron_fp8_warning(&l, "", msg, sizeof(msg)), 0,
	       "FP8 with an unknown GPU model: no warning (no guessing)");
	rd("python|x.py", NULL, &l, msg, sizeof(msg));
	is_int(rdzv_megatron_fp8_warning(&l, "Tesla V100-SXM2-16GB", msg, sizeof(msg)), 0,
	       "no FP8 option: no warning on old GPUs");
}

int main(void)
{
	hostile();
	reading();
	layouts();
	fp8();
	return done_testing();
}

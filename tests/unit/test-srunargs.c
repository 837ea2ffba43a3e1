/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-srunargs: the one reader of srun's command line (srunargs.h): what
 * each of its users (-w/-F, -K/--rdzv, the program) sees comes from here. */
#include "config.h"
#include "srunargs.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

static char err[256];

/* Walk argv; return "o1|o2|...>CMD" naming each option and value. */
static const char *walk(int argc, char *const *argv)
{
	static char out[1024];
	struct rdzv_srun_args it;
	struct rdzv_srun_arg a;
	size_t n = 0;
	int rc;

	out[0] = '\0';
	rdzv_srun_args_init(&it, argc, argv);
	while ((rc = rdzv_srun_args_next(&it, &a, err, sizeof(err))) > 0) {
		if (a.long_name)
			n += (size_t)snprintf(out + n, sizeof(out) - n, "--%.*s", (int)a.long_len, a.long_name);
		else
			n += (size_t)snprintf(out + n, sizeof(out) - n, "-%c", a.short_name);
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%s|", a.value ? "=" : "",
		                      a.value ? a.value : "");
	}
	if (rc < 0)
		snprintf(out + n, sizeof(out) - n, "ERROR");
	else
		snprintf(out + n, sizeof(out) - n, ">%d", it.command);
	return out;
}

/* A writable copy of a literal argv, as /proc/self/cmdline gives srun's. */
static char *const *copy(int argc, const char *const *v)
{
	static char store[32][64];
	static char *argv[33];
	int i;

	for (i = 0; i < argc && i < 32; i++) {
		snprintf(store[i], sizeof(store[i]), "%s", v[i] ? v[i] : "");
		argv[i] = v[i] ? store[i] : NULL;
	}
	argv[i] = NULL;
	return argv;
}

#define ARGV(...) copy(N(__VA_ARGS__), (const char *const[]){ "srun", __VA_ARGS__, NULL })
#define N(...) ((int)(sizeof((const char *[]){ "srun", __VA_ARGS__ }) / sizeof(char *)))
#define W(...) walk(N(__VA_ARGS__), ARGV(__VA_ARGS__))

int main(void)
{
	struct rdzv_srun_arg a;

	is_str(W("-N2", "-n", "4", "python", "-m", "x"), "-N=2|-n=4|>4", "values attached and apart; the program ends the options");
	is_str(W("-lN2", "true"), "-l|-N=2|>2", "a cluster of a flag and an option with its value");
	is_str(W("-K0", "-K", "true"), "-K=0|-K|>3", "-K takes an attached value only");
	is_str(W("--nodelist", "n[1-2]", "--rdzv=torch", "x"), "--nodelist=n[1-2]|--rdzv=torch|>4",
	       "long options with separate and = values");
	is_str(W("--nodel", "n1", "--nodef=f", "x"), "--nodel=n1|--nodef=f|>4",
	       "abbreviated --nodelist and --nodefile take their values");
	is_str(W("--kill-on-bad-exit", "--label", "x"), "--kill-on-bad-exit|--label|>3", "flags");
	is_str(W("-w", "n1", "--", "-x"), "-w=n1|>4", "-- ends the options");
	is_str(W("--"), ">-1", "-- without a program");
	is_str(W("-w"), "ERROR", "a short option without its value is refused");
	is_str(W("--ntasks"), "ERROR", "a long option without its value is refused");
	is_str(W("-", "x"), ">1", "a lone '-' is the program");
	is_str(walk(1, ARGV(NULL)), ">-1", "no arguments at all");
	memset(&a, 0, sizeof(a));
	a.long_name = "nodel";
	a.long_len = 5;
	ok(rdzv_srun_arg_is(&a, 'w', "nodelist", 5), "--nodel is --nodelist");
	a.long_len = 4;
	ok(!rdzv_srun_arg_is(&a, 'w', "nodelist", 5), "--node is not (ambiguous with --nodes)");
	memset(&a, 0, sizeof(a));
	a.short_name = 'w';
	ok(rdzv_srun_arg_is(&a, 'w', "nodelist", 5) && !rdzv_srun_arg_is(&a, 'F', "nodefile", 5),
	   "-w is -w, not -F");
	ok(rdzv_srun_long_takes_value("ntasks", 6) && !rdzv_srun_long_takes_value("label", 5)
	   && rdzv_srun_short_takes_value('n') && !rdzv_srun_short_takes_value('l'),
	   "the option table: --ntasks and -n take values, --label and -l do not");
	{
		struct rdzv_srun_size sz;

		ok(rdzv_srun_size(N("-N2", "deepspeed", "x.py"), ARGV("-N2", "deepspeed", "x.py"), &sz) == 0
		   && sz.nodes_min == 2 && sz.nodes_max == 2 && rdzv_srun_min_tasks(&sz) == 2,
		   "-N2: at least 2 tasks");
		ok(rdzv_srun_size(N("--nodes=2-4", "--ntasks-per-node=8", "x"),
		                  ARGV("--nodes=2-4", "--ntasks-per-node=8", "x"), &sz) == 0
		   && sz.nodes_min == 2 && sz.nodes_max == 4 && sz.per_node == 8
		   && rdzv_srun_min_tasks(&sz) == 16, "--nodes=2-4 --ntasks-per-node=8: at least 16");
		ok(rdzv_srun_size(N("-n", "4", "-N1", "x"), ARGV("-n", "4", "-N1", "x"), &sz) == 0
		   && rdzv_srun_min_tasks(&sz) == 4, "-n 4 -N1: 4 tasks");
		ok(rdzv_srun_size(N("x", "-n", "4"), ARGV("x", "-n", "4"), &sz) == 0
		   && rdzv_srun_min_tasks(&sz) == 0, "the program's own -n is not srun's: unknown");
		ok(rdzv_srun_size(N("--ntasks-per-node=2", "x"), ARGV("--ntasks-per-node=2", "x"), &sz) == 0
		   && rdzv_srun_min_tasks(&sz) == 2, "--ntasks-per-node=2 alone: 2 on one node");
		ok(rdzv_srun_size(N("-N", "4-2", "x"), ARGV("-N", "4-2", "x"), &sz) == -1
		   && rdzv_srun_size(N("-nX", "x"), ARGV("-nX", "x"), &sz) == -1
		   && rdzv_srun_size(N("-N2k", "x"), ARGV("-N2k", "x"), &sz) == -1,
		   "a count srun would refuse decides nothing");
		/* The exact count (Megatron's early world-size check). */
		ok(rdzv_srun_size(N("-n4", "-N2", "x"), ARGV("-n4", "-N2", "x"), &sz) == 0
		   && rdzv_srun_exact_tasks(&sz) == 4, "exact: -n4 -N2 is 4");
		ok(rdzv_srun_size(N("-N2", "--ntasks-per-node=2", "x"),
		                  ARGV("-N2", "--ntasks-per-node=2", "x"), &sz) == 0
		   && rdzv_srun_exact_tasks(&sz) == 4, "exact: -N2 --ntasks-per-node=2 is 4");
		ok(rdzv_srun_size(N("--nodes=2-4", "--ntasks-per-node=8", "x"),
		                  ARGV("--nodes=2-4", "--ntasks-per-node=8", "x"), &sz) == 0
		   && rdzv_srun_exact_tasks(&sz) == 0,
		   "exact: --nodes=2-4 --ntasks-per-node=8 leaves it open (16 to 32)");
		ok(rdzv_srun_size(N("-N2", "x"), ARGV("-N2", "x"), &sz) == 0
		   && rdzv_srun_exact_tasks(&sz) == 0,
		   "exact: -N2 alone leaves it open (SLURM_NTASKS or the allocation decides)");
		ok(rdzv_srun_size(N("--ntasks-per-node=2", "x"), ARGV("--ntasks-per-node=2", "x"), &sz) == 0
		   && rdzv_srun_exact_tasks(&sz) == 0,
		   "exact: --ntasks-per-node=2 without -N leaves it open");
		ok(rdzv_srun_size(N("x"), ARGV("x"), &sz) == 0 && rdzv_srun_exact_tasks(&sz) == 0,
		   "exact: no count at all leaves it open");
	}
	return done_testing();
}

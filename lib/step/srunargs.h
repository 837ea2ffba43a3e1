/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
/* srunargs.h: the one reader of srun's own command line (/proc/self/cmdline:
 * SPANK gives plugins only the task's program). Slurm parses it with
 * getopt_long and "+": options end at the first word that is not one, or at
 * "--"; short options cluster ("-lN2"); a long option may be abbreviated to a
 * unique prefix. Whether an option takes a value comes from one table of
 * srun's options (Slurm 22.05-26.05, src/common/slurm_opt.c) and the
 * plugin's own. master.c (-w, -F), failure.c (-K, --rdzv) and launcher.c
 * (the program) all read srun's command line through it. */
#ifndef RDZV_SRUNARGS_H
#define RDZV_SRUNARGS_H

#include <stddef.h>

struct rdzv_srun_arg {
	char short_name;        /* the letter of a short option, or 0 */
	const char *long_name;  /* a long option as written (no "--", maybe
	                         * abbreviated, not NUL-terminated at its end:
	                         * long_len bytes), or NULL */
	size_t long_len;
	const char *value;      /* its value, or NULL for a flag (and for -K alone) */
};

struct rdzv_srun_args {
	int argc;
	char *const *argv;
	int i;                  /* next word */
	const char *cluster;    /* rest of a short-option cluster */
	int done;
	int command;            /* after the end: index of the program, or -1 */
};

void rdzv_srun_args_init(struct rdzv_srun_args *it, int argc, char *const *argv);

/* The next option: 1 with it in *a, 0 at the end of the options (it->command
 * then says where the program starts), -1 when an option lacks its value
 * (named in err). */
int rdzv_srun_args_next(struct rdzv_srun_args *it, struct rdzv_srun_arg *a, char *err,
                        size_t errlen);

/* Whether a is short option short_name or long option long_name written with
 * at least min_prefix of its letters (getopt_long's unique prefixes). */
int rdzv_srun_arg_is(const struct rdzv_srun_arg *a, char short_name, const char *long_name,
                     size_t min_prefix);

/* What srun's command line alone says of the step's size (0: not given):
 * -n/--ntasks, -N/--nodes as "MIN[-MAX]" (MAX = MIN when absent),
 * --ntasks-per-node. */
struct rdzv_srun_size {
	unsigned long ntasks, nodes_min, nodes_max, per_node;
};

/* Read them. Returns 0, or -1 when the command line is malformed or a value
 * is not a number (srun refuses those itself; the caller then decides
 * nothing here). */
int rdzv_srun_size(int argc, char *const *argv, struct rdzv_srun_size *sz);

/* The fewest tasks the step can have from sz: -n when given, else nodes x
 * tasks per node; 0 when the command line does not say. */
unsigned long rdzv_srun_min_tasks(const struct rdzv_srun_size *sz);

/* The step's exact task count from sz: -n when given, else -N N (one
 * number) times --ntasks-per-node; 0 when the command line leaves it open
 * (SLURM_NTASKS or the allocation decides). A heterogeneous line (a ':'
 * argument among argv) is the caller's to rule out: sz is its first
 * component only. */
unsigned long rdzv_srun_exact_tasks(const struct rdzv_srun_size *sz);

/* Whether srun's command line names an existing job (--jobid): 1, 0, or -1
 * when it is malformed. */
int rdzv_srun_names_job(int argc, char *const *argv);

/* Whether srun's long option NAME (n bytes, exact) or short option c takes
 * a separate value. */
int rdzv_srun_long_takes_value(const char *name, size_t n);
int rdzv_srun_short_takes_value(int c);

/* srun's own argv, from /proc/self/cmdline (SPANK gives plugins only the
 * program's; at most 1 MiB). Returns argc, or -1; *buf and *argv to free. */
int rdzv_srun_argv(char **buf, char ***argv);

#endif

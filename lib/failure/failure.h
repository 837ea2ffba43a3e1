/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/failure/: how failures travel and are judged: a failed rank's report,
 * liveness, the collective grace, hang dumps, a GPU fault's verdict. Uses
 * lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* failure.h: a failed rank stops the whole step.
 *
 * The mechanism is Slurm's own kill-on-bad-exit, decided in srun: srun reads
 * SLURM_KILL_BAD_EXIT from its environment (src/srun/opt.c, _opt_env) after
 * it has called the plugins' slurm_spank_init and before it reads its own
 * command line, where -K/--kill-on-bad-exit wins over the environment. So
 * slurm_spank_init exports SLURM_KILL_BAD_EXIT=1 when the step's mode will
 * be one other than off and neither the user nor the admin decided
 * otherwise. The mode must be known before srun parses --rdzv: it is read
 * here the way srun will read it (rdzv_kbe_predict), and checked against
 * what srun's option callbacks said once they have run (srun.c).
 *
 * The first failure is named by srun, in the plugin's terms: each node's
 * slurmstepd sends its first bad exit (rank, node, wait status) in one
 * datagram to srun (RDZV_STEP_REPORT: port and a nonce), before slurmstepd
 * tells srun the task exited; srun prints the first that arrived when it
 * exits. Plain C, no spank.h: unit-tested in tests/unit/test-failure.c. */
#ifndef RDZV_FAILURE_H
#define RDZV_FAILURE_H

#include <stddef.h>
#include <stdint.h>

#include "modes.h"

#define RDZV_KBE_VAR "SLURM_KILL_BAD_EXIT"
#define RDZV_REPORT_VAR "RDZV_STEP_REPORT"
/* The spank option as srun finds it in its environment (#SBATCH --rdzv and
 * salloc --rdzv export it to the job: src/common/plugstack.c,
 * spank_process_env_options). */
#define RDZV_SPANK_OPT_ENV "SLURM_SPANK__SLURM_SPANK_OPTION_rdzv_rdzv"

/* What srun's command line says before srun has read it: the last --rdzv
 * value (*mode, pointing into argv, NULL when absent) and -K/--kill-on-bad-
 * exit (*kbe: -1 absent, 0 for -K0 / --kill-on-bad-exit=0, 1 otherwise).
 * Options end where srun's end (getopt_long with "+": the first word that
 * is not an option, or "--"); option values are skipped with the table of
 * master.h. Returns 0, or -1 when an option lacks its value (srun will
 * refuse the line itself). */
int rdzv_srun_arg_failure(int argc, char *const *argv, const char **mode, int *kbe);

/* What decides whether a failed task stops the step, as srun will see it. */
struct rdzv_kbe_in {
	const char *arg_mode;     /* --rdzv on srun's command line, or NULL */
	int arg_kbe;              /* -K on srun's command line: -1, 0, 1 */
	const char *spank_env;    /* RDZV_SPANK_OPT_ENV (#SBATCH --rdzv), or NULL */
	const char *rdzv_mode;    /* RDZV_MODE, or NULL */
	int env_fallback;         /* plugstack env=yes */
	const struct rdzv_mode *site; /* plugstack mode= */
	const char *kbe_env;      /* SLURM_KILL_BAD_EXIT as exported, or NULL */
	int conf_kbe;             /* plugstack kill_on_bad_exit=yes|no */
};

enum rdzv_kbe_action {
	RDZV_KBE_SET,      /* export SLURM_KILL_BAD_EXIT=1 */
	RDZV_KBE_MODE_OFF, /* the step gets no mode: Slurm's own default */
	RDZV_KBE_USER,     /* the user chose (-K, SLURM_KILL_BAD_EXIT): theirs */
	RDZV_KBE_ADMIN     /* plugstack kill_on_bad_exit=no: slurm.conf's */
};

/* The mode the step will get (*mode, never NULL: "off" at worst) and what to
 * do. Precedence is the plugin's: option > #SBATCH option > RDZV_MODE >
 * mode=; an invalid value counts as off (srun refuses it anyway). */
enum rdzv_kbe_action rdzv_kbe_decide(const struct rdzv_kbe_in *in, const struct rdzv_mode **mode);

/* Whether the step will be stopped on a bad exit as far as the plugin knows:
 * SLURM_KILL_BAD_EXIT set non-zero (by the plugin or the user) and no -K0;
 * or -K/-K1. slurm.conf's KillOnBadExit is not known here. */
int rdzv_kbe_effective(int arg_kbe, const char *kbe_env);

/* The longest reason a datagram carries (longer ones are cut). */
#define RDZV_FAILURE_REASON_MAX 512

/* One failed task, as a node saw it. */
struct rdzv_failure {
	uint32_t job_id, step_id;
	uint64_t nonce;
	uint32_t rank;        /* global task id (torchrun modes: the node's rank) */
	int status;           /* wait(2) status */
	int per_node;         /* 1: the task is a launcher per node (torchrun) */
	uint32_t workers;     /* per_node: workers it started (0 unknown) */
	char node[RDZV_HOST_MAX];
	/* Why the plugin ended the task before its program ran (the node's
	 * user_init error), "" otherwise: under kill-on-bad-exit srun may
	 * stop the step before the tasks' own stderr reaches it, so the
	 * reason travels with the report. Printable ASCII only. */
	char reason[RDZV_FAILURE_REASON_MAX];
};

/* Copy text into f->reason, cut to fit, each byte outside printable ASCII
 * (a newline, a control character) replaced by a space. */
void rdzv_failure_set_reason(struct rdzv_failure *f, const char *text);

/* Whether a wait status is a bad exit (non-zero, or a signal). */
int rdzv_failure_is_bad(int status);

/* The datagram: "RDZVF1 JOB.STEP NONCE RANK STATUS PERNODE WORKERS NODE",
 * then "\nREASON" when f->reason is set. The largest is under
 * RDZV_FAILURE_DGRAM_MAX bytes. */
#define RDZV_FAILURE_DGRAM_MAX (RDZV_HOST_MAX + 128 + RDZV_FAILURE_REASON_MAX)
int rdzv_failure_encode(const struct rdzv_failure *f, char *buf, size_t len);
/* Strict: every field, a host of valid characters. 0 or -1. */
int rdzv_failure_decode(const char *buf, size_t n, struct rdzv_failure *f);

/* The line srun prints, without a newline:
 *   rdzv: rank 3 (node n2) exited with status 1; the step was stopped
 *   rdzv: rank 0 (node n1) was killed by signal 9 (Killed); ...
 *   rdzv: node rank 1 (node n2: torchrun, 2 workers) exited with status 1; ...
 *   rdzv: rank 1 (node n2) exited with status 1 before its program ran: REASON; ...
 * stopped: 1 the step was stopped; 0 (kill-on-bad-exit not known to be
 * on) leaves the "; the step was stopped" out. */
int rdzv_failure_format(const struct rdzv_failure *f, int stopped, char *buf, size_t len);

/* RDZV_STEP_REPORT's value: "JOB.STEP:PORT:NONCE:FLAGS" (NONCE in hex; PORT
 * 0 when srun has no socket; FLAGS 0-3: RDZV_REPORT_SET when srun's plugin
 * exported SLURM_KILL_BAD_EXIT, which srun copied into the step's
 * environment before the plugin could take it back: slurmstepd removes it
 * from the tasks'; RDZV_REPORT_STOPS when kill-on-bad-exit is known to be on,
 * so slurmstepd may stop a torchrun agent whose worker failed). */
#define RDZV_REPORT_SET 1
#define RDZV_REPORT_STOPS 2
int rdzv_report_format(uint32_t job, uint32_t step, uint16_t port, uint64_t nonce, int set,
                       char *buf, size_t len);
int rdzv_report_parse(const char *s, uint32_t *job, uint32_t *step, uint16_t *port,
                      uint64_t *nonce, int *set);

/* torchrun mode: a worker that fails is torchrun's child, not a task, and
 * PyTorch 1.x's agent then waits in its exit barrier for the other nodes'
 * agents for 300 s (exit_barrier_timeout, not settable from torchrun) before
 * it exits: nothing stops the step meanwhile. PyTorch 2.x's agent exits at
 * once (monitor_interval 0.1 s). So slurmstepd watches each torchrun task's
 * children (spank/failure.c): the first worker seen dead with a bad status
 * is reported as the step's failure, under its own RANK, and the agent is
 * killed if it is still alive RDZV_AGENT_GRACE_MS later; Slurm's
 * kill-on-bad-exit then stops the step. The watcher stands down for an agent
 * that reaped a worker before it saw the worker's status, or whose worker
 * died of SIGTERM (the agent, or Slurm, is stopping them: torchrun 2.x
 * names the failure itself), and never runs with torchrun's own restarts. */
#define RDZV_AGENT_GRACE_MS 1000

/* /proc/PID/stat: the state letter, the parent, exit_code (field 52,
 * Linux 3.5+: the wait(2) status of a zombie) and the start time (field 22,
 * clock ticks since boot; with the parent, what tells a process from a later
 * one that took its pid). ppid and start may be NULL. 0, or -1 when
 * malformed. */
int rdzv_proc_stat_parse(const char *buf, size_t n, char *state, int *ppid, int *exit_code,
                         unsigned long long *start);
/* RANK=N in a '\0'-separated environment block (/proc/PID/environ). 0 found. */
int rdzv_environ_rank(const char *buf, size_t n, uint32_t *rank);
/* The pids of /proc/PID/task/TID/children ("12 13 "): how many were stored
 * in pids (at most max), or -1 when the text is not a list of pids. */
int rdzv_pid_list_parse(const char *buf, size_t n, int *pids, int max);
/* torchrun's restarts: --max-restarts/--max_restarts on its command line
 * (=N or N next), else PET_MAX_RESTARTS (pet, or NULL); 0 when none; a value
 * that is not a number counts as 1 (the watcher stands down). */
unsigned rdzv_torchrun_max_restarts(int argc, char *const *argv, const char *pet);

/* TORCHELASTIC_RESTART_COUNT from SLURM_RESTART_COUNT (a requeued batch
 * job's count; NULL or bad: 0). */
uint32_t rdzv_restart_count(const char *slurm_restart_count);

#endif

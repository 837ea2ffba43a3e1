/* SPDX-License-Identifier: GPL-2.0-or-later */
/* plugin.h: state shared by the glue files of rdzv.so. Only spank/ includes
 * spank.h; the logic lives in lib/. */
#ifndef RDZV_PLUGIN_H
#define RDZV_PLUGIN_H

#include <slurm/spank.h>
#include <stdint.h>
#include <sys/socket.h>

#include "conf.h"
#include "envset.h"
#include "modes.h"

#define RDZV_TAG "rdzv"
#define RDZV_ERRLEN 512

struct rdzv_plugin {
	struct rdzv_conf conf;    /* plugstack arguments */
	struct rdzv_opts opts;    /* user's options (+ environment fallback) */
	const struct rdzv_mode *mode; /* resolved: option > env > site default */
	int verbose;
	/* remote (slurmstepd) state, computed once per node in user_init */
	int active;               /* this step gets variables */
	int refused;              /* srun refused the step after creating it */
	struct rdzv_step step;
	char error[RDZV_ERRLEN + 32]; /* saved by user_init, reported by task_init */
	char conf_error[RDZV_ERRLEN + 32]; /* plugstack line refused in slurmstepd only */
	char port_source[96];
	char order_source[256]; /* where rank 0's node and the node order came from */
	int mode_from_srun;     /* remote: --rdzv came with the step from srun */
	int srun_has_plugin;    /* remote: srun's plugin marked the step (RDZV_HO_SRUN) */
	char srun_version[32];  /* remote: srun's plugin's version from that mark, or "" */
	int srun_allocates;     /* srun: no job before it (no SLURM_JOB_ID, no --jobid) */
	char if_note[RDZV_ERRLEN + 64]; /* the interface toward rank 0's node, or why none */
	char domain_note[RDZV_ERRLEN + 64]; /* the node's NVLink domain, or why unknown */
	char nodename[RDZV_HOST_MAX]; /* this node in the step's node list, or "": the
	                               * user's own step (numbering, messages) */
	char stepd_node[RDZV_HOST_MAX]; /* slurmd's own name for this node
	                                 * (rdzv_stepd_node), or "": every name
	                                 * and path root builds (records, metrics,
	                                 * DCGM claims, %n) */
};

extern struct rdzv_plugin rdzv;

/* remote: the node's NVML answer, read at most once per step (fabric.h),
 * shared by nvlink_domain=nvml (remote.c) and "require mnnvl" (profile.c).
 * Apart from struct rdzv_plugin: lib/bind's topo.h has its own
 * rdzv_fabric, which the glue files that include it must not meet. */
struct rdzv_fabric_once;
extern struct rdzv_fabric_once rdzv_node_fabric;

/* env.c: a variable of the job's environment (spank_getenv) into buf.
 * Returns 1 when set, 0 when unset, -1 on error (including a value longer
 * than len). */
int rdzv_job_getenv(spank_t sp, const char *name, char *buf, size_t len);
/* The same into a malloc()ed string of any length (*out, to free). */
int rdzv_job_getenv_dup(spank_t sp, const char *name, char **out);
/* A text srun handed this step's nodes (lib/step/handover.h), taken out of
 * the step's environment with all its parts; legacy: the name an earlier
 * srun plugin used (read when the new one is absent, removed always), or
 * NULL. Returns 1 with *text (to free), 0 when none, -1 broken (err). */
int rdzv_step_take(spank_t sp, const char *name, const char *legacy, char **text, char *err,
                   size_t errlen);
/* Every handed-over variable out of the step's environment (user_init's
 * end: whatever no feature of this step read must not reach the tasks). */
void rdzv_step_handover_sweep(spank_t sp);
/* srun: an earlier step's plan and map out of srun's own environment. */
void rdzv_srun_handover_clear(void);

/* options.c */
int rdzv_options_register(spank_t sp);

/* local.c: what srun, sbatch and salloc check alike after the options. */
int rdzv_local_opts(void);           /* the environment fallback of the options */
int rdzv_local_checks(spank_t sp);   /* profile, binding, containers */
int rdzv_local_init_post_opt(spank_t sp); /* sbatch, salloc */

/* srun.c: srun's hooks; user_init runs the step's work in order. */
void rdzv_srun_init(void);
int rdzv_srun_init_post_opt(spank_t sp);
int rdzv_srun_user_init(spank_t sp);
void rdzv_srun_exit(void);

/* What srun knows of the step, read once by srun.c and passed down. */
struct rdzv_srun_step {
	const struct rdzv_mode *mode; /* resolved: option > env > site; NULL none */
	int has_ids;                  /* job and step known */
	uint32_t job, step;
	int has_counts;               /* nnodes and ntasks known */
	uint32_t nnodes, ntasks;
	int argc;                     /* srun's command line (read at init) */
	char **argv;
	int prog_argc;                /* the task's program (NULL-terminated) */
	char **prog_argv;
	const char *partition;        /* -p, else SLURM_JOB_PARTITION; NULL none */
};

/* failure.c: a failed rank stops the step and is named. */
void rdzv_failure_srun_init(int argc, char **argv); /* srun, slurm_spank_init */
void rdzv_failure_srun_start(const struct rdzv_srun_step *s); /* srun, after options */
/* srun, at exit: the first report, with rdzv-hang's verdict (or NULL). */
/* said: grace.c has said the step's verdict already: no line. */
void rdzv_failure_srun_stop(const char *hang_verdict, int timed_out, int said);
void rdzv_failure_user_init(spank_t sp);            /* slurmstepd, after remote.c's */
void rdzv_failure_task_exit(spank_t sp);            /* slurmstepd, each task's exit */
void rdzv_failure_task_post_fork(spank_t sp);       /* slurmstepd, torchrun's watcher */
void rdzv_failure_remote_exit(void);                /* slurmstepd, the watcher joined */

/* node.c: DCGM-exporter's job mapping, as root: a claim per step. */
void rdzv_node_task_post_fork(spank_t sp);
void rdzv_node_exit(void);

/* liveness.c: is every node still there? (lib/failure/liveness.h) */
struct rdzv_listener;
struct rdzv_failure;
struct rdzv_channel_peer;
/* first: failure.c's first failure report (1, into *f), or 0; the check
 * names it as a silent node's consequence. Handed in, not called back. */
void rdzv_live_srun_start(struct rdzv_listener *l, uint32_t nnodes,
                          int (*first)(struct rdzv_failure *f));
void rdzv_live_srun_dgram(const char *buf, size_t n, const struct sockaddr *from, socklen_t len);
/* A failure was reported, or a collective failed: check once. */
void rdzv_live_srun_check(void);
/* For the hang diagnosis (hang.c), before it asks the step's nodes: waits
 * at most wait_ms for the check that is running to end. 0: no check ran
 * or every node answered. n > 0: n nodes are silent, their names (comma
 * separated, as srun -x takes them; "" when they do not fit in len) in
 * silent, and the check's verdict holds srun's exit until
 * rdzv_live_srun_release() or RDZV_LIVE_HOLD_MS, so that what the living
 * ranks say is shown before the step is stopped. */
#define RDZV_LIVE_HOLD_MS 4000
int rdzv_live_srun_wait(long wait_ms, char *silent, size_t len);
void rdzv_live_srun_release(void);
void rdzv_live_srun_stop(void);
void rdzv_live_node_start(uint32_t job, uint32_t step, uint64_t nonce, uint32_t node_id,
                          const char *node, const struct rdzv_channel_peer *srun);
void rdzv_live_node_stop(void);

/* failure.c, srun: a rank's bad exit came and kill-on-bad-exit stops the
 * step (grace.c stands down). */
int rdzv_failure_srun_stopping(void);

/* hang.c: --rdzv-debug=hang. */
int rdzv_hang_armed(void);
uint32_t rdzv_hang_timeout(void);                  /* seconds, 0: PyTorch's */
void rdzv_hang_srun_start(const struct rdzv_srun_step *s); /* srun: listen for timeouts */
/* srun, at exit: the listener stopped; rdzv-hang's verdict, or NULL, and
 * *timed_out: a rank's error was a timeout. */
const char *rdzv_hang_srun_stop(int *timed_out);
void rdzv_hang_user_init(spank_t sp);              /* slurmstepd: srun's ask address */
/* hang.c, task_init: 0; -1 with err (the task ends, saying it); -2 with
 * err: the step is refused, said by the node's first task only. */
int rdzv_hang_task_init(spank_t sp, uint32_t rank, int first_local, int launcher, char *err,
                        size_t errlen);

/* grace.c: a step never outlives its failed collective (lib/failure/grace.h).
 * start takes the layout's rank_node and node_names over (lay: NULL none). */
struct rdzv_srun_layout;
struct rdzv_hang_ask;
void rdzv_grace_srun_start(const struct rdzv_srun_step *s, struct rdzv_srun_layout *lay);
void rdzv_grace_srun_report(const struct rdzv_hang_ask *a); /* a rank's FAIL or ASK */
void rdzv_grace_srun_helper(int running);                  /* rdzv-hang runs, or ended */
void rdzv_grace_srun_quiesce(void); /* srun's exit: reports start nothing more */
int rdzv_grace_srun_stop(void);     /* 1: the grace's verdict was said */

/* domains.c: nvlink_domain=nvml across nodes. srun: listen for
 * the nodes' domains and answer with the verdict on Megatron's groups
 * (rank_node and node_names are taken over); nodes: tell srun and wait. */
struct rdzv_megatron_layout;
struct rdzv_step;
int rdzv_domains_srun_start(uint32_t job, uint32_t step, uint32_t nnodes, uint32_t ntasks,
                            const struct rdzv_megatron_layout *l, uint32_t **rank_node,
                            char ***node_names, char *err, size_t errlen);
void rdzv_domains_srun_stop(void);
int rdzv_domains_node_ask(spank_t sp, const struct rdzv_step *st, const char *node, char *err,
                          size_t errlen);

/* remote.c: slurmstepd */
int rdzv_remote_user_init(spank_t sp);
int rdzv_remote_task_init(spank_t sp);
void rdzv_remote_exit(void);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* grace.c: the glue of lib/failure/grace.h: a step never outlives its failed
 * collective.
 *
 *   srun, local_user_init (an armed step: its ranks' sitecustomize.py
 *     reports to hang.c's listener): the grace (--rdzv-collective-grace,
 *     else collective_grace=, else 30 s; off for torchrun with restarts of
 *     its own) and, from the step's layout, each rank's node.
 *   srun, hang.c's listener thread: each FAIL or ASK counted; the first
 *     starts one thread that waits out the grace (and an rdzv-hang run
 *     that is still asking the ranks where they are, which ends by
 *     itself). The step still running then: srun names the ranks that
 *     never reported (those that never joined the collective the others
 *     gave up on) and signals the step through slurmctld: SIGTERM, and
 *     SIGKILL 3 s later (35 s under torchrun, whose agent gives its workers
 *     30 s) unless every task ended (srun then ends as usual, its failure
 *     line left out); after SIGKILL a job srun made itself is completed,
 *     and srun exits 1. A rank's bad exit under kill-on-bad-exit: Slurm is
 *     ending the step already; the grace stands down.
 *   srun, exit: first quiesced (no report starts anything while hang.c's
 *     listener closes), then the thread joined.
 *   srun, exit: the thread stopped. */
#include "config.h"
#include "plugin.h"
#include "failure.h"
#include "grace.h"
#include "slurmctld.h"
#include "util.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* After an rdzv-hang run the ranks it answered need a moment to exit. */
#define AFTER_HELPER_MS 5000
/* SIGTERM first (torchrun's agent then ends its workers, which Slurm's
 * proctrack/pgid cannot reach), SIGKILL this much later: torchrun's agent
 * gives its workers 30 s after its own SIGTERM. */
#define TERM_WAIT_MS 3000
#define TERM_WAIT_AGENT_MS 35000

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int on, started, stopping, helper, said, launcher;
	uint32_t job, step, secs;
	char why[96];
	struct rdzv_grace g;
	struct rdzv_srun_layout ranks; /* the layout's rank_node and node_names, taken over */
	int64_t at_ms, helper_end_ms;
	pthread_t th;
} gs = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void timed_wait(int64_t until_ms)
{
	struct timespec ts;
	int64_t left = until_ms - rdzv_now_ms();

	if (left <= 0)
		return;
	if (left > 1000)
		left = 1000; /* re-checked each second: the clocks differ */
	rdzv_realtime_in(&ts, (long)left);
	pthread_cond_timedwait(&gs.cv, &gs.mu, &ts);
}

static void *waiter(void *arg)
{
	char verdict[1024];
	struct rdzv_grace_nodes nodes = { gs.ranks.rank_node, gs.ranks.node_names, gs.ranks.ntasks,
		                          gs.ranks.nnodes, 1 };
	int64_t end;

	(void)arg;
	pthread_mutex_lock(&gs.mu);
	for (;;) {
		end = gs.at_ms + (int64_t)gs.secs * 1000;
		if (gs.helper_end_ms && gs.helper_end_ms + AFTER_HELPER_MS > end)
			end = gs.helper_end_ms + AFTER_HELPER_MS;
		if (gs.stopping || (!gs.helper && rdzv_now_ms() >= end))
			break;
		timed_wait(gs.helper ? rdzv_now_ms() + 1000 : end);
	}
	/* A rank's bad exit under kill-on-bad-exit: Slurm is ending the step
	 * already, and srun's exit names that failure. */
	if (gs.stopping || rdzv_failure_srun_stopping()) {
		pthread_mutex_unlock(&gs.mu);
		return NULL;
	}
	/* torchrun's workers: ranks per task, when the world divides. */
	if (gs.launcher)
		nodes.per_task = nodes.ntasks && gs.g.ntasks % nodes.ntasks == 0
		                         ? gs.g.ntasks / nodes.ntasks : 0;
	(void)rdzv_grace_verdict(&gs.g, &nodes, gs.secs, gs.why, verdict, sizeof(verdict));
	gs.said = 1;
	fprintf(stderr, RDZV_TAG ": %s\n", verdict);
	fflush(stderr);
	/* No task ends by itself: slurmctld signals them all, SIGTERM first.
	 * When they end, srun does (its exit joins this thread, and says no
	 * more: said); else SIGKILL, and srun, which would wait for them,
	 * exits now. */
	pthread_mutex_unlock(&gs.mu); /* slurmctld may take its time */
	(void)rdzv_slurm_kill_step(gs.job, gs.step, SIGTERM);
	pthread_mutex_lock(&gs.mu);
	end = rdzv_now_ms() + (gs.launcher ? TERM_WAIT_AGENT_MS : TERM_WAIT_MS);
	while (!gs.stopping && rdzv_now_ms() < end)
		timed_wait(end);
	if (gs.stopping) {
		pthread_mutex_unlock(&gs.mu);
		return NULL;
	}
	pthread_mutex_unlock(&gs.mu);
	(void)rdzv_slurm_kill_step(gs.job, gs.step, SIGKILL);
	if (rdzv.srun_allocates)
		(void)rdzv_slurm_complete_job(gs.job);
	_exit(1);
}

void rdzv_grace_srun_start(const struct rdzv_srun_step *s, struct rdzv_srun_layout *lay)
{
	const char *pet = getenv("PET_MAX_RESTARTS");
	int64_t opt = rdzv.opts.collective_grace;
	uint32_t ntasks = 0;

	gs.secs = opt >= 0 ? (uint32_t)opt : rdzv.conf.collective_grace;
	if (opt >= 0)
		snprintf(gs.why, sizeof(gs.why), "--rdzv-collective-grace=%us", gs.secs);
	else if (rdzv.conf.collective_grace_set)
		snprintf(gs.why, sizeof(gs.why), "collective_grace=%us in plugstack.conf", gs.secs);
	else
		snprintf(gs.why, sizeof(gs.why), "the default grace; --rdzv-collective-grace changes it");
	if (!gs.secs || !s->has_ids)
		return;
	if (s->mode && (s->mode->flags & RDZV_MODE_ONE_TASK_PER_NODE)) {
		/* torchrun restarts its workers itself after a failed collective. */
		if (rdzv_torchrun_max_restarts(s->prog_argc, s->prog_argv, pet) > 0) {
			if (rdzv.opts.verbose > 0)
				fprintf(stderr, RDZV_TAG ": no collective grace: torchrun restarts "
				        "its workers itself\n");
			return;
		}
		/* The workers' world comes with their reports (FAIL's WORLD). */
		gs.launcher = 1;
	} else if (s->mode && s->mode->fill && s->has_counts) {
		ntasks = s->ntasks; /* the plugin's RANK is the task's: the ranks are the tasks */
	}
	if (rdzv_grace_init(&gs.g, ntasks) < 0)
		return;
	if (lay && lay->rank_node && lay->node_names && s->has_counts && lay->ntasks == s->ntasks) {
		gs.ranks.rank_node = lay->rank_node;
		gs.ranks.node_names = lay->node_names;
		gs.ranks.ntasks = lay->ntasks;
		gs.ranks.nnodes = lay->nnodes;
		lay->rank_node = NULL;
		lay->node_names = NULL;
	}
	gs.job = s->job;
	gs.step = s->step;
	pthread_mutex_lock(&gs.mu);
	gs.stopping = 0;
	gs.on = 1;
	pthread_mutex_unlock(&gs.mu);
}

void rdzv_grace_srun_report(const struct rdzv_hang_ask *a)
{
	pthread_mutex_lock(&gs.mu);
	if (gs.on && !gs.stopping && rdzv_grace_take(&gs.g, a) == 1 && !gs.started) {
		gs.at_ms = rdzv_now_ms();
		if (pthread_create(&gs.th, NULL, waiter, NULL) == 0)
			gs.started = 1;
	}
	pthread_mutex_unlock(&gs.mu);
}

void rdzv_grace_srun_helper(int running)
{
	pthread_mutex_lock(&gs.mu);
	gs.helper = running;
	if (!running)
		gs.helper_end_ms = rdzv_now_ms();
	pthread_cond_broadcast(&gs.cv);
	pthread_mutex_unlock(&gs.mu);
}

void rdzv_grace_srun_quiesce(void)
{
	pthread_mutex_lock(&gs.mu);
	gs.stopping = 1;
	pthread_cond_broadcast(&gs.cv);
	pthread_mutex_unlock(&gs.mu);
}

int rdzv_grace_srun_stop(void)
{
	int started, said;

	rdzv_grace_srun_quiesce();
	pthread_mutex_lock(&gs.mu);
	started = gs.started;
	pthread_mutex_unlock(&gs.mu);
	if (started)
		pthread_join(gs.th, NULL);
	pthread_mutex_lock(&gs.mu);
	rdzv_grace_free(&gs.g);
	rdzv_srun_layout_free(&gs.ranks);
	said = gs.said;
	gs.on = gs.started = gs.stopping = gs.helper = gs.said = gs.launcher = 0;
	gs.helper_end_ms = 0;
	pthread_mutex_unlock(&gs.mu);
	return said;
}

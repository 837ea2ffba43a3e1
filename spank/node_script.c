/* SPDX-License-Identifier: GPL-2.0-or-later */
/* node_script.c: rdzv_node.so, the admin's second plugin: the job's prolog
 * and epilog on each node, which slurmd runs as root through "slurmstepd
 * spank prolog|epilog" for every job once a plugin of plugstack.conf has
 * these hooks. A plugin of its own so that a site pays that fork and exec
 * per job and node only when it asks for what they do, and so that rdzv.so
 * failing to load on a node never fails a job's prolog (which would drain
 * the node): the admin chooses required or optional for this line alone.
 * Its arguments are rdzv.so's (the same line's words can be given to both).
 *
 *   job_prolog   health_check=yes: the node check (lib/bind/health.h),
 *                bounded by health_timeout= (60 s); on a fault the node is
 *                drained with the fault as its reason and the prolog fails
 *                (required: the job does not run here); a check that ran
 *                out of time drains with its own reason, or only says so
 *                (health_timeout_action=none) and the job runs
 *   job_epilog   dcgm_job_map_dir=: every claim of the job swept (a
 *                slurmstepd killed before its exit left its own)
 *   both         health_check=yes: the GPU drivers' reports since the last
 *                look (lib/bind/gpugate.h): a node fault drains the node
 *                naming the GPU, the Xid and its meaning; in the epilog
 *                too, so that a faulty node drains before the next job is
 *                placed on it
 * slurm_spank_init is not called in this context (plugstack.c,
 * spank_job_script): each hook reads its arguments. A refused line is said
 * in slurmd's log and does nothing: failing would drain the node. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "conf.h"
#include "gpugate.h"
#include "health.h"
#include "identity.h"
#include "jobmap.h"
#include "topo.h"
#include "util.h"

SPANK_PLUGIN(rdzv_node, 1);

#define TAG "rdzv"
#define ERRLEN 512
#define PATH_LEN 4096

static int read_conf(int ac, char **av, struct rdzv_conf *c)
{
	char err[ERRLEN];

	rdzv_conf_defaults(c);
	if (spank_context() != S_CTX_JOB_SCRIPT)
		return -1;
	if (rdzv_conf_parse(ac, av, c, err, sizeof(err)) < 0) {
		slurm_error(TAG ": rdzv_node.so: plugstack.conf: %s (nothing checked or swept)", err);
		return -1;
	}
	return 0;
}

/* Slurm's name of this node: slurmd sets SLURMD_NODENAME to its own
 * conf->node_name in the prolog's and epilog's environment (src/plugins/
 * prep/script/prep_script_slurmd.c), which no user's variable reaches. */
static const char *node_name(void)
{
	const char *n = getenv("SLURMD_NODENAME"); /* rdzv: slurmd's own */

	return n && n[0] ? n : NULL;
}

/* The drain, as root, as an admin types it (scontrol update, in the
 * prolog's environment: slurmd's SLURM_CONF); the reason names the fault.
 * slurmctld keeps it: its own "Prolog error" goes only to a node not
 * drained yet (node_mgr.c, validate_node_specs). Bounded: scontrol is
 * killed after DRAIN_WAIT_MS. */
#define DRAIN_WAIT_MS 10000
static void drain(const char *name, const char *fault)
{
	char node_arg[300], reason_arg[RDZV_HEALTH_REASON_MAX + 32], cmd[] = "scontrol",
	     update[] = "update", state[] = "state=drain";
	char *argv[] = { cmd, update, node_arg, state, reason_arg, NULL };
	/* scontrol's environment: a fixed PATH and slurmd's SLURM_CONF, nothing
	 * else of the prolog's (which merges the job's SPANK job-control
	 * variables: LD_*, SLURM_* that steer scontrol are not passed). */
	char path_env[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin", conf_env[4096 + 16];
	char *envp[] = { path_env, NULL, NULL };
	const char *conf = getenv("SLURM_CONF"); /* slurmd sets it after the job's (prep_script) */
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	struct stat st;
	int status = 0, waited = 0;
	pid_t pid, r;

	snprintf(node_arg, sizeof(node_arg), "nodename=%s", name);
	snprintf(reason_arg, sizeof(reason_arg), "reason=rdzv: %s", fault);
	/* Root runs it: only a file of root's that nobody else can change. */
	if (stat(RDZV_SCONTROL, &st) < 0 || st.st_uid != 0 || (st.st_mode & 022)
	    || !S_ISREG(st.st_mode)) {
		slurm_error(TAG ": health: cannot drain %s: %s is not a file of root's closed to "
		            "others", name, RDZV_SCONTROL);
		return;
	}
	if (conf && conf[0] == '/'
	    && snprintf(conf_env, sizeof(conf_env), "SLURM_CONF=%s", conf) < (int)sizeof(conf_env))
		envp[1] = conf_env;
	if ((pid = fork()) < 0) {
		slurm_error(TAG ": health: cannot drain %s: fork: %s", name, strerror(errno));
		return;
	}
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execve(RDZV_SCONTROL, argv, envp);
		_exit(127);
	}
	while ((r = waitpid(pid, &status, WNOHANG)) == 0 && waited < DRAIN_WAIT_MS) {
		nanosleep(&tick, NULL);
		waited += 10;
	}
	if (r == 0) {
		kill(pid, SIGKILL);
		(void)waitpid(pid, &status, 0);
		slurm_error(TAG ": health: cannot drain %s: %s did not answer in %d s", name,
		            RDZV_SCONTROL, DRAIN_WAIT_MS / 1000);
	} else if (r < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		slurm_error(TAG ": health: cannot drain %s: %s update failed (status %d)", name,
		            RDZV_SCONTROL, status);
	}
}

/* DCGM's job map: the job's claims swept. */
static void sweep(const struct rdzv_conf *c, const char *name, uint32_t job)
{
	char dir[PATH_LEN], err[ERRLEN];
	int n;

	if (rdzv_jobmap_dir(c->dcgm_job_map_dir, name, dir, sizeof(dir), err, sizeof(err)) < 0) {
		slurm_error(TAG ": dcgm job map: %s", err);
		return;
	}
	if ((n = rdzv_jobmap_sweep(dir, c->identity_root[0] ? c->identity_root : NULL, job, err,
	                           sizeof(err))) < 0)
		slurm_error(TAG ": dcgm job map: job %u's epilog: %s", job, err);
	else if (n > 0)
		slurm_info(TAG ": dcgm job map: job %u's epilog swept %d claim%s of steps that did "
		           "not end theirs", job, n, n == 1 ? "" : "s");
}

/* The topology of topology= (NULL: none or not loadable, said). */
static struct rdzv_topo *load_topo(const struct rdzv_conf *c, const char *name, const char *what)
{
	char path[PATH_LEN], err[ERRLEN];
	struct rdzv_topo *topo = NULL;

	if (!c->topology[0])
		return NULL;
	if (rdzv_path_node(c->topology, name ? name : "", path, sizeof(path), err, sizeof(err)) < 0
	    || rdzv_topo_load(path, &topo, err, sizeof(err)) < 0)
		slurm_error(TAG ": health: %s not checked: topology: %s", what, err);
	return topo;
}

/* The GPU drivers' reports since the last look (gpugate.h). Returns 1 with
 * fault set when they make the node faulty. */
static int gpu_gate(const struct rdzv_conf *c, const char *name, const struct rdzv_topo *topo,
                    const char *gres, char *fault, size_t len, const char *when, uint32_t job)
{
	struct rdzv_gpugate_req req = { c, name, gres, topo, 1 };
	struct rdzv_gpugate g;
	int faulty = rdzv_gpugate_run(&req, &g);

	if (g.error[0])
		slurm_error(TAG ": health: job %u's %s: node %s: GPU faults: %s", job, when,
		            name ? name : "?", g.error);
	if (!faulty) {
		slurm_verbose(TAG ": health: job %u's %s: node %s: GPU faults: none of the node's in "
		              "%ld ms (%d report%s)%s%s", job, when, name ? name : "?", g.ms,
		              g.reports, g.reports == 1 ? "" : "s", g.notes[0] ? "; " : "",
		              g.notes);
		return 0;
	}
	snprintf(fault, len, "%s", g.fault);
	return 1;
}

int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
	char gres[PATH_LEN], fault[RDZV_HEALTH_REASON_MAX];
	struct rdzv_topo *topo = NULL;
	const char *name = node_name();
	struct rdzv_conf c;
	uint32_t job = 0;

	if (read_conf(ac, av, &c) < 0)
		return 0;
	(void)spank_get_item(sp, S_JOB_ID, &job);
	if (c.dcgm_job_map_dir[0] && job)
		sweep(&c, name, job);
	if (!c.health_check)
		return 0;
	topo = load_topo(&c, name, "GPU numbers");
	if (gpu_gate(&c, name, topo, rdzv_gres_conf_path(c.gres_conf, gres, sizeof(gres)), fault,
	             sizeof(fault), "epilog", job)) {
		slurm_error(TAG ": health: job %u's epilog: node %s: %s: draining it", job,
		            name ? name : "?", fault);
		if (name)
			drain(name, fault);
	}
	rdzv_topo_destroy(topo);
	return 0; /* drained by its own reason: an epilog that fails would add Slurm's */
}

int slurm_spank_job_prolog(spank_t sp, int ac, char **av)
{
	char gres[PATH_LEN], lib[PATH_LEN], err[ERRLEN], gate_fault[RDZV_HEALTH_REASON_MAX];
	const char *name = node_name();
	struct rdzv_health_req req = { 0 };
	struct rdzv_topo *topo = NULL;
	struct rdzv_health h;
	struct rdzv_conf c;
	enum rdzv_health_outcome outcome;
	uint32_t job = 0;

	if (read_conf(ac, av, &c) < 0 || !c.health_check)
		return 0;
	(void)spank_get_item(sp, S_JOB_ID, &job);
	req.root = c.identity_root;
	req.gres_conf = rdzv_gres_conf_path(c.gres_conf, gres, sizeof(gres));
	req.node = name;
	if (c.nvml_library[0]) {
		if (rdzv_path_node(c.nvml_library, name ? name : "", lib, sizeof(lib), err,
		                   sizeof(err)) < 0)
			slurm_error(TAG ": health: nvml_library=: %s", err);
		else
			req.nvml_library = lib;
	}
	req.topo = topo = load_topo(&c, name, "NICs");
	outcome = rdzv_health_run(&req, (long)c.health_timeout * 1000, &h);
	/* The GPU drivers' reports: looked at even when the check above
	 * failed, so that the cursor moves past what this drain covers; a
	 * fault they show is the node's, also when the check ran out of time. */
	if (gpu_gate(&c, name, topo, req.gres_conf, gate_fault, sizeof(gate_fault), "prolog", job)
	    && (outcome == RDZV_HEALTH_OK || outcome == RDZV_HEALTH_UNFINISHED)) {
		snprintf(h.fault, sizeof(h.fault), "%s", gate_fault);
		outcome = RDZV_HEALTH_FAULT;
	}
	rdzv_topo_destroy(topo);
	if (outcome == RDZV_HEALTH_OK) {
		slurm_verbose(TAG ": health: job %u: node %s healthy in %ld ms (%d GPU files, %d NIC "
		              "ports)%s%s", job, name ? name : "?", h.ms, h.gpus, h.nics,
		              h.notes[0] ? "; " : "", h.notes);
		return 0;
	}
	/* A slow check is not a fault of the node's: the site says whether
	 * it drains (health_timeout_action=). */
	if (outcome == RDZV_HEALTH_UNFINISHED && !c.health_timeout_drain) {
		slurm_error(TAG ": health: job %u: node %s: %s: not drained "
		            "(health_timeout_action=none)", job, name ? name : "?", h.fault);
		return 0;
	}
	slurm_error(TAG ": health: job %u: node %s: %s: draining it", job, name ? name : "?",
	            h.fault);
	if (name)
		drain(name, h.fault);
	return -1;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* node.c: what the plugin does for the admin on each node, as root.
 *
 *   job_prolog (root, slurmd's "slurmstepd spank prolog")
 *       health_check=yes: the node check (lib/bind/health.h), bounded to
 *       5 s; on a fault the node is drained with the fault as its reason
 *       and the prolog fails (a required plugin: Slurm requeues the job)
 *   task_post_fork (root, slurmstepd; the first task only)
 *       dcgm_job_map_dir=: the step's claim on its GPUs (lib/rdzv/jobmap.h)
 *   exit (root, slurmstepd)       the claim released
 *   job_epilog (root)             every claim of the job swept (a
 *                                 slurmstepd killed before its exit)
 * Nothing here fails a step: a mapping that cannot be written is said in
 * slurmd's log. */
#include "config.h"
#include "plugin.h"
#include "hooks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "health.h"
#include "jobmap.h"
#include "record.h"
#include "topo.h"
#include "util.h"

static struct {
	int claimed;
	char dir[RDZV_PATH_MAX];
} node;

/* An admin's path with %n as this node's name: the step's list in
 * slurmstepd (remote.c), SLURMD_NODENAME in the prolog and epilog (slurmd
 * sets their environment; no user's). */
static int node_path(const char *tmpl, const char *name, char *out, size_t len, char *err,
                     size_t errlen)
{
	if (rdzv_path_wants_node(tmpl) && (!name || !name[0]))
		return rdzv_err(err, errlen, "%s: no node name for %%n", tmpl);
	return rdzv_path_node(tmpl, name ? name : "", out, len, err, errlen);
}

static const char *proc_root(void)
{
	return rdzv.conf.identity_root[0] ? rdzv.conf.identity_root : NULL;
}

/* The mapping directory of this node, checked: the admin's. */
static int map_dir(const char *name, char *out, size_t len)
{
	char err[RDZV_ERRLEN];

	if (node_path(rdzv.conf.dcgm_job_map_dir, name, out, len, err, sizeof(err)) < 0
	    || rdzv_admin_dir_check("dcgm_job_map_dir", out, err, sizeof(err)) < 0) {
		slurm_error(RDZV_TAG ": dcgm job map: %s", err);
		return -1;
	}
	return 0;
}

void rdzv_node_task_post_fork(spank_t sp)
{
	char err[RDZV_ERRLEN];
	const int *gpus;
	size_t n;

	if (node.claimed || !rdzv.conf.dcgm_job_map_dir[0] || !rdzv.active)
		return;
	node.claimed = -1; /* tried: once per step */
	(void)sp;
	if ((n = rdzv_bind_step_gpus(&gpus)) == 0 || map_dir(rdzv.nodename, node.dir,
	                                                    sizeof(node.dir)) < 0)
		return;
	if (rdzv_jobmap_claim(node.dir, proc_root(), rdzv.step.job_id, rdzv.step.step_id, gpus, n,
	                      getpid(), rdzv_proc_starttime(proc_root(), getpid()), err,
	                      sizeof(err)) < 0) {
		slurm_error(RDZV_TAG ": dcgm job map: step %u.%u: %s", rdzv.step.job_id,
		            rdzv.step.step_id, err);
		return;
	}
	node.claimed = 1;
}

void rdzv_node_exit(void)
{
	char err[RDZV_ERRLEN];

	if (node.claimed == 1
	    && rdzv_jobmap_release(node.dir, proc_root(), rdzv.step.job_id, rdzv.step.step_id, err,
	                           sizeof(err)) < 0)
		slurm_error(RDZV_TAG ": dcgm job map: step %u.%u: %s", rdzv.step.job_id,
		            rdzv.step.step_id, err);
	memset(&node, 0, sizeof(node));
}

int rdzv_node_job_epilog(spank_t sp)
{
	char dir[RDZV_PATH_MAX], err[RDZV_ERRLEN];
	uint32_t job = 0;
	int n;

	if (!rdzv.conf.dcgm_job_map_dir[0] || spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS
	    || map_dir(getenv("SLURMD_NODENAME"), dir, sizeof(dir)) < 0)
		return 0;
	if ((n = rdzv_jobmap_sweep(dir, proc_root(), job, err, sizeof(err))) < 0)
		slurm_error(RDZV_TAG ": dcgm job map: job %u's epilog: %s", job, err);
	else if (n > 0)
		slurm_info(RDZV_TAG ": dcgm job map: job %u's epilog swept %d claim%s of steps that "
		           "did not end theirs", job, n, n == 1 ? "" : "s");
	return 0; /* an epilog that fails drains the node: never for this */
}

/* The drain, as root (slurmd's prolog): the reason names the fault. */
static void drain(const char *name, const char *fault)
{
	update_node_msg_t m;
	char reason[RDZV_HEALTH_REASON_MAX + 16], names[RDZV_HOST_MAX];

	snprintf(reason, sizeof(reason), "rdzv: %s", fault);
	snprintf(names, sizeof(names), "%s", name);
	slurm_init_update_node_msg(&m);
	m.node_names = names;
	m.node_state = NODE_STATE_DRAIN;
	m.reason = reason;
	m.reason_uid = getuid();
	if (slurm_update_node(&m) != SLURM_SUCCESS)
		slurm_error(RDZV_TAG ": health: cannot drain %s: %s", name,
		            slurm_strerror(slurm_get_errno()));
}

int rdzv_node_job_prolog(spank_t sp)
{
	char topo_path[RDZV_PATH_MAX], gres[RDZV_PATH_MAX], lib[RDZV_PATH_MAX],
	     err[RDZV_ERRLEN];
	const char *name = getenv("SLURMD_NODENAME");
	struct rdzv_health_req req = { 0 };
	struct rdzv_topo *topo = NULL;
	struct rdzv_health h;
	uint32_t job = 0;

	if (!rdzv.conf.health_check)
		return 0;
	(void)spank_get_item(sp, S_JOB_ID, &job);
	req.root = rdzv.conf.identity_root;
	req.gres_conf = rdzv_bind_gres_conf(gres, sizeof(gres));
	req.node = name;
	if (rdzv.conf.nvml_library[0]) {
		if (node_path(rdzv.conf.nvml_library, name, lib, sizeof(lib), err, sizeof(err)) < 0)
			slurm_error(RDZV_TAG ": health: nvml_library=: %s", err);
		else
			req.nvml_library = lib;
	}
	if (rdzv.conf.topology[0]) {
		if (node_path(rdzv.conf.topology, name, topo_path, sizeof(topo_path), err,
		              sizeof(err)) < 0
		    || rdzv_topo_load(topo_path, &topo, err, sizeof(err)) < 0)
			slurm_error(RDZV_TAG ": health: NICs not checked: topology: %s", err);
		req.topo = topo;
	}
	(void)rdzv_health_run(&req, RDZV_HEALTH_TIMEOUT_MS, &h);
	rdzv_topo_destroy(topo);
	if (!h.fault[0]) {
		slurm_verbose(RDZV_TAG ": health: job %u: node %s healthy in %ld ms (%d GPU files, "
		              "%d NIC ports)%s%s", job, name ? name : "?", h.ms, h.gpus, h.nics,
		              h.notes[0] ? "; " : "", h.notes);
		return 0;
	}
	slurm_error(RDZV_TAG ": health: job %u: node %s: %s: draining it", job, name ? name : "?",
	            h.fault);
	if (name && name[0])
		drain(name, h.fault);
	return -1;
}

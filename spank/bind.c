/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bound.c: glue of topology-aware binding (--rdzv-bind). The logic is in
 * lib/bind/topo.c, lib/bind/bindtable.c and lib/bind/bindmode.c; this file only gathers
 * the step's facts, keeps the node's table between user_init and the
 * tasks, and decides what the user is told.
 *
 *   option         validate the value (refused with the valid words listed)
 *   local          refuse a bad site default (plugstack bind=) on the submit host
 *   init_post_opt  slurmstepd, as root, once per node, for a step with GPUs and
 *                  an admin's topology= XML: the node model, from root's cache
 *                  (topology_cache=, topocache.h) or parsed and cached
 *   user_init      once per node, as the user: mode; the step's GPUs; the model
 *                  (root's, or topology= / live discovery); each GPU's identity
 *                  (identity.h); the table
 *   task_init      task i: the row of its own GPUs (its CUDA_VISIBLE_DEVICES;
 *                  on AMD nodes ROCR_VISIBLE_DEVICES, left the only selection
 *                  variable); the row's variables; MIOpen's node-local caches;
 *                  its CPU binding
 * A topology that cannot be loaded, or that shows no PCI device while the
 * step has GPUs, is a warning (printed by local task 0) and the step runs
 * unbound, unless the admin set strict=yes. */
#include "config.h"
#include "plugin.h"
#include "hooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "bindmode.h"
#include "hostlist.h"
#include "identity.h"
#include "jobmap.h"
#include "topo.h"
#include "topocache.h"
#include "util.h"

/* Slurm before 23.02 numbers each task's CUDA_VISIBLE_DEVICES from 0 under
 * ConstrainDevices (seen on 22.05, tests/0044); 26.05 numbers it by position
 * in the step's list (gres_common.c: common_gres_set_env). */
#define RENUMBERED_PER_TASK (SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(23, 2, 0))

/* Is the calling task in a step's devices cgroup (task/cgroup with
 * ConstrainDevices: cgroup v1 "N:devices:/slurm.../job_J/step_S/task_T";
 * under cgroup v2 the one hierarchy shows job_/step_ for any cgroup
 * plugin, taken as constrained)? Only then can Slurm have renumbered the
 * task's list. */
static int in_step_device_cgroup(void)
{
	char *text = rdzv_read_head("/proc/self/cgroup", 8192), *l, *next;
	int in = 0;

	for (l = text; l && *l && !in; l = next) {
		if ((next = strchr(l, '\n')))
			*next++ = '\0';
		in = (strstr(l, ":devices:") || strncmp(l, "0::", 3) == 0) && strstr(l, "/job_")
		     && strstr(l, "/step_");
	}
	free(text);
	return in;
}

#define GPULIST_MAX 1024

static struct {
	unsigned flags;                  /* resolved mode of this step */
	struct rdzv_bind_table *tab;     /* NULL: nothing to bind */
	int have_visible;                /* the step had its vendor's visibility variable */
	char visible[GPULIST_MAX];       /* ... and its value */
	int have_cuda, have_rocr;        /* the step's CUDA_ and ROCR_VISIBLE_DEVICES */
	char cuda[GPULIST_MAX], rocr[GPULIST_MAX];
	int amd;                         /* the node's GPUs are AMD's */
	char miopen[RDZV_PATH_MAX];      /* the user's node-local MIOpen directory; "" none */
	char miopen_note[RDZV_ERRLEN + 64]; /* ... or why there is none */
	char warning[RDZV_ERRLEN + 64];  /* told to the user by local task 0 */
	char gpu_model[64];              /* the node's first CUDA GPU, for mode checks */
	struct rdzv_topo *topo;          /* the model root loaded in init_post_opt */
	char root_error[RDZV_ERRLEN];    /* ... or why it could not */
	char model_note[RDZV_PATH_MAX + RDZV_ERRLEN + 64];/* where the model came from (verbose) */
	struct rdzv_identity *ident;     /* Slurm's GPU numbers -> PCI devices */
	int gpus[RDZV_JOBMAP_GPUS_MAX];  /* the step's NVIDIA GPUs here, in PCI order
	                                  * (NVML's and DCGM's index), for jobmap */
	size_t ngpus;
} bound;

int rdzv_bind_option(const char *val, char *err, size_t errlen)
{
	unsigned flags;

	if (rdzv_bind_mode_parse(val, &flags, err, errlen) < 0)
		return -1;
	if (rdzv_strlcpy(rdzv.opts.bind, val, sizeof(rdzv.opts.bind)) < 0)
		return rdzv_err(err, errlen, "--rdzv-bind=%s: too long", val);
	return 0;
}

int rdzv_bind_local(spank_t sp, char *err, size_t errlen)
{
	unsigned flags;

	if (rdzv_bind_mode_parse(rdzv.conf.bind, &flags, err, errlen) < 0) {
		char why[RDZV_ERRLEN];

		snprintf(why, sizeof(why), "%s", err);
		return rdzv_err(err, errlen, "plugstack.conf bind=: %s", why);
	}
	return 0;
}

/* Slurm's name for this node: slurmd's own (rdzv_stepd_node), never the
 * step's environment. rdzv_path_node refuses a name with a '/': the path is
 * the admin's, %n must not leave its directory. */
static int node_name(spank_t sp, char *buf, size_t len, char *err, size_t errlen)
{
	(void)sp;
	if (!rdzv.stepd_node[0] && rdzv_stepd_node(rdzv.stepd_node, sizeof(rdzv.stepd_node)) < 0)
		return rdzv_err(err, errlen,
		                "slurmstepd has no SLURMD_NODENAME of its own for %%n");
	if (rdzv_strlcpy(buf, rdzv.stepd_node, len) < 0)
		return rdzv_err(err, errlen, "node name too long for %%n");
	return 0;
}

/* topology=PATH with %n replaced by the node name (%% is a '%'). */
static int topology_path(spank_t sp, char *out, size_t len, char *err, size_t errlen)
{
	char name[RDZV_HOST_MAX] = "";

	if (rdzv_path_wants_node(rdzv.conf.topology)
	    && node_name(sp, name, sizeof(name), err, errlen) < 0)
		return -1;
	return rdzv_path_node(rdzv.conf.topology, name, out, len, err, errlen);
}

/* hwloc dlopen()s its plugins at the first topology of a process. The
 * libxml2 importer drags in libxml2, ICU and libstdc++ (about 3 of the 4.5 ms
 * a node spends loading an XML topology, doc/performance.md); hwloc's
 * built-in importer reads every file in tests/topo/fixtures the same (tests/0040
 * passes with it), and gl/opencl are probes we never want in slurmstepd. An
 * admin's own value of the variable wins. */
static void quiet_hwloc(void)
{
	setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_xml_libxml,hwloc_gl,hwloc_opencl", 0);
}

/* The model of the admin's topology= file, through root's cache. */
static int load_model(spank_t sp, struct rdzv_topo **out, char *err, size_t errlen)
{
	char path[RDZV_PATH_MAX], note[RDZV_ERRLEN];
	enum rdzv_cache_outcome how;

	*out = NULL;
	if (!rdzv.conf.topology[0]) {
		quiet_hwloc();
		snprintf(bound.model_note, sizeof(bound.model_note), "topology: live discovery");
		return rdzv_topo_load(NULL, out, err, errlen);
	}
	if (topology_path(sp, path, sizeof(path), err, errlen) < 0)
		return -1;
	quiet_hwloc();
	if (rdzv_topo_load_cached(path, rdzv.conf.topology_cache, out, &how, note, sizeof(note),
	                          err, errlen) < 0)
		return -1;
	snprintf(bound.model_note, sizeof(bound.model_note), "topology %s: cache %s%s%s", path,
	         rdzv_cache_outcome_name(how), note[0] ? ": " : "", note);
	return 0;
}

/* Does the step have GPUs here? (SLURM_STEP_GPUS, CUDA_VISIBLE_DEVICES or
 * ROCR_VISIBLE_DEVICES) Which visibility variable is the step's list waits
 * for the topology (choose_visible). */
static int step_has_gpus(spank_t sp, char *gpus, size_t len)
{
	if (rdzv_job_getenv(sp, "SLURM_STEP_GPUS", gpus, len) < 0)
		gpus[0] = '\0';
	bound.have_cuda = rdzv_job_getenv(sp, "CUDA_VISIBLE_DEVICES", bound.cuda,
	                                 sizeof(bound.cuda)) > 0;
	bound.have_rocr = rdzv_job_getenv(sp, "ROCR_VISIBLE_DEVICES", bound.rocr,
	                                 sizeof(bound.rocr)) > 0;
	bound.have_visible = bound.have_cuda;
	snprintf(bound.visible, sizeof(bound.visible), "%s", bound.have_cuda ? bound.cuda : "");
	return gpus[0] || (bound.have_cuda && bound.cuda[0]) || (bound.have_rocr && bound.rocr[0]);
}

/* On an AMD node the step's list is ROCR_VISIBLE_DEVICES (Slurm sets it in
 * both of its gres modes), else what CUDA_VISIBLE_DEVICES says. */
static void choose_visible(int amd)
{
	bound.amd = amd;
	if (amd && bound.have_rocr) {
		bound.have_visible = 1;
		snprintf(bound.visible, sizeof(bound.visible), "%s", bound.rocr);
	}
}

static const char *vis_var(void)
{
	return bound.amd && bound.have_rocr ? "ROCR_VISIBLE_DEVICES" : "CUDA_VISIBLE_DEVICES";
}

/* This node's name as slurmd knows it, into rdzv.stepd_node; 0 when unknown. */
static int root_node_name(spank_t sp)
{
	(void)sp;
	return rdzv.stepd_node[0] || rdzv_stepd_node(rdzv.stepd_node, sizeof(rdzv.stepd_node)) == 0;
}

int rdzv_bind_init_post_opt(spank_t sp)
{
	const char *mode = rdzv_bind_resolve(&rdzv.opts, &rdzv.conf);
	char gpus[GPULIST_MAX] = "";
	uint32_t stepid;
	unsigned flags = 0;

	/* As root: only what the cache needs, and only for a binding step with
	 * GPUs on an admin's topology file. Everything else waits for
	 * user_init, which runs as the user. */
	bound.topo = NULL;
	bound.root_error[0] = '\0';
	if (!rdzv.conf.topology[0] || rdzv_bind_mode_parse(mode, &flags, NULL, 0) < 0 || !flags
	    || spank_get_item(sp, S_JOB_STEPID, &stepid) != ESPANK_SUCCESS || stepid >= 0xfffffff0u
	    || !step_has_gpus(sp, gpus, sizeof(gpus)))
		return 0;
	/* As root, %n is slurmd's own name for the node (rdzv_stepd_node);
	 * never the job's SLURMD_NODENAME or node list, which the user or the
	 * client set (tests/0073). Without it, user_init fails the step. */
	if (strstr(rdzv.conf.topology, "%n") && !root_node_name(sp))
		return 0;
	if (load_model(sp, &bound.topo, bound.root_error, sizeof(bound.root_error)) < 0)
		bound.topo = NULL;
	return 0;
}

static int compute_table(spank_t sp, const struct rdzv_step *step, const char *step_gpus,
                         char *err, size_t errlen)
{
	char cpus[RDZV_CPULIST_MAX], why[RDZV_ERRLEN], gres[RDZV_PATH_MAX];
	struct rdzv_topo *topo = bound.topo;
	struct rdzv_bind_req req = { 0 };
	struct rdzv_identity_req ireq = { 0 };
	int rv = -1;

	bound.topo = NULL;
	if (!topo && bound.root_error[0]) {
		rdzv_err(err, errlen, "topology: %s", bound.root_error);
		goto fail;
	}
	if (!topo && load_model(sp, &topo, why, sizeof(why)) < 0) {
		rdzv_err(err, errlen, "topology: %s", why);
		goto fail;
	}
	/* GPUs in the step, none in the topology: an export without I/O
	 * (lstopo --no-io) or a container that cannot see the PCI bus, where
	 * binding would silently do nothing. A node whose GPUs are another
	 * vendor's (PCI devices, no NVIDIA one) simply has nothing to bound. */
	if (rdzv_topo_gpu_count(topo) == 0 && rdzv_topo_pci_count(topo) == 0) {
		rdzv_err(err, errlen, "the step has GPUs (%s) but the topology shows no PCI device "
		         "(an export without I/O, or no access to the PCI bus)",
		         step_gpus[0] ? step_gpus : bound.visible);
		goto fail;
	}
	choose_visible(rdzv_topo_gpus_amd(topo));
	if (rdzv_affinity_cpulist(cpus, sizeof(cpus), err, errlen) < 0)
		goto fail;
	ireq.root = rdzv.conf.identity_root[0] ? rdzv.conf.identity_root : NULL;
	ireq.gres_conf = rdzv_gres_conf_path(rdzv.conf.gres_conf, gres, sizeof(gres));
	ireq.node = rdzv.stepd_node[0] ? rdzv.stepd_node : NULL; /* gres.conf's NodeName= */
	if (rdzv_identity_read(topo, &ireq, &bound.ident, err, errlen) < 0)
		goto fail;
	req.step_gpus = step_gpus;
	req.visible = bound.have_visible ? bound.visible : NULL;
	req.ntasks = step->local_ntasks;
	req.hca_allow = rdzv_profile_hca_allow();
	req.step_cpus = cpus;
	req.ident = bound.ident;
	req.amd = 1;
	if (rdzv_bind_compute(topo, &req, &bound.tab, err, errlen) < 0)
		goto fail;
	/* The model names a CUDA GPU for the modes' checks (FP8...). */
	if (bound.amd
	    || rdzv_topo_gpu_model(topo, 0, bound.gpu_model, sizeof(bound.gpu_model)) < 0)
		bound.gpu_model[0] = '\0';
	rv = 0;
fail:
	/* The table holds all the tasks need: the model goes now, before
	 * slurmstepd forks the tasks. */
	rdzv_topo_destroy(topo);
	return rv;
}

/* MIOpen keeps SQLite databases under $HOME by default, which fail on
 * shared file systems: each user gets one directory on the node, made here
 * as the user (user_init), private (0700) and refused when it is anything
 * else: a link, not a directory, someone else's, open to others. Under
 * the job's TMPDIR when that is an absolute path, else /tmp. */
static void miopen_dir(spank_t sp)
{
	char tmp[RDZV_PATH_MAX] = "", why[RDZV_ERRLEN];
	const char *base = "/tmp";
	int n;

	bound.miopen[0] = '\0';
	bound.miopen_note[0] = '\0';
	if (rdzv_job_getenv(sp, "TMPDIR", tmp, sizeof(tmp)) > 0 && tmp[0] == '/' && !strstr(tmp, ".."))
		base = tmp;
	n = snprintf(bound.miopen, sizeof(bound.miopen), "%s/rdzv-miopen-%lu", base,
	             (unsigned long)geteuid());
	if (n < 0 || (size_t)n >= sizeof(bound.miopen)
	    || rdzv_private_dir(bound.miopen, why, sizeof(why)) < 0) {
		snprintf(bound.miopen_note, sizeof(bound.miopen_note), "MIOpen's caches left where "
		         "MIOpen puts them: %s", n > 0 && (size_t)n < sizeof(bound.miopen) ? why
		         : "TMPDIR too long");
		bound.miopen[0] = '\0';
	}
}

int rdzv_bind_user_init(spank_t sp, const struct rdzv_step *step, char *err, size_t errlen)
{
	char gpus[GPULIST_MAX] = "";
	size_t k;
	const char *mode = rdzv_bind_resolve(&rdzv.opts, &rdzv.conf);

	bound.flags = 0;
	bound.tab = NULL;
	bound.ident = NULL;
	bound.warning[0] = '\0';
	bound.gpu_model[0] = '\0';
	bound.amd = 0;
	bound.miopen[0] = '\0';
	bound.miopen_note[0] = '\0';
	bound.ngpus = 0;
	if (rdzv_bind_mode_parse(mode, &bound.flags, err, errlen) < 0)
		return -1;
	/* DCGM's job mapping names the step's GPUs by PCI position: the
	 * table's identity chain, computed also where binding is off. */
	if (!bound.flags && !rdzv.conf.dcgm_job_map_dir[0])
		return 0;
	/* A step without GPUs: nothing to bind, and no topology to load. */
	if (!step_has_gpus(sp, gpus, sizeof(gpus)))
		return 0;
	if (compute_table(sp, step, gpus, err, errlen) < 0) {
		if (!bound.flags) {
			slurm_verbose(RDZV_TAG ": dcgm job map: the step's GPUs are not known: %s", err);
			err[0] = '\0';
			return 0;
		}
		if (rdzv.conf.strict)
			return -1;
		snprintf(bound.warning, sizeof(bound.warning), "%s; running unbound", err);
		slurm_verbose(RDZV_TAG ": binding: %s", bound.warning);
		return 0;
	}
	if (!bound.amd)
		for (k = 0; k < bound.tab->ngpus && bound.ngpus < RDZV_JOBMAP_GPUS_MAX; k++)
			if (bound.tab->single[k].gpu >= 0)
				bound.gpus[bound.ngpus++] = bound.tab->single[k].gpu;
	if (!bound.flags) {
		/* Only for the mapping: nothing is bound. */
		rdzv_bind_table_destroy(bound.tab);
		bound.tab = NULL;
		return 0;
	}
	if (bound.amd)
		miopen_dir(sp);
	slurm_verbose(RDZV_TAG ": binding: %zu GPUs, NCCL_IB_HCA%s%s; %s; identity %s%s",
	              bound.tab->ngpus, bound.tab->nccl_ib_hca[0] ? "=" : " ",
	              bound.tab->nccl_ib_hca[0] ? bound.tab->nccl_ib_hca : "unset", bound.model_note,
	              bound.ident->positional ? "by position: " : "", bound.ident->why);
	return 0;
}

/* The node's table on the task's stderr (the user's output), once. */
static void print_table(void)
{
	char line[4 * RDZV_NICLIST_MAX + 1024]; /* node or row line: lists + text */
	size_t i;

	const char *dry = bound.flags & RDZV_BIND_DRYRUN ? " (dry run)" : "";

	fprintf(stderr, RDZV_TAG ": bind%s: %s\n", dry, bound.model_note);
	fprintf(stderr, RDZV_TAG ": bind%s: identity: %s%s\n", dry,
	        bound.ident->positional ? "by position: " : "", bound.ident->why);
	for (i = 0; i < bound.tab->ngpus; i++)
		if (rdzv_identity_format(bound.ident, (size_t)bound.tab->single[i].gpu, line,
		                         sizeof(line)) == 0)
			fprintf(stderr, RDZV_TAG ": bind%s: gpu %d %s: %s\n", dry, bound.tab->single[i].gpu,
			        bound.tab->single[i].busid, line);
	if (rdzv_bind_format_node(bound.tab, line, sizeof(line)) == 0)
		fprintf(stderr, RDZV_TAG ": bind%s: %s\n", dry, line);
	for (i = 0; i < bound.tab->nrows; i++)
		if (rdzv_bind_format_row(bound.tab, i, line, sizeof(line)) == 0)
			fprintf(stderr, RDZV_TAG ": bind%s: %s\n",
			        bound.flags & RDZV_BIND_DRYRUN ? " (dry run)" : "", line);
}

/* A task's value of name into buf, or NULL when unset (or too long). */
static const char *task_value(spank_t sp, const char *name, char *buf, size_t len)
{
	return rdzv_job_getenv(sp, name, buf, len) > 0 ? buf : NULL;
}

/* An AMD node's task: ROCR_VISIBLE_DEVICES left its only GPU selection
 * (lib/bind/bindmode.c), and MIOpen's caches on the node (user_init made
 * the directory). A user's own selection is said once, by the step's
 * first task: it is the same in every task. */
static int amd_task(spank_t sp, const struct rdzv_task *t, struct rdzv_envset *env, char *err,
                    size_t errlen)
{
	char rocr[GPULIST_MAX], cuda[GPULIST_MAX], hip[GPULIST_MAX], ord[GPULIST_MAX];
	char ze[GPULIST_MAX], warn[RDZV_ERRLEN];
	struct rdzv_amd_vis v;

	if (bound.flags & RDZV_BIND_DRYRUN)
		return 0;
	v.rocr = task_value(sp, "ROCR_VISIBLE_DEVICES", rocr, sizeof(rocr));
	v.cuda = task_value(sp, "CUDA_VISIBLE_DEVICES", cuda, sizeof(cuda));
	v.hip = task_value(sp, "HIP_VISIBLE_DEVICES", hip, sizeof(hip));
	v.gpu_ordinal = task_value(sp, "GPU_DEVICE_ORDINAL", ord, sizeof(ord));
	v.ze = task_value(sp, "ZE_AFFINITY_MASK", ze, sizeof(ze));
	if (rdzv_bind_amd_visibility(&v, env, warn, sizeof(warn), err, errlen) < 0)
		return -1;
	if (warn[0] && t->rank == 0)
		fprintf(stderr, RDZV_TAG ": warning: binding: %s\n", warn);
	/* A profile's value stays; the user's exported one wins at apply. */
	if (bound.miopen[0]
	    && ((!rdzv_envset_find(env, "MIOPEN_USER_DB_PATH")
	         && rdzv_envset_add(env, "MIOPEN_USER_DB_PATH", bound.miopen, RDZV_SET_DEFAULT,
	                            "binding", err, errlen) < 0)
	        || (!rdzv_envset_find(env, "MIOPEN_CUSTOM_CACHE_DIR")
	            && rdzv_envset_add(env, "MIOPEN_CUSTOM_CACHE_DIR", bound.miopen,
	                               RDZV_SET_DEFAULT, "binding", err, errlen) < 0)))
		return -1;
	return 0;
}

int rdzv_bind_task_init(spank_t sp, const struct rdzv_step *step, const struct rdzv_task *t,
                        struct rdzv_envset *env, char *err, size_t errlen)
{
	char visible[GPULIST_MAX], why[RDZV_ERRLEN];
	enum rdzv_cpu_outcome oc = RDZV_CPU_NOTHING;
	const struct rdzv_bind_row *row;
	enum rdzv_task_row how;
	int have, isolated = 0, first = t->local_rank == 0, per_task, cg[64];
	size_t ncg = 0;

	if (first && bound.warning[0])
		fprintf(stderr, RDZV_TAG ": warning: binding: %s\n", bound.warning);
	if (first && bound.miopen_note[0])
		fprintf(stderr, RDZV_TAG ": warning: %s\n", bound.miopen_note);
	if (!bound.tab)
		return 0;
	if (first && (bound.flags & (RDZV_BIND_VERBOSE | RDZV_BIND_DRYRUN)))
		print_table();
	else if (first && rdzv.verbose)
		fprintf(stderr, RDZV_TAG ": bind: identity: %s%s; %s\n",
		        bound.ident->positional ? "by position: " : "", bound.ident->why, bound.model_note);
	/* The same on every node as a rule: said once, by the step's first task. */
	if (first && step->node_id == 0 && bound.tab->note[0] && (bound.flags & RDZV_BIND_GPU))
		fprintf(stderr, RDZV_TAG ": warning: binding: %s\n", bound.tab->note);
	if ((have = rdzv_job_getenv(sp, vis_var(), visible, sizeof(visible))) < 0)
		return rdzv_err(err, errlen, "%s is too long", vis_var());
	/* The row of the task's own GPUs: Slurm may have narrowed its list
	 * (--gpus-per-task, --gpu-bind, --ntasks-per-gpu) before task_init. */
	per_task = RENUMBERED_PER_TASK && have && strcmp(visible, bound.visible) != 0
	           && in_step_device_cgroup();
	/* A list renumbered for this task alone names no GPU; its devices
	 * cgroup (v1) does, when Slurm constrained it. */
	if (per_task && (ncg = rdzv_identity_cgroup_gpus(bound.ident, rdzv.conf.identity_root[0]
	                                                 ? rdzv.conf.identity_root : NULL, cg,
	                                                 sizeof(cg) / sizeof(cg[0]))) > 0)
		row = rdzv_bind_task_row_gpus(bound.tab, t->local_rank, cg, ncg, &how, why, sizeof(why));
	else
		row = rdzv_bind_task_row(bound.tab, t->local_rank, have ? visible : NULL, bound.ident,
		                         per_task, &how, why, sizeof(why));
	if (bound.amd && amd_task(sp, t, env, err, errlen) < 0)
		return -1;
	if (!row) {
		if (how == RDZV_ROW_SKIP)
			fprintf(stderr, RDZV_TAG ": warning: task %u: binding skipped: %s\n", t->rank, why);
		return 0;
	}
	if (why[0] && (bound.flags & (RDZV_BIND_VERBOSE | RDZV_BIND_DRYRUN)))
		fprintf(stderr, RDZV_TAG ": bind: task %u: %s\n", t->rank, why);
	if (how == RDZV_ROW_OWN && (bound.flags & (RDZV_BIND_VERBOSE | RDZV_BIND_DRYRUN)))
		fprintf(stderr, RDZV_TAG ": bind: task %u: its own %s=%s: gpu %d %s, "
		        "%s%s%s, cpus %s\n", t->rank, vis_var(), visible, row->gpu, row->busid,
		        bound.tab->slingshot ? "nic" : "UCX_NET_DEVICES",
		        bound.tab->slingshot ? " " : row->ucx[0] ? "=" : " ",
		        bound.tab->slingshot ? (row->ifname[0] ? row->ifname : "none")
		                            : row->ucx[0] ? row->ucx : "unset", row->cpus);
	if (rdzv_bind_fill_row(bound.tab, row, bound.flags, have ? visible : NULL,
	                       bound.have_visible ? bound.visible : NULL, env, &isolated, err,
	                       errlen) < 0)
		return -1;
	if ((bound.flags & RDZV_BIND_ISOLATE) && !isolated && !(bound.flags & RDZV_BIND_DRYRUN)
	    && row->gpu >= 0)
		fprintf(stderr, RDZV_TAG ": warning: task %u: %s=%s was set for this "
		        "task by Slurm (--gpu-bind) or a prolog: isolate left it\n", t->rank,
		        vis_var(), have ? visible : "");
	if (!(bound.flags & RDZV_BIND_CPU))
		return 0;
	if (rdzv_bind_apply_row(bound.tab, row, !!(bound.flags & RDZV_BIND_DRYRUN), &oc, err,
	                        errlen) < 0)
		return -1;
	/* Each task knows only its own affinity; node 0's tasks speak for all
	 * (the verbosity of a per-task line multiplies by the node count). */
	if (oc == RDZV_CPU_KEPT_FAR && step->node_id == 0)
		fprintf(stderr, RDZV_TAG ": warning: task %u: Slurm bound it to CPUs none of which "
		        "is local to its GPU %d (rdzv would use %s); kept\n", t->rank, row->gpu,
		        row->cpus);
	return 0;
}

const char *rdzv_bind_fallback(void)
{
	return bound.warning[0] ? bound.warning : NULL;
}

size_t rdzv_bind_step_gpus(const int **gpus)
{
	*gpus = bound.gpus;
	return bound.ngpus;
}

int rdzv_bind_pci_gpu(const char *pci, int *local_task)
{
	size_t l = strlen(pci), k, i;
	int gpu = -1, topo_gpu = -1;

	*local_task = -1;
	if (!bound.ident || !l)
		return -2; /* no identity chain (binding off): not known */
	for (i = 0; bound.tab && i < bound.tab->nrows; i++)
		if (strncasecmp(bound.tab->rows[i].busid, pci, l) == 0) {
			*local_task = (int)i;
			topo_gpu = bound.tab->rows[i].gpu;
			break;
		}
	for (k = 0; k < bound.ident->n && gpu < 0; k++)
		if (strncasecmp(bound.ident->v[k].busid, pci, l) == 0
		    || (topo_gpu >= 0 && bound.ident->v[k].gpu == topo_gpu))
			gpu = (int)k;
	/* A GPU of the node that no task of the step is bound to. */
	if (gpu >= 0 && *local_task < 0 && bound.tab)
		*local_task = -2;
	return gpu;
}

const char *rdzv_bind_gpu_model(void)
{
	return bound.gpu_model;
}

void rdzv_bind_exit(void)
{
	rdzv_bind_table_destroy(bound.tab);
	bound.tab = NULL;
	rdzv_identity_destroy(bound.ident);
	bound.ident = NULL;
	rdzv_topo_destroy(bound.topo);
	bound.topo = NULL;
}

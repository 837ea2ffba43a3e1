/* bind.c: glue of topology-aware binding (--rdzv-bind). The logic is in
 * lib/bind/topo.c, lib/bind/bindtable.c and lib/bind/bindmode.c; this file only gathers
 * the step's facts, keeps the node's table between user_init and the
 * tasks, and decides what the user is told.
 *
 *   option      validate the value (refused with the valid words listed)
 *   local       refuse a bad site default (plugstack bind=) on the submit host
 *   user_init   once per node, as the user: mode; the step's GPUs; topology
 *               (admin's topology= XML with %n, or live); the table
 *   task_init   task i: its row's variables; its CPU binding
 * A topology that cannot be loaded is a warning (printed by local task 0)
 * and the step runs unbound, unless the admin set strict=yes. */
#include "config.h"
#include "plugin.h"
#include "hooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bindmode.h"
#include "hostlist.h"
#include "topo.h"
#include "util.h"

#define GPULIST_MAX 1024

static struct {
	unsigned flags;                  /* resolved mode of this step */
	struct rdzv_bind_table *tab;     /* NULL: nothing to bind */
	int have_visible;                /* the step had CUDA_VISIBLE_DEVICES */
	char visible[GPULIST_MAX];       /* ... and its value */
	char warning[RDZV_ERRLEN + 64];  /* told to the user by local task 0 */
	char gpu_model[64];              /* the node's first CUDA GPU, for mode checks */
} bind;

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

/* Slurm's name for this node, as remote.c found it in the step's node list
 * (srun sets the list; a user cannot export over it), else SLURMD_NODENAME.
 * A name with a '/' is refused: the path is the admin's, %n must not leave
 * its directory. */
static int node_name(spank_t sp, const struct rdzv_step *step, char *buf, size_t len,
                     char *err, size_t errlen)
{
	if (rdzv.nodename[0]) {
		if (rdzv_strlcpy(buf, rdzv.nodename, len) < 0)
			return rdzv_err(err, errlen, "node name too long for %%n");
	} else if (rdzv_job_getenv(sp, "SLURMD_NODENAME", buf, len) <= 0 || !buf[0]) {
		return rdzv_err(err, errlen, "no SLURM_STEP_NODELIST or SLURMD_NODENAME for %%n");
	}
	if (strchr(buf, '/') || strcmp(buf, "..") == 0)
		return rdzv_err(err, errlen, "node name '%s' cannot stand for %%n in a path", buf);
	return 0;
}

/* topology=PATH with %n replaced by the node name (%% is a '%'). */
static int topology_path(spank_t sp, const struct rdzv_step *step, char *out, size_t len,
                         char *err, size_t errlen)
{
	const char *p = rdzv.conf.topology;
	char name[RDZV_HOST_MAX] = "";
	size_t used = 0;

	for (; *p; p++) {
		const char *add = NULL;
		char one[2] = { *p, '\0' };

		if (p[0] == '%' && p[1] == 'n') {
			if (!name[0] && node_name(sp, step, name, sizeof(name), err, errlen) < 0)
				return -1;
			add = name;
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			add = "%";
			p++;
		} else {
			add = one;
		}
		if (used + strlen(add) >= len)
			return rdzv_err(err, errlen, "topology=%s: path too long", rdzv.conf.topology);
		memcpy(out + used, add, strlen(add) + 1);
		used += strlen(add);
	}
	return 0;
}

static int compute_table(spank_t sp, const struct rdzv_step *step, const char *step_gpus,
                         char *err, size_t errlen)
{
	char path[RDZV_PATH_MAX], cpus[RDZV_CPULIST_MAX], why[RDZV_ERRLEN];
	struct rdzv_topo *topo = NULL;
	struct rdzv_bind_req req = { 0 };
	int rv = -1;

	if (rdzv.conf.topology[0] && topology_path(sp, step, path, sizeof(path), err, errlen) < 0)
		return -1;
	/* hwloc dlopen()s its plugins at the first topology of a process. The
	 * libxml2 importer drags in libxml2, ICU and libstdc++ (about 3 of the
	 * 4.5 ms a node spends loading an XML topology, doc/performance.md);
	 * hwloc's built-in importer reads every file in shared/topologies the
	 * same (tests/0040 passes with it), and gl/opencl are probes we never
	 * want in slurmstepd. An admin's own value of the variable wins. */
	setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_xml_libxml,hwloc_gl,hwloc_opencl", 0);
	if (rdzv_topo_load(rdzv.conf.topology[0] ? path : NULL, &topo, why, sizeof(why)) < 0) {
		rdzv_err(err, errlen, "topology: %s", why);
		goto fail;
	}
	if (rdzv_affinity_cpulist(cpus, sizeof(cpus), err, errlen) < 0)
		goto fail;
	req.step_gpus = step_gpus;
	req.visible = bind.have_visible ? bind.visible : NULL;
	req.ntasks = step->local_ntasks;
	req.hca_allow = rdzv_profile_hca_allow();
	req.step_cpus = cpus;
	if (rdzv_bind_compute(topo, &req, &bind.tab, err, errlen) < 0)
		goto fail;
	if (rdzv_topo_gpu_model(topo, 0, bind.gpu_model, sizeof(bind.gpu_model)) < 0)
		bind.gpu_model[0] = '\0';
	rv = 0;
fail:
	/* The table holds all the tasks need: the topology goes now, before
	 * slurmstepd forks the tasks. */
	rdzv_topo_destroy(topo);
	return rv;
}

int rdzv_bind_user_init(spank_t sp, const struct rdzv_step *step, char *err, size_t errlen)
{
	char gpus[GPULIST_MAX] = "";
	const char *mode = rdzv.opts.bind[0] ? rdzv.opts.bind : rdzv.conf.bind;

	bind.flags = 0;
	bind.tab = NULL;
	bind.warning[0] = '\0';
	bind.gpu_model[0] = '\0';
	if (rdzv_bind_mode_parse(mode, &bind.flags, err, errlen) < 0)
		return -1;
	if (!bind.flags)
		return 0;
	if (rdzv_job_getenv(sp, "SLURM_STEP_GPUS", gpus, sizeof(gpus)) < 0)
		return rdzv_err(err, errlen, "SLURM_STEP_GPUS is too long");
	bind.have_visible = rdzv_job_getenv(sp, "CUDA_VISIBLE_DEVICES", bind.visible,
	                               sizeof(bind.visible)) > 0;
	/* A step without GPUs: nothing to bind, and no topology to load. */
	if (!gpus[0] && (!bind.have_visible || !bind.visible[0]))
		return 0;
	if (compute_table(sp, step, gpus, err, errlen) < 0) {
		if (rdzv.conf.strict)
			return -1;
		snprintf(bind.warning, sizeof(bind.warning), "%s; running unbound", err);
		slurm_verbose(RDZV_TAG ": binding: %s", bind.warning);
		return 0;
	}
	slurm_verbose(RDZV_TAG ": binding: %zu GPUs, NCCL_IB_HCA%s%s", bind.tab->ngpus,
	              bind.tab->nccl_ib_hca[0] ? "=" : " ",
	              bind.tab->nccl_ib_hca[0] ? bind.tab->nccl_ib_hca : "unset");
	return 0;
}

/* The node's table on the task's stderr (the user's output), once. */
static void print_table(void)
{
	char line[4 * RDZV_NICLIST_MAX + 1024]; /* node or row line: lists + text */
	size_t i;

	if (rdzv_bind_format_node(bind.tab, line, sizeof(line)) == 0)
		fprintf(stderr, RDZV_TAG ": bind%s: %s\n",
		        bind.flags & RDZV_BIND_DRYRUN ? " (dry run)" : "", line);
	for (i = 0; i < bind.tab->nrows; i++)
		if (rdzv_bind_format_row(bind.tab, i, line, sizeof(line)) == 0)
			fprintf(stderr, RDZV_TAG ": bind%s: %s\n",
			        bind.flags & RDZV_BIND_DRYRUN ? " (dry run)" : "", line);
}

int rdzv_bind_task_init(spank_t sp, const struct rdzv_step *step, const struct rdzv_task *t,
                        struct rdzv_envset *env, char *err, size_t errlen)
{
	char visible[GPULIST_MAX];
	enum rdzv_cpu_outcome oc = RDZV_CPU_NOTHING;
	int have, isolated = 0, first = t->local_rank == 0;

	if (first && bind.warning[0])
		fprintf(stderr, RDZV_TAG ": warning: binding: %s\n", bind.warning);
	if (!bind.tab)
		return 0;
	if (first && (bind.flags & (RDZV_BIND_VERBOSE | RDZV_BIND_DRYRUN)))
		print_table();
	/* The same on every node as a rule: said once, by the step's first task. */
	if (first && step->node_id == 0 && bind.tab->note[0] && (bind.flags & RDZV_BIND_GPU))
		fprintf(stderr, RDZV_TAG ": warning: binding: %s\n", bind.tab->note);
	if ((have = rdzv_job_getenv(sp, "CUDA_VISIBLE_DEVICES", visible, sizeof(visible))) < 0)
		return rdzv_err(err, errlen, "CUDA_VISIBLE_DEVICES is too long");
	if (rdzv_bind_fill(bind.tab, t->local_rank, bind.flags, have ? visible : NULL,
	                   bind.have_visible ? bind.visible : NULL, env, &isolated, err,
	                   errlen) < 0)
		return -1;
	if ((bind.flags & RDZV_BIND_ISOLATE) && !isolated && !(bind.flags & RDZV_BIND_DRYRUN)
	    && bind.tab->rows[t->local_rank].gpu >= 0)
		fprintf(stderr, RDZV_TAG ": warning: task %u: CUDA_VISIBLE_DEVICES=%s was set for this "
		        "task by Slurm (--gpu-bind) or a prolog: isolate left it\n", t->rank,
		        have ? visible : "");
	if (!(bind.flags & RDZV_BIND_CPU))
		return 0;
	if (rdzv_bind_apply_cpus(bind.tab, t->local_rank, !!(bind.flags & RDZV_BIND_DRYRUN), &oc,
	                         err, errlen) < 0)
		return -1;
	/* Each task knows only its own affinity; node 0's tasks speak for all
	 * (the verbosity of a per-task line multiplies by the node count). */
	if (oc == RDZV_CPU_KEPT_FAR && step->node_id == 0)
		fprintf(stderr, RDZV_TAG ": warning: task %u: Slurm bound it to CPUs none of which "
		        "is local to its GPU %d (rdzv would use %s); kept\n", t->rank,
		        bind.tab->rows[t->local_rank].gpu, bind.tab->rows[t->local_rank].cpus);
	return 0;
}

const char *rdzv_bind_gpu_model(void)
{
	return bind.gpu_model;
}

void rdzv_bind_exit(void)
{
	rdzv_bind_table_destroy(bind.tab);
	bind.tab = NULL;
}

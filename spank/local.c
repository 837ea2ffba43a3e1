/* local.c: srun (local) and sbatch/salloc (allocator) contexts. Everything a
 * user can get wrong is refused here, on the submit host, before a step
 * exists: errors in these hooks stop srun/sbatch with a non-zero exit. */
#include "config.h"
#include "plugin.h"
#include "hooks.h"
#include "container_hooks.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Slurm's own header has old-style declarations (24.11: void (*acct_full)();). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <slurm/slurm.h>
#pragma GCC diagnostic pop

#include "domain.h"
#include "handover.h"
#include "hostlist.h"
#include "launcher.h"
#include "megatron.h"
#include "master.h"
#include "nodeorder.h"
#include "srunargs.h"
#include "port.h"
#include "util.h"

#define HOSTFILE_MAX 65536

extern char **environ;

/* NVLink domains of the step, srun only: filled by local_plan
 * from the step's layout and Slurm's topology blocks when the site says
 * nvlink_domain=block, read by the mode's whole-step check, freed after. */
static struct {
	struct rdzv_domains d;
	uint32_t *rank_node;
	char **node_names;
	struct rdzv_megatron_domains md;
	uint32_t nnodes, ntasks; /* the layout's: rank_node[ntasks], node_names[nnodes] */
	int known;
} sd;

static const char *local_getenv(void *ctx, const char *name)
{
	return getenv(name);
}

/* What srun's own command line already decides, refused here, before srun
 * asks for an allocation: a refusal after it (local_user_init) leaves the
 * job holding its nodes, and srun's allocation shepherd holding the
 * terminal, for about 20 s. A framework launcher (deepspeed, torchrun, ...)
 * under a one-task-per-rank mode in a step that certainly has several tasks
 * (-n, -N, --ntasks-per-node), and a one-launcher-per-node mode asked for
 * more tasks than nodes. What the command line leaves open is checked again
 * in local_user_init with the step's real counts. */
static int local_early_check(char *err, size_t errlen)
{
	const struct rdzv_mode *mode = rdzv_mode_resolve(&rdzv.opts, &rdzv.conf);
	struct rdzv_srun_size sz;
	char *buf = NULL, **av = NULL;
	int ac, at, rc = 0;
	unsigned long min;

	if (!mode || !mode->fill
	    || !(mode->flags & (RDZV_MODE_REFUSES_LAUNCHERS | RDZV_MODE_ONE_TASK_PER_NODE)))
		return 0;
	if ((ac = rdzv_srun_argv(&buf, &av)) <= 0 || rdzv_srun_size(ac, av, &sz) < 0)
		goto out; /* srun refuses a malformed line itself */
	min = rdzv_srun_min_tasks(&sz);
	if ((mode->flags & RDZV_MODE_ONE_TASK_PER_NODE)
	    && (sz.per_node > 1 || (sz.ntasks && sz.nodes_max && sz.ntasks > sz.nodes_max))) {
		rc = rdzv_err(err, errlen, "--rdzv=%s runs one launcher per node, but this step "
		              "asks for %s (launchers on one node would collide): use srun "
		              "--ntasks-per-node=1", mode->name,
		              sz.per_node > 1 ? "several tasks per node" : "more tasks than nodes");
		goto out;
	}
	at = rdzv_srun_command_index(ac, av);
	if ((mode->flags & RDZV_MODE_REFUSES_LAUNCHERS) && min > 1 && at > 0)
		rc = rdzv_launcher_check(mode->name, ac - at, av + at, environ, (uint32_t)min, err,
		                         errlen);
out:
	free(av);
	free(buf);
	return rc;
}

int rdzv_local_init_post_opt(spank_t sp)
{
	char err[RDZV_ERRLEN];

	if (rdzv.conf.env_fallback
	    && rdzv_opts_from_env(&rdzv.opts, local_getenv, NULL, err, sizeof(err)) < 0) {
		slurm_error(RDZV_TAG ": %s", err);
		return -1;
	}
	/* srun marks its steps (handover.h); sbatch and salloc do not, and drop
	 * one a user exported, so that a batch script's srun without the plugin
	 * is not taken for one with it. */
	if (spank_context() == S_CTX_LOCAL) {
		char *buf = NULL, **av = NULL;
		int ac = rdzv_srun_argv(&buf, &av);

		setenv(RDZV_HO_SRUN, PACKAGE_VERSION, 1);
		/* Before srun asks for an allocation: whether it will make one. */
		rdzv.srun_allocates = !getenv("SLURM_JOB_ID") && !getenv("SLURM_JOBID") && ac > 0
		                      && rdzv_srun_names_job(ac, av) == 0;
		free(av);
		free(buf);
	} else {
		unsetenv(RDZV_HO_SRUN);
	}
	if (spank_context() == S_CTX_LOCAL && local_early_check(err, sizeof(err)) < 0) {
		slurm_error(RDZV_TAG ": %s", err);
		return -1;
	}
	if (rdzv_profile_local(sp, err, sizeof(err)) < 0
	    || rdzv_bind_local(sp, err, sizeof(err)) < 0
	    || rdzv_container_local(sp, err, sizeof(err)) < 0) {
		slurm_error(RDZV_TAG ": %s", err);
		return -1;
	}
	return 0;
}

/* The mode's whole-step check (Megatron's layout) with what srun knows:
 * the command line, task and node counts, and srun's environment, where
 * srun has already rewritten SLURM_TASKS_PER_NODE and SLURM_DISTRIBUTION
 * for this step (SLURM_STEP_TASKS_PER_NODE does not exist here yet). Tasks
 * per node and the GPU model are unknown: the nodes check those again. */
static int local_mode_check(spank_t sp, const struct rdzv_mode *mode, uint32_t nnodes,
                            uint32_t ntasks)
{
	struct rdzv_step st;
	struct rdzv_megatron_layout ml;
	char err[RDZV_ERRLEN], *cmdbuf = NULL, **cmdv = NULL;
	int rc;

	memset(&st, 0, sizeof(st));
	st.nnodes = nnodes;
	st.ntasks = ntasks;
	st.gpus_on_node = -1;
	/* srun's own array, used during this call only. */
	if (spank_get_item(sp, S_JOB_ARGV, &st.argc, &st.argv) != ESPANK_SUCCESS || st.argc <= 0) {
		/* The task's command from srun's own command line. */
		int ac = rdzv_srun_argv(&cmdbuf, &cmdv), at = ac > 0 ? rdzv_srun_command_index(ac, cmdv) : -1;

		st.argc = at > 0 ? ac - at : 0;
		st.argv = at > 0 ? cmdv + at : NULL;
	}
	st.envp = environ;
	st.nvlink_domain = (int)rdzv.conf.nvlink_domain;
	st.md = sd.known ? &sd.md : NULL;
	/* nvml: Megatron's groups across nodes are checked when the nodes have
	 * told srun their domains (domains.c), not here. */
	st.domain_exchange = rdzv.conf.nvlink_domain == RDZV_NVLINK_NVML && nnodes > 1
	                     && sd.rank_node && sd.ntasks == ntasks
	                     && strcmp(mode->name, "megatron") == 0
	                     && rdzv_megatron_read(st.argc, st.argv, st.envp, &ml, err,
	                                           sizeof(err)) == 0
	                     && (ml.tp.n > 1 || ml.cp.n > 1 || ml.ep.n > 1 || ml.etp.n > 1);
	rc = rdzv_mode_check_step(mode, &st, err, sizeof(err));
	if (rc >= 0 && st.domain_exchange) {
		uint32_t job = 0, step = 0;
		char why[RDZV_ERRLEN];

		if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS
		    || spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS
		    || rdzv_domains_local_start(job, step, nnodes, ntasks, &ml, &sd.rank_node,
		                                &sd.node_names, why, sizeof(why)) < 0) {
			rdzv_err(err, sizeof(err), "nvlink_domain=nvml: %s",
			         job ? why : "no job or step id");
			rc = -1;
		}
	}
	free(cmdv);
	free(cmdbuf);
	if (rc < 0) {
		slurm_error(RDZV_TAG ": %s", err);
		return -1;
	}
	if (rc > 0)
		slurm_spank_log(RDZV_TAG ": warning: %s", err);
	return 0;
}

/* The node of rank 0 under -m arbitrary: srun lays task i on the i-th host of
 * -w/--nodelist or -F/--nodefile, or, when neither is given, of the file
 * named by SLURM_HOSTFILE (src/common/slurm_opt.c, _validate_nodelist: -w
 * wins over SLURM_HOSTFILE). Only srun knows: nothing of it reaches the
 * nodes' environment (SLURM_STEP_NODELIST is sorted). Read here, as the
 * user, on the submit host. */
static int arbitrary_first_host(char *host, size_t hostlen, char *err, size_t errlen)
{
	char *buf = NULL, **av = NULL, *text = NULL, value[8192];
	const char *hostfile = getenv("SLURM_HOSTFILE"), *from;
	int ac = rdzv_srun_argv(&buf, &av), is_file = 0, rc, rv = -1;

	if (ac < 0) {
		rdzv_err(err, errlen, "-m arbitrary: cannot read srun's command line");
		goto fail;
	}
	rc = rdzv_srun_arg_nodelist(ac, av, value, sizeof(value), &is_file, err, errlen);
	if (rc < 0)
		goto fail;
	if (rc == 0 && !(hostfile && *hostfile)) {
		rdzv_err(err, errlen, "-m arbitrary without -w/--nodelist, -F/--nodefile or "
		         "SLURM_HOSTFILE: the node of rank 0 is unknown");
		goto fail;
	}
	from = rc > 0 ? (is_file ? "srun's node file" : "srun -w") : "SLURM_HOSTFILE";
	if (rc > 0 && !is_file) {
		if (rdzv_hostlist_nth(value, 0, host, hostlen, err, errlen) < 0)
			goto fail;
	} else {
		const char *path = rc > 0 ? value : hostfile;

		if (!(text = rdzv_read_head(path, HOSTFILE_MAX))) {
			rdzv_err(err, errlen, "-m arbitrary: cannot read %s %.200s", from, path);
			goto fail;
		}
		if (rdzv_hostfile_first(text, host, hostlen, err, errlen) < 0)
			goto fail;
	}
	rv = 0;
fail:
	free(text);
	free(av);
	free(buf);
	return rv;
}

/* Whether host is one of the job's nodes (SLURM_NODELIST in srun: the
 * allocation's, or the step's when srun made the allocation). 1 yes, 0 no,
 * -1 unknown. A guard against misreading srun's command line; the list is
 * searched, never walked host by host, so its size costs nothing. */
static int in_step(const char *host)
{
	const char *list = getenv("SLURM_NODELIST");

	if (!list)
		return -1;
	return rdzv_hostlist_has(list, host, NULL, 0);
}

static void step_domains_free(void)
{
	uint32_t i;

	if (sd.node_names)
		for (i = 0; i < sd.nnodes; i++)
			free(sd.node_names[i]);
	free(sd.node_names);
	free(sd.rank_node);
	rdzv_domains_free(&sd.d);
	memset(&sd, 0, sizeof(sd));
}

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
/* The step's partition: srun's own -p/--partition, else the allocation's
 * (SLURM_JOB_PARTITION, set inside salloc and sbatch). A list of partitions
 * names none (the job runs in one of them): NULL, as without one. */
static char *step_partition(void)
{
	char *buf = NULL, **av = NULL, *part = NULL;
	const char *env = getenv("SLURM_JOB_PARTITION");
	struct rdzv_srun_args it;
	struct rdzv_srun_arg a;
	int ac = rdzv_srun_argv(&buf, &av);

	rdzv_srun_args_init(&it, ac > 0 ? ac : 0, av);
	while (ac > 0 && rdzv_srun_args_next(&it, &a, NULL, 0) > 0)
		if (rdzv_srun_arg_is(&a, 'p', "partition", 4) && a.value) {
			free(part);
			part = strdup(a.value);
		}
	if (!part && env && *env)
		part = strdup(env);
	free(av);
	free(buf);
	if (part && strchr(part, ',')) {
		free(part);
		part = NULL;
	}
	return part;
}

/* The topology of the step's partition (25.05+: a partition's Topology= in
 * topology.yaml; slurm_load_topo(.., NULL) reads the cluster default). One
 * more look-up of slurmctld, only under nvlink_domain=block and only when
 * the step names its partition. Returns the name (to free) or NULL for the
 * default. */
static char *partition_topology(char *err, size_t errlen, int *failed)
{
	__typeof__(slurm_load_partitions) *load;
	__typeof__(slurm_free_partition_info_msg) *release;
	partition_info_msg_t *msg = NULL;
	char *part = step_partition(), *name = NULL;
	uint32_t i;

	*failed = 0;
	if (!part)
		return NULL;
	*(void **)&load = dlsym(RTLD_DEFAULT, "slurm_load_partitions");
	*(void **)&release = dlsym(RTLD_DEFAULT, "slurm_free_partition_info_msg");
	if (!load || !release || load(0, &msg, SHOW_ALL) != 0 || !msg) {
		*failed = 1;
		rdzv_err(err, errlen, "slurmctld gave no partitions to find partition %s's "
		         "topology (slurm_load_partitions: error %d)", part, errno);
		free(part);
		return NULL;
	}
	for (i = 0; i < msg->record_count; i++)
		if (msg->partition_array[i].name && strcmp(msg->partition_array[i].name, part) == 0
		    && msg->partition_array[i].topology_name
		    && *msg->partition_array[i].topology_name)
			name = strdup(msg->partition_array[i].topology_name);
	release(msg);
	free(part);
	return name;
}
#endif

/* Slurm's topology blocks as scontrol show topology prints them, asked of
 * slurmctld (slurm_load_topo) and printed by srun's own topology plugin
 * (slurm_print_topo_info_msg) into memory. Returns 0 with *text to free. */
static int topo_blocks_text(char **text, char *err, size_t errlen)
{
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
	__typeof__(slurm_load_topo) *load;
	__typeof__(slurm_print_topo_info_msg) *print;
	__typeof__(slurm_free_topo_info_msg) *release;
	topo_info_response_msg_t *resp = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	*text = NULL;
	*(void **)&load = dlsym(RTLD_DEFAULT, "slurm_load_topo");
	*(void **)&print = dlsym(RTLD_DEFAULT, "slurm_print_topo_info_msg");
	*(void **)&release = dlsym(RTLD_DEFAULT, "slurm_free_topo_info_msg");
	if (!load || !print || !release)
		return rdzv_err(err, errlen, "srun's libslurm has no slurm_load_topo");
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
	{
		int failed;
		char *topo = partition_topology(err, errlen, &failed);

		if (failed)
			return -1;
		rc = load(&resp, topo);
		if (rc != 0 || !resp) {
			rdzv_err(err, errlen, "slurmctld gave no topology%s%s (slurm_load_topo: error "
			         "%d)", topo ? " named " : "", topo ? topo : "", errno);
			free(topo);
			return -1;
		}
		if (topo && rdzv.opts.verbose > 0)
			fprintf(stderr, RDZV_TAG ": NVLink domains from topology %s, the step's "
			        "partition's\n", topo);
		free(topo);
	}
#else
	rc = load(&resp);
#endif
	if (rc != 0 || !resp)
		return rdzv_err(err, errlen, "slurmctld gave no topology (slurm_load_topo: error %d)",
		                errno);
	if (!(f = open_memstream(&buf, &len))) {
		release(resp);
		return rdzv_err(err, errlen, "out of memory");
	}
	/* A user's SLURM_TOPO_LEN cuts each printed line: the reader refuses a
	 * cut line (no BlockSize=), naming the variable; srun's environment is
	 * left alone (srun has threads by now). */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
	print(f, resp, NULL, NULL, 0);
#else
	print(f, resp, NULL, 0);
#endif
	release(resp);
	if (fclose(f) != 0 || !buf) {
		free(buf);
		return rdzv_err(err, errlen, "out of memory");
	}
	*text = buf;
	return 0;
#else
	*text = NULL;
	return rdzv_err(err, errlen, "nvlink_domain=block needs Slurm 23.11 or later "
	                "(topology/block); the plugin was built for Slurm %d.%02d",
	                (int)SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER),
	                (int)SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER));
#endif
}

struct name_fill {
	char **names;
	uint32_t max, n;
};

static int name_add(const char *host, void *ctx)
{
	struct name_fill *f = ctx;

	if (f->n >= f->max || !(f->names[f->n] = strdup(host)))
		return 1;
	f->n++;
	return 0;
}

/* The step's ranks by node and its nodes by block, from the layout. */
static int layout_domains(const slurm_step_layout_t *lay, char *err, size_t errlen)
{
	char *text = NULL;
	uint32_t i, j, tpn;
	int rc;

	if (rdzv.conf.nvlink_domain == RDZV_NVLINK_BLOCK) {
		if (topo_blocks_text(&text, err, errlen) < 0)
			return -1;
		rc = rdzv_domains_from_blocks(text, lay->node_list, &sd.d, err, errlen);
		free(text);
		if (rc < 0)
			return -1;
		if (sd.d.nnodes != lay->node_cnt) {
			rdzv_err(err, errlen, "the step layout's node list names %u nodes, not %u",
			         sd.d.nnodes, lay->node_cnt);
			goto fail;
		}
	}
	if (!(sd.rank_node = calloc(lay->task_cnt ? lay->task_cnt : 1, sizeof(uint32_t)))
	    || !(sd.node_names = calloc(lay->node_cnt, sizeof(char *))))
		goto oom;
	sd.nnodes = lay->node_cnt;
	tpn = lay->node_cnt ? lay->tasks[0] : 0;
	{
		struct name_fill f = { sd.node_names, lay->node_cnt, 0 };
		int each = rdzv_hostlist_each(lay->node_list, name_add, &f, err, errlen);

		if (each < 0)
			goto fail;
		if (each > 0 || f.n != lay->node_cnt) {
			rdzv_err(err, errlen, "out of memory, or the layout's node list does not "
			         "name %u nodes", lay->node_cnt);
			goto fail;
		}
	}
	for (i = 0; i < lay->node_cnt; i++) {
		if (lay->tasks[i] != tpn)
			tpn = 0;
		for (j = 0; j < lay->tasks[i]; j++)
			if (lay->tids[i][j] < lay->task_cnt) /* checked by nodeorder.c */
				sd.rank_node[lay->tids[i][j]] = i;
	}
	sd.ntasks = lay->task_cnt;
	if (rdzv.conf.nvlink_domain != RDZV_NVLINK_BLOCK)
		return 0; /* nvml: the nodes' answers come later (domains.c) */
	sd.md.d = &sd.d;
	sd.md.rank_node = sd.rank_node;
	sd.md.node_names = sd.node_names;
	sd.md.ntasks = sd.ntasks;
	sd.md.source = "nvlink_domain=block: Slurm's topology blocks";
	sd.md.tasks_per_node = tpn;
	for (i = 0; i < sd.d.ndomains; i++)
		if (sd.d.domain_nodes[i] > sd.md.max_domain_nodes)
			sd.md.max_domain_nodes = sd.d.domain_nodes[i];
	sd.known = 1;
	return 0;
oom:
	rdzv_err(err, errlen, "out of memory");
fail:
	step_domains_free();
	return -1;
}

/* The step's real layout, asked of slurmctld once per step (the step exists
 * by local_user_init: srun created it before calling the hook; Slurm's
 * src/srun/srun.c, _launch_one_app -> pre_launch_srun_job). Only Slurm's
 * answer says which node runs task 0 and in which order the nodes hold the
 * ranks: Slurm 26.05 lays tasks in topology order (topology/tree,
 * topology/block) while the node list and SLURM_NODEID stay in name order,
 * and nothing in any node's environment names task 0's node. libslurm is
 * srun's own (libslurmfull, loaded before the plugin); the plugin does not
 * link it, so the two calls are looked up at run time. Returns 0 with host
 * and *order (to free) set, or -1 with the reason. */
static int layout_order(uint32_t job_id, uint32_t step_id, char *host, size_t hostlen,
                        char **order, int *domain_failed, char *domain_err,
                        size_t domain_errlen, char *err, size_t errlen)
{
	__typeof__(slurm_job_step_layout_get) *get;
	__typeof__(slurm_job_step_layout_free) *put;
	slurm_step_layout_t *lay;
	slurm_step_id_t id;
	uint32_t master = 0;
	char *buf = NULL;
	int rc;

	*order = NULL;
	*(void **)&get = dlsym(RTLD_DEFAULT, "slurm_job_step_layout_get");
	*(void **)&put = dlsym(RTLD_DEFAULT, "slurm_job_step_layout_free");
	if (!get || !put)
		return rdzv_err(err, errlen, "srun's libslurm has no slurm_job_step_layout_get");
	memset(&id, 0, sizeof(id));
	id.job_id = job_id;
	id.step_id = step_id;
	id.step_het_comp = NO_VAL;
	if (!(lay = get(&id)))
		return rdzv_err(err, errlen, "slurmctld gave no layout for step %u.%u", job_id,
		                step_id);
	rc = rdzv_order_from_layout(lay->node_cnt, lay->task_cnt, lay->tasks, lay->tids, &master,
	                            &buf, err, errlen);
	if (rc == 0 && (!lay->node_list
	                || rdzv_hostlist_nth(lay->node_list, master, host, hostlen, err, errlen) < 0))
		rc = rdzv_err(err, errlen, "the step layout's node list does not name node %u",
		              master);
	/* NVLink domains: a second look-up, of the topology, only
	 * where the site said nvlink_domain=block; its failure refuses the step
	 * (a map guessed wrong would let groups cross racks). */
	if (rc == 0 && rdzv.conf.nvlink_domain != RDZV_NVLINK_NODE && lay->node_cnt > 0
	    && layout_domains(lay, domain_err, domain_errlen) < 0)
		*domain_failed = 1;
	put(lay);
	if (rc < 0) {
		free(buf);
		return -1;
	}
	*order = buf;
	return 0;
}

/* The step's domain map for the nodes (domain.h: RDZV_STEP_DOMAINS), in
 * srun's environment as the plan is; --rdzv-verbose shows it. */
static int set_domains_var(const struct rdzv_plan *plan, char *err, size_t errlen)
{
	char *text = NULL;

	if (rdzv_domains_text(plan->job_id, plan->step_id, &sd.d, &text, err, errlen) < 0)
		return -1;
	if (rdzv_handover_put(&rdzv_env_process, RDZV_HO_DOMAINS, text, err, errlen) < 0) {
		free(text);
		return -1;
	}
	if (rdzv.opts.verbose > 0)
		fprintf(stderr, RDZV_TAG ": step %u.%u NVLink domains (nvlink_domain=block, Slurm's "
		        "topology blocks; node ids of the step): %s\n", plan->job_id, plan->step_id,
		        strchr(text, ':') + 1);
	free(text);
	return 0;
}

/* Decide the step's port, and under -m arbitrary rank 0's host, once, here,
 * and hand them to the nodes (master.h: the step plan). The nodes only check
 * them: nodes whose ip_local_port_range differ would otherwise derive
 * different ports, and only srun knows an arbitrary layout. */
static int local_plan(spank_t sp, const struct rdzv_mode *mode)
{
	struct rdzv_plan plan;
	struct rdzv_port_range eph, *ephp = NULL;
	const char *dist = getenv("SLURM_DISTRIBUTION"), *list = getenv("SLURM_NODELIST");
	char err[RDZV_ERRLEN], why[RDZV_ERRLEN], derr[RDZV_ERRLEN], *text = NULL, *order = NULL;
	int domain_failed = 0;
	struct timespec t0, t1;
	int rc;

	memset(&plan, 0, sizeof(plan));
	if (spank_get_item(sp, S_JOB_ID, &plan.job_id) != ESPANK_SUCCESS
	    || spank_get_item(sp, S_JOB_STEPID, &plan.step_id) != ESPANK_SUCCESS)
		return 0; /* the nodes decide alone, as without srun's plugin */
	/* Rank 0's node and the node order from the step's layout: one look-up
	 * per step, here only, never from the nodes. Without it (a refused
	 * look-up), what srun's own command line says, as before 26.05. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = layout_order(plan.job_id, plan.step_id, plan.host, sizeof(plan.host), &order,
	                  &domain_failed, derr, sizeof(derr), why, sizeof(why));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (domain_failed) {
		rdzv_err(err, sizeof(err), "nvlink_domain=%s: %s",
		         rdzv_nvlink_domain_name(rdzv.conf.nvlink_domain), derr);
		goto fail;
	}
	if (rdzv.conf.nvlink_domain == RDZV_NVLINK_BLOCK && rc < 0) {
		rdzv_err(err, sizeof(err), "nvlink_domain=block: no step layout from slurmctld "
		         "(%s), so the step's NVLink domains are unknown", why);
		goto fail;
	}
	if (sd.known && set_domains_var(&plan, err, sizeof(err)) < 0)
		goto fail;
	if (rdzv.opts.verbose > 0) /* one line in srun's own stderr (make bench reads it) */
		fprintf(stderr, RDZV_TAG ": step %u.%u layout from slurmctld in %ld us%s%s\n",
		        plan.job_id, plan.step_id,
		        (long)((t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000),
		        rc == 0 ? "" : ": ", rc == 0 ? "" : why);
	if (rc == 0) {
		plan.order_known = 1;
		plan.order = order;
	} else {
		plan.host[0] = '\0';
		slurm_verbose(RDZV_TAG ": no step layout (%s): rank 0's node from srun's command "
		              "line and the node list", why);
	}
	if (!plan.order_known && dist && strncmp(dist, "arbitrary", 9) == 0) {
		if (arbitrary_first_host(plan.host, sizeof(plan.host), err, sizeof(err)) < 0)
			goto fail;
		if (in_step(plan.host) == 0) {
			rdzv_err(err, sizeof(err), "-m arbitrary: rank 0's host %s is not one of "
			         "the job's nodes (%.200s)", plan.host, list ? list : "?");
			goto fail;
		}
	}
	/* Otherwise (no layout) the host stays empty: srun sees the allocation's
	 * node list here (SLURM_NODELIST), not the step's, and SPANK gives srun
	 * no item with it; the nodes take node 0 of SLURM_STEP_NODELIST, the
	 * same string on every node, and the node running task 0 checks it. */
	if (rdzv.opts.port) {
		plan.port = rdzv.opts.port;
		plan.port_from_option = 1;
	} else {
		if (rdzv_ephemeral_range_read("/proc/sys/net/ipv4/ip_local_port_range", &eph) == 0)
			ephp = &eph;
		if (rdzv_port_derive(plan.job_id, plan.step_id, &rdzv.conf.port_range, ephp,
		                     &plan.port, err, sizeof(err)) < 0)
			goto fail;
	}
	if (!(text = rdzv_plan_text(&plan))) {
		rdzv_err(err, sizeof(err), "out of memory for the step plan");
		goto fail;
	}
	/* srun's own environment: spank_setenv is for the remote context; srun
	 * merges its environ into the step's after local_user_init
	 * (src/srun/srun_job.c, pre_launch_srun_job), under every --export
	 * for a SLURM_ name (handover.h). */
	if (rdzv_handover_put(&rdzv_env_process, RDZV_HO_PLAN, text, err, sizeof(err)) < 0)
		goto fail;
	free(text);
	free(order);
	return 0;
fail:
	free(text);
	free(order);
	slurm_error(RDZV_TAG ": --rdzv=%s: %s", mode->name, err);
	return -1;
}

/* A step refused here, after srun made its own allocation for it: srun
 * only aborts the step and exits, and the job holds its nodes until
 * slurmctld notices srun is gone, so the user's next srun queues behind it.
 * The job was made for this step alone: complete it, as srun does when its
 * step ends. Never a job srun did not make (salloc, sbatch, --jobid). */
static void release_own_allocation(spank_t sp)
{
	__typeof__(slurm_complete_job) *complete;
	uint32_t job = 0;
	int rc;

	if (!rdzv.srun_allocates || spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS || !job)
		return;
	*(void **)&complete = dlsym(RTLD_DEFAULT, "slurm_complete_job");
	if (!complete)
		return;
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
	{
		slurm_step_id_t id;

		memset(&id, 0, sizeof(id));
		id.job_id = job;
		id.step_id = NO_VAL;
		id.step_het_comp = NO_VAL;
		rc = complete(&id, 1);
	}
#else
	rc = complete(job, 1);
#endif
	if (rc == 0)
		slurm_verbose(RDZV_TAG ": released job %u, made by srun for the refused step", job);
}

/* srun only, after the step's allocation is known: the step plan; a
 * one-launcher-per-node mode with more tasks than nodes must put two
 * launchers on some node; a mode with a whole-step check runs it before
 * anything launches. */
static int local_user_init_mode(spank_t sp, const struct rdzv_mode *mode);

int rdzv_local_user_init(spank_t sp)
{
	const struct rdzv_mode *mode = rdzv_mode_resolve(&rdzv.opts, &rdzv.conf);
	int rc;

	rdzv_srun_handover_clear(); /* an outer step's, or the user's */
	if (!mode || !mode->fill)
		return 0;
	rc = local_user_init_mode(sp, mode);
	step_domains_free();
	if (rc < 0)
		release_own_allocation(sp);
	return rc;
}

static int local_user_init_mode(spank_t sp, const struct rdzv_mode *mode)
{
	uint32_t nnodes = 0, ntasks = 0;

	if (local_plan(sp, mode) < 0)
		return -1;
	if (!(mode->flags & RDZV_MODE_ONE_TASK_PER_NODE) && !mode->check)
		return 0;
	if (spank_get_item(sp, S_JOB_NNODES, &nnodes) != ESPANK_SUCCESS
	    || spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &ntasks) != ESPANK_SUCCESS)
		return 0; /* checked again on the nodes */
	if ((mode->flags & RDZV_MODE_ONE_TASK_PER_NODE) && ntasks > nnodes) {
		slurm_error(RDZV_TAG ": --rdzv=%s runs one launcher per node, but this step has "
		            "%u tasks on %u nodes (launchers on one node would collide): use "
		            "srun --ntasks-per-node=1", mode->name, ntasks, nnodes);
		return -1;
	}
	return local_mode_check(sp, mode, nnodes, ntasks);
}

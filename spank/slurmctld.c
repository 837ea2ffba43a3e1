/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmctld.c: see slurmctld.h. */
#include "config.h"
#include "plugin.h" /* RDZV_TAG */
#include "slurmctld.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slurm's own header has old-style declarations (24.11: void (*acct_full)();). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <slurm/slurm.h>
#pragma GCC diagnostic pop

#include "nodeorder.h"
#include "util.h"

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
/* The topology of the step's partition (25.05+: a partition's Topology= in
 * topology.yaml; slurm_load_topo(.., NULL) reads the cluster default). One
 * more look-up of slurmctld, only under nvlink_domain=block and only when
 * the step names its partition. Returns the name (to free) or NULL for the
 * default. */
static char *partition_topology(const char *part, char *err, size_t errlen, int *failed)
{
	__typeof__(slurm_load_partitions) *load;
	__typeof__(slurm_free_partition_info_msg) *release;
	partition_info_msg_t *msg = NULL;
	char *name = NULL;
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
		return NULL;
	}
	for (i = 0; i < msg->record_count; i++)
		if (msg->partition_array[i].name && strcmp(msg->partition_array[i].name, part) == 0
		    && msg->partition_array[i].topology_name
		    && *msg->partition_array[i].topology_name)
			name = strdup(msg->partition_array[i].topology_name);
	release(msg);
	return name;
}
#endif

/* Asked of slurmctld (slurm_load_topo) and printed by srun's own topology
 * plugin (slurm_print_topo_info_msg) into memory. */
int rdzv_slurm_topo_blocks(const char *partition, int verbose, char **text, char *err,
                           size_t errlen)
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
		char *topo = partition_topology(partition, err, errlen, &failed);

		if (failed)
			return -1;
		rc = load(&resp, topo);
		if (rc != 0 || !resp) {
			rdzv_err(err, errlen, "slurmctld gave no topology%s%s (slurm_load_topo: error "
			         "%d)", topo ? " named " : "", topo ? topo : "", errno);
			free(topo);
			return -1;
		}
		if (topo && verbose)
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
	(void)partition;
	(void)verbose;
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

/* Each rank's node and the node names, from the layout. */
static int layout_ranks(const slurm_step_layout_t *sl, struct rdzv_srun_layout *lay, char *err,
                        size_t errlen)
{
	struct name_fill f;
	uint32_t i, j, tpn;
	int each;

	if (!(lay->rank_node = calloc(sl->task_cnt ? sl->task_cnt : 1, sizeof(uint32_t)))
	    || !(lay->node_names = calloc(sl->node_cnt, sizeof(char *))))
		return rdzv_err(err, errlen, "out of memory");
	f.names = lay->node_names;
	f.max = sl->node_cnt;
	f.n = 0;
	each = rdzv_hostlist_each(sl->node_list, name_add, &f, err, errlen);
	if (each < 0)
		return -1;
	if (each > 0 || f.n != sl->node_cnt)
		return rdzv_err(err, errlen, "out of memory, or the layout's node list does not "
		                "name %u nodes", sl->node_cnt);
	tpn = sl->node_cnt ? sl->tasks[0] : 0;
	for (i = 0; i < sl->node_cnt; i++) {
		if (sl->tasks[i] != tpn)
			tpn = 0;
		for (j = 0; j < sl->tasks[i]; j++)
			if (sl->tids[i][j] < sl->task_cnt) /* checked by nodeorder.c */
				lay->rank_node[sl->tids[i][j]] = i;
	}
	lay->tasks_per_node = tpn;
	return 0;
}

/* Only Slurm's answer says which node runs task 0 and in which order the
 * nodes hold the ranks: Slurm 26.05 lays tasks in topology order
 * (topology/tree, topology/block) while the node list and SLURM_NODEID stay
 * in name order, and nothing in any node's environment names task 0's node
 * (srun creates the step, and slurmctld its layout, before it calls
 * local_user_init). */
int rdzv_slurm_step_layout(uint32_t job, uint32_t step, int with_ranks,
                           struct rdzv_srun_layout *lay, char *ranks_err, size_t ranks_errlen,
                           char *err, size_t errlen)
{
	__typeof__(slurm_job_step_layout_get) *get;
	__typeof__(slurm_job_step_layout_free) *put;
	slurm_step_layout_t *sl;
	slurm_step_id_t id;
	uint32_t master = 0;
	int rc;

	memset(lay, 0, sizeof(*lay));
	*(void **)&get = dlsym(RTLD_DEFAULT, "slurm_job_step_layout_get");
	*(void **)&put = dlsym(RTLD_DEFAULT, "slurm_job_step_layout_free");
	if (!get || !put)
		return rdzv_err(err, errlen, "srun's libslurm has no slurm_job_step_layout_get");
	memset(&id, 0, sizeof(id));
	id.job_id = job;
	id.step_id = step;
	id.step_het_comp = NO_VAL;
	if (!(sl = get(&id)))
		return rdzv_err(err, errlen, "slurmctld gave no layout for step %u.%u", job, step);
	rc = rdzv_order_from_layout(sl->node_cnt, sl->task_cnt, sl->tasks, sl->tids, &master,
	                            &lay->order, err, errlen);
	if (rc == 0 && (!sl->node_list
	                || rdzv_hostlist_nth(sl->node_list, master, lay->host, sizeof(lay->host),
	                                     err, errlen) < 0))
		rc = rdzv_err(err, errlen, "the step layout's node list does not name node %u",
		              master);
	if (rc == 0) {
		lay->nnodes = sl->node_cnt;
		lay->ntasks = sl->task_cnt;
		if (!(lay->node_list = strdup(sl->node_list)))
			rc = rdzv_err(err, errlen, "out of memory");
	}
	if (rc == 0 && with_ranks && sl->node_cnt > 0
	    && layout_ranks(sl, lay, ranks_err, ranks_errlen) < 0)
		rc = -2;
	put(sl);
	if (rc == -1)
		rdzv_srun_layout_free(lay);
	return rc;
}

void rdzv_srun_layout_drop_ranks(struct rdzv_srun_layout *lay)
{
	uint32_t i;

	if (lay->node_names)
		for (i = 0; i < lay->nnodes; i++)
			free(lay->node_names[i]);
	free(lay->node_names);
	free(lay->rank_node);
	lay->node_names = NULL;
	lay->rank_node = NULL;
}

void rdzv_srun_layout_free(struct rdzv_srun_layout *lay)
{
	rdzv_srun_layout_drop_ranks(lay);
	free(lay->node_list);
	free(lay->order);
	memset(lay, 0, sizeof(*lay));
}

int rdzv_slurm_complete_job(uint32_t job)
{
	__typeof__(slurm_complete_job) *complete;

	*(void **)&complete = dlsym(RTLD_DEFAULT, "slurm_complete_job");
	if (!complete)
		return -1;
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
	{
		slurm_step_id_t id;

		memset(&id, 0, sizeof(id));
		id.job_id = job;
		id.step_id = NO_VAL;
		id.step_het_comp = NO_VAL;
		return complete(&id, 1) == 0 ? 0 : -1;
	}
#else
	return complete(job, 1) == 0 ? 0 : -1;
#endif
}

/* slurm_kill_job_step, whose signature changed twice: 22.05 (job, step,
 * signal), 24.11 (job, step, signal, flags), 26.05 (&step_id, signal,
 * flags). The header's own declaration picks the call (_Generic); the
 * symbol is srun's (dlsym). slurm_kill_job2("JOB.STEP") is no substitute:
 * 22.05's slurmctld answers "Invalid job id specified" for a step. */
typedef int kill3_f(uint32_t, uint32_t, uint16_t);
typedef int kill4_f(uint32_t, uint32_t, uint16_t, uint16_t);
typedef int killid_f(slurm_step_id_t *, uint16_t, uint16_t);

static int kill_with3(void *sym, uint32_t job, uint32_t step, int sig)
{
	kill3_f *f;

	memcpy(&f, &sym, sizeof(f));
	return f(job, step, (uint16_t)sig);
}

static int kill_with4(void *sym, uint32_t job, uint32_t step, int sig)
{
	kill4_f *f;

	memcpy(&f, &sym, sizeof(f));
	return f(job, step, (uint16_t)sig, 0);
}

static int kill_withid(void *sym, uint32_t job, uint32_t step, int sig)
{
	killid_f *f;
	slurm_step_id_t id;

	memcpy(&f, &sym, sizeof(f));
	memset(&id, 0, sizeof(id));
	id.job_id = job;
	id.step_id = step;
	id.step_het_comp = NO_VAL;
	return f(&id, (uint16_t)sig, 0);
}

int rdzv_slurm_kill_step(uint32_t job, uint32_t step, int sig)
{
	void *sym = dlsym(RTLD_DEFAULT, "slurm_kill_job_step");

	if (!sym)
		return -1;
	return _Generic(&slurm_kill_job_step, kill3_f *: kill_with3, kill4_f *: kill_with4,
	                killid_f *: kill_withid)(sym, job, step, sig) == 0 ? 0 : -1;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-het: a heterogeneous step's global numbering from its environment
 * (lib/step/het.c). The first case is the one measured under Slurm 22.05:
 * salloc -w n3,n4 --ntasks-per-node=1 : -w n1,n2 --ntasks-per-node=2, then
 * srun --het-group=0,1: SLURM_NODEID n3=0 n4=1 n1=2 n2=3, SLURM_PROCID 0 on
 * n3, 1 on n4, 2-3 on n1, 4-5 on n2, SLURM_JOB_ID=1 everywhere. */
#include "config.h"
#include "het.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

static const char *const *E;

static const char *get(void *ctx, const char *name)
{
	size_t n = strlen(name);
	int i;

	(void)ctx;
	for (i = 0; E[i]; i++)
		if (strncmp(E[i], name, n) == 0 && E[i][n] == '=')
			return E[i] + n + 1;
	return NULL;
}

static const char *const measured[] = {
	"SLURM_HET_SIZE=2", "SLURM_JOB_ID=1", "SLURM_STEP_NODELIST=n[1-4]",
	"SLURM_STEP_NUM_TASKS=6", "SLURM_STEP_NUM_NODES=4", "SLURM_STEP_TASKS_PER_NODE=2(x2),1(x2)",
	"SLURM_JOB_ID_HET_GROUP_0=1", "SLURM_JOB_ID_HET_GROUP_1=2",
	"SLURM_JOB_NODELIST_HET_GROUP_0=n[3-4]", "SLURM_JOB_NODELIST_HET_GROUP_1=n[1-2]", NULL
};

/* Three components, the step on the last two only (--het-group=1,2); the
 * components' jobs are 40-42, the leader's 40. */
static const char *const groups12[] = {
	"SLURM_HET_SIZE=3", "SLURM_JOB_ID=40", "SLURM_STEP_NODELIST=cpu01,gpu[07-08]",
	"SLURM_STEP_NUM_TASKS=9", "SLURM_STEP_TASKS_PER_NODE=1,4(x2)",
	"SLURM_JOB_ID_HET_GROUP_0=40", "SLURM_JOB_ID_HET_GROUP_1=41", "SLURM_JOB_ID_HET_GROUP_2=42",
	"SLURM_JOB_NODELIST_HET_GROUP_0=login[1-2]", "SLURM_JOB_NODELIST_HET_GROUP_1=cpu[01-04]",
	"SLURM_JOB_NODELIST_HET_GROUP_2=gpu[07-08]", NULL
};

/* srun -w n3 -n1 A : -w n1,n2 -N2 B on 22.05: the components' variables only
 * under their older _PACK_GROUP_ names. */
static const char *const packed[] = {
	"SLURM_HET_SIZE=2", "SLURM_JOB_ID=1", "SLURM_JOBID=1", "SLURM_STEP_NODELIST=n[1-3]",
	"SLURM_STEP_NUM_TASKS=3", "SLURM_STEP_TASKS_PER_NODE=1(x3)",
	"SLURM_JOB_ID_PACK_GROUP_0=1", "SLURM_JOB_ID_PACK_GROUP_1=2",
	"SLURM_JOB_NODELIST_PACK_GROUP_0=n3", "SLURM_JOB_NODELIST_PACK_GROUP_1=n[1-2]", NULL
};

static const char *const plain[] = {
	"SLURM_JOB_ID=7", "SLURM_STEP_NODELIST=n[1-2]", "SLURM_STEP_NUM_TASKS=4",
	"SLURM_STEP_TASKS_PER_NODE=2(x2)", NULL
};

int main(void)
{
	struct rdzv_het h;
	char err[256] = "";
	int rc;

	E = measured;
	rc = rdzv_het_read(get, NULL, 1, 0, 2, 2, &h, err, sizeof(err));
	ok(rc == 1 && strcmp(h.node, "n3") == 0 && h.node_offset == 0 && h.task_offset == 0
	   && h.nnodes == 4 && h.ntasks == 6 && strcmp(h.master, "n3") == 0 && h.leader_job == 1
	   && h.comp == 0 && h.ncomp == 2,
	   "measured, component 0 node 0: n3, offsets 0/0, rank 0 on n3, 4 nodes 6 tasks %s", err);
	rc = rdzv_het_read(get, NULL, 1, 1, 2, 2, &h, err, sizeof(err));
	ok(rc == 1 && strcmp(h.node, "n4") == 0 && h.node_offset == 0,
	   "... component 0 node 1: n4 (SLURM_NODEID 1)");
	rc = rdzv_het_read(get, NULL, 2, 0, 2, 4, &h, err, sizeof(err));
	ok(rc == 1 && strcmp(h.node, "n1") == 0 && h.node_offset == 2 && h.task_offset == 2
	   && strcmp(h.master, "n3") == 0 && h.comp == 1,
	   "... component 1 node 0: n1, SLURM_NODEID 2, its first rank 2, rank 0 still on n3");
	rc = rdzv_het_read(get, NULL, 2, 1, 2, 4, &h, err, sizeof(err));
	ok(rc == 1 && strcmp(h.node, "n2") == 0 && h.node_offset == 2 && h.task_offset == 2,
	   "... component 1 node 1: n2 (SLURM_NODEID 3, ranks 4-5)");
	/* a step of one component of the same job is not het */
	is_int(rdzv_het_read(get, NULL, 2, 0, 2, 6, &h, err, sizeof(err)), 0,
	       "a step whose tasks are all this component's is an ordinary step");
	E = plain;
	is_int(rdzv_het_read(get, NULL, 7, 0, 2, 4, &h, err, sizeof(err)), 0,
	       "no SLURM_HET_SIZE: an ordinary step");

	E = groups12;
	rc = rdzv_het_read(get, NULL, 42, 1, 2, 8, &h, err, sizeof(err));
	ok(rc == 1 && strcmp(h.node, "gpu08") == 0 && h.node_offset == 1 && h.task_offset == 1
	   && strcmp(h.master, "cpu01") == 0 && h.comp == 1 && h.ncomp == 2 && h.leader_job == 40,
	   "--het-group=1,2: the step's first component is 1 (cpu01 holds rank 0), gpu08 is node 2, "
	   "its ranks from 5 %s", err);
	rc = rdzv_het_read(get, NULL, 41, 0, 1, 1, &h, err, sizeof(err));
	ok(rc == 1 && strcmp(h.node, "cpu01") == 0 && h.node_offset == 0 && h.task_offset == 0,
	   "... and cpu01 is node 0, rank 0");

	E = packed;
	rc = rdzv_het_read(get, NULL, 2, 1, 2, 2, &h, err, sizeof(err));
	ok(rc == 1 && strcmp(h.node, "n2") == 0 && h.node_offset == 1 && h.task_offset == 1
	   && strcmp(h.master, "n3") == 0,
	   "srun A : B (22.05's _PACK_GROUP_ names): n2 is node 2, rank 2, rank 0 on n3 %s", err);

	err[0] = '\0';
	E = measured;
	is_int(rdzv_het_read(get, NULL, 9, 0, 2, 2, &h, err, sizeof(err)), -1,
	       "a job id that is no component's is refused");
	ok(strstr(err, "job 9") != NULL, "... naming it: %s", err);
	is_int(rdzv_het_read(get, NULL, 2, 0, 3, 4, &h, err, sizeof(err)), -1,
	       "a component whose node count disagrees with the list is refused");
	ok(strstr(err, "3 nodes") != NULL, "... naming both counts: %s", err);
	{
		static const char *const missing[] = {
			"SLURM_HET_SIZE=2", "SLURM_JOB_ID=1", "SLURM_STEP_NODELIST=n[1-4]",
			"SLURM_STEP_NUM_TASKS=6", "SLURM_STEP_TASKS_PER_NODE=2(x2),1(x2)",
			"SLURM_JOB_ID_HET_GROUP_0=1", "SLURM_JOB_ID_HET_GROUP_1=2",
			"SLURM_JOB_NODELIST_HET_GROUP_0=n[3-4]", NULL
		};
		E = missing;
		is_int(rdzv_het_read(get, NULL, 2, 0, 2, 4, &h, err, sizeof(err)), -1,
		       "a component's node list missing is refused");
		ok(strstr(err, "SLURM_JOB_NODELIST_HET_GROUP_1") != NULL, "... naming it: %s", err);
	}
	return done_testing();
}

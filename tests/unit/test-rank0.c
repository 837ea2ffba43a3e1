/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-rank0: rank 0's node and port as a node decides them (rank0.h):
 * srun's plan for this step or another's, a plan with and without the
 * step's layout, a heterogeneous step, no plan at all; the check the node
 * running task 0 makes; the --rdzv-verbose port note. Refusals first. */
#include "config.h"
#include "rank0.h"
#include "tap.h"
#include "fs-fixtures.h"

#include <stdio.h>
#include <string.h>

static char err[1024], eph_path[300];
static const struct rdzv_port_range range = { 29500, 29999 };

/* srun's plan for job 100, step 2, port 31000; nothing else known. */
static void plan_100_2(struct rdzv_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->job_id = 100;
	p->step_id = 2;
	p->port = 31000;
}

static void base(struct rdzv_rank0_in *in, const struct rdzv_plan *plan, const char *dist)
{
	memset(in, 0, sizeof(*in));
	in->plan = plan;
	in->nodelist = "n[1-4]";
	in->dist = dist;
	in->resv = "";
	in->job_id = 100;
	in->step_id = 2;
	in->nnodes = 4;
	in->node_id = 1;
	in->range = &range;
	in->ephemeral_path = eph_path;
	in->cause = "CAUSE";
	in->advice = "ADVICE";
}

static void test_plan_text(void)
{
	struct rdzv_plan p, q;
	char text[256];

	plan_100_2(&p);
	snprintf(p.host, sizeof(p.host), "n3");
	p.order_known = 1;
	p.order = "2,0,1,3";
	ok(rdzv_plan_format(&p, text, sizeof(text)) == 0, "plan formats: %s", text);
	is_int(rdzv_rank0_plan(text, 100, 2, 4, &q, err, sizeof(err)), 1, "this step's plan");
	ok(q.port == 31000 && strcmp(q.host, "n3") == 0 && q.order_known
	   && strcmp(q.order, "2,0,1,3") == 0, "read whole");
	is_int(rdzv_rank0_plan(text, 100, 3, 4, &q, err, sizeof(err)), 0,
	       "another step's plan (inherited): none for this step");
	is_int(rdzv_rank0_plan(text, 101, 2, 4, &q, err, sizeof(err)), 0, "another job's: none");
	is_int(rdzv_rank0_plan("100.2:x", 100, 2, 4, &q, err, sizeof(err)), -1,
	       "a plan that does not parse is refused");
	{
		char big[4096];

		memset(big, '1', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		ok(rdzv_rank0_plan(big, 100, 2, 1, &q, err, sizeof(err)) == -1
		   && strstr(err, "is longer than a plan for 1 nodes can be"),
		   "a plan longer than the step's can be: refused (%s)", err);
	}
}

static void test_with_layout(void)
{
	struct rdzv_rank0_in in;
	struct rdzv_rank0 r;
	struct rdzv_plan p;

	plan_100_2(&p);
	p.order_known = 1;
	p.order = "2,0,1,3";
	base(&in, &p, "block");
	ok(rdzv_rank0_place(&in, &r, err, sizeof(err)) < 0
	   && strstr(err, "has a node order but no node for rank 0"), "layout without a host: %s",
	   err);
	snprintf(p.host, sizeof(p.host), "n3");
	ok(rdzv_rank0_place(&in, &r, err, sizeof(err)) == 0, "layout: placed (%s)", err);
	is_str(r.host, "n3", "rank 0's node is srun's, not node 0 of the list");
	is_int(r.node_rank, 2, "node 1 is third in Slurm's order");
	ok(r.port == 31000 && strcmp(r.port_source, "job/step id, by srun") == 0 && !r.from_resv,
	   "srun's derived port");
	is_str(r.order_source, "the step layout, asked of slurmctld by srun (node order differs "
	       "from the node list)", "said where the order came from");
	in.resv = "30100-30101";
	ok(rdzv_rank0_place(&in, &r, err, sizeof(err)) == 0 && r.port == 30100 && r.from_resv
	   && strcmp(r.port_source, "SLURM_STEP_RESV_PORTS") == 0, "reserved ports win over srun's");
	p.port_from_option = 1;
	ok(rdzv_rank0_place(&in, &r, err, sizeof(err)) == 0 && r.port == 31000 && !r.from_resv
	   && strcmp(r.port_source, "--rdzv-port") == 0, "--rdzv-port wins over reserved ports");
}

static void test_without_layout(void)
{
	struct rdzv_rank0_in in;
	struct rdzv_rank0 r;
	struct rdzv_plan p;

	plan_100_2(&p);
	base(&in, &p, "cyclic");
	ok(rdzv_rank0_place(&in, &r, err, sizeof(err)) == 0 && strcmp(r.host, "n1") == 0
	   && r.node_rank == 1, "no layout, no host: node 0 of the list (%s)", err);
	is_str(r.order_source, "node 0 and the order of SLURM_STEP_NODELIST (srun had no layout)",
	       "said");
	snprintf(p.host, sizeof(p.host), "n2");
	ok(rdzv_rank0_place(&in, &r, err, sizeof(err)) < 0
	   && strstr(err, "srun named n2 as rank 0's node, but under distribution 'cyclic' it is "
	                  "n1, node 0 of SLURM_STEP_NODELIST"), "srun and the list disagree: %s",
	   err);
	in.dist = "";
	ok(rdzv_rank0_place(&in, &r, err, sizeof(err)) < 0 && strstr(err, "distribution 'block'"),
	   "no distribution is block's");
	in.dist = "arbitrary";
	ok(rdzv_rank0_place(&in, &r, err, sizeof(err)) == 0 && strcmp(r.host, "n2") == 0,
	   "-m arbitrary: srun's host");
	is_str(r.order_source, "srun's -m arbitrary node list; node order of SLURM_STEP_NODELIST",
	       "said");
	p.host[0] = '\0';
	ok(rdzv_rank0_place(&in, &r, err, sizeof(err)) < 0
	   && strstr(err, "-m arbitrary, but srun's RDZV_STEP_PLAN names no host for rank 0"),
	   "-m arbitrary without srun's host: refused");
}

static void test_no_plan_and_het(void)
{
	struct rdzv_rank0_in in;
	struct rdzv_rank0 r;
	struct rdzv_het het;

	write_file(eph_path, "32768\t60999\n");
	base(&in, NULL, "block");
	ok(rdzv_rank0_place(&in, &r, err, sizeof(err)) == 0 && strcmp(r.host, "n1") == 0
	   && r.node_rank == 1 && r.port >= 29500 && r.port <= 29999,
	   "no plan: node 0 and a derived port (%u)", r.port);
	is_str(r.port_source, "job/step id, on this node", "derived here, said");
	is_str(r.order_source, "node 0 and the order of SLURM_STEP_NODELIST (no plan from srun: "
	       "CAUSE)", "the cause is said");
	in.resv = "30100";
	ok(rdzv_rank0_place(&in, &r, err, sizeof(err)) == 0 && r.port == 30100 && r.from_resv,
	   "no plan: reserved ports");
	in.option_port = 30500;
	ok(rdzv_rank0_place(&in, &r, err, sizeof(err)) == 0 && r.port == 30500 && !r.from_resv
	   && strcmp(r.port_source, "--rdzv-port") == 0, "no plan: --rdzv-port");
	in.dist = "arbitrary";
	ok(rdzv_rank0_place(&in, &r, err, sizeof(err)) < 0 && strstr(err, "SLURM_HOSTFILE")
	   && strstr(err, "; srun handed over no step layout: ADVICE"),
	   "no plan, -m arbitrary, no hostfile: refused with the advice (%s)", err);
	in.hosttext = "n4\nn1\n";
	ok(rdzv_rank0_place(&in, &r, err, sizeof(err)) == 0 && strcmp(r.host, "n4") == 0,
	   "no plan, -m arbitrary: the hostfile's first line");

	memset(&het, 0, sizeof(het));
	het.ncomp = 2;
	het.comp = 1;
	het.node_offset = 2;
	het.task_offset = 8;
	snprintf(het.master, sizeof(het.master), "a1");
	base(&in, NULL, "block");
	in.het = &het;
	in.resv = "30100";
	ok(rdzv_rank0_place(&in, &r, err, sizeof(err)) == 0 && strcmp(r.host, "a1") == 0
	   && !r.from_resv && r.port >= 29500 && r.port <= 29999,
	   "het: the leader's first node, a port from the leader's ids, never a component's "
	   "reserved one");
	is_str(r.port_source, "the het leader's job/step id, on this node", "said");
	is_str(r.order_source, "the heterogeneous step's components in order (1 of 2; its nodes "
	       "from SLURM_NODEID 2, ranks from 8)", "order said");
}

static void test_task0_and_note(void)
{
	struct rdzv_rank0 r;
	char note[256];

	memset(&r, 0, sizeof(r));
	snprintf(r.host, sizeof(r.host), "n1");
	snprintf(r.order_source, sizeof(r.order_source), "SRC");
	is_int(rdzv_rank0_check_task0(0, "n2", &r, 0, 0, "ADVICE", err, sizeof(err)), 0,
	       "task 0 elsewhere: nothing to check here");
	is_int(rdzv_rank0_check_task0(1, "n1", &r, 0, 0, "ADVICE", err, sizeof(err)), 0,
	       "task 0 where rank 0 was placed");
	ok(rdzv_rank0_check_task0(1, "n2", &r, 0, 0, "ADVICE", err, sizeof(err)) < 0, "refused");
	is_str(err, "task 0 runs on this node (n2), but rank 0's node was taken to be n1 (from "
	       "SRC): Slurm laid the step's tasks in another order than its node list (26.05's "
	       "topology order), and without srun's plan the nodes cannot know it; ADVICE",
	       "no plan: the advice");
	ok(rdzv_rank0_check_task0(1, "", &r, 0, 1, "ADVICE", err, sizeof(err)) < 0
	   && strstr(err, "(?)") && strstr(err, ", and srun could not read the step's layout from "
	                                        "slurmctld (srun -v says why)")
	   && !strstr(err, "ADVICE"), "a plan: srun -v");
	ok(rdzv_rank0_check_task0(1, "n2", &r, 1, 0, "ADVICE", err, sizeof(err)) < 0
	   && strstr(err, ": a heterogeneous step is numbered from its node lists")
	   && !strstr(err, "ADVICE"), "het: its own advice");

	r.port = 40000;
	r.port_source = "SLURM_STEP_RESV_PORTS";
	r.from_resv = 1;
	rdzv_rank0_port_note(&r, 0, eph_path, note, sizeof(note));
	is_str(note, "SLURM_STEP_RESV_PORTS", "not verbose: the source only");
	rdzv_rank0_port_note(&r, 1, eph_path, note, sizeof(note));
	is_str(note, "SLURM_STEP_RESV_PORTS, inside this node's ephemeral range 32768-60999",
	       "verbose, a reserved port inside the ephemeral range: said");
	r.port = 30000;
	rdzv_rank0_port_note(&r, 1, eph_path, note, sizeof(note));
	is_str(note, "SLURM_STEP_RESV_PORTS", "outside it: the source only");
}

int main(void)
{
	char dir[256];

	temp_dir(dir, sizeof(dir), "test-rank0");
	snprintf(eph_path, sizeof(eph_path), "%s/ip_local_port_range", dir);
	write_file(eph_path, "32768\t60999\n");
	test_plan_text();
	test_with_layout();
	test_without_layout();
	test_no_plan_and_het();
	test_task0_and_note();
	return done_testing();
}

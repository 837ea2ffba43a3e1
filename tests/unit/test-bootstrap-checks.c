/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-bootstrap-checks: rdzv-preflight's report format and verdict on
 * synthetic ranks: what the bootstrap carries must parse back, and each
 * broken rendezvous, binding or bandwidth must fail with the rank, node or
 * GPU named. */
#include "config.h"
#include "preflight.h"
#include "tap.h"
#include "pf-fixtures.h"

#include <stdlib.h>

static void test_decode_refuses_garbage(void)
{
	struct pf_report r;
	struct pf_result z;
	struct pf_plan p;
	char err[256], big[4000];

	ok(pf_report_decode("rank=1\nhost", 11, &r, err, sizeof(err)) < 0, "a line without '=' is refused");
	ok(pf_report_decode("rank=x\n", 7, &r, err, sizeof(err)) < 0, "a non-numeric rank is refused");
	ok(strstr(err, "rank") != NULL, "the key is named: %s", err);
	ok(pf_report_decode("master_port=70000\n", 18, &r, err, sizeof(err)) < 0,
	   "a port above 65535 is refused");
	ok(pf_report_decode("rank=1\0host=x\n", 14, &r, err, sizeof(err)) < 0,
	   "an embedded NUL is refused");
	memset(big, 'a', sizeof(big));
	memcpy(big, "host=", 5);
	ok(pf_report_decode(big, sizeof(big), &r, err, sizeof(err)) < 0, "an over-long line is refused");
	ok(pf_report_decode("future_key=1\nrank=3\n", 20, &r, err, sizeof(err)) == 0 && r.rank == 3,
	   "an unknown key (a newer rank) is ignored");
	ok(pf_result_decode("size=8 1 2\n", 11, &z, err, sizeof(err)) < 0, "a short size line is refused");
	ok(pf_result_decode("size=8 1 2 3 1 junk\n", 20, &z, err, sizeof(err)) < 0,
	   "a size line with trailing text is refused");
	ok(pf_result_decode("link_gbps=fast\n", 15, &z, err, sizeof(err)) < 0,
	   "a non-numeric bandwidth is refused");
	memset(&p, 0, sizeof(p));
	p.world = 2;
	ok(pf_plan_decode("addr=5 10.0.0.1 4000\n", 21, &p, err, sizeof(err)) < 0,
	   "a plan address for a rank out of range is refused");
	pf_plan_free(&p);
	p.world = 2;
	ok(pf_plan_decode("world=3\n", 8, &p, err, sizeof(err)) < 0,
	   "a plan for another world size is refused");
	pf_plan_free(&p);
}

static void test_roundtrip(void)
{
	struct pf_report a, b;
	struct pf_result x, y;
	struct pf_plan p, q;
	char *text = NULL, err[256];
	size_t len = 0;

	pf_mk(&a, 3, 8, "n2", 1, 4, "0000:3b:00.0");
	snprintf(a.cpus, sizeof(a.cpus), "0-3,8");
	snprintf(a.cvd, sizeof(a.cvd), "0,1,2,3");
	a.cvd_set = 1;
	a.link_port = 40001;
	a.nvars = 1;
	snprintf(a.vars[0].name, sizeof(a.vars[0].name), "NCCL_ALGO");
	snprintf(a.vars[0].value, sizeof(a.vars[0].value), "Ring=x");
	pf_report_problem(&a, "line\nbreak");
	ok(pf_report_encode(&a, &text, &len) == 0, "a report encodes");
	ok(pf_report_decode(text, len, &b, err, sizeof(err)) == 0, "and decodes: %s", err);
	ok(b.rank == 3 && b.world == 8 && b.local_rank == 1 && b.local_world == 4 &&
	   b.link_port == 40001 && b.cvd_set == 1, "numbers round-trip");
	is_str(b.host, "n2", "host round-trips");
	is_str(b.cpus, "0-3,8", "cpus round-trip");
	is_str(b.gpu_busid, "0000:3b:00.0", "bus id round-trips");
	ok(b.nvars == 1 && strcmp(b.vars[0].value, "Ring=x") == 0, "a variable with '=' in its value");
	ok(b.nproblems == 1 && strcmp(b.problems[0], "line break") == 0,
	   "a line break inside a value cannot start a new key");
	free(text);

	pf_result_init(&x);
	x.ring_ok = 1;
	x.link_gbps = 1.25;
	x.nsizes = 2;
	x.size[1].bytes = 268435456;
	x.size[1].busbw = 181.5;
	x.size[1].ok = 1;
	ok(pf_result_encode(&x, &text, &len) == 0 && pf_result_decode(text, len, &y, err, sizeof(err)) == 0,
	   "a result round-trips");
	ok(y.ring_ok == 1 && y.link_gbps == 1.25 && y.nsizes == 2 && y.size[1].bytes == 268435456 &&
	   y.size[1].busbw == 181.5 && y.node_busbw < 0, "its numbers survive");
	free(text);

	memset(&p, 0, sizeof(p));
	p.world = 2;
	p.gpu = 1;
	p.addr = calloc(2, sizeof(*p.addr));
	p.port = calloc(2, sizeof(*p.port));
	snprintf(p.addr[1], RDZV_BOOT_ADDR_MAX, "10.0.0.2");
	p.port[1] = 4242;
	snprintf(p.nccl_id, sizeof(p.nccl_id), "abcd");
	memset(&q, 0, sizeof(q));
	q.world = 2;
	ok(pf_plan_encode(&p, &text, &len) == 0 && pf_plan_decode(text, len, &q, err, sizeof(err)) == 0,
	   "a plan round-trips");
	ok(q.gpu == 1 && strcmp(q.addr[1], "10.0.0.2") == 0 && q.port[1] == 4242 &&
	   strcmp(q.nccl_id, "abcd") == 0, "addresses and the NCCL id survive");
	free(text);
	pf_plan_free(&p);
	pf_plan_free(&q);
}

static void test_good_run_passes(void)
{
	struct pf_report reps[4];
	struct pf_result res[4];
	struct pf_plan plan;
	struct pf_verdict v;
	struct pf_run run;
	uint32_t r, idx[4];

	pf_mk(&reps[0], 0, 4, "n1", 0, 2, "0000:3b:00.0");
	pf_mk(&reps[1], 1, 4, "n1", 1, 2, "0000:5e:00.0");
	pf_mk(&reps[2], 2, 4, "n2", 0, 2, "0000:3b:00.0"); /* same bus id, other node: fine */
	pf_mk(&reps[3], 3, 4, "n2", 1, 2, "0000:5e:00.0");
	is_int(pf_node_map(reps, 4, idx), 2, "two nodes");
	ok(idx[0] == 0 && idx[1] == 0 && idx[2] == 1 && idx[3] == 1, "numbered by first rank");
	memset(&plan, 0, sizeof(plan));
	plan.gpu = 1;
	for (r = 0; r < 4; r++) {
		pf_result_init(&res[r]);
		res[r].ring_ok = 1;
		res[r].link_gbps = 10;
		res[r].gpu_ok = 1;
		res[r].nsizes = 1;
		res[r].size[0].bytes = 1 << 20;
		res[r].size[0].algbw = 100;
		res[r].size[0].busbw = 150;
		res[r].node_busbw = 300;
	}
	run_init(&run, reps, 4);
	run.plan = &plan;
	run.results = res;
	pf_verdict_compute(&run, &v);
	is_int(v.failed, 0, "a healthy run passes");
	ok(find(&v, "rendezvous") && find(&v, "binding") && find(&v, "ring") && find(&v, "gpu") &&
	   find(&v, "bandwidth"), "every check is reported");

	/* A slow node: intra-node busbw far below the others. */
	res[2].node_busbw = res[3].node_busbw = 30;
	pf_mk(&reps[2], 2, 4, "n2", 0, 2, "0000:3b:00.0");
	{
		struct pf_report more[6];
		struct pf_result mres[6];

		memcpy(more, reps, sizeof(reps));
		memcpy(mres, res, sizeof(res));
		pf_mk(&more[4], 4, 6, "n3", 0, 2, "0000:3b:00.0");
		pf_mk(&more[5], 5, 6, "n3", 1, 2, "0000:5e:00.0");
		mres[4] = mres[0];
		mres[5] = mres[0];
		for (r = 0; r < 6; r++)
			more[r].world = 6;
		run_init(&run, more, 6);
		run.plan = &plan;
		run.results = mres;
		pf_verdict_compute(&run, &v);
		ok(v.failed == 1 && find(&v, "bandwidth")->status == PF_FAIL, "a slow node fails bandwidth");
		ok(has_detail(find(&v, "bandwidth"), "node n2"), "and is named");
		mres[5].size[0].algbw = 10;
		pf_verdict_compute(&run, &v);
		ok(has_detail(find(&v, "bandwidth"), "rank 5 (n3)"), "a slow rank is named too");
	}
}

static void test_broken_runs_fail(void)
{
	struct pf_report reps[3];
	struct pf_plan plan;
	struct pf_verdict v;
	struct pf_run run;
	const struct pf_check *c;

	memset(&plan, 0, sizeof(plan));
	pf_mk(&reps[0], 0, 3, "n1", 0, 2, "0000:3b:00.0");
	pf_mk(&reps[1], 1, 3, "n1", 1, 2, "0000:3b:00.0");
	pf_mk(&reps[2], 2, 3, "n2", 0, 1, "0000:3b:00.0");
	run_init(&run, reps, 3);
	run.plan = &plan;
	pf_verdict_compute(&run, &v);
	c = find(&v, "binding");
	ok(c && c->status == PF_FAIL, "two ranks of a node on one GPU fail binding");
	ok(has_detail(c, "duplicate GPU on n1: ranks 0 and 1 both use 0000:3b:00.0"),
	   "the node, ranks and GPU are named");

	pf_mk(&reps[1], 1, 3, "n1", 0, 2, "0000:5e:00.0");
	pf_verdict_compute(&run, &v);
	c = find(&v, "rendezvous");
	ok(c && c->status == PF_FAIL && has_detail(c, "rank 1 (n1) has LOCAL_RANK=0 like another"),
	   "two ranks with LOCAL_RANK=0 on a node fail the rendezvous");

	pf_mk(&reps[1], 1, 3, "n1", 1, 3, "0000:5e:00.0");
	pf_verdict_compute(&run, &v);
	c = find(&v, "rendezvous");
	ok(c && has_detail(c, "LOCAL_WORLD_SIZE=3 but the node runs 2"), "a wrong LOCAL_WORLD_SIZE is named");

	pf_mk(&reps[1], 1, 3, "n1", 1, 2, "0000:5e:00.0");
	pf_report_net(&reps[2], "NCCL_SOCKET_IFNAME=ib9 matches nothing");
	pf_verdict_compute(&run, &v);
	c = find(&v, "binding");
	ok(c && c->status == PF_WARN, "a NIC variable naming nothing only warns when NCCL does not run");
	plan.gpu = 1;
	pf_verdict_compute(&run, &v);
	c = find(&v, "binding");
	ok(c && c->status == PF_FAIL && has_detail(c, "rank 2 (n2): NCCL_SOCKET_IFNAME=ib9"),
	   "and fails, named, when it does");
	plan.gpu = 0;
	reps[2].nnet = 0;

	reps[1].nvars = 1;
	snprintf(reps[1].vars[0].name, sizeof(reps[1].vars[0].name), "NCCL_ALGO");
	snprintf(reps[1].vars[0].value, sizeof(reps[1].vars[0].value), "Tree");
	pf_verdict_compute(&run, &v);
	c = find(&v, "nccl-env");
	ok(c && c->status == PF_WARN && has_detail(c, "NCCL_ALGO differs: rank 0 has (unset), rank 1 (n1) has Tree"),
	   "an NCCL variable set on one rank only is a warning naming it");
	is_int(v.failed, 0, "a warning alone does not fail the run");

	plan.gpu_fail = 1;
	snprintf(plan.gpu_why, sizeof(plan.gpu_why), "1 of 3 ranks have no usable GPU");
	pf_verdict_compute(&run, &v);
	c = find(&v, "gpu");
	ok(c && c->status == PF_FAIL, "a run where some ranks lack a GPU fails the gpu check");

	run_init(&run, NULL, 4);
	snprintf(run.fatal, sizeof(run.fatal), "1 of 4 ranks missing\nrank 3 never connected (Slurm placed it on n2)");
	snprintf(run.master_note, sizeof(run.master_note), "MASTER_ADDR=x is not an address of n1");
	pf_verdict_compute(&run, &v);
	c = find(&v, "rendezvous");
	ok(c && c->status == PF_FAIL && strcmp(c->text, "1 of 4 ranks missing") == 0,
	   "a failed join fails the rendezvous with its reason");
	ok(has_detail(c, "rank 3 never connected (Slurm placed it on n2)") && has_detail(c, "not an address"),
	   "each missing rank and the MASTER_ADDR problem are details");
	is_int(v.failed, 1, "one check failed");
}

static void test_expected_host(void)
{
	char h[64];

	setenv("SLURM_STEP_NODELIST", "n[1-3]", 1);
	setenv("SLURM_STEP_TASKS_PER_NODE", "2(x2),1", 1);
	unsetenv("SLURM_DISTRIBUTION");
	pf_expected_host(0, h, sizeof(h));
	is_str(h, "n1", "rank 0 on n1");
	pf_expected_host(3, h, sizeof(h));
	is_str(h, "n2", "rank 3 on n2 (block)");
	pf_expected_host(4, h, sizeof(h));
	is_str(h, "n3", "rank 4 on n3");
	pf_expected_host(5, h, sizeof(h));
	is_str(h, "", "rank 5 is beyond the step");
	setenv("SLURM_DISTRIBUTION", "cyclic", 1);
	pf_expected_host(3, h, sizeof(h));
	is_str(h, "", "cyclic: not guessed");
	setenv("SLURM_DISTRIBUTION", "block:cyclic", 1);
	pf_expected_host(3, h, sizeof(h));
	is_str(h, "n2", "block:cyclic places nodes by block");
}

static void test_master_local(void)
{
	char note[512] = "";

	ok(pf_master_is_local("127.0.0.1", note, sizeof(note)) == 1, "127.0.0.1 is local");
	ok(pf_master_is_local("192.0.2.1", note, sizeof(note)) == 0, "TEST-NET-1 is not");
	ok(strstr(note, "is not an address of") != NULL, "and says so: %s", note);
	ok(pf_master_is_local("no-such-host.invalid", note, sizeof(note)) == 0 &&
	   strstr(note, "does not resolve"), "an unresolvable name is said so");
}

/* The NVLink fabric: nodes in different cliques, a node whose
 * GPUs disagree, no NVML; the report carries it through encode/decode. */
static void fabric_of(struct pf_report *r, const char *domain, int ok_, const char *line)
{
	r->fabric_read = 1;
	r->fabric_ok = ok_;
	snprintf(r->fabric_domain, sizeof(r->fabric_domain), "%s", domain);
	snprintf(r->fabric_why, sizeof(r->fabric_why), "%s", ok_ ? "" : "GPU 0 (x): fabric state in progress");
	r->nfabric = 1;
	snprintf(r->fabric[0], sizeof(r->fabric[0]), "%s", line);
}

static void test_fabric(void)
{
	struct pf_report reps[3], back;
	struct pf_verdict v;
	struct pf_run run;
	const struct pf_check *c;
	char *blob = NULL, err[256];
	size_t len = 0;

	pf_mk(&reps[0], 0, 3, "n1", 0, 2, "0000:3b:00.0");
	pf_mk(&reps[1], 1, 3, "n1", 1, 2, "0000:5e:00.0");
	pf_mk(&reps[2], 2, 3, "n2", 0, 1, "0000:3b:00.0");
	run_init(&run, reps, 3);
	pf_verdict_compute(&run, &v);
	ok(!find(&v, "fabric"), "no node read the fabric (--cpu): no fabric check");

	fabric_of(&reps[0], "aa/7", 1, "GPU 0 (0000:3b:00.0): cluster aa, clique 7, state completed, health ok");
	fabric_of(&reps[2], "aa/7", 1, "GPU 0 (0000:3b:00.0): cluster aa, clique 7, state completed, health ok");
	ok(pf_report_encode(&reps[0], &blob, &len) == 0
	   && pf_report_decode(blob, len, &back, err, sizeof(err)) == 0 && back.fabric_read
	   && back.fabric_ok && strcmp(back.fabric_domain, "aa/7") == 0 && back.nfabric == 1
	   && strcmp(back.fabric[0], reps[0].fabric[0]) == 0, "the fabric survives the wire");
	free(blob);
	pf_verdict_compute(&run, &v);
	c = find(&v, "fabric");
	ok(c && c->status == PF_PASS && strstr(c->text, "2 nodes in one NVLink domain aa/7"),
	   "two nodes in one domain pass (%s)", c ? c->text : "-");

	fabric_of(&reps[2], "aa/9", 1, "GPU 0 (0000:3b:00.0): cluster aa, clique 9, state completed, health ok");
	pf_verdict_compute(&run, &v);
	c = find(&v, "fabric");
	ok(c && c->status == PF_WARN && has_detail(c, "span 2 NVLink domains")
	   && has_detail(c, "n2: NVLink domain aa/9"), "nodes in two cliques: a warning naming them");
	snprintf(reps[0].vars[0].name, sizeof(reps[0].vars[0].name), "NCCL_MNNVL_ENABLE");
	snprintf(reps[0].vars[0].value, sizeof(reps[0].vars[0].value), "1");
	reps[0].nvars = 1;
	pf_verdict_compute(&run, &v);
	c = find(&v, "fabric");
	ok(c && c->status == PF_FAIL && has_detail(c, "which NCCL_MNNVL_ENABLE=1 forbids"),
	   "... a failure when the step forces MNNVL");
	reps[0].nvars = 0;

	fabric_of(&reps[2], "mixed: the GPUs of this node are not in one NVLink domain: GPU 0 clique 7; GPU 1 clique 8", 0, "x");
	pf_verdict_compute(&run, &v);
	c = find(&v, "fabric");
	ok(c && c->status == PF_WARN && has_detail(c, "n2: the GPUs of this node are not in one NVLink domain"),
	   "mixed cliques within a node are named");
	fabric_of(&reps[2], "aa/7", 0, "x");
	pf_verdict_compute(&run, &v);
	c = find(&v, "fabric");
	ok(c && c->status == PF_WARN && has_detail(c, "n2: not ready for multi-node NVLink: GPU 0 (x): fabric state in progress"),
	   "a node not ready is named with the reason");

	fabric_of(&reps[0], "no NVML: cannot load libnvidia-ml.so.1", 0, "");
	reps[0].nfabric = 0;
	fabric_of(&reps[2], "no NVML: cannot load libnvidia-ml.so.1", 0, "");
	reps[2].nfabric = 0;
	pf_verdict_compute(&run, &v);
	c = find(&v, "fabric");
	ok(c && c->status == PF_SKIP && strstr(c->text, "no NVML on any of 2 nodes")
	   && has_detail(c, "n1: no NVML"), "no NVML anywhere: skipped, said plainly");
	fabric_of(&reps[0], "none", 0, "GPU 0 (0000:3b:00.0): not supported (no NVLink fabric)");
	fabric_of(&reps[2], "none", 0, "GPU 0 (0000:3b:00.0): not supported (no NVLink fabric)");
	pf_verdict_compute(&run, &v);
	c = find(&v, "fabric");
	ok(c && c->status == PF_SKIP && strstr(c->text, "not supported on every GPU of 2 nodes"),
	   "no fabric anywhere (H100 PCIe, H200): skipped, said plainly");
}

int main(void)
{
	opts.outlier = 0.7;
	snprintf(env.master_addr, sizeof(env.master_addr), "n1");
	env.master_port = 29500;
	test_decode_refuses_garbage();
	test_roundtrip();
	test_good_run_passes();
	test_broken_runs_fail();
	test_expected_host();
	test_master_local();
	test_fabric();
	return done_testing();
}

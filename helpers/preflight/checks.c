/* SPDX-License-Identifier: GPL-2.0-or-later */
/* checks.c: the verdict. Every rank runs this on the same gathered data,
 * so every rank exits with the same status; rank 0 prints it. */
#include "config.h"
#include "preflight.h"

#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "busbw.h"
#include "hostlist.h"
#include "layout.h"

uint32_t pf_node_map(const struct pf_report *reps, uint32_t world, uint32_t *idx)
{
	uint32_t r, q, n = 0;

	for (r = 0; r < world; r++) {
		for (q = 0; q < r; q++)
			if (strcmp(reps[q].host, reps[r].host) == 0)
				break;
		idx[r] = q < r ? idx[q] : n++;
	}
	return n;
}

void pf_expected_host(uint32_t rank, char *buf, size_t len)
{
	const char *nodes = getenv("SLURM_STEP_NODELIST"), *tpn = getenv("SLURM_STEP_TASKS_PER_NODE");
	const char *dist = getenv("SLURM_DISTRIBUTION");
	uint32_t nnodes, n, on;
	uint64_t ntasks, cum = 0;

	buf[0] = '\0';
	/* Only block layouts put rank r at a place computable from these two
	 * strings; cyclic, plane and arbitrary would need more. */
	if (!nodes || !tpn || (dist && strncmp(dist, "block", 5) != 0))
		return;
	if (rdzv_tpn_totals(tpn, &nnodes, &ntasks, NULL, 0) < 0 || rank >= ntasks)
		return;
	for (n = 0; n < nnodes; n++) {
		if (rdzv_tpn_tasks_on(tpn, n, &on, NULL, 0) < 0)
			return;
		cum += on;
		if (rank < cum) {
			if (rdzv_hostlist_nth(nodes, n, buf, len, NULL, 0) < 0)
				buf[0] = '\0';
			return;
		}
	}
}

int pf_master_is_local(const char *addr, char *note, size_t notelen)
{
	struct addrinfo hints, *res = NULL, *ai;
	char host[PF_HOST] = "?", first[64] = "";
	const char *node = getenv("SLURMD_NODENAME");
	int rc, local = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_DGRAM;
	if (node && *node)
		snprintf(host, sizeof(host), "%s", node);
	else
		gethostname(host, sizeof(host) - 1);
	rc = getaddrinfo(addr, NULL, &hints, &res);
	if (rc != 0) {
		snprintf(note, notelen, "MASTER_ADDR=%s does not resolve on %s, where rank 0 runs: %s",
		         addr, host, gai_strerror(rc));
		return 0;
	}
	/* An address is this host's when a socket can bind to it. */
	for (ai = res; ai && !local; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		if (!first[0])
			getnameinfo(ai->ai_addr, ai->ai_addrlen, first, sizeof(first), NULL, 0,
			            NI_NUMERICHOST);
		if (fd < 0)
			continue;
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EADDRINUSE)
			local = 1;
		close(fd);
	}
	freeaddrinfo(res);
	if (!local)
		snprintf(note, notelen, "MASTER_ADDR=%s (%s) is not an address of %s, where rank 0 "
		         "runs: a training job's ranks would wait there forever", addr, first, host);
	return local;
}

/* ---------------------------------------------------------------- verdict */

static struct pf_check *add_check(struct pf_verdict *v, const char *name, enum pf_status st,
                                  const char *fmt, ...) RDZV_PRINTF(4, 5);
static struct pf_check *add_check(struct pf_verdict *v, const char *name, enum pf_status st,
                                  const char *fmt, ...)
{
	struct pf_check *c = &v->check[v->nchecks++];
	va_list ap;

	memset(c, 0, sizeof(*c));
	c->name = name;
	c->status = st;
	va_start(ap, fmt);
	vsnprintf(c->text, sizeof(c->text), fmt, ap);
	va_end(ap);
	return c;
}

static void detail(struct pf_check *c, enum pf_status st, const char *fmt, ...) RDZV_PRINTF(3, 4);
static void detail(struct pf_check *c, enum pf_status st, const char *fmt, ...)
{
	va_list ap;

	if (st > c->status)
		c->status = st;
	if (c->ndetails >= PF_MAX_DETAILS) {
		/* The last line says how many more there were. */
		snprintf(c->details[PF_MAX_DETAILS - 1], PF_TEXT, "... and more");
		return;
	}
	va_start(ap, fmt);
	vsnprintf(c->details[c->ndetails++], PF_TEXT, fmt, ap);
	va_end(ap);
}

static uint32_t count_nodes(const struct pf_report *reps, uint32_t world)
{
	uint32_t *idx = calloc(world, sizeof(*idx)), n;

	if (!idx)
		return 0;
	n = pf_node_map(reps, world, idx);
	free(idx);
	return n;
}

static void check_rendezvous(const struct pf_run *run, struct pf_verdict *v)
{
	const struct pf_report *reps = run->reports;
	uint32_t world = run->world, r, q, nodes;
	struct pf_check *c;

	if (!reps) {
		char buf[sizeof(run->fatal)], *line, *save = NULL;

		/* The first line says what failed, the others name ranks. */
		snprintf(buf, sizeof(buf), "%s", run->fatal);
		line = strtok_r(buf, "\n", &save);
		c = add_check(v, "rendezvous", PF_FAIL, "%s", line ? line : "failed");
		while ((line = strtok_r(NULL, "\n", &save)))
			detail(c, PF_FAIL, "%s", line);
		if (run->master_note[0])
			detail(c, PF_FAIL, "%s", run->master_note);
		return;
	}
	nodes = count_nodes(reps, world);
	c = add_check(v, "rendezvous", PF_PASS, "%u/%u rank%s on %u node%s met at %s:%u in %.2f s",
	              world, world, world > 1 ? "s" : "", nodes, nodes > 1 ? "s" : "",
	              run->env->master_addr, run->env->master_port, run->join_seconds);
	if (run->master_note[0])
		detail(c, PF_FAIL, "%s", run->master_note);
	for (r = 0; r < world; r++) {
		uint32_t L = 0, dups = 0;

		if (strcmp(reps[r].master_addr, reps[0].master_addr) != 0)
			detail(c, PF_WARN, "rank %u (%s) has MASTER_ADDR=%s, rank 0 has %s", r,
			       reps[r].host, reps[r].master_addr, reps[0].master_addr);
		for (q = 0; q < world; q++) {
			if (strcmp(reps[q].host, reps[r].host) != 0)
				continue;
			L++;
			if (q < r && reps[q].local_rank == reps[r].local_rank)
				dups++;
		}
		if (dups)
			detail(c, PF_FAIL, "rank %u (%s) has LOCAL_RANK=%u like another rank of the node",
			       r, reps[r].host, reps[r].local_rank);
		if (reps[r].local_rank >= L)
			detail(c, PF_FAIL, "rank %u (%s) has LOCAL_RANK=%u but the node runs %u rank%s", r,
			       reps[r].host, reps[r].local_rank, L, L > 1 ? "s" : "");
		if (reps[r].local_world && reps[r].local_world != L)
			detail(c, PF_FAIL, "rank %u (%s) has LOCAL_WORLD_SIZE=%u but the node runs %u "
			       "rank%s", r, reps[r].host, reps[r].local_world, L, L > 1 ? "s" : "");
	}
	if (run->strangers)
		detail(c, PF_PASS, "rank 0 refused %u stranger connection%s on its port",
		       run->strangers, run->strangers > 1 ? "s" : "");
}

static void check_binding(const struct pf_run *run, struct pf_verdict *v)
{
	const struct pf_report *reps = run->reports;
	uint32_t world = run->world, r, q, gpus = 0;
	int nccl = run->plan && run->plan->gpu;
	struct pf_check *c;
	size_t i;

	if (!reps)
		return;
	for (r = 0; r < world; r++)
		gpus += reps[r].gpu_index >= 0;
	c = add_check(v, "binding", PF_PASS, "%s; CPUs, NICs and NCCL/UCX devices checked",
	              gpus ? "one distinct GPU per rank" : "no GPU in use");
	for (r = 0; r < world; r++) {
		for (i = 0; i < reps[r].nproblems; i++)
			detail(c, PF_FAIL, "rank %u (%s): %s", r, reps[r].host, reps[r].problems[i]);
		for (i = 0; i < reps[r].nnet; i++)
			detail(c, nccl ? PF_FAIL : PF_WARN, "rank %u (%s): %s", r, reps[r].host,
			       reps[r].net[i]);
		if (reps[r].gpu_index < 0 || !reps[r].gpu_busid[0])
			continue;
		for (q = 0; q < r; q++)
			if (strcmp(reps[q].host, reps[r].host) == 0 &&
			    strcmp(reps[q].gpu_busid, reps[r].gpu_busid) == 0) {
				detail(c, PF_FAIL, "duplicate GPU on %s: ranks %u and %u both use %s", reps[r].host,
				       q, r, reps[r].gpu_busid);
				break;
			}
	}
}

static const char *var_of(const struct pf_report *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nvars; i++)
		if (strcmp(r->vars[i].name, name) == 0)
			return r->vars[i].value;
	return NULL;
}

/* Per-node values (binding's NCCL_IB_HCA and UCX_NET_DEVICES, the socket
 * interface) may differ by design; the rest should not. */
static int per_node(const char *name)
{
	return !strcmp(name, "NCCL_IB_HCA") || !strcmp(name, "UCX_NET_DEVICES") ||
	       !strcmp(name, "NCCL_SOCKET_IFNAME");
}

static void check_nccl_env(const struct pf_run *run, struct pf_verdict *v)
{
	const struct pf_report *reps = run->reports;
	uint32_t world = run->world, r;
	struct pf_check *c;
	size_t i, j;

	if (!reps)
		return;
	c = add_check(v, "nccl-env", PF_PASS, "%zu NCCL/UCX variable%s, the same on every rank",
	              reps[0].nvars, reps[0].nvars == 1 ? "" : "s");
	for (r = 1; r < world; r++) {
		for (i = 0; i < reps[r].nvars; i++) {
			const char *mine = var_of(&reps[0], reps[r].vars[i].name);

			if (per_node(reps[r].vars[i].name))
				continue;
			if (!mine || strcmp(mine, reps[r].vars[i].value) != 0)
				detail(c, PF_WARN, "%s differs: rank 0 has %s, rank %u (%s) has %s",
				       reps[r].vars[i].name, mine ? mine : "(unset)", r, reps[r].host,
				       reps[r].vars[i].value);
		}
		for (j = 0; j < reps[0].nvars; j++)
			if (!per_node(reps[0].vars[j].name) && !var_of(&reps[r], reps[0].vars[j].name))
				detail(c, PF_WARN, "%s differs: rank 0 has %s, rank %u (%s) has (unset)",
				       reps[0].vars[j].name, reps[0].vars[j].value, r, reps[r].host);
	}
}

static void check_ring(const struct pf_run *run, struct pf_verdict *v)
{
	const struct pf_result *res = run->results;
	uint32_t world = run->world, r, slow = 0;
	double *link = NULL, med = 0;
	unsigned char *flag = NULL;
	struct pf_check *c;
	char sz[32];

	if (!res)
		return;
	rdzv_bw_format_size(res[0].ring_bytes, sz, sizeof(sz));
	if (world == 1)
		c = add_check(v, "ring", PF_PASS, "one rank: the all-reduce of %s is a copy, checked", sz);
	else
		c = add_check(v, "ring", PF_PASS, "TCP ring all-reduce of %s over %u ranks: correct on "
		              "every rank, busbw %.2f GB/s", sz, world, res[0].ring_busbw);
	for (r = 0; r < world; r++)
		if (!res[r].ring_ok)
			detail(c, PF_FAIL, "rank %u (%s): %s", r, run->reports[r].host,
			       res[r].ring_err[0] ? res[r].ring_err : "failed");
	if (c->status == PF_FAIL || world < 2)
		return;
	link = calloc(world, sizeof(*link));
	flag = calloc(world, 1);
	if (!link || !flag)
		goto out;
	for (r = 0; r < world; r++)
		link[r] = res[r].link_gbps;
	c = add_check(v, "links", PF_PASS, "ring links: median %.2f GB/s", 0.0);
	if (rdzv_bw_outliers(link, world, run->opts->outlier, flag, &med, NULL, 0) >= 0) {
		snprintf(c->text, sizeof(c->text), "ring links: median %.2f GB/s, none below %.0f%%", med,
		         run->opts->outlier * 100);
		/* TCP on a shared network is noisy: a slow link is worth a
		 * look, not a failed job (doc/preflight.md). */
		for (r = 0; r < world; r++)
			if (flag[r]) {
				uint32_t p = (r + world - 1) % world;

				detail(c, PF_WARN, "slow link rank %u (%s) -> rank %u (%s): %.2f GB/s", p,
				       run->reports[p].host, r, run->reports[r].host, link[r]);
				slow++;
			}
		if (slow)
			snprintf(c->text, sizeof(c->text), "ring links: median %.2f GB/s, %u below %.0f%%",
			         med, slow, run->opts->outlier * 100);
	}
out:
	free(link);
	free(flag);
}

static void check_gpu(const struct pf_run *run, struct pf_verdict *v)
{
	const struct pf_plan *plan = run->plan;
	const struct pf_result *res = run->results;
	uint32_t world = run->world, r, nodes;
	struct pf_check *c;
	double *bw = NULL, med = 0;
	unsigned char *flag = NULL;
	char lo[32], hi[32];
	size_t last;

	if (!plan || !run->reports)
		return;
	if (!plan->gpu) {
		add_check(v, "gpu", plan->gpu_fail ? PF_FAIL : PF_SKIP, "%s", plan->gpu_why);
		return;
	}
	if (!res)
		return;
	for (r = 0; r < world; r++)
		if (!res[r].gpu_ok || res[r].nsizes == 0) {
			c = add_check(v, "gpu", PF_PASS, "NCCL all-reduce over %u GPUs", world);
			for (; r < world; r++)
				if (!res[r].gpu_ok || res[r].nsizes == 0)
					detail(c, PF_FAIL, "rank %u (%s): %s", r, run->reports[r].host,
					       res[r].gpu_err[0] ? res[r].gpu_err : "no result");
			return;
		}
	last = res[0].nsizes - 1;
	rdzv_bw_format_size(res[0].size[0].bytes, lo, sizeof(lo));
	rdzv_bw_format_size(res[0].size[last].bytes, hi, sizeof(hi));
	add_check(v, "gpu", PF_PASS, "NCCL all-reduce %s..%s over %u GPUs, results checked: busbw "
	          "%.1f GB/s at %s", lo, hi, world, res[0].size[last].busbw, hi);

	/* Outliers: per rank at the largest size, and per node intra-node. */
	nodes = count_nodes(run->reports, world);
	bw = calloc(world, sizeof(*bw));
	flag = calloc(world, 1);
	if (!bw || !flag)
		goto out;
	c = add_check(v, "bandwidth", PF_PASS, "no rank or node below %.0f%% of the median",
	              run->opts->outlier * 100);
	for (r = 0; r < world; r++)
		bw[r] = res[r].nsizes > last ? res[r].size[last].algbw : 0;
	if (world > 1 && rdzv_bw_outliers(bw, world, run->opts->outlier, flag, &med, NULL, 0) > 0)
		for (r = 0; r < world; r++)
			if (flag[r])
				detail(c, PF_FAIL, "rank %u (%s): algbw %.1f GB/s at %s, median %.1f", r,
				       run->reports[r].host, bw[r], hi, med);
	if (nodes > 1) {
		uint32_t n, k = 0;
		uint32_t *rep = calloc(nodes, sizeof(*rep)), *idx = calloc(world, sizeof(*idx));

		if (!rep || !idx) {
			free(rep);
			free(idx);
			goto out;
		}
		pf_node_map(run->reports, world, idx);
		/* One value per node: its first rank's intra-node figure. */
		for (n = 0; n < nodes; n++)
			for (r = 0; r < world; r++)
				if (idx[r] == n) {
					rep[k] = r;
					bw[k++] = res[r].node_busbw;
					break;
				}
		if (bw[0] >= 0 && rdzv_bw_outliers(bw, k, run->opts->outlier, flag, &med, NULL, 0) > 0)
			for (n = 0; n < k; n++)
				if (flag[n])
					detail(c, PF_FAIL, "node %s: intra-node busbw %.1f GB/s, median %.1f",
					       run->reports[rep[n]].host, bw[n], med);
		free(rep);
		free(idx);
	}
out:
	free(bw);
	free(flag);
}

/* The NVLink fabric: each node's local rank 0 read it on the GPU
 * path. GPUs of one node in different cliques, a node whose GPUs are not
 * registered or not healthy, and nodes in different NVLink domains are
 * named: a warning, or a failure when the step forces NCCL's multi-node
 * NVLink (NCCL_MNNVL_ENABLE=1), which then cannot work. */
static void check_fabric(const struct pf_run *run, struct pf_verdict *v)
{
	const struct pf_report *reps = run->reports, *first = NULL;
	const char *forced;
	enum pf_status bad;
	struct pf_check *c;
	uint32_t r, nodes = 0, nvml = 0, fabric = 0, domains = 0;
	int split = 0;

	if (!reps)
		return;
	for (r = 0; r < run->world; r++) {
		const struct pf_report *p = &reps[r];

		if (!p->fabric_read)
			continue;
		nodes++;
		if (strncmp(p->fabric_domain, "no NVML", 7) == 0)
			continue;
		nvml++;
		if (strcmp(p->fabric_domain, "none") == 0)
			continue;
		fabric++;
		if (strncmp(p->fabric_domain, "mixed", 5) == 0)
			continue;
		if (!first) {
			first = p;
			domains = 1;
		} else if (strcmp(first->fabric_domain, p->fabric_domain) != 0) {
			split = 1;
			domains++;
		}
	}
	if (!nodes)
		return;
	forced = var_of(&reps[0], "NCCL_MNNVL_ENABLE");
	bad = forced && strcmp(forced, "1") == 0 ? PF_FAIL : PF_WARN;
	if (!nvml)
		c = add_check(v, "fabric", PF_SKIP, "not checked: no NVML on any of %u node%s", nodes,
		              nodes == 1 ? "" : "s");
	else if (!fabric)
		c = add_check(v, "fabric", PF_SKIP, "no NVLink fabric: NVML says not supported on "
		              "every GPU of %u node%s", nvml, nvml == 1 ? "" : "s");
	else if (domains == 1 && fabric == nodes && !split)
		c = add_check(v, "fabric", PF_PASS, "%u node%s in one NVLink domain %s", nodes,
		              nodes == 1 ? "" : "s", first->fabric_domain);
	else
		c = add_check(v, "fabric", PF_PASS, "%u of %u nodes in an NVLink fabric", fabric,
		              nodes);
	for (r = 0; r < run->world; r++) {
		const struct pf_report *p = &reps[r];

		if (!p->fabric_read)
			continue;
		if (strncmp(p->fabric_domain, "no NVML", 7) == 0) {
			detail(c, fabric ? bad : PF_SKIP, "%s: %s", p->host, p->fabric_domain);
			continue;
		}
		if (strcmp(p->fabric_domain, "none") == 0) {
			detail(c, fabric ? bad : PF_SKIP, "%s: no NVLink fabric (not supported)%s",
			       p->host, fabric ? " while other nodes have one" : "");
			continue;
		}
		if (strncmp(p->fabric_domain, "mixed", 5) == 0)
			detail(c, bad, "%s: %s", p->host, p->fabric_domain + 7);
		else if (!p->fabric_ok)
			detail(c, bad, "%s: not ready for multi-node NVLink: %s", p->host,
			       p->fabric_why);
		else
			detail(c, PF_PASS, "%s: NVLink domain %s", p->host, p->fabric_domain);
	}
	if (split)
		detail(c, bad, "the step's nodes span %u NVLink domains (cluster/clique): NVLink "
		       "reaches only within one; between them NCCL uses the network%s", domains,
		       bad == PF_FAIL ? ", which NCCL_MNNVL_ENABLE=1 forbids" : "");
}

/* AMD GPUs' xGMI (Infinity Fabric), read through ROCm SMI by each node's
 * local rank 0 where the node has AMD GPUs. xGMI, like NVLink on HGX, ends
 * at the node, so hive ids are never compared between nodes: what is
 * flagged is a node whose GPUs are in several hives (RCCL crosses PCIe
 * between them), GPUs reporting xGMI errors, ROCm SMI missing or listing
 * no GPU where the PCI bus shows AMD ones. Warnings: the collectives still
 * run, slower, and the node may be fine for a job that uses one hive. */
static void check_xgmi(const struct pf_run *run, struct pf_verdict *v)
{
	const struct pf_report *reps = run->reports;
	struct pf_check *c;
	uint32_t r, nodes = 0, rsmi = 0, bad = 0;

	if (!reps)
		return;
	for (r = 0; r < run->world; r++) {
		const struct pf_report *p = &reps[r];

		if (!p->xgmi_read)
			continue;
		nodes++;
		if (strncmp(p->xgmi_hive, "no ROCm SMI", 11) == 0)
			continue;
		rsmi++;
		if (!p->nxgmi || !p->xgmi_ok || strncmp(p->xgmi_hive, "several", 7) == 0)
			bad++;
	}
	if (!nodes)
		return;
	if (!rsmi)
		c = add_check(v, "xgmi", PF_SKIP, "not checked: no ROCm SMI on any of %u node%s with "
		              "AMD GPUs", nodes, nodes == 1 ? "" : "s");
	else if (!bad && rsmi == nodes)
		c = add_check(v, "xgmi", PF_PASS, "%u node%s with AMD GPUs, each node's GPUs in one "
		              "xGMI hive or none, no xGMI errors", nodes, nodes == 1 ? "" : "s");
	else
		c = add_check(v, "xgmi", PF_PASS, "%u of %u nodes with AMD GPUs read through ROCm SMI, "
		              "%u with a finding", rsmi, nodes, bad);
	for (r = 0; r < run->world; r++) {
		const struct pf_report *p = &reps[r];

		if (!p->xgmi_read)
			continue;
		if (strncmp(p->xgmi_hive, "no ROCm SMI", 11) == 0) {
			detail(c, rsmi ? PF_WARN : PF_SKIP, "%s: %s", p->host, p->xgmi_hive);
			continue;
		}
		if (!p->nxgmi) {
			detail(c, PF_WARN, "%s: %s", p->host, p->xgmi_why);
			continue;
		}
		if (strncmp(p->xgmi_hive, "several: ", 9) == 0)
			detail(c, PF_WARN, "%s: %s; between hives RCCL goes over PCIe", p->host,
			       p->xgmi_hive + 9);
		if (!p->xgmi_ok)
			detail(c, PF_WARN, "%s: xGMI errors: %s", p->host, p->xgmi_why);
		if (strncmp(p->xgmi_hive, "several", 7) == 0 || !p->xgmi_ok)
			continue;
		if (strcmp(p->xgmi_hive, "none") == 0)
			detail(c, PF_PASS, "%s: no xGMI hive (the GPUs reach each other over PCIe)",
			       p->host);
		else
			detail(c, PF_PASS, "%s: xGMI hive %s", p->host, p->xgmi_hive);
	}
}

void pf_verdict_compute(const struct pf_run *run, struct pf_verdict *v)
{
	size_t i;

	memset(v, 0, sizeof(*v));
	check_rendezvous(run, v);
	check_binding(run, v);
	check_nccl_env(run, v);
	if (run->reports && !run->results && run->fatal[0])
		add_check(v, "tests", PF_FAIL, "%s", run->fatal);
	check_ring(run, v);
	check_gpu(run, v);
	check_fabric(run, v);
	check_xgmi(run, v);
	for (i = 0; i < v->nchecks; i++)
		if (v->check[i].status == PF_FAIL)
			v->failed++;
}

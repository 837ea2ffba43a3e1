/* SPDX-License-Identifier: GPL-2.0-or-later */
/* summary.c: what rank 0 prints. One screen by default (the verdict, one
 * line per check, details only for what failed or warned, a node table
 * and the bandwidth sweep); --verbose adds every rank; --json prints the
 * same facts for machines. */
#include "config.h"
#include "preflight.h"

#include <stdlib.h>
#include <string.h>

#include "busbw.h"

static const char *status_name(enum pf_status s)
{
	switch (s) {
	case PF_PASS: return "PASS";
	case PF_WARN: return "WARN";
	case PF_SKIP: return "SKIP";
	case PF_FAIL: return "FAIL";
	}
	return "?";
}

#define NODE_TABLE_MAX 16

static void node_table(FILE *f, const struct pf_run *run)
{
	uint32_t *idx, nodes, n, r;

	idx = calloc(run->world, sizeof(*idx));
	if (!idx)
		return;
	nodes = pf_node_map(run->reports, run->world, idx);
	if (nodes > NODE_TABLE_MAX && !run->opts->verbose) {
		free(idx);
		return;
	}
	fprintf(f, "\n  %-16s %-12s %-10s %s\n", "node", "ranks", "link GB/s", "GPUs (PCI bus id)");
	for (n = 0; n < nodes; n++) {
		char ranks[64] = "", gpus[256] = "";
		size_t ro = 0, go = 0;
		double link = -1;
		const char *host = NULL;

		for (r = 0; r < run->world; r++) {
			int w;

			if (idx[r] != n)
				continue;
			host = run->reports[r].host;
			if (ro + 12 < sizeof(ranks)) {
				w = snprintf(ranks + ro, sizeof(ranks) - ro, "%s%u", ro ? "," : "", r);
				ro += w > 0 ? (size_t)w : 0;
			}
			if (run->reports[r].gpu_busid[0] && go + 16 < sizeof(gpus)) {
				w = snprintf(gpus + go, sizeof(gpus) - go, "%s%s", go ? "," : "",
				             run->reports[r].gpu_busid + (strncmp(run->reports[r].gpu_busid,
				                                                  "0000:", 5) ? 0 : 5));
				go += w > 0 ? (size_t)w : 0;
			}
			if (run->results && run->world > 1 &&
			    (link < 0 || run->results[r].link_gbps < link))
				link = run->results[r].link_gbps;
		}
		if (link >= 0)
			fprintf(f, "  %-16s %-12s %-10.2f %s\n", host, ranks, link, gpus[0] ? gpus : "-");
		else
			fprintf(f, "  %-16s %-12s %-10s %s\n", host, ranks, "-", gpus[0] ? gpus : "-");
	}
	free(idx);
}

/* The line a node gets in its NVLink fabric table besides its GPUs' (no
 * NVML, or none listed), NULL for none. */
static const char *fabric_note(const struct pf_report *p)
{
	int no_nvml = strncmp(p->fabric_domain, "no NVML", 7) == 0;

	if (!no_nvml && p->nfabric)
		return NULL;
	return no_nvml ? p->fabric_domain : "NVML lists no GPU";
}

/* The same for the AMD GPUs' table (no ROCm SMI, or why none is listed). */
static const char *xgmi_note(const struct pf_report *p)
{
	if (strncmp(p->xgmi_hive, "no ROCm SMI", 11) == 0)
		return p->xgmi_hive;
	return p->nxgmi ? NULL : p->xgmi_why;
}

/* pf_gpu_tables' headings in the summary, and their notes. */
static const struct {
	const char *heading;
	const char *(*note)(const struct pf_report *p);
} gpu_tables[PF_GPU_TABLES] = {
	{ "NVLink fabric (NVML)", fabric_note },
	{ "AMD GPUs, xGMI (ROCm SMI)", xgmi_note },
};

/* One line per GPU of each node whose local rank 0 read pf_gpu_tables[k]
 * (the AMD GPUs' only on nodes that have them). */
static void gpu_table(FILE *f, const struct pf_run *run, size_t k)
{
	const struct pf_gpu_table *t = &pf_gpu_tables[k];
	const char *note;
	uint32_t r;
	size_t i;
	int head = 0;

	for (r = 0; r < run->world; r++) {
		const struct pf_report *p = &run->reports[r];
		if (!*PF_CONST_AT(p, t->read_at, int))
			continue;
		if (!head++)
			fprintf(f, "\n  %s:\n", gpu_tables[k].heading);
		if ((note = gpu_tables[k].note(p)))
			fprintf(f, "  %-16s %s\n", p->host, note);
		for (i = 0; i < *PF_CONST_AT(p, t->n_at, size_t); i++)
			fprintf(f, "  %-16s %s\n", p->host, PF_GPU_LINE(p, t, i));
	}
}

static void sweep_table(FILE *f, const struct pf_run *run)
{
	const struct pf_result *z = &run->results[0];
	size_t i;

	if (!z->gpu_ok || !z->nsizes)
		return;
	fprintf(f, "\n  %12s %12s %12s %12s   (NCCL all-reduce, float sum, rank 0)\n", "size",
	        "time (us)", "algbw GB/s", "busbw GB/s");
	for (i = 0; i < z->nsizes; i++) {
		char sz[32];

		rdzv_bw_format_size(z->size[i].bytes, sz, sizeof(sz));
		fprintf(f, "  %12s %12.1f %12.2f %12.2f\n", sz, z->size[i].us, z->size[i].algbw,
		        z->size[i].busbw);
	}
}

static void rank_table(FILE *f, const struct pf_run *run)
{
	uint32_t r;
	size_t i;

	fprintf(f, "\n");
	for (r = 0; r < run->world; r++) {
		const struct pf_report *p = &run->reports[r];

		fprintf(f, "  rank %u: %s local %u/%u cpus %s gpu %s%s%s cvd %s nics %s\n", r, p->host,
		        p->local_rank, p->local_world, p->cpus, p->gpu_busid[0] ? p->gpu_busid : "-",
		        p->gpu_note[0] ? " " : "", p->gpu_note, p->cvd_set ? p->cvd : "(unset)",
		        p->nics[0] ? p->nics : "-");
		for (i = 0; i < p->nvars; i++)
			fprintf(f, "    %s=%s\n", p->vars[i].name, p->vars[i].value);
		if (run->results)
			fprintf(f, "    ring: %s link %.2f GB/s, all-reduce %.3f ms%s%s\n",
			        run->results[r].ring_ok ? "ok" : "FAILED", run->results[r].link_gbps,
			        run->results[r].ring_seconds * 1e3, run->results[r].ring_err[0] ? ": " : "",
			        run->results[r].ring_err);
	}
}

void pf_summary_print(FILE *f, const struct pf_run *run, const struct pf_verdict *v)
{
	size_t i, j, k;

	fprintf(f, PF_TAG ": %u rank%s, MASTER_ADDR=%s MASTER_PORT=%u, %s\n", run->world,
	        run->world == 1 ? "" : "s", run->env->master_addr, run->env->master_port,
	        pf_gpu_build());
	for (i = 0; i < v->nchecks; i++) {
		const struct pf_check *c = &v->check[i];

		fprintf(f, "  %s  %-10s  %s\n", status_name(c->status), c->name, c->text);
		for (j = 0; j < c->ndetails; j++)
			if (c->status != PF_PASS || run->opts->verbose)
				fprintf(f, "        %s\n", c->details[j]);
	}
	if (run->reports) {
		node_table(f, run);
		for (k = 0; k < PF_GPU_TABLES; k++)
			gpu_table(f, run, k);
		if (run->results)
			sweep_table(f, run);
		if (run->opts->verbose)
			rank_table(f, run);
	}
	if (v->failed) {
		fprintf(f, PF_TAG ": FAIL: %d check%s failed:", v->failed, v->failed > 1 ? "s" : "");
		for (i = 0; i < v->nchecks; i++)
			if (v->check[i].status == PF_FAIL)
				fprintf(f, " %s", v->check[i].name);
		fprintf(f, "\n");
	} else {
		fprintf(f, PF_TAG ": PASS: every check passed\n");
	}
	fflush(f);
}

/* ------------------------------------------------------------------ JSON */

static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void jnum(FILE *f, double x)
{
	/* JSON has no NaN or infinity. */
	if (x != x || x > 1e300 || x < -1e300)
		fputs("null", f);
	else
		fprintf(f, "%.6g", x);
}

static void json_rank(FILE *f, const struct pf_run *run, uint32_t r)
{
	const struct pf_report *p = &run->reports[r];
	const struct pf_gpu_table *t;
	size_t i;

	fprintf(f, "{\"rank\":%u,\"host\":", r);
	jstr(f, p->host);
	fprintf(f, ",\"local_rank\":%u,\"local_world_size\":%u,\"cpus\":", p->local_rank,
	        p->local_world);
	jstr(f, p->cpus);
	fputs(",\"nics\":", f);
	jstr(f, p->nics);
	fputs(",\"cuda_visible_devices\":", f);
	if (p->cvd_set)
		jstr(f, p->cvd);
	else
		fputs("null", f);
	fprintf(f, ",\"gpu\":{\"count\":%d,\"index\":%d,\"busid\":", p->gpu_count, p->gpu_index);
	jstr(f, p->gpu_busid);
	fputs(",\"name\":", f);
	jstr(f, p->gpu_name);
	fputs(",\"note\":", f);
	jstr(f, p->gpu_note);
	fputs("},\"env\":{", f);
	for (i = 0; i < p->nvars; i++) {
		fputs(i ? "," : "", f);
		jstr(f, p->vars[i].name);
		fputc(':', f);
		jstr(f, p->vars[i].value);
	}
	fputc('}', f);
	for (t = pf_gpu_tables; t < pf_gpu_tables + PF_GPU_TABLES; t++) {
		if (!*PF_CONST_AT(p, t->read_at, int))
			continue;
		fprintf(f, ",\"%s\":{\"%s\":", t->line_key, t->json_node);
		jstr(f, PF_CONST_AT(p, t->node_at, char));
		fprintf(f, ",\"%s\":%s,\"why\":", t->json_ok,
		        *PF_CONST_AT(p, t->ok_at, int) ? "true" : "false");
		jstr(f, PF_CONST_AT(p, t->why_at, char));
		fputs(",\"gpus\":[", f);
		for (i = 0; i < *PF_CONST_AT(p, t->n_at, size_t); i++) {
			fputs(i ? "," : "", f);
			jstr(f, PF_GPU_LINE(p, t, i));
		}
		fputs("]}", f);
	}
	fputs(",\"problems\":[", f);
	for (i = 0; i < p->nproblems + p->nnet; i++) {
		fputs(i ? "," : "", f);
		jstr(f, i < p->nproblems ? p->problems[i] : p->net[i - p->nproblems]);
	}
	fputc(']', f);
	if (run->results) {
		const struct pf_result *z = &run->results[r];

		fprintf(f, ",\"ring\":{\"ok\":%s,\"bytes\":%llu,\"link_gbps\":", z->ring_ok ? "true" : "false",
		        (unsigned long long)z->ring_bytes);
		jnum(f, z->link_gbps);
		fputs(",\"seconds\":", f);
		jnum(f, z->ring_seconds);
		fputs(",\"algbw_gbps\":", f);
		jnum(f, z->ring_algbw);
		fputs(",\"busbw_gbps\":", f);
		jnum(f, z->ring_busbw);
		fputs(",\"error\":", f);
		jstr(f, z->ring_err);
		fprintf(f, "},\"nccl\":{\"ran\":%s,\"ok\":%s,\"error\":", z->gpu_ran ? "true" : "false",
		        z->gpu_ok ? "true" : "false");
		jstr(f, z->gpu_err);
		fputs(",\"node_busbw_gbps\":", f);
		if (z->node_busbw >= 0)
			jnum(f, z->node_busbw);
		else
			fputs("null", f);
		fputs(",\"sizes\":[", f);
		for (i = 0; i < z->nsizes; i++) {
			fprintf(f, "%s{\"bytes\":%llu,\"time_us\":", i ? "," : "",
			        (unsigned long long)z->size[i].bytes);
			jnum(f, z->size[i].us);
			fputs(",\"algbw_gbps\":", f);
			jnum(f, z->size[i].algbw);
			fputs(",\"busbw_gbps\":", f);
			jnum(f, z->size[i].busbw);
			fprintf(f, ",\"checked\":%s}", z->size[i].ok ? "true" : "false");
		}
		fputs("]}", f);
	}
	fputc('}', f);
}

void pf_json_print(FILE *f, const struct pf_run *run, const struct pf_verdict *v)
{
	size_t i, j;
	uint32_t r;

	fprintf(f, "{\"ok\":%s,\"world_size\":%u,\"master_addr\":", v->failed ? "false" : "true",
	        run->world);
	jstr(f, run->env->master_addr);
	fprintf(f, ",\"master_port\":%u,\"build\":", run->env->master_port);
	jstr(f, pf_gpu_build());
	fputs(",\"join_seconds\":", f);
	jnum(f, run->join_seconds);
	fputs(",\"gpu_path\":", f);
	fputs(run->plan && run->plan->gpu ? "true" : "false", f);
	fputs(",\"checks\":[", f);
	for (i = 0; i < v->nchecks; i++) {
		const struct pf_check *c = &v->check[i];

		fprintf(f, "%s{\"name\":", i ? "," : "");
		jstr(f, c->name);
		fputs(",\"status\":", f);
		jstr(f, status_name(c->status));
		fputs(",\"text\":", f);
		jstr(f, c->text);
		fputs(",\"details\":[", f);
		for (j = 0; j < c->ndetails; j++) {
			fputs(j ? "," : "", f);
			jstr(f, c->details[j]);
		}
		fputs("]}", f);
	}
	fputs("],\"ranks\":[", f);
	for (r = 0; run->reports && r < run->world; r++) {
		fputs(r ? "," : "", f);
		json_rank(f, run, r);
	}
	fputs("]}\n", f);
	fflush(f);
}

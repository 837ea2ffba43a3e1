/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-domain.c: NVLink domains. RDZV_STEP_DOMAINS is read in slurmstepd
 * from the job's environment, which a user can set; the block text comes
 * from Slurm's topology print in srun. Input: the first line is a domain
 * map, the second a step node list (and, for the map, the step's tasks per
 * node), the rest Slurm's block text. Invariants: an accepted map covers
 * every node once and formats back to a text that parses to the same map
 * (one byte short is refused); a node's place in its domain is inside the
 * domain, and with the second line as the tasks per node it is accepted
 * only when layout.c's reader accepts that line for the map's nodes, with
 * the sizes the line gives; the block reader either refuses or gives every
 * node of the list a domain whose name is short and whose map round-trips;
 * the group check never reads outside the step; the datagrams of
 * nvlink_domain=nvml (a node's report, srun's verdict, read from the
 * network) and the channel's variable (channel.h: RDZV_DOMAIN_ASK,
 * RDZV_HANG_ASK, RDZV_STEP_REPORT's head) parse or are refused, and what
 * parses formats back to the same bytes; the nonce's hex reader takes at
 * most 16 digits. */
#include "config.h"
#include "fuzz.h"
#include "domain.h"
#include "domain_verdict.h"
#include "layout.h"
#include "channel.h"

#include <stdlib.h>
#include <string.h>

/* Node 0's place with a tasks-per-node string from the input: accepted only
 * when layout.c's reader accepts it for the map's nodes, and then the sizes
 * are the string's own. */
static void place(const struct rdzv_domains *d, const char *tpn)
{
	uint32_t per[64], sz = 0, base = 0, nodes = 0, tn, i, want_sz = 0, want_nodes = 0;
	uint64_t tt;
	char err[256];
	int rc = rdzv_domain_place(d, 0, "", tpn, &sz, &base, &nodes, err, sizeof(err));

	if (rdzv_tpn_totals(tpn, &tn, &tt, NULL, 0) < 0 || tn != d->nnodes) {
		FUZZ_ASSERT(rc < 0);
		return;
	}
	if (rc < 0)
		return; /* a name given to two domains */
	FUZZ_ASSERT(d->nnodes <= 64 && rdzv_tpn_expand(tpn, per, d->nnodes, NULL, 0) == 0);
	for (i = 0; i < d->nnodes; i++)
		if (d->node_domain[i] == d->node_domain[0]) {
			want_sz += per[i];
			want_nodes++;
		}
	FUZZ_ASSERT(sz == want_sz && nodes == want_nodes && base == 0);
}

static void round_trip(const struct rdzv_domains *d, uint32_t job, uint32_t step)
{
	struct rdzv_domains again;
	uint32_t j2 = 0, s2 = 0, i;
	char err[256];
	char *text = NULL;

	/* Any map formats (sized to its text, no cap) and parses back. */
	FUZZ_ASSERT(rdzv_domains_text(job, step, d, &text, err, sizeof(err)) == 0 && text);
	FUZZ_ASSERT(rdzv_domains_parse(text, d->nnodes, &j2, &s2, &again, err, sizeof(err)) == 0);
	FUZZ_ASSERT(j2 == job && s2 == step && again.nnodes == d->nnodes);
	for (i = 0; i < d->nnodes; i++)
		FUZZ_ASSERT(strcmp(again.names[again.node_domain[i]], d->names[d->node_domain[i]])
		            == 0);
	FUZZ_ASSERT(rdzv_domains_format(job, step, d, text, strlen(text)) < 0);
	rdzv_domains_free(&again);
	free(text);
}

/* Every line a node's report of its domain under nvlink_domain=nvml (""
 * for no fabric): srun's domains from them hold every node once, in one
 * domain each, the domains' nodes adding up to the step's. */
static void reports(const struct fuzz_pieces *p)
{
	uint32_t n = p->n > 256 ? 256 : (uint32_t)p->n, i, sum = 0;
	char (*names)[RDZV_DOMAIN_NAME_MAX];
	char **node_names;
	struct rdzv_domains d;
	char err[256];

	if (n == 0)
		return;
	names = calloc(n, sizeof(*names));
	node_names = calloc(n, sizeof(char *));
	FUZZ_ASSERT(names && node_names);
	for (i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "%s", p->v[i]);
		node_names[i] = p->v[(i + 1) % n];
	}
	if (rdzv_domains_from_reports(n, (const char(*)[RDZV_DOMAIN_NAME_MAX])names, node_names, &d,
	                              err, sizeof(err)) == 0) {
		FUZZ_ASSERT(d.nnodes == n && d.ndomains >= 1 && d.ndomains <= n);
		for (i = 0; i < n; i++)
			FUZZ_ASSERT(d.node_domain[i] < d.ndomains);
		for (i = 0; i < d.ndomains; i++) {
			FUZZ_ASSERT(d.domain_nodes[i] >= 1);
			sum += d.domain_nodes[i];
		}
		FUZZ_ASSERT(sum == n);
		rdzv_domains_free(&d);
	}
	free(names);
	free(node_names);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_pieces p;
	struct rdzv_domains d;
	char err[256];
	uint32_t job = 0, step = 0, i, nnodes;

	{
		struct rdzv_domain_report r, r2;
		char buf[RDZV_DOMAIN_DGRAM_MAX + 1], msg[64];
		uint64_t nonce;
		int v;

		if (rdzv_domain_report_parse((const char *)data, size, &r) == 0) {
			FUZZ_ASSERT(strlen(r.name) < RDZV_DOMAIN_NAME_MAX);
			FUZZ_ASSERT(rdzv_domain_report_format(&r, buf, sizeof(buf)) == 0);
			FUZZ_ASSERT(rdzv_domain_report_parse(buf, strlen(buf), &r2) == 0
			            && r2.job_id == r.job_id && r2.step_id == r.step_id
			            && r2.nonce == r.nonce && r2.node_id == r.node_id
			            && strcmp(r2.name, r.name) == 0);
		}
		v = rdzv_domain_verdict_parse((const char *)data, size, 7, 3, 0x1234, msg, sizeof(msg));
		FUZZ_ASSERT(v >= -1 && v <= 1);
		if (v == 0)
			FUZZ_ASSERT(strlen(msg) < sizeof(msg));
		if (size < sizeof(buf)) {
			memcpy(buf, data, size);
			buf[size] = '\0';
			struct rdzv_channel_addr a;
			const char *rest = NULL;

			if (rdzv_channel_var_parse(buf, &a, NULL) == 0) {
				char again[RDZV_CHANNEL_VAR_MAX];

				FUZZ_ASSERT(rdzv_channel_var_format(&a, again, sizeof(again)) == 0);
				FUZZ_ASSERT(strcmp(again, buf) == 0 || strchr(buf, '0') != NULL);
				FUZZ_ASSERT(rdzv_channel_var_parse(again, &a, &rest) == 0 && !*rest);
			}
			if (rdzv_channel_var_parse(buf, &a, &rest) == 0)
				FUZZ_ASSERT(rest >= buf + 22 && rest <= buf + strlen(buf));
			if (rdzv_hex64(buf, strlen(buf), &nonce) == 0)
				FUZZ_ASSERT(strlen(buf) <= 16);
		}
	}
	if (fuzz_split(data, size, &p) < 0)
		return 0;
	/* a step of 1..64 nodes, from the input's length */
	nnodes = (uint32_t)(size % 64) + 1;
	if (rdzv_domains_parse(p.v[0], nnodes, &job, &step, &d, err, sizeof(err)) == 0) {
		uint32_t *rank_node = calloc(nnodes * 2, sizeof(uint32_t));
		uint32_t sz, base, nodes;

		FUZZ_ASSERT(d.nnodes == nnodes && d.ndomains >= 1 && d.ndomains <= nnodes);
		for (i = 0; i < nnodes; i++)
			FUZZ_ASSERT(d.node_domain[i] < d.ndomains
			            && strlen(d.names[d.node_domain[i]]) < RDZV_DOMAIN_NAME_MAX);
		round_trip(&d, job, step);
		if (rdzv_domain_place(&d, 0, "", "2(x64)", &sz, &base, &nodes, err, sizeof(err)) == 0)
			FUZZ_ASSERT(base < sz && nodes >= 1 && nodes <= nnodes);
		if (p.n >= 2)
			place(&d, p.v[1]);
		FUZZ_ASSERT(rank_node != NULL);
		for (i = 0; i < nnodes * 2; i++)
			rank_node[i] = i / 2;
		(void)rdzv_domain_check_groups(&d, nnodes * 2, rank_node, NULL, 1, 2, "TP=2", err,
		                               sizeof(err));
		if (nnodes % 2 == 0)
			(void)rdzv_domain_check_groups(&d, nnodes * 2, rank_node, NULL, 2, 2, "CP=2",
			                               err, sizeof(err));
		free(rank_node);
		rdzv_domains_free(&d);
	}
	if (p.n >= 3) {
		/* the rest of the input, lines joined back, as Slurm's block text */
		size_t len = 0;
		char *text;

		for (i = 2; i < (uint32_t)p.n; i++)
			len += strlen(p.v[i]) + 1;
		text = malloc(len + 1);
		FUZZ_ASSERT(text != NULL);
		text[0] = '\0';
		for (i = 2; i < (uint32_t)p.n; i++) {
			strcat(text, p.v[i]);
			strcat(text, "\n");
		}
		if (rdzv_domains_from_blocks(text, p.v[1], &d, err, sizeof(err)) == 0) {
			FUZZ_ASSERT(d.nnodes >= 1 && d.ndomains >= 1 && d.ndomains <= d.nnodes);
			for (i = 0; i < d.nnodes; i++)
				FUZZ_ASSERT(d.node_domain[i] < d.ndomains);
			if (d.nnodes <= 4096)
				round_trip(&d, 1, 2);
			rdzv_domains_free(&d);
		}
		free(text);
	}
	reports(&p);
	fuzz_pieces_free(&p);
	return 0;
}

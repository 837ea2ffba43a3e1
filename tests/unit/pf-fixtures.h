/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pf-fixtures.h: rdzv-preflight's verdict as the unit tests build and read
 * it (header only, after preflight.h and tap.h): a rank's report, a run
 * over reports, and a check of the verdict looked up by name. The test
 * defines the opts and env every run points at. */
#ifndef RDZV_PF_FIXTURES_H
#define RDZV_PF_FIXTURES_H

#include <stdio.h>
#include <string.h>

static struct pf_opts opts;
static struct pf_env env;

/* A rank's report: busid names its GPU (one of four on the node), NULL a
 * rank without one. */
static inline void pf_mk(struct pf_report *r, uint32_t rank, uint32_t world, const char *host,
                         uint32_t local, uint32_t lworld, const char *busid)
{
	memset(r, 0, sizeof(*r));
	r->rank = rank;
	r->world = world;
	r->local_rank = local;
	r->local_world = lworld;
	snprintf(r->host, sizeof(r->host), "%s", host);
	snprintf(r->master_addr, sizeof(r->master_addr), "n1");
	r->master_port = 29500;
	r->gpu_count = busid ? 4 : 0;
	r->gpu_index = busid ? (int)local : -1;
	if (busid)
		snprintf(r->gpu_busid, sizeof(r->gpu_busid), "%s", busid);
}

static inline const struct pf_check *find(const struct pf_verdict *v, const char *name)
{
	size_t i;

	for (i = 0; i < v->nchecks; i++)
		if (strcmp(v->check[i].name, name) == 0)
			return &v->check[i];
	return NULL;
}

static inline int has_detail(const struct pf_check *c, const char *needle)
{
	size_t i;

	for (i = 0; c && i < c->ndetails; i++)
		if (strstr(c->details[i], needle))
			return 1;
	return 0;
}

static inline void run_init(struct pf_run *run, struct pf_report *reps, uint32_t world)
{
	memset(run, 0, sizeof(*run));
	run->opts = &opts;
	run->env = &env;
	run->world = world;
	run->reports = reps;
}

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-profile.c: the profile parser, includes and the resolver
 * (lib/profile/profile.h), on profile directories held in memory.
 * Input: the first line is the choice "USER|PARTITION|SITE|PARTITION_MAP|NNODES"
 * (missing fields are empty; NNODES is the step's node count, its decimal
 * digits read modulo 2^32, empty = 0); then files, each starting with a line
 * "@@ NAME"; text before the first "@@ " line is profile "a".
 * Invariants: parse returns 0 with a document or -1 with "NAME.profile:"
 * leading the message; a parsed document holds only valid variable names,
 * values exactly for default/enforce, the multinode qualifier only on
 * those and unset, and no name of a strict family (NCCL_, RCCL_, HSA_,
 * FI_CXI_) that is neither known nor declared; loading terminates (cycles,
 * depth) and a loaded profile's entries are valid, a variable having one
 * entry for every step or a multi-node one (with at most one single-node
 * one beside it); pick fills only valid names; after a successful resolve
 * for NNODES nodes every enforce/unset entry of the default profile that
 * applies to that many nodes is in the result with its policy and value
 * (the user cannot escape them), no entry of the chosen profile that does
 * not apply to it is there under the chosen profile's name, and
 * every entry of the result has a valid name; the result's enforce/unset
 * entries survive the trip through RDZV_NCCL_POLICY unchanged, and decoding
 * the raw input as a policy never fails but for memory. */
#include "config.h"
#include "fuzz.h"
#include "envset.h"
#include "nccl_vars.h"
#include "profile.h"
#include "profile_policy.h"

#define FILES_MAX 16

struct mem_dir {
	const char *name[FILES_MAX];
	const char *text[FILES_MAX];
	size_t len[FILES_MAX];
	int n;
};

static int mem_read(const void *ctx, const char *name, char **text, size_t *len, char *where,
                    size_t wherelen, char *err, size_t errlen)
{
	const struct mem_dir *d = ctx;
	int i;

	for (i = 0; i < d->n; i++)
		if (strcmp(d->name[i], name) == 0) {
			snprintf(where, wherelen, "%s.profile", name);
			if (!(*text = malloc(d->len[i] + 1)))
				return -1;
			memcpy(*text, d->text[i], d->len[i]);
			(*text)[d->len[i]] = '\0';
			*len = d->len[i];
			return 0;
		}
	snprintf(err, errlen, "%s.profile: no such profile", name);
	return -1;
}

static void check_doc(const struct rdzv_profile_doc *doc)
{
	size_t i, j;

	for (i = 0; i < doc->n; i++) {
		const struct rdzv_pline *l = &doc->v[i];

		FUZZ_ASSERT(l->name && l->line >= 1);
		if (l->kind == RDZV_PL_INCLUDE) {
			FUZZ_ASSERT(rdzv_profile_name_check(l->name, NULL, 0) == 0);
			continue;
		}
		if (l->kind == RDZV_PL_REQUIRE) {
			FUZZ_ASSERT(strcmp(l->name, "mnnvl") == 0 && !l->value);
			continue;
		}
		FUZZ_ASSERT(rdzv_env_name_valid(l->name));
		FUZZ_ASSERT((l->kind == RDZV_PL_DEFAULT || l->kind == RDZV_PL_ENFORCE) == !!l->value);
		FUZZ_ASSERT(!l->multinode || l->kind == RDZV_PL_DEFAULT || l->kind == RDZV_PL_ENFORCE
		            || l->kind == RDZV_PL_UNSET);
		if (l->kind == RDZV_PL_KNOWN) {
			FUZZ_ASSERT(rdzv_var_family_of(l->name));
			continue;
		}
		FUZZ_ASSERT(!rdzv_var_family_miscased(l->name));
		if (!rdzv_var_family_of(l->name) || !rdzv_var_family_of(l->name)->strict
		    || rdzv_var_find(l->name))
			continue;
		for (j = 0; j < doc->n; j++)
			if (doc->v[j].kind == RDZV_PL_KNOWN && strcmp(doc->v[j].name, l->name) == 0)
				break;
		FUZZ_ASSERT(j < doc->n);
	}
}

static void check_profile(const struct rdzv_profile *p)
{
	size_t i, j;

	for (i = 0; i < p->n; i++) {
		int any = 0, multi = 0, single = 0;

		FUZZ_ASSERT(rdzv_env_name_valid(p->v[i].name));
		FUZZ_ASSERT((p->v[i].policy == RDZV_SET_UNSET) == !p->v[i].value);
		FUZZ_ASSERT(p->v[i].where[0]);
		for (j = 0; j < p->n; j++) {
			if (strcmp(p->v[i].name, p->v[j].name) != 0)
				continue;
			any += p->v[j].scope == RDZV_SCOPE_ANY;
			multi += p->v[j].scope == RDZV_SCOPE_MULTI;
			single += p->v[j].scope == RDZV_SCOPE_SINGLE;
		}
		/* one entry for every step, or a multi-node one with at most one
		 * single-node one beside it */
		FUZZ_ASSERT((any == 1 && !multi && !single)
		            || (!any && multi == 1 && single <= 1));
		/* a step on several nodes sees one of them */
		FUZZ_ASSERT(rdzv_profile_find_for(p, p->v[i].name, 2) != NULL);
	}
}

static void check_policy(const struct rdzv_envset *set)
{
	static char buf[RDZV_VALUE_MAX];
	struct rdzv_nccl_policy *p;
	size_t j;

	if (rdzv_policy_encode(set, buf, sizeof(buf), NULL, 0) < 0)
		return;
	if (!(p = rdzv_policy_decode(buf)))
		return;
	for (j = 0; j < set->n; j++) {
		const struct rdzv_env_entry *e = &set->v[j];
		const char *v;
		int r = rdzv_policy_get(p, e->name, &v);

		if (e->policy == RDZV_SET_DEFAULT)
			FUZZ_ASSERT(r == 0);
		else if (e->policy == RDZV_SET_UNSET)
			FUZZ_ASSERT(r == 2 && !v);
		else
			FUZZ_ASSERT(r == 1 && v && strcmp(v, e->value) == 0);
	}
	rdzv_policy_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem_dir d;
	struct rdzv_profile_source src = { mem_read, &d };
	struct rdzv_profile_pick pick;
	struct rdzv_profile_needs needs;
	struct rdzv_envset *set = NULL;
	struct rdzv_notes notes;
	char *buf, *p, *end, *field[5] = { NULL, NULL, NULL, NULL, NULL }, err[1024], fname[128];
	unsigned nnodes = 0;
	int i, k, rc;

	if (!(buf = malloc(size + 1)))
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	end = buf + size;
	memset(&d, 0, sizeof(d));
	/* the choice line */
	p = memchr(buf, '\n', size);
	if (p)
		*p++ = '\0';
	else
		p = end;
	field[0] = buf;
	for (k = 1; k < 5 && field[k - 1]; k++)
		if ((field[k] = strchr(field[k - 1], '|')))
			*field[k]++ = '\0';
	for (k = 0; field[4] && field[4][k] >= '0' && field[4][k] <= '9'; k++)
		nnodes = nnodes * 10u + (unsigned)(field[4][k] - '0');
	/* the files */
	if (p < end && strncmp(p, "@@ ", 3) != 0) {
		d.name[0] = "a";
		d.text[0] = p;
		d.n = 1;
	}
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *next;

		if (strncmp(p, "@@ ", 3) == 0 && d.n < FILES_MAX) {
			if (nl)
				*nl = '\0';
			d.name[d.n] = p + 3;
			d.text[d.n] = nl ? nl + 1 : end;
			d.n++;
		}
		next = nl ? nl + 1 : end;
		/* the previous file ends where the next "@@ " line starts */
		if (next < end && strncmp(next, "@@ ", 3) == 0)
			next[-1] = '\0';
		p = next;
	}
	for (i = 0; i < d.n; i++)
		d.len[i] = strlen(d.text[i]);

	rdzv_notes_init(&notes);
	for (i = 0; i < d.n; i++) {
		struct rdzv_profile_doc *doc = NULL;

		snprintf(fname, sizeof(fname), "%.100s.profile", d.name[i]);
		err[0] = '\0';
		rc = rdzv_profile_parse(d.text[i], d.len[i], fname, &doc, &notes, err, sizeof(err));
		FUZZ_ASSERT(rc == 0 || rc == -1);
		FUZZ_ASSERT((rc == 0) == (doc != NULL));
		if (rc < 0)
			FUZZ_ASSERT(strncmp(err, fname, strlen(fname)) == 0 || strstr(err, "memory"));
		else
			check_doc(doc);
		rdzv_profile_doc_destroy(doc);
	}
	for (i = 0; i < d.n; i++) {
		struct rdzv_profile *pr = NULL;

		rc = rdzv_profile_load(&src, d.name[i], &pr, &notes, err, sizeof(err));
		FUZZ_ASSERT((rc == 0) == (pr != NULL));
		if (pr)
			check_profile(pr);
		rdzv_profile_destroy(pr);
	}

	rc = rdzv_profile_pick(field[0], field[1], field[2], field[3], &pick, err, sizeof(err));
	FUZZ_ASSERT(rc == 0 || rc == -1);
	if (rc == 0 && (set = rdzv_envset_create())) {
		FUZZ_ASSERT(!pick.chosen[0] || rdzv_profile_name_check(pick.chosen, NULL, 0) == 0);
		FUZZ_ASSERT(!pick.deflt[0] || rdzv_profile_name_check(pick.deflt, NULL, 0) == 0);
		FUZZ_ASSERT(pick.nnodes == 0);
		pick.nnodes = nnodes;
		if (rdzv_profile_resolve_needs(&pick, &src, set, &needs, NULL, err, sizeof(err)) == 0) {
			FUZZ_ASSERT(!needs.mnnvl || strstr(needs.mnnvl_where, ".profile:"));
			struct rdzv_profile *df = NULL;
			size_t j;

			for (j = 0; j < set->n; j++)
				FUZZ_ASSERT(rdzv_env_name_valid(set->v[j].name));
			if (pick.deflt[0]
			    && rdzv_profile_load(&src, pick.deflt, &df, NULL, err, sizeof(err)) == 0) {
				for (j = 0; j < df->n; j++) {
					const struct rdzv_profile_entry *e = &df->v[j];
					const struct rdzv_env_entry *r = rdzv_envset_find(set, e->name);

					if (e->policy == RDZV_SET_DEFAULT
					    || !rdzv_profile_entry_applies(e, nnodes))
						continue;
					FUZZ_ASSERT(r && r->policy == e->policy);
					FUZZ_ASSERT(!e->value || (r->value && strcmp(r->value, e->value) == 0));
				}
			}
			rdzv_profile_destroy(df);
			df = NULL;
			/* the chosen profile: what does not apply to this many
			 * nodes is not in the result under its name, unless a
			 * line that does apply set the same variable */
			if (pick.chosen[0]
			    && rdzv_profile_load(&src, pick.chosen, &df, NULL, err, sizeof(err)) == 0) {
				char origin[48];

				snprintf(origin, sizeof(origin), "profile %.39s", df->name);
				for (j = 0; j < df->n; j++) {
					const struct rdzv_profile_entry *e = &df->v[j];
					const struct rdzv_env_entry *r = rdzv_envset_find(set, e->name);

					if (rdzv_profile_entry_applies(e, nnodes)
					    || rdzv_profile_find_for(df, e->name, nnodes))
						continue;
					FUZZ_ASSERT(!r || strcmp(r->origin, origin) != 0);
				}
			}
			rdzv_profile_destroy(df);
			check_policy(set);
		}
		rdzv_envset_destroy(set);
	}
	{
		/* the raw input as a policy variable, as the NCCL plugin reads it */
		char *raw = fuzz_string(data, size);
		struct rdzv_nccl_policy *pol = raw ? rdzv_policy_decode(raw) : NULL;
		const char *v;

		if (pol)
			FUZZ_ASSERT(rdzv_policy_get(pol, "NCCL_IB_HCA", &v) >= 0);
		rdzv_policy_free(pol);
		free(raw);
	}
	rdzv_notes_clear(&notes);
	free(buf);
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/profile/: site NCCL profiles: the files, their variables, which one
 * applies. Uses lib/common/. */
/* profile_resolve.c: a profile with its includes, which profile applies to
 * a step, and what that means for its tasks (see profile.h for the rules);
 * the text of --nccl-profile=list (shared by srun and the admin's helper,
 * so both show the same thing). */
#include "config.h"
#include "profile.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- loading with includes ---- */

void rdzv_profile_destroy(struct rdzv_profile *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++) {
		free(p->v[i].name);
		free(p->v[i].value);
	}
	free(p->v);
	free(p->description);
	free(p);
}

static struct rdzv_profile_entry *entry_find(const struct rdzv_profile *p, const char *var)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (strcmp(p->v[i].name, var) == 0)
			return &p->v[i];
	return NULL;
}

static struct rdzv_profile_entry *entry_find_scope(const struct rdzv_profile *p, const char *var,
                                                   enum rdzv_scope scope)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->v[i].scope == scope && strcmp(p->v[i].name, var) == 0)
			return &p->v[i];
	return NULL;
}

const struct rdzv_profile_entry *rdzv_profile_find(const struct rdzv_profile *p,
                                                   const char *var)
{
	return p && var ? entry_find(p, var) : NULL;
}

int rdzv_profile_entry_applies(const struct rdzv_profile_entry *e, unsigned nnodes)
{
	switch (e->scope) {
	case RDZV_SCOPE_ANY:
		return 1;
	case RDZV_SCOPE_MULTI:
		return nnodes > 1;
	case RDZV_SCOPE_SINGLE:
		return nnodes <= 1;
	}
	return 0;
}

const struct rdzv_profile_entry *rdzv_profile_find_for(const struct rdzv_profile *p,
                                                       const char *var, unsigned nnodes)
{
	size_t i;

	if (!p || !var)
		return NULL;
	for (i = 0; i < p->n; i++)
		if (strcmp(p->v[i].name, var) == 0 && rdzv_profile_entry_applies(&p->v[i], nnodes))
			return &p->v[i];
	return NULL;
}

static struct rdzv_profile_entry *entry_find_after(const struct rdzv_profile *p,
                                                   const struct rdzv_profile_entry *e,
                                                   const char *var)
{
	size_t i;

	for (i = (size_t)(e - p->v) + 1; i < p->n; i++)
		if (strcmp(p->v[i].name, var) == 0)
			return &p->v[i];
	return NULL;
}

static void entry_free(struct rdzv_profile_entry *e)
{
	free(e->name);
	free(e->value);
	e->name = e->value = NULL;
}

/* Drop the entry e of p (keeping the order of the others). */
static void entry_drop(struct rdzv_profile *p, struct rdzv_profile_entry *e)
{
	size_t i = (size_t)(e - p->v);

	entry_free(e);
	memmove(&p->v[i], &p->v[i + 1], (p->n - i - 1) * sizeof(p->v[0]));
	p->n--;
}

/* Set var in p as a later line does: for every step (scope ANY: whatever
 * the profile said about var before is replaced), or for steps on several
 * nodes (MULTI: what it said for every step now holds on one node only,
 * SINGLE). A replaced entry keeps its position: the order in which
 * variables first appeared. */
static int entry_set(struct rdzv_profile *p, const char *var, const char *value,
                     enum rdzv_policy policy, const char *where, int multinode)
{
	enum rdzv_scope scope = multinode ? RDZV_SCOPE_MULTI : RDZV_SCOPE_ANY;
	struct rdzv_profile_entry *e, *other;
	char *n = NULL, *v = NULL;

	if (!(n = strdup(var)) || (value && !(v = strdup(value)))) {
		free(n);
		return -1;
	}
	if (multinode) {
		if ((other = entry_find_scope(p, var, RDZV_SCOPE_ANY)))
			other->scope = RDZV_SCOPE_SINGLE;
		e = entry_find_scope(p, var, RDZV_SCOPE_MULTI);
	} else {
		/* The first entry keeps its place; a SINGLE/MULTI pair
		 * becomes one entry again. Dropping a later entry does not
		 * move e. */
		e = entry_find(p, var);
		while (e && (other = entry_find_after(p, e, var)))
			entry_drop(p, other);
	}
	if (!e) {
		if (p->n == p->cap) {
			size_t cap = p->cap ? p->cap * 2 : 16;
			struct rdzv_profile_entry *nv = realloc(p->v, cap * sizeof(*nv));

			if (!nv) {
				free(n);
				free(v);
				return -1;
			}
			p->v = nv;
			p->cap = cap;
		}
		e = &p->v[p->n++];
	} else {
		entry_free(e);
	}
	memset(e, 0, sizeof(*e));
	e->name = n;
	e->value = v;
	e->policy = policy;
	e->scope = scope;
	snprintf(e->where, sizeof(e->where), "%s", where);
	return 0;
}

struct load_state {
	const struct rdzv_profile_source *src;
	struct rdzv_notes *notes;
	const char *stack[RDZV_PROFILE_DEPTH_MAX + 1];
	int depth;
};

static void chain_text(const struct load_state *st, const char *last, char *buf, size_t len)
{
	size_t off = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < st->depth && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s -> ", st->stack[i]);
	if (off < len)
		snprintf(buf + off, len - off, "%s", last);
}

static int load_into(struct load_state *st, const char *name, struct rdzv_profile *p,
                     char **description, char *err, size_t errlen)
{
	struct rdzv_profile_doc *doc = NULL;
	char *text = NULL, where[RDZV_PROFILE_WHERE_MAX - 16], at[RDZV_PROFILE_WHERE_MAX];
	char chain[512];
	size_t len = 0, i;
	int rv = -1, k;

	if (rdzv_profile_name_check(name, err, errlen) < 0)
		return -1;
	where[0] = '\0';
	if (st->src->read(st->src->ctx, name, &text, &len, where, sizeof(where), err, errlen) < 0)
		return -1;
	if (rdzv_profile_parse(text, len, where, &doc, st->notes, err, errlen) < 0)
		goto fail;
	st->stack[st->depth++] = name;
	for (i = 0; i < doc->n; i++) {
		const struct rdzv_pline *l = &doc->v[i];
		int r = 0;

		snprintf(at, sizeof(at), "%s:%u", where, l->line);
		switch (l->kind) {
		case RDZV_PL_INCLUDE:
			for (k = 0; k < st->depth; k++)
				if (strcmp(st->stack[k], l->name) == 0) {
					chain_text(st, l->name, chain, sizeof(chain));
					rdzv_err(err, errlen, "%s: include cycle: %s", at, chain);
					st->depth--;
					goto fail;
				}
			if (st->depth >= RDZV_PROFILE_DEPTH_MAX) {
				chain_text(st, l->name, chain, sizeof(chain));
				rdzv_err(err, errlen, "%s: includes nested deeper than %d: %s", at,
				         RDZV_PROFILE_DEPTH_MAX, chain);
				st->depth--;
				goto fail;
			}
			if (load_into(st, l->name, p, NULL, err, errlen) < 0) {
				/* The innermost reason first (it survives truncation),
				 * then the chain of including lines. */
				if (err && errlen) {
					size_t el = strlen(err);

					snprintf(err + el, errlen - el, "%s%s",
					         strstr(err, "; included from ") ? " <- " : "; included from ",
					         at);
				}
				st->depth--;
				goto fail;
			}
			break;
		case RDZV_PL_DEFAULT:
			r = entry_set(p, l->name, l->value, RDZV_SET_DEFAULT, at, l->multinode);
			break;
		case RDZV_PL_ENFORCE:
			r = entry_set(p, l->name, l->value, RDZV_SET_ENFORCE, at, l->multinode);
			break;
		case RDZV_PL_UNSET:
			r = entry_set(p, l->name, NULL, RDZV_SET_UNSET, at, l->multinode);
			break;
		case RDZV_PL_KNOWN:
			break;
		case RDZV_PL_REQUIRE:
			/* Requirements only add up: an including profile cannot
			 * drop one its include makes. */
			if (!p->require_mnnvl) {
				p->require_mnnvl = 1;
				snprintf(p->require_mnnvl_where, sizeof(p->require_mnnvl_where), "%s", at);
			}
			break;
		}
		if (r < 0) {
			st->depth--;
			rdzv_err(err, errlen, "out of memory");
			goto fail;
		}
	}
	st->depth--;
	if (description && doc->description) {
		*description = doc->description;
		doc->description = NULL;
	}
	rv = 0;
fail:
	free(text);
	rdzv_profile_doc_destroy(doc);
	return rv;
}

int rdzv_profile_load(const struct rdzv_profile_source *src, const char *name,
                      struct rdzv_profile **out, struct rdzv_notes *notes, char *err,
                      size_t errlen)
{
	struct load_state st;
	struct rdzv_profile *p;

	*out = NULL;
	memset(&st, 0, sizeof(st));
	st.src = src;
	st.notes = notes;
	if (rdzv_profile_name_check(name, err, errlen) < 0)
		return -1;
	if (!(p = calloc(1, sizeof(*p))))
		return rdzv_err(err, errlen, "out of memory");
	snprintf(p->name, sizeof(p->name), "%s", name);
	if (load_into(&st, name, p, &p->description, err, errlen) < 0) {
		rdzv_profile_destroy(p);
		return -1;
	}
	*out = p;
	return 0;
}

/* ---- which profile applies ---- */

/* Check every PART:NAME item; with want, stop at want's item and copy its
 * profile name. Returns 1 found, 0 not found, -1 malformed. */
static int map_walk(const char *map, const char *want, char *name, size_t namelen, char *err,
                    size_t errlen)
{
	const char *p = map ? map : "";

	while (*p) {
		const char *end = strchr(p, ','), *colon;
		size_t ilen = end ? (size_t)(end - p) : strlen(p), plen, nlen;
		char item_name[RDZV_PROFILE_NAME_MAX + 2], why[256];

		colon = memchr(p, ':', ilen);
		if (!colon || colon == p || colon == p + ilen - 1)
			return rdzv_err(err, errlen, "partition_profile: '%.*s' is not PARTITION:PROFILE",
			                (int)(ilen > 64 ? 64 : ilen), p);
		plen = (size_t)(colon - p);
		nlen = ilen - plen - 1;
		if (nlen >= sizeof(item_name))
			return rdzv_err(err, errlen, "partition_profile: profile name for '%.*s' longer "
			                "than %d bytes", (int)(plen > 64 ? 64 : plen), p,
			                RDZV_PROFILE_NAME_MAX);
		memcpy(item_name, colon + 1, nlen);
		item_name[nlen] = '\0';
		if (rdzv_profile_name_check(item_name, why, sizeof(why)) < 0)
			return rdzv_err(err, errlen, "partition_profile: %s", why);
		if (memchr(p, ' ', plen) || memchr(p, '\t', plen))
			return rdzv_err(err, errlen, "partition_profile: blank in partition name '%.*s'",
			                (int)(plen > 64 ? 64 : plen), p);
		if (want && strlen(want) == plen && strncmp(want, p, plen) == 0) {
			if (rdzv_strlcpy(name, item_name, namelen) < 0)
				return rdzv_err(err, errlen, "profile name too long");
			return 1;
		}
		if (!end)
			break;
		p = end + 1;
		if (!*p)
			return rdzv_err(err, errlen, "partition_profile: trailing ','");
	}
	return 0;
}

int rdzv_partition_map_check(const char *map, char *err, size_t errlen)
{
	return map_walk(map, NULL, NULL, 0, err, errlen) < 0 ? -1 : 0;
}

/* partition is a list "gpu,debug": srun and salloc of Slurm before 24.11.3
 * set SLURM_JOB_PARTITION to the partitions requested, not the one the job
 * runs in (Slurm NEWS, 24.11.3). Which one it is cannot be told without
 * asking slurmctld; when every listed partition maps to the same profile (or
 * none maps), that is the answer whichever it runs in. */
static int lookup_list(const char *map, const char *list, char *name, size_t namelen,
                       char *err, size_t errlen)
{
	char first[RDZV_PROFILE_NAME_MAX + 2], one[RDZV_PROFILE_NAME_MAX + 2];
	char part[256];
	const char *p = list;
	int n = 0;

	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		int r;

		if (len == 0 || len >= sizeof(part))
			return rdzv_err(err, errlen, "SLURM_JOB_PARTITION '%.64s': empty or overlong "
			                "partition name", list);
		memcpy(part, p, len);
		part[len] = '\0';
		r = map_walk(map, part, one, sizeof(one), err, errlen);
		if (r < 0)
			return -1;
		if (r == 0)
			one[0] = '\0';
		if (n++ == 0)
			memcpy(first, one, sizeof(first));
		else if (strcmp(first, one) != 0)
			return RDZV_PARTITION_AMBIGUOUS;
		p = end ? end + 1 : p + len;
	}
	if (!first[0])
		return 0;
	if (rdzv_strlcpy(name, first, namelen) < 0)
		return rdzv_err(err, errlen, "profile name too long");
	return 1;
}

int rdzv_partition_map_lookup(const char *map, const char *partition, char *name,
                              size_t namelen, char *err, size_t errlen)
{
	int r;

	if (namelen)
		name[0] = '\0';
	/* Check the whole map first: a typo after the matching item must not
	 * go unnoticed until a job lands in another partition. */
	if (rdzv_partition_map_check(map, err, errlen) < 0)
		return -1;
	if (!partition || !*partition)
		return 0;
	if (strchr(partition, ','))
		return lookup_list(map, partition, name, namelen, err, errlen);
	r = map_walk(map, partition, name, namelen, err, errlen);
	return r;
}

const char *rdzv_pick_why_name(enum rdzv_pick_why why)
{
	switch (why) {
	case RDZV_PICK_NONE:
		return "no default";
	case RDZV_PICK_USER:
		return "--nccl-profile";
	case RDZV_PICK_PARTITION:
		return "partition default";
	case RDZV_PICK_SITE:
		return "site default";
	case RDZV_PICK_USER_NONE:
		return "--nccl-profile=none";
	}
	return "?";
}

int rdzv_profile_pick(const char *user, const char *partition, const char *site_default,
                      const char *partition_map, struct rdzv_profile_pick *pick,
                      char *err, size_t errlen)
{
	char part_name[RDZV_PROFILE_NAME_MAX + 1];
	int r;

	memset(pick, 0, sizeof(*pick));
	r = rdzv_partition_map_lookup(partition_map, partition, part_name, sizeof(part_name),
	                              err, errlen);
	if (r < 0)
		return -1;
	pick->partition_ambiguous = r == RDZV_PARTITION_AMBIGUOUS;
	if (r == 1) {
		snprintf(pick->deflt, sizeof(pick->deflt), "%s", part_name);
		pick->deflt_why = RDZV_PICK_PARTITION;
	} else if (site_default && *site_default) {
		if (rdzv_profile_name_check(site_default, err, errlen) < 0)
			return -1;
		snprintf(pick->deflt, sizeof(pick->deflt), "%s", site_default);
		pick->deflt_why = RDZV_PICK_SITE;
	}
	if (user && strcmp(user, "none") == 0) {
		pick->why = RDZV_PICK_USER_NONE;
	} else if (user && *user) {
		if (rdzv_profile_name_check(user, err, errlen) < 0)
			return -1;
		snprintf(pick->chosen, sizeof(pick->chosen), "%s", user);
		pick->why = RDZV_PICK_USER;
	} else if (pick->deflt[0]) {
		snprintf(pick->chosen, sizeof(pick->chosen), "%s", pick->deflt);
		pick->why = pick->deflt_why;
	}
	return 0;
}

static int add_entries(const struct rdzv_profile *p, int policy_only, unsigned nnodes,
                       const char *origin, struct rdzv_envset *out, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		const struct rdzv_profile_entry *e = &p->v[i];

		if ((policy_only && e->policy == RDZV_SET_DEFAULT)
		    || !rdzv_profile_entry_applies(e, nnodes))
			continue;
		if (rdzv_envset_add(out, e->name, e->value, e->policy, origin, err, errlen) < 0)
			return -1;
	}
	return 0;
}

static void add_needs(const struct rdzv_profile *p, struct rdzv_profile_needs *needs)
{
	if (!needs || !p->require_mnnvl || needs->mnnvl)
		return;
	needs->mnnvl = 1;
	snprintf(needs->mnnvl_where, sizeof(needs->mnnvl_where), "%s (profile %s)",
	         p->require_mnnvl_where, p->name);
}

int rdzv_profile_resolve(const struct rdzv_profile_pick *pick,
                         const struct rdzv_profile_source *src, struct rdzv_envset *out,
                         struct rdzv_notes *notes, char *err, size_t errlen)
{
	return rdzv_profile_resolve_needs(pick, src, out, NULL, notes, err, errlen);
}

int rdzv_profile_resolve_needs(const struct rdzv_profile_pick *pick,
                               const struct rdzv_profile_source *src, struct rdzv_envset *out,
                               struct rdzv_profile_needs *needs, struct rdzv_notes *notes,
                               char *err, size_t errlen)
{
	struct rdzv_profile *chosen = NULL, *deflt = NULL;
	char origin[48];
	int rv = -1;

	if (needs)
		memset(needs, 0, sizeof(*needs));
	if (pick->chosen[0]) {
		if (rdzv_profile_load(src, pick->chosen, &chosen, notes, err, errlen) < 0)
			goto fail;
		snprintf(origin, sizeof(origin), "profile %.39s", chosen->name);
		if (add_entries(chosen, 0, pick->nnodes, origin, out, err, errlen) < 0)
			goto fail;
		add_needs(chosen, needs);
	}
	if (pick->deflt[0] && strcmp(pick->deflt, pick->chosen) != 0) {
		/* The default's policy still holds: its enforce/unset entries go
		 * last, so that they replace the chosen profile's (envset lets an
		 * ENFORCE/UNSET replace anything). */
		if (rdzv_profile_load(src, pick->deflt, &deflt, notes, err, errlen) < 0)
			goto fail;
		snprintf(origin, sizeof(origin), "profile %.29s (default)", deflt->name);
		if (add_entries(deflt, 1, pick->nnodes, origin, out, err, errlen) < 0)
			goto fail;
		add_needs(deflt, needs);
	}
	rv = 0;
fail:
	rdzv_profile_destroy(chosen);
	rdzv_profile_destroy(deflt);
	return rv;
}

/* ---- the text of --nccl-profile=list ---- */

static const char *mark(const char *name, const struct rdzv_profile_pick *pick,
                        const char *site_default)
{
	if (pick->chosen[0] && strcmp(name, pick->chosen) == 0)
		return pick->why == RDZV_PICK_USER ? "chosen" : "applies";
	if (pick->deflt[0] && strcmp(name, pick->deflt) == 0)
		return "enforced entries apply";
	if (site_default && strcmp(name, site_default) == 0)
		return "site default";
	return NULL;
}

int rdzv_profile_print_list(FILE *out, const struct rdzv_profile_dir *d,
                            const struct rdzv_profile_pick *pick, const char *partition,
                            const char *site_default, const char *partition_map, char *err,
                            size_t errlen)
{
	struct rdzv_profile_source src = { rdzv_profile_dir_read, d };
	char **names = NULL, why[1024];
	int n, i;

	if ((n = rdzv_profile_dir_names(d, &names, err, errlen)) < 0)
		return -1;
	fprintf(out, "NCCL profiles in %s:\n", d->path);
	if (n == 0)
		fprintf(out, "  (none)\n");
	for (i = 0; i < n; i++) {
		struct rdzv_profile *p = NULL;
		const char *m = mark(names[i], pick, site_default);

		if (rdzv_profile_load(&src, names[i], &p, NULL, why, sizeof(why)) < 0)
			fprintf(out, "  %c %-20s BROKEN: %s\n", m ? '*' : ' ', names[i], why);
		else
			fprintf(out, "  %c %-20s %s%s%s%s\n", m ? '*' : ' ', names[i],
			        p->description ? p->description : "(no description)", m ? " [" : "",
			        m ? m : "", m ? "]" : "");
		rdzv_profile_destroy(p);
	}
	rdzv_profile_names_free(names, n);
	if (site_default && *site_default)
		fprintf(out, "Site default: %s\n", site_default);
	if (partition_map && *partition_map)
		fprintf(out, "Partition defaults: %s\n", partition_map);
	switch (pick->why) {
	case RDZV_PICK_USER:
		fprintf(out, "This step: %s (--nccl-profile)", pick->chosen);
		break;
	case RDZV_PICK_USER_NONE:
		fprintf(out, "This step: no profile (--nccl-profile=none)");
		break;
	case RDZV_PICK_PARTITION:
		fprintf(out, "This step: %s (default of partition %s)", pick->chosen,
		        partition ? partition : "?");
		break;
	case RDZV_PICK_SITE:
		fprintf(out, "This step: %s (site default)", pick->chosen);
		break;
	case RDZV_PICK_NONE:
		fprintf(out, "This step: no profile (no default configured)");
		break;
	}
	if (pick->deflt[0] && strcmp(pick->deflt, pick->chosen) != 0)
		fprintf(out, "; enforce/unset entries of %s apply too", pick->deflt);
	if (!partition || !*partition)
		fprintf(out, " (partition not known here)");
	fprintf(out, "\nChoose with --nccl-profile=NAME; --nccl-profile=none drops the default "
	        "profile's defaults but not its enforce/unset entries.\n");
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/profile/: site NCCL profiles: the files, their variables, which one
 * applies. Uses lib/common/. */
/* profile.c: parsing and checking one profile file (see profile.h for the
 * format). Includes and the choice of profile are in profile_resolve.c, the
 * names a profile may have and the admin's directory in profile_dir.c. */
#include "config.h"
#include "profile.h"
#include "nccl_vars.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- notes ---- */

void rdzv_notes_init(struct rdzv_notes *w)
{
	memset(w, 0, sizeof(*w));
}

void rdzv_notes_clear(struct rdzv_notes *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
	memset(w, 0, sizeof(*w));
}

void rdzv_notes_add(struct rdzv_notes *w, const char *fmt, ...)
{
	char buf[1024];
	char *s;
	va_list ap;

	if (!w)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 8;
		char **nv = realloc(w->v, cap * sizeof(*nv));

		if (!nv)
			return;
		w->v = nv;
		w->cap = cap;
	}
	if ((s = strdup(buf)))
		w->v[w->n++] = s;
}

/* ---- parsing ---- */

void rdzv_profile_doc_destroy(struct rdzv_profile_doc *doc)
{
	size_t i;

	if (!doc)
		return;
	for (i = 0; i < doc->n; i++) {
		free(doc->v[i].name);
		free(doc->v[i].value);
	}
	free(doc->v);
	free(doc->description);
	free(doc);
}

static int doc_add(struct rdzv_profile_doc *doc, enum rdzv_pline_kind kind, const char *name,
                   size_t namelen, const char *value, unsigned line, int multinode)
{
	struct rdzv_pline *l;

	if (doc->n == doc->cap) {
		size_t cap = doc->cap ? doc->cap * 2 : 16;
		struct rdzv_pline *nv = realloc(doc->v, cap * sizeof(*nv));

		if (!nv)
			return -1;
		doc->v = nv;
		doc->cap = cap;
	}
	l = &doc->v[doc->n];
	memset(l, 0, sizeof(*l));
	l->kind = kind;
	l->line = line;
	l->multinode = multinode;
	if (!(l->name = strndup(name, namelen)))
		return -1;
	if (value && !(l->value = strdup(value))) {
		free(l->name);
		return -1;
	}
	doc->n++;
	return 0;
}

static const char *kind_word(enum rdzv_pline_kind k)
{
	switch (k) {
	case RDZV_PL_DEFAULT:
		return "default";
	case RDZV_PL_ENFORCE:
		return "enforce";
	case RDZV_PL_UNSET:
		return "unset";
	case RDZV_PL_INCLUDE:
		return "include";
	case RDZV_PL_KNOWN:
		return "known";
	case RDZV_PL_REQUIRE:
		return "require";
	}
	return "?";
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* One word (no blanks) that must make up the whole rest of the line. */
static int one_word(const char *rest, size_t *len)
{
	size_t n = 0;

	while (rest[n] && !is_blank(rest[n]))
		n++;
	*len = n;
	return n > 0 && rest[n] == '\0';
}

/* Parse the directive on one line (already NUL-terminated, trailing blanks
 * removed, not blank, not a comment). */
static int parse_line(struct rdzv_profile_doc *doc, char *s, unsigned line, unsigned *desc_line,
                      const char *fname, char *err, size_t errlen)
{
	char *rest = s, *eq;
	size_t kwlen = 0, n;
	enum rdzv_pline_kind kind;
	int multinode = 0;

	while (rest[kwlen] && !is_blank(rest[kwlen]))
		kwlen++;
	rest += kwlen;
	while (is_blank(*rest))
		rest++;
	/* "multinode DIRECTIVE ...": the directive that follows counts only
	 * in steps on several nodes (what OLCF does by hand for NCCL_NET:
	 * the network plugin does not initialise on a single node). */
	if (kwlen == 9 && strncmp(s, "multinode", 9) == 0) {
		multinode = 1;
		s = rest;
		kwlen = 0;
		while (rest[kwlen] && !is_blank(rest[kwlen]))
			kwlen++;
		rest += kwlen;
		while (is_blank(*rest))
			rest++;
		if (!((kwlen == 7 && (strncmp(s, "default", 7) == 0 || strncmp(s, "enforce", 7) == 0))
		      || (kwlen == 5 && strncmp(s, "unset", 5) == 0)))
			return rdzv_err(err, errlen, "%s:%u: 'multinode' qualifies default, enforce or "
			                "unset (found '%.*s')", fname, line,
			                kwlen ? (int)(kwlen > 32 ? 32 : kwlen) : 7, kwlen ? s : "nothing");
	}
	if (kwlen == 11 && strncmp(s, "description", 11) == 0) {
		if (*desc_line)
			return rdzv_err(err, errlen, "%s:%u: second description (the first is on line %u)",
			                fname, line, *desc_line);
		if (!*rest)
			return rdzv_err(err, errlen, "%s:%u: description without text", fname, line);
		if (!(doc->description = strdup(rest)))
			return rdzv_err(err, errlen, "out of memory");
		*desc_line = line;
		return 0;
	}
	if ((kwlen == 7 && (strncmp(s, "include", 7) == 0 || strncmp(s, "inherit", 7) == 0))) {
		char why[256];

		if (!one_word(rest, &n))
			return rdzv_err(err, errlen, "%s:%u: expected '%.*s NAME' (one profile name)",
			                fname, line, (int)kwlen, s);
		if (rdzv_profile_name_check(rest, why, sizeof(why)) < 0)
			return rdzv_err(err, errlen, "%s:%u: %s", fname, line, why);
		return doc_add(doc, RDZV_PL_INCLUDE, rest, n, NULL, line, 0) < 0
		       ? rdzv_err(err, errlen, "out of memory") : 0;
	}
	if (kwlen == 5 && (strncmp(s, "unset", 5) == 0 || strncmp(s, "known", 5) == 0)) {
		kind = s[0] == 'u' ? RDZV_PL_UNSET : RDZV_PL_KNOWN;
		if (!one_word(rest, &n))
			return rdzv_err(err, errlen, "%s:%u: expected '%s NAME' (one variable name)",
			                fname, line, kind_word(kind));
		if (!rdzv_env_name_valid(rest))
			return rdzv_err(err, errlen, "%s:%u: '%.64s' is not a valid variable name", fname,
			                line, rest);
		if (kind == RDZV_PL_KNOWN && !rdzv_var_family_of(rest))
			return rdzv_err(err, errlen, "%s:%u: 'known' is for NCCL_*, RCCL_*, HSA_* and "
			                "FI_* names (others are not checked anyway)", fname, line);
		return doc_add(doc, kind, rest, n, NULL, line, multinode) < 0
		       ? rdzv_err(err, errlen, "out of memory") : 0;
	}
	if (kwlen == 7 && strncmp(s, "require", 7) == 0) {
		if (!one_word(rest, &n))
			return rdzv_err(err, errlen, "%s:%u: expected 'require mnnvl' (one word)", fname,
			                line);
		if (strcmp(rest, "mnnvl") != 0)
			return rdzv_err(err, errlen, "%s:%u: unknown requirement '%.32s' (expected: "
			                "mnnvl)", fname, line, rest);
		return doc_add(doc, RDZV_PL_REQUIRE, rest, n, NULL, line, 0) < 0
		       ? rdzv_err(err, errlen, "out of memory") : 0;
	}
	if ((kwlen == 7 && strncmp(s, "default", 7) == 0)
	    || (kwlen == 7 && strncmp(s, "enforce", 7) == 0)) {
		kind = s[0] == 'd' ? RDZV_PL_DEFAULT : RDZV_PL_ENFORCE;
		if (!(eq = strchr(rest, '=')) || eq == rest)
			return rdzv_err(err, errlen, "%s:%u: expected '%s NAME=VALUE'", fname, line,
			                kind_word(kind));
		*eq = '\0';
		if (!rdzv_env_name_valid(rest))
			return rdzv_err(err, errlen, "%s:%u: '%.64s' is not a valid variable name%s",
			                fname, line, rest,
			                is_blank(eq[-1]) ? " (no blanks around '=')" : "");
		return doc_add(doc, kind, rest, (size_t)(eq - rest), eq + 1, line, multinode) < 0
		       ? rdzv_err(err, errlen, "out of memory") : 0;
	}
	if (memchr(s, '=', kwlen))
		return rdzv_err(err, errlen, "%s:%u: a setting needs a directive: 'default %.*s' or "
		                "'enforce %.*s'", fname, line, (int)(kwlen > 64 ? 64 : kwlen), s,
		                (int)(kwlen > 64 ? 64 : kwlen), s);
	return rdzv_err(err, errlen, "%s:%u: unknown directive '%.*s' (expected description, "
	                "include, inherit, default, enforce, unset, known, require, multinode)",
	                fname, line,
	                (int)(kwlen > 32 ? 32 : kwlen), s);
}

/* Variables a profile may not touch: Slurm's own, the plugin's switches,
 * and what the rendezvous modes compute per task (a profile value there
 * would give every rank the same RANK). */
static int reserved_name(const char *name)
{
	static const char *const exact[] = {
		"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
		"GROUP_WORLD_SIZE", "ROLE_RANK", "ROLE_WORLD_SIZE", "ROLE_NAME", "NODE_RANK",
		"MASTER_ADDR", "MASTER_PORT", NULL
	};
	static const char *const prefix[] = {
		"SLURM_", "SLURMD_", "SPANK_", "RDZV_", "PET_", "TORCHELASTIC_", NULL
	};
	int i;

	for (i = 0; exact[i]; i++)
		if (strcmp(name, exact[i]) == 0)
			return 1;
	for (i = 0; prefix[i]; i++)
		if (strncmp(name, prefix[i], strlen(prefix[i])) == 0)
			return 1;
	return 0;
}

static int declared_known(const struct rdzv_profile_doc *doc, const char *name)
{
	size_t i;

	for (i = 0; i < doc->n; i++)
		if (doc->v[i].kind == RDZV_PL_KNOWN && strcmp(doc->v[i].name, name) == 0)
			return 1;
	return 0;
}

/* Settings whose effect needs more than the environment, or that are
 * known to break RCCL: said to the admin, not refused (the site may know
 * better, e.g. set the CXI driver property system-wide). */
static void value_notes(const struct rdzv_nccl_var *v, const struct rdzv_pline *l,
                        const char *fname, struct rdzv_notes *notes)
{
	if ((v->flags & RDZV_NV_ALT_READ)
	    && (strcmp(l->value, "alt_read") == 0 || strcmp(l->value, "alt-read") == 0))
		rdzv_notes_add(notes, "%s:%u: note: %s=%s also needs the allocation option "
		               "--network=disable_rdzv_get (sbatch, salloc or srun): Slurm's "
		               "switch/hpe_slingshot then disables rendezvous gets in the Slingshot "
		               "NICs for the job, which alt_read requires (fi_cxi(7): rdzv_get_en=0)",
		               fname, l->line, l->name, l->value);
	if ((v->flags & RDZV_NV_MR_MONITOR) && strcmp(l->value, "memhooks") == 0)
		rdzv_notes_add(notes, "%s:%u: warning: %s=memhooks can deadlock RCCL's and NCCL's "
		               "libfabric (OFI) plugin (OLCF): use kdreg2 or userfaultfd", fname,
		               l->line, l->name);
}

static int check_entry(const struct rdzv_profile_doc *doc, size_t idx, const char *fname,
                       struct rdzv_notes *notes, char *err, size_t errlen)
{
	const struct rdzv_pline *l = &doc->v[idx];
	const struct rdzv_var_family *fam;
	const struct rdzv_nccl_var *v;
	char why[512];
	size_t j;

	if (l->kind == RDZV_PL_INCLUDE)
		return 0;
	if (l->kind == RDZV_PL_REQUIRE) {
		for (j = 0; j < idx; j++)
			if (doc->v[j].kind == RDZV_PL_REQUIRE && strcmp(doc->v[j].name, l->name) == 0)
				return rdzv_err(err, errlen, "%s:%u: require %s already on line %u", fname,
				                l->line, l->name, doc->v[j].line);
		return 0;
	}
	if (l->kind == RDZV_PL_KNOWN) {
		if (rdzv_var_find(l->name))
			rdzv_notes_add(notes, "%s:%u: warning: known %s: already in rdzv's table", fname,
			               l->line, l->name);
		return 0;
	}
	for (j = 0; j < idx; j++) {
		const struct rdzv_pline *o = &doc->v[j];

		if (o->kind == RDZV_PL_INCLUDE || o->kind == RDZV_PL_KNOWN
		    || o->kind == RDZV_PL_REQUIRE || strcmp(o->name, l->name) != 0)
			continue;
		/* One line for every step and a later multinode line that
		 * replaces it in steps on several nodes is the one pair that
		 * makes sense; the other way round the multinode line would
		 * never count. */
		if (!o->multinode && l->multinode)
			continue;
		if (o->multinode && !l->multinode)
			return rdzv_err(err, errlen, "%s:%u: %s: this line replaces the multinode line %u "
			                "in every step (put the multinode line after it)", fname,
			                l->line, l->name, o->line);
		return rdzv_err(err, errlen, "%s:%u: %s already has %s entry on line %u",
		                fname, l->line, l->name, l->multinode ? "a multinode" : "an",
		                o->line);
	}
	if (reserved_name(l->name))
		return rdzv_err(err, errlen, "%s:%u: %s is set by Slurm or the rendezvous mode, "
		                "not by a profile", fname, l->line, l->name);
	/* The libraries name their variables in upper case; "nccl_ib_hca" is
	 * a typo they would silently ignore. */
	if ((fam = rdzv_var_family_miscased(l->name))) {
		const char *near = rdzv_var_nearest(l->name);

		return rdzv_err(err, errlen, "%s:%u: %s: %s reads upper-case names%s%s%s", fname,
		                l->line, l->name, fam->reader, near ? " (did you mean " : "",
		                near ? near : "", near ? "?)" : "");
	}
	if (!(fam = rdzv_var_family_of(l->name)))
		return 0;
	if (!(v = rdzv_var_find(l->name))) {
		const char *near;

		if (declared_known(doc, l->name))
			return 0;
		near = rdzv_var_nearest(l->name);
		if (near)
			return rdzv_err(err, errlen, "%s:%u: unknown %s variable %s (did you mean %s?)",
			                fname, l->line, fam->reader, l->name, near);
		if (!fam->strict)
			return 0; /* another provider's FI_<PROV>_*: not in rdzv's tables */
		return rdzv_err(err, errlen, "%s:%u: unknown %s variable %s (not among the %s "
		                "variables rdzv knows; if it is newer, declare it: known %s)", fname,
		                l->line, fam->reader, l->name, fam->reader, l->name);
	}
	if (l->kind == RDZV_PL_UNSET)
		return 0; /* removing a debug or deprecated variable is the point */
	if (rdzv_nccl_value_check(v, l->value, why, sizeof(why)) < 0)
		return rdzv_err(err, errlen, "%s:%u: %s=%.64s: %s", fname, l->line, l->name,
		                l->value, why);
	value_notes(v, l, fname, notes);
	if (v->flags & RDZV_NV_DEPRECATED)
		rdzv_notes_add(notes, "%s:%u: warning: %s is deprecated (%s)", fname, l->line,
		               l->name, v->note ? v->note : "NCCL no longer documents it");
	else if (v->flags & RDZV_NV_DEBUG)
		rdzv_notes_add(notes, "%s:%u: warning: %s is for debugging only (NCCL's "
		               "\"Debugging\" section): forcing it stops NCCL from choosing the "
		               "best setting", fname, l->line, l->name);
	return 0;
}

int rdzv_profile_parse(const char *text, size_t len, const char *fname,
                       struct rdzv_profile_doc **out, struct rdzv_notes *notes,
                       char *err, size_t errlen)
{
	struct rdzv_profile_doc *doc = NULL;
	char *buf = NULL;
	unsigned line = 0, desc_line = 0;
	size_t pos = 0, i;
	int rv = -1;

	*out = NULL;
	if (!fname)
		fname = "(profile)";
	if (len > RDZV_PROFILE_FILE_MAX)
		return rdzv_err(err, errlen, "%s: larger than %d bytes", fname, RDZV_PROFILE_FILE_MAX);
	if (!(doc = calloc(1, sizeof(*doc))) || !(buf = malloc(RDZV_VALUE_MAX + 64))) {
		rdzv_err(err, errlen, "out of memory");
		goto fail;
	}
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - (text + pos)) : len - pos;
		char *s;

		line++;
		if (ll >= RDZV_VALUE_MAX + 64) {
			rdzv_err(err, errlen, "%s:%u: line longer than %d bytes", fname, line,
			         RDZV_VALUE_MAX + 63);
			goto fail;
		}
		memcpy(buf, text + pos, ll);
		buf[ll] = '\0';
		pos += ll + 1;
		if (ll && buf[ll - 1] == '\r')
			buf[--ll] = '\0';
		for (i = 0; i < ll; i++) {
			unsigned char c = (unsigned char)buf[i];

			if ((c < 0x20 && c != '\t') || c == 0x7f) {
				rdzv_err(err, errlen, "%s:%u: %s byte 0x%02x in column %zu", fname, line,
				         c ? "control" : "NUL", c, i + 1);
				goto fail;
			}
		}
		while (ll && is_blank(buf[ll - 1]))
			buf[--ll] = '\0';
		s = buf;
		while (is_blank(*s))
			s++;
		if (!*s || *s == '#')
			continue;
		if (parse_line(doc, s, line, &desc_line, fname, err, errlen) < 0)
			goto fail;
	}
	for (i = 0; i < doc->n; i++)
		if (check_entry(doc, i, fname, notes, err, errlen) < 0)
			goto fail;
	*out = doc;
	doc = NULL;
	rv = 0;
fail:
	free(buf);
	rdzv_profile_doc_destroy(doc);
	return rv;
}

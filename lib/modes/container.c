/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/modes/: what each mode sets (torch, Megatron, launchers, frameworks,
 * containers), srun's verdict on Megatron's groups over the domains, and the
 * plugstack arguments that choose them. Uses lib/domains/, lib/step/,
 * lib/common/. */
/* container.c: the rendezvous rule inside a container (see container.h). */
#include "config.h"
#include "container.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rdzv_container_changes_free(struct rdzv_container_changes *ch)
{
	size_t i;

	if (!ch)
		return;
	for (i = 0; i < ch->n; i++) {
		free(ch->v[i].name);
		free(ch->v[i].container_value);
		free(ch->v[i].user_value);
	}
	free(ch->v);
	ch->v = NULL;
	ch->n = 0;
}

static int record(struct rdzv_container_changes *ch, const char *name, const char *cval,
                  const char *uval)
{
	struct rdzv_container_change *c = &ch->v[ch->n];

	memset(c, 0, sizeof(*c));
	if (!(c->name = strdup(name)) || !(c->container_value = strdup(cval))
	    || (uval && !(c->user_value = strdup(uval)))) {
		free(c->name);
		free(c->container_value);
		free(c->user_value);
		return -1;
	}
	ch->n++;
	return 0;
}

int rdzv_container_restore(const struct rdzv_envset *set, char *const *user_envp,
                           const struct rdzv_env_ops *ops,
                           struct rdzv_container_changes *ch, char *err, size_t errlen)
{
	char *cur = NULL;
	size_t i;

	rdzv_container_changes_free(ch);
	if (!set || !ops)
		return rdzv_err(err, errlen, "no variables or environment to compare");
	if (set->n == 0)
		return 0;
	if (!(cur = malloc(RDZV_VALUE_MAX)) || !(ch->v = calloc(set->n, sizeof(*ch->v)))) {
		free(cur);
		return rdzv_err(err, errlen, "out of memory");
	}
	for (i = 0; i < set->n; i++) {
		const char *name = set->v[i].name;
		const char *user = user_envp ? rdzv_envp_get(user_envp, name) : NULL;
		int have = ops->get(ops->ctx, name, cur, RDZV_VALUE_MAX);

		if (have < 0) {
			rdzv_err(err, errlen, "cannot read %s from the task environment", name);
			goto fail;
		}
		/* Unchanged, or removed (pyxis only adds and overwrites; a
		 * variable gone since user_init was not the container's). */
		if (!have || (user && strcmp(cur, user) == 0))
			continue;
		if (record(ch, name, cur, user) < 0) {
			rdzv_err(err, errlen, "out of memory recording the container's %s", name);
			goto fail;
		}
		if (user ? ops->set(ops->ctx, name, user) < 0 : ops->unset(ops->ctx, name) < 0) {
			rdzv_err(err, errlen, "cannot restore %s in the task environment", name);
			goto fail;
		}
	}
	free(cur);
	return (int)ch->n;
fail:
	free(cur);
	return -1;
}

/* The value the task ends with for entry e after apply, or NULL (unset). */
static const char *final_value(const struct rdzv_env_entry *e)
{
	switch (e->outcome) {
	case RDZV_OUT_SET:
	case RDZV_OUT_ENFORCED:
		return e->value;
	case RDZV_OUT_USER_KEPT:
		return e->user_value;
	default:
		return NULL;
	}
}

int rdzv_container_replaced(const struct rdzv_container_changes *ch,
                            const struct rdzv_envset *set, char *buf, size_t len)
{
	size_t i, off = 0;
	int n = 0;

	if (len)
		buf[0] = '\0';
	for (i = 0; ch && i < ch->n; i++) {
		const struct rdzv_container_change *c = &ch->v[i];
		const struct rdzv_env_entry *e = rdzv_envset_find(set, c->name);
		const char *fin = e ? final_value(e) : c->user_value;
		const char *who;
		int w;

		if (fin && strcmp(fin, c->container_value) == 0)
			continue; /* the container agreed */
		if (!e)
			who = "the user's";
		else if (e->outcome == RDZV_OUT_USER_KEPT)
			who = "the user's export";
		else if (e->outcome == RDZV_OUT_ENFORCED || e->policy == RDZV_SET_ENFORCE)
			who = "enforced";
		else
			who = NULL;
		n++;
		if (off >= len)
			continue;
		if (!fin)
			w = snprintf(buf + off, len - off, "%s%s=%s -> unset (%s)", off ? "; " : "",
			             c->name, c->container_value, e ? e->origin : "the user's");
		else if (who)
			w = snprintf(buf + off, len - off, "%s%s=%s -> %s (%s, %s)", off ? "; " : "",
			             c->name, c->container_value, fin, e ? e->origin : "user", who);
		else
			w = snprintf(buf + off, len - off, "%s%s=%s -> %s (%s)", off ? "; " : "",
			             c->name, c->container_value, fin, e->origin);
		off = w < 0 ? len : off + (size_t)w;
	}
	return n;
}

enum rdzv_container_order rdzv_container_order(const char *const *names, size_t n)
{
	size_t i;
	int seen_rdzv = 0, seen_pyxis = 0, rdzv_first = 0;

	for (i = 0; names && i < n; i++) {
		if (!names[i])
			continue;
		if (strcmp(names[i], "rdzv") == 0 && !seen_rdzv) {
			seen_rdzv = 1;
			rdzv_first = !seen_pyxis;
		} else if (strcmp(names[i], "pyxis") == 0) {
			seen_pyxis = 1;
		}
	}
	if (!seen_pyxis || !seen_rdzv)
		return RDZV_ORDER_NO_PYXIS;
	return rdzv_first ? RDZV_ORDER_RDZV_FIRST : RDZV_ORDER_PYXIS_FIRST;
}

int rdzv_container_requested(const char *(*get)(void *ctx, const char *name), void *ctx)
{
	static const char *const vars[] = {
		"_SLURM_SPANK_OPTION_pyxis_container_image",
		"_SLURM_SPANK_OPTION_pyxis_container_name",
		"PYXIS_CONTAINER_IMAGE",
		"PYXIS_CONTAINER_NAME",
	};
	size_t i;

	for (i = 0; get && i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = get(ctx, vars[i]);

		if (v && *v)
			return 1;
	}
	return 0;
}

/* Apptainer and Singularity (container.h). */

static int prefixed(char *buf, size_t len, const char *prefix, const char *name)
{
	int n = snprintf(buf, len, "%s%s", prefix, name);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* 1: the variable is in the task's environment (a value too long to read
 * is there too: it is the user's), 0: it is not. */
static int present(const struct rdzv_env_ops *ops, const char *name, char *buf, size_t len)
{
	return ops->get(ops->ctx, name, buf, len) != 0;
}

static void note_kept(struct rdzv_apptainer_stats *st, const char *name)
{
	size_t off = strlen(st->kept_names);

	if (off + 1 >= sizeof(st->kept_names))
		return;
	snprintf(st->kept_names + off, sizeof(st->kept_names) - off, "%s%s", off ? " " : "", name);
}

int rdzv_container_apptainer(const struct rdzv_envset *set, const struct rdzv_env_ops *ops,
                             struct rdzv_apptainer_stats *st, char *err, size_t errlen)
{
	char aname[160], sname[160], *cur;
	size_t i;
	int rv = -1;

	if (!set || !ops || !st)
		return rdzv_err(err, errlen, "no variables or environment for Apptainer");
	if (!(cur = malloc(RDZV_VALUE_MAX)))
		return rdzv_err(err, errlen, "out of memory");
	for (i = 0; i < set->n; i++) {
		const struct rdzv_env_entry *e = &set->v[i];
		const char *fin = final_value(e);
		int strong = e->policy != RDZV_SET_DEFAULT; /* ENFORCE or UNSET */
		int have_a, have_s;

		if (e->outcome == RDZV_OUT_NONE)
			continue; /* not applied: nothing to carry */
		if (prefixed(aname, sizeof(aname), RDZV_APPTAINER_PREFIX, e->name) < 0
		    || prefixed(sname, sizeof(sname), RDZV_SINGULARITY_PREFIX, e->name) < 0) {
			rdzv_err(err, errlen, "%.64s: name too long for %s", e->name,
			         RDZV_SINGULARITY_PREFIX);
			goto fail;
		}
		have_a = present(ops, aname, cur, RDZV_VALUE_MAX);
		have_s = present(ops, sname, cur, RDZV_VALUE_MAX);
		if (!strong && (have_a || have_s)) {
			st->kept++;
			note_kept(st, have_a ? aname : sname);
			continue; /* the user's choice, as their NAME would be */
		}
		if (!fin) {
			if ((have_a && ops->unset(ops->ctx, aname) < 0)
			    || (have_s && ops->unset(ops->ctx, sname) < 0)) {
				rdzv_err(err, errlen, "cannot unset %s", have_a ? aname : sname);
				goto fail;
			}
			st->removed += (unsigned)(have_a + have_s);
			continue;
		}
		if (ops->set(ops->ctx, aname, fin) < 0) {
			rdzv_err(err, errlen, "cannot set %s", aname);
			goto fail;
		}
		if (ops->set(ops->ctx, sname, fin) < 0) {
			rdzv_err(err, errlen, "cannot set %s", sname);
			goto fail;
		}
		st->set++;
	}
	rv = 0;
fail:
	free(cur);
	return rv;
}

void rdzv_container_apptainer_note(const struct rdzv_apptainer_stats *st, char *buf, size_t len)
{
	size_t off = 0;
	int w;

	if (!len)
		return;
	buf[0] = '\0';
	if (!st || (!st->set && !st->kept && !st->removed))
		return;
	w = snprintf(buf, len, "%u variable%s also set as %s* and %s* (Apptainer applies an "
	             "image's %%environment over the task's)", st->set, st->set == 1 ? "" : "s",
	             RDZV_APPTAINER_PREFIX, RDZV_SINGULARITY_PREFIX);
	off = w < 0 ? len : (size_t)w;
	if (st->kept && off < len) {
		w = snprintf(buf + off, len - off, "; kept the user's %s", st->kept_names);
		off = w < 0 ? len : off + (size_t)w;
	}
	if (st->removed && off < len)
		snprintf(buf + off, len - off, "; removed %u of the user's copies of variables "
		         "the step unsets", st->removed);
}

/* Apptainer's binds (container.h). */

static int has_entry(const char *list, const char *entry)
{
	size_t n = strlen(entry);
	const char *p = list;

	while (p && *p) {
		if (strncmp(p, entry, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return 1;
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return 0;
}

char *rdzv_container_bind_append(const char *base, const char *const *entries, size_t n)
{
	size_t need = (base ? strlen(base) : 0) + 1, off, i;
	char *val;

	for (i = 0; i < n; i++)
		need += (entries[i] ? strlen(entries[i]) : 0) + 1;
	if (!(val = malloc(need)))
		return NULL;
	snprintf(val, need, "%s", base ? base : "");
	off = strlen(val);
	for (i = 0; i < n; i++) {
		if (!entries[i] || !entries[i][0] || has_entry(val, entries[i]))
			continue;
		off += (size_t)snprintf(val + off, need - off, "%s%s", off ? "," : "", entries[i]);
	}
	return val;
}

int rdzv_container_bind_path_ok(const char *path)
{
	return path && path[0] == '/' && !strpbrk(path, ",:");
}

/* An --env value (a comma list of NAME=VALUE) that names PYTHONPATH. */
static int env_names_pythonpath(const char *v)
{
	const char *p = v;

	while (p && *p) {
		if (strncmp(p, "PYTHONPATH=", 11) == 0)
			return 1;
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return 0;
}

const char *rdzv_container_cleans_pythonpath(int argc, char *const *argv)
{
	static const char *const subs[] = { "exec", "run", "shell", "test", NULL };
	const char *base;
	int i, k, clean = 0;

	if (argc < 3 || !argv || !argv[0])
		return NULL;
	base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	if (strcmp(base, "apptainer") != 0 && strcmp(base, "singularity") != 0)
		return NULL;
	for (k = 0; subs[k] && strcmp(argv[1], subs[k]) != 0; k++)
		;
	if (!subs[k])
		return NULL;
	/* Options end at the image: the first word that is not one (an
	 * option's separate value is skipped only for --env, which matters
	 * here; another option's value is taken for the image, which at worst
	 * ends the scan early and says nothing). */
	for (i = 2; i < argc && argv[i]; i++) {
		const char *a = argv[i];

		if (a[0] != '-')
			break;
		if (strcmp(a, "--cleanenv") == 0 || strcmp(a, "--containall") == 0)
			clean = 1;
		else if (strcmp(a, "--env-file") == 0 || strncmp(a, "--env-file=", 11) == 0)
			return NULL; /* what it holds is not known here */
		else if (strcmp(a, "--env") == 0) {
			if (i + 1 < argc && argv[i + 1] && env_names_pythonpath(argv[i + 1]))
				return NULL;
			i++;
		} else if (strncmp(a, "--env=", 6) == 0) {
			if (env_names_pythonpath(a + 6))
				return NULL;
		} else if (a[1] != '-' && a[1] && (strchr(a + 1, 'e') || strchr(a + 1, 'C'))
		           && !strchr(a, '='))
			clean = 1;
	}
	return clean ? base : NULL;
}

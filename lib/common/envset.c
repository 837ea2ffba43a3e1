/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/common/: what every folder uses: strings, numbers and errors, a
 * variable's precedence (envset), JSON. Uses no other folder. */
#include "config.h"
#include "envset.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rdzv_envset *rdzv_envset_create(void)
{
	return calloc(1, sizeof(struct rdzv_envset));
}

static void entry_clear(struct rdzv_env_entry *e)
{
	free(e->name);
	free(e->value);
	free(e->user_value);
	memset(e, 0, sizeof(*e));
}

void rdzv_envset_destroy(struct rdzv_envset *set)
{
	size_t i;

	if (!set)
		return;
	for (i = 0; i < set->n; i++)
		entry_clear(&set->v[i]);
	free(set->v);
	free(set);
}

int rdzv_env_name_valid(const char *name)
{
	size_t i;

	if (!name || !name[0] || strlen(name) > 128)
		return 0;
	for (i = 0; name[i]; i++) {
		char c = name[i];
		int alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';

		if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
			return 0;
	}
	return 1;
}

static struct rdzv_env_entry *find(const struct rdzv_envset *set, const char *name)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		if (strcmp(set->v[i].name, name) == 0)
			return &set->v[i];
	return NULL;
}

const struct rdzv_env_entry *rdzv_envset_find(const struct rdzv_envset *set,
                                              const char *name)
{
	return set ? find(set, name) : NULL;
}

int rdzv_envset_add(struct rdzv_envset *set, const char *name, const char *value,
                    enum rdzv_policy policy, const char *origin, char *err,
                    size_t errlen)
{
	struct rdzv_env_entry *e;
	char *n = NULL, *v = NULL;

	if (!rdzv_env_name_valid(name))
		return rdzv_err(err, errlen, "invalid variable name '%.64s'", name ? name : "");
	if ((policy == RDZV_SET_UNSET) != (value == NULL))
		return rdzv_err(err, errlen, "%s: value and policy disagree", name);
	if (value && strlen(value) >= RDZV_VALUE_MAX)
		return rdzv_err(err, errlen, "%s: value longer than %d bytes", name,
		                RDZV_VALUE_MAX - 1);
	e = find(set, name);
	if (e && e->policy != RDZV_SET_DEFAULT && policy == RDZV_SET_DEFAULT)
		return 1;
	if (!(n = strdup(name)) || (value && !(v = strdup(value)))) {
		free(n);
		return rdzv_err(err, errlen, "out of memory");
	}
	if (!e) {
		if (set->n == set->cap) {
			size_t cap = set->cap ? set->cap * 2 : 32;
			struct rdzv_env_entry *nv = realloc(set->v, cap * sizeof(*nv));

			if (!nv) {
				free(n);
				free(v);
				return rdzv_err(err, errlen, "out of memory");
			}
			set->v = nv;
			set->cap = cap;
		}
		e = &set->v[set->n++];
		memset(e, 0, sizeof(*e));
	} else {
		entry_clear(e);
	}
	e->name = n;
	e->value = v;
	e->policy = policy;
	snprintf(e->origin, sizeof(e->origin), "%s", origin ? origin : "rdzv");
	return 0;
}

int rdzv_envset_addf(struct rdzv_envset *set, const char *origin, const char *name,
                     char *err, size_t errlen, const char *fmt, ...)
{
	char buf[RDZV_VALUE_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return rdzv_err(err, errlen, "%s: value too long", name);
	return rdzv_envset_add(set, name, buf, RDZV_SET_DEFAULT, origin, err, errlen) < 0 ? -1 : 0;
}

int rdzv_envset_addfx(struct rdzv_envset *set, const char *origin, enum rdzv_policy policy,
                      unsigned flags, const char *name, char *err, size_t errlen,
                      const char *fmt, ...)
{
	char buf[RDZV_VALUE_MAX];
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return rdzv_err(err, errlen, "%s: value too long", name);
	if (policy == RDZV_SET_UNSET)
		return rdzv_err(err, errlen, "%s: a formatted entry cannot be UNSET", name);
	rc = rdzv_envset_add(set, name, buf, policy, origin, err, errlen);
	if (rc < 0)
		return -1;
	if (rc == 0)
		find(set, name)->flags = flags;
	return 0;
}

/* Append "text" to buf at *used; on overflow end buf with "...". */
static int append(char *buf, size_t len, size_t *used, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int append(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len - *used) {
		if (len >= 4)
			strcpy(buf + len - 4, "...");
		*used = len - 1;
		return -1;
	}
	*used += (size_t)n;
	return 0;
}

int rdzv_envset_stale(const struct rdzv_envset *set, char *buf, size_t len)
{
	size_t i, used = 0;
	int pass, any = 0;

	if (!buf || len == 0)
		return -1;
	buf[0] = '\0';
	for (pass = 0; pass < 2; pass++) {
		int first = 1;

		for (i = 0; set && i < set->n; i++) {
			const struct rdzv_env_entry *e = &set->v[i];
			int hit = pass == 0 ? (e->flags & RDZV_ENV_IDENTITY) && e->outcome == RDZV_OUT_ENFORCED
			                    : (e->flags & RDZV_ENV_ADDRESS) && e->outcome == RDZV_OUT_USER_KEPT;

			if (!hit)
				continue;
			if (append(buf, len, &used, "%s%s%s=%.64s (%s %.64s)",
			           first ? (any ? "; " : "") : ", ",
			           first ? (pass == 0 ? "replaced exported " : "kept exported ") : "",
			           e->name, e->user_value ? e->user_value : "",
			           pass == 0 ? "now" : "rdzv would set", e->value) < 0)
				return -1;
			first = 0;
			any = 1;
		}
	}
	return any;
}

/* The user's value is kept for the verbose table ("user value kept",
 * "enforced over ..."), so losing it to a failed copy is an error. */
static int keep_user_value(struct rdzv_env_entry *e, const char *cur, char *err,
                           size_t errlen)
{
	if (!(e->user_value = strdup(cur)))
		return rdzv_err(err, errlen, "out of memory recording the user's %s", e->name);
	return 0;
}

int rdzv_envset_apply(struct rdzv_envset *set, const struct rdzv_env_ops *ops,
                      char *err, size_t errlen)
{
	char *cur = malloc(RDZV_VALUE_MAX);
	int rv = -1;
	size_t i;

	if (!cur)
		return rdzv_err(err, errlen, "out of memory");
	for (i = 0; i < set->n; i++) {
		struct rdzv_env_entry *e = &set->v[i];
		int have = ops->get(ops->ctx, e->name, cur, RDZV_VALUE_MAX);

		if (have < 0) {
			rdzv_err(err, errlen, "cannot read %s from the task environment", e->name);
			goto fail;
		}
		free(e->user_value);
		e->user_value = NULL;
		if (e->policy == RDZV_SET_UNSET) {
			if (have && ops->unset(ops->ctx, e->name) < 0) {
				rdzv_err(err, errlen, "cannot unset %s", e->name);
				goto fail;
			}
			e->outcome = have ? RDZV_OUT_UNSET : RDZV_OUT_ABSENT;
			if (have && keep_user_value(e, cur, err, errlen) < 0)
				goto fail;
			continue;
		}
		if (have && strcmp(cur, e->value) == 0) {
			e->outcome = RDZV_OUT_SET;
			continue;
		}
		if (have && e->policy == RDZV_SET_DEFAULT) {
			e->outcome = RDZV_OUT_USER_KEPT;
			if (keep_user_value(e, cur, err, errlen) < 0)
				goto fail;
			continue;
		}
		if (ops->set(ops->ctx, e->name, e->value) < 0) {
			rdzv_err(err, errlen, "cannot set %s", e->name);
			goto fail;
		}
		e->outcome = have ? RDZV_OUT_ENFORCED : RDZV_OUT_SET;
		if (have && keep_user_value(e, cur, err, errlen) < 0)
			goto fail;
	}
	rv = 0;
fail:
	free(cur);
	return rv;
}

const char *rdzv_outcome_name(enum rdzv_outcome o)
{
	switch (o) {
	case RDZV_OUT_NONE:
		return "pending";
	case RDZV_OUT_SET:
		return "set";
	case RDZV_OUT_USER_KEPT:
		return "user value kept";
	case RDZV_OUT_ENFORCED:
		return "enforced over user value";
	case RDZV_OUT_UNSET:
		return "unset";
	case RDZV_OUT_ABSENT:
		return "unset (was not set)";
	}
	return "?";
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/profile/: site NCCL profiles: the files, their variables, which one
 * applies. Uses lib/common/. */
/* profile_policy.c: encoding of the enforced entries for the NCCL
 * environment plugin. Linked into rdzv.so (encode) and into
 * libnccl-env-rdzv.so (decode), so it depends on nothing but libc and
 * envset's name check. */
#include "config.h"
#include "profile_policy.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

int rdzv_policy_encode(const struct rdzv_envset *set, char *buf, size_t len, char *err,
                       size_t errlen)
{
	size_t off = 0, i;
	int n = 0;

	if (!len)
		return rdzv_err(err, errlen, "no room for the policy");
	buf[0] = '\0';
	for (i = 0; set && i < set->n; i++) {
		const struct rdzv_env_entry *e = &set->v[i];
		size_t need;

		if (e->policy == RDZV_SET_DEFAULT)
			continue;
		if (e->value && (strchr(e->value, RDZV_POLICY_SEP) || strchr(e->name, '=')))
			return rdzv_err(err, errlen, "%s: value cannot be carried to NCCL", e->name);
		need = (n ? 1 : 0) + strlen(e->name) + (e->value ? 1 + strlen(e->value) : 0);
		if (off + need >= len)
			return rdzv_err(err, errlen, "enforced entries longer than %zu bytes", len - 1);
		if (n)
			buf[off++] = RDZV_POLICY_SEP;
		memcpy(buf + off, e->name, strlen(e->name));
		off += strlen(e->name);
		if (e->value) {
			buf[off++] = '=';
			memcpy(buf + off, e->value, strlen(e->value));
			off += strlen(e->value);
		}
		buf[off] = '\0';
		n++;
	}
	return n;
}

struct rdzv_nccl_policy {
	char *text;
	char **name;
	char **value; /* NULL: unset */
	size_t n;
};

void rdzv_policy_free(struct rdzv_nccl_policy *p)
{
	if (!p)
		return;
	free(p->text);
	free(p->name);
	free(p->value);
	free(p);
}

struct rdzv_nccl_policy *rdzv_policy_decode(const char *s)
{
	struct rdzv_nccl_policy *p = calloc(1, sizeof(*p));
	size_t cap = 1;
	const char *q;
	char *rec, *next;

	if (!p)
		return NULL;
	if (!s || !*s)
		return p;
	for (q = s; *q; q++)
		cap += *q == RDZV_POLICY_SEP;
	if (!(p->text = strdup(s)) || !(p->name = calloc(cap, sizeof(char *)))
	    || !(p->value = calloc(cap, sizeof(char *)))) {
		rdzv_policy_free(p);
		return NULL;
	}
	for (rec = p->text; rec; rec = next) {
		char *eq;

		if ((next = strchr(rec, RDZV_POLICY_SEP)))
			*next++ = '\0';
		if ((eq = strchr(rec, '=')))
			*eq = '\0';
		if (!rdzv_env_name_valid(rec))
			continue;
		p->name[p->n] = rec;
		p->value[p->n] = eq ? eq + 1 : NULL;
		p->n++;
	}
	return p;
}

int rdzv_policy_get(const struct rdzv_nccl_policy *p, const char *name, const char **value)
{
	size_t i;

	*value = NULL;
	if (!p || !name)
		return 0;
	/* The last record wins, as in the envset it was encoded from (names
	 * are unique there; this only matters for hand-written input). */
	for (i = p->n; i-- > 0;)
		if (strcmp(p->name[i], name) == 0) {
			*value = p->value[i];
			return p->value[i] ? 1 : 2;
		}
	return 0;
}

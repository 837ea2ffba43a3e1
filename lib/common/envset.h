/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/common/: what every folder uses: strings, numbers and errors, a
 * variable's precedence (envset), JSON. Uses no other folder. */
/* envset.h: the variables the plugin wants in a task's environment, and the
 * one table-driven precedence function that decides what each task gets.
 *
 * Policies:
 *   DEFAULT  applied unless the user already exported the variable;
 *   ENFORCE  always applied; a user's value is replaced (and reported);
 *   UNSET    removed from the task.
 * Adding a name twice replaces the earlier entry, except that an ENFORCE or
 * UNSET entry is only replaced by another ENFORCE or UNSET entry: later
 * layers (binding, a user-chosen profile) cannot weaken the admin's policy. */
#ifndef RDZV_ENVSET_H
#define RDZV_ENVSET_H

#include <stddef.h>

enum rdzv_policy {
	RDZV_SET_DEFAULT,
	RDZV_SET_ENFORCE,
	RDZV_SET_UNSET,
};

enum rdzv_outcome {
	RDZV_OUT_NONE,      /* not applied yet */
	RDZV_OUT_SET,       /* variable set from the entry */
	RDZV_OUT_USER_KEPT, /* the user's exported value won */
	RDZV_OUT_ENFORCED,  /* the user's value was replaced */
	RDZV_OUT_UNSET,     /* the variable was removed */
	RDZV_OUT_ABSENT,    /* UNSET of a variable that was not there */
};

struct rdzv_env_entry {
	char *name;
	char *value;            /* NULL for UNSET */
	enum rdzv_policy policy;
	char origin[48];        /* "rdzv", "binding", "profile h100", ... */
	enum rdzv_outcome outcome;
	char *user_value;       /* the user's value when it won or was replaced */
	unsigned flags;         /* RDZV_ENV_* below */
};

/* Entry flags, for the one warning line of a step (rdzv_envset_stale):
 * IDENTITY  the step's identity (RANK, WORLD_SIZE...): added ENFORCE, an
 *           exported value that differed is named as replaced;
 * ADDRESS   where rank 0 listens (MASTER_ADDR, MASTER_PORT): added DEFAULT,
 *           an exported value that differed is kept and named as kept. */
#define RDZV_ENV_IDENTITY 0x1u
#define RDZV_ENV_ADDRESS 0x2u

struct rdzv_envset {
	struct rdzv_env_entry *v;
	size_t n, cap;
};

/* Environment access used by apply: the SPANK glue passes spank_getenv and
 * friends, tests pass an in-memory environment.
 * get returns 1 and fills buf when set, 0 when unset, -1 on error
 * (including a value longer than buflen). set and unset return 0 or -1. */
struct rdzv_env_ops {
	int (*get)(void *ctx, const char *name, char *buf, size_t buflen);
	int (*set)(void *ctx, const char *name, const char *value);
	int (*unset)(void *ctx, const char *name);
	void *ctx;
};

#define RDZV_VALUE_MAX 4096

struct rdzv_envset *rdzv_envset_create(void);
void rdzv_envset_destroy(struct rdzv_envset *set); /* accepts NULL */

/* Add or replace (see above). value must be NULL exactly for UNSET.
 * Returns 0, 1 when an ENFORCE/UNSET entry kept its place, or -1 (bad name,
 * oversized value, no memory) with a reason in err. */
int rdzv_envset_add(struct rdzv_envset *set, const char *name, const char *value,
                    enum rdzv_policy policy, const char *origin, char *err,
                    size_t errlen);

/* printf-style DEFAULT entry from the plugin itself. */
int rdzv_envset_addf(struct rdzv_envset *set, const char *origin, const char *name,
                     char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* printf-style entry with a policy and RDZV_ENV_* flags. */
int rdzv_envset_addfx(struct rdzv_envset *set, const char *origin, enum rdzv_policy policy,
                      unsigned flags, const char *name, char *err, size_t errlen,
                      const char *fmt, ...) __attribute__((format(printf, 8, 9)));

/* After apply: one line naming the exported values that differed from the
 * step's, "replaced RANK=0 (now 3), ...; kept MASTER_ADDR=n1 (rdzv: n3)"
 * (without a trailing newline). Returns 1 when there is something to say,
 * 0 when not (buf ""), -1 when it does not fit (buf holds a truncated line
 * ending in "..."). */
int rdzv_envset_stale(const struct rdzv_envset *set, char *buf, size_t len);

const struct rdzv_env_entry *rdzv_envset_find(const struct rdzv_envset *set,
                                              const char *name);

/* Apply every entry in order; records each outcome. Returns 0, or -1 with
 * the failing variable named in err. */
int rdzv_envset_apply(struct rdzv_envset *set, const struct rdzv_env_ops *ops,
                      char *err, size_t errlen);

/* A valid environment variable name: [A-Za-z_][A-Za-z0-9_]*, <= 128 bytes. */
int rdzv_env_name_valid(const char *name);

const char *rdzv_outcome_name(enum rdzv_outcome o);

#endif

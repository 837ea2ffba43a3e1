/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-envset: the precedence table between the plugin's variables, the
 * admin's enforced ones and what the user exported. Invalid input first. */
#include "config.h"
#include "envset.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char err[256];

/* A tiny in-memory environment with failure injection. */
#define MEMENV_MAX 32
struct memenv {
	char name[MEMENV_MAX][64];
	char *value[MEMENV_MAX];
	const char *fail_get; /* get of this name returns -1 */
	const char *fail_set; /* set of this name returns -1 */
	int sets, unsets;
};

static int mem_find(struct memenv *m, const char *name)
{
	int i;

	for (i = 0; i < MEMENV_MAX; i++)
		if (m->value[i] && strcmp(m->name[i], name) == 0)
			return i;
	return -1;
}

static int mem_get(void *ctx, const char *name, char *buf, size_t buflen)
{
	struct memenv *m = ctx;
	int i = mem_find(m, name);

	if (m->fail_get && strcmp(m->fail_get, name) == 0)
		return -1;
	if (i < 0)
		return 0;
	if (strlen(m->value[i]) >= buflen)
		return -1;
	strcpy(buf, m->value[i]);
	return 1;
}

static int mem_set(void *ctx, const char *name, const char *value)
{
	struct memenv *m = ctx;
	int i = mem_find(m, name);
	char *v;

	if (m->fail_set && strcmp(m->fail_set, name) == 0)
		return -1;
	if (!(v = strdup(value)))
		return -1;
	if (i < 0)
		for (i = 0; i < MEMENV_MAX && m->value[i]; i++)
			;
	if (i >= MEMENV_MAX) {
		free(v);
		return -1;
	}
	free(m->value[i]);
	snprintf(m->name[i], sizeof(m->name[i]), "%s", name);
	m->value[i] = v;
	m->sets++;
	return 0;
}

static int mem_unset(void *ctx, const char *name)
{
	struct memenv *m = ctx;
	int i = mem_find(m, name);

	if (i >= 0) {
		free(m->value[i]);
		m->value[i] = NULL;
	}
	m->unsets++;
	return 0;
}

static const char *mem_value(struct memenv *m, const char *name)
{
	int i = mem_find(m, name);

	return i < 0 ? NULL : m->value[i];
}

static void mem_free(struct memenv *m)
{
	int i;

	for (i = 0; i < MEMENV_MAX; i++)
		free(m->value[i]);
	memset(m, 0, sizeof(*m));
}

static struct rdzv_env_ops ops_for(struct memenv *m)
{
	struct rdzv_env_ops ops = { mem_get, mem_set, mem_unset, m };

	return ops;
}

static void test_invalid(void)
{
	struct rdzv_envset *set = rdzv_envset_create();
	char *big = malloc(RDZV_VALUE_MAX + 1);
	char longname[200];
	const char *bad_names[] = { "", "1ABC", "A-B", "A B", "A=B", "A.B", "Ä", "A?", NULL };
	size_t i;

	if (!set || !big)
		skip_all("out of memory");
	rdzv_envset_destroy(NULL);
	ok(1, "destroying NULL is harmless");

	ok(!rdzv_env_name_valid(NULL), "a NULL name is not valid");
	for (i = 0; bad_names[i]; i++) {
		err[0] = '\0';
		ok(!rdzv_env_name_valid(bad_names[i]), "'%s' is not a valid name", bad_names[i]);
		ok(rdzv_envset_add(set, bad_names[i], "v", RDZV_SET_DEFAULT, NULL, err,
		                   sizeof(err)) == -1 && strstr(err, "invalid variable name"),
		   "adding '%s' is refused with the reason", bad_names[i]);
	}
	memset(longname, 'A', 129);
	longname[129] = '\0';
	ok(!rdzv_env_name_valid(longname), "a name of 129 bytes is not valid");
	longname[128] = '\0';
	ok(rdzv_env_name_valid(longname), "a name of 128 bytes is valid");
	is_int(rdzv_envset_add(set, NULL, "v", RDZV_SET_DEFAULT, NULL, err, sizeof(err)), -1,
	       "adding a NULL name is refused");

	err[0] = '\0';
	is_int(rdzv_envset_add(set, "X", NULL, RDZV_SET_DEFAULT, NULL, err, sizeof(err)), -1,
	       "a DEFAULT entry without a value is refused");
	ok(strstr(err, "X: value and policy disagree") != NULL, "the reason names the variable");
	is_int(rdzv_envset_add(set, "X", NULL, RDZV_SET_ENFORCE, NULL, err, sizeof(err)), -1,
	       "an ENFORCE entry without a value is refused");
	is_int(rdzv_envset_add(set, "X", "v", RDZV_SET_UNSET, NULL, err, sizeof(err)), -1,
	       "an UNSET entry with a value is refused");

	memset(big, 'v', RDZV_VALUE_MAX);
	big[RDZV_VALUE_MAX] = '\0';
	err[0] = '\0';
	is_int(rdzv_envset_add(set, "BIG", big, RDZV_SET_DEFAULT, NULL, err, sizeof(err)), -1,
	       "a value of RDZV_VALUE_MAX bytes is refused");
	ok(strstr(err, "BIG: value longer than 4095 bytes") != NULL,
	   "the reason names the variable and the limit");
	big[RDZV_VALUE_MAX - 1] = '\0';
	is_int(rdzv_envset_add(set, "BIG", big, RDZV_SET_DEFAULT, NULL, err, sizeof(err)), 0,
	       "a value of RDZV_VALUE_MAX - 1 bytes is accepted");
	is_int(rdzv_envset_addf(set, NULL, "BIG2", err, sizeof(err), "%s%s", big, "x"), -1,
	       "addf refuses a formatted value that is too long");
	ok(rdzv_envset_find(set, "BIG2") == NULL, "and adds nothing");
	is_int(rdzv_envset_addf(set, NULL, "1BAD", err, sizeof(err), "%d", 1), -1,
	       "addf refuses an invalid name");
	is_int(set->n, 1, "refused entries leave the set unchanged");
	ok(rdzv_envset_find(NULL, "BIG") == NULL, "find in a NULL set finds nothing");
	ok(rdzv_envset_find(set, "NOPE") == NULL, "find of an absent name finds nothing");

	rdzv_envset_destroy(set);
	free(big);
}

static void test_add_rules(void)
{
	struct rdzv_envset *set = rdzv_envset_create();
	const struct rdzv_env_entry *e;
	char name[16];
	int i, all = 1;

	if (!set)
		skip_all("out of memory");
	is_int(rdzv_envset_add(set, "A", "1", RDZV_SET_DEFAULT, "rdzv", err, sizeof(err)), 0,
	       "a DEFAULT entry is added");
	is_int(rdzv_envset_add(set, "A", "2", RDZV_SET_DEFAULT, "binding", err, sizeof(err)), 0,
	       "a second DEFAULT entry of the same name replaces it");
	e = rdzv_envset_find(set, "A");
	ok(e && strcmp(e->value, "2") == 0 && strcmp(e->origin, "binding") == 0,
	   "the replacement carries its value and origin");
	is_int(set->n, 1, "replacing does not add an entry");

	is_int(rdzv_envset_add(set, "A", "3", RDZV_SET_ENFORCE, "profile site", err, sizeof(err)), 0,
	       "ENFORCE replaces DEFAULT");
	is_int(rdzv_envset_add(set, "A", "4", RDZV_SET_DEFAULT, "profile user", err, sizeof(err)), 1,
	       "DEFAULT cannot replace ENFORCE (returns 1)");
	e = rdzv_envset_find(set, "A");
	ok(e && strcmp(e->value, "3") == 0 && e->policy == RDZV_SET_ENFORCE
	   && strcmp(e->origin, "profile site") == 0, "the ENFORCE entry kept its place");
	is_int(rdzv_envset_addf(set, "rdzv", "A", err, sizeof(err), "%d", 5), 0,
	       "addf over an ENFORCE entry is not an error");
	e = rdzv_envset_find(set, "A");
	ok(e && strcmp(e->value, "3") == 0, "and does not change it");
	is_int(rdzv_envset_add(set, "A", "6", RDZV_SET_ENFORCE, "profile other", err, sizeof(err)), 0,
	       "ENFORCE replaces ENFORCE");
	is_int(rdzv_envset_add(set, "A", NULL, RDZV_SET_UNSET, "profile site", err, sizeof(err)), 0,
	       "UNSET replaces ENFORCE");
	e = rdzv_envset_find(set, "A");
	ok(e && e->value == NULL && e->policy == RDZV_SET_UNSET, "the entry is now UNSET");
	is_int(rdzv_envset_add(set, "A", "7", RDZV_SET_DEFAULT, "rdzv", err, sizeof(err)), 1,
	       "DEFAULT cannot replace UNSET");
	is_int(rdzv_envset_add(set, "A", "8", RDZV_SET_ENFORCE, "profile", err, sizeof(err)), 0,
	       "ENFORCE replaces UNSET");
	e = rdzv_envset_find(set, "A");
	ok(e && strcmp(e->value, "8") == 0, "with its value");
	is_int(rdzv_envset_add(set, "B", "x", RDZV_SET_DEFAULT, NULL, err, sizeof(err)), 0,
	       "an entry without an origin is added");
	e = rdzv_envset_find(set, "B");
	is_str(e ? e->origin : NULL, "rdzv", "and its origin is 'rdzv'");
	{
		char origin[100];

		memset(origin, 'o', sizeof(origin) - 1);
		origin[sizeof(origin) - 1] = '\0';
		rdzv_envset_add(set, "C", "x", RDZV_SET_DEFAULT, origin, err, sizeof(err));
		e = rdzv_envset_find(set, "C");
		ok(e && strlen(e->origin) == sizeof(e->origin) - 1, "a long origin is cut, not overflowed");
	}

	/* growth past the first allocation keeps earlier entries */
	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "V%d", i);
		if (rdzv_envset_addf(set, NULL, name, err, sizeof(err), "%d", i * 3) < 0)
			all = 0;
	}
	for (i = 0; i < 100 && all; i++) {
		snprintf(name, sizeof(name), "V%d", i);
		e = rdzv_envset_find(set, name);
		all = e && atoi(e->value) == i * 3;
	}
	ok(all, "100 entries survive the set's growth");
	e = rdzv_envset_find(set, "A");
	ok(e && strcmp(e->value, "8") == 0, "and so does the first entry");
	rdzv_envset_destroy(set);
}

static void test_apply(void)
{
	struct rdzv_envset *set = rdzv_envset_create();
	struct memenv m;
	struct rdzv_env_ops ops = ops_for(&m);
	const struct rdzv_env_entry *e;

	if (!set)
		skip_all("out of memory");
	memset(&m, 0, sizeof(m));
	mem_set(&m, "USER_SET", "mine");
	mem_set(&m, "ENF", "user");
	mem_set(&m, "SAME", "1");
	mem_set(&m, "GONE", "x");
	mem_set(&m, "ENF_SAME", "v");
	m.sets = 0;

	rdzv_envset_add(set, "NEW", "1", RDZV_SET_DEFAULT, NULL, err, sizeof(err));
	rdzv_envset_add(set, "USER_SET", "computed", RDZV_SET_DEFAULT, NULL, err, sizeof(err));
	rdzv_envset_add(set, "ENF", "admin", RDZV_SET_ENFORCE, "profile site", err, sizeof(err));
	rdzv_envset_add(set, "ENF_NEW", "admin", RDZV_SET_ENFORCE, NULL, err, sizeof(err));
	rdzv_envset_add(set, "ENF_SAME", "v", RDZV_SET_ENFORCE, NULL, err, sizeof(err));
	rdzv_envset_add(set, "SAME", "1", RDZV_SET_DEFAULT, NULL, err, sizeof(err));
	rdzv_envset_add(set, "GONE", NULL, RDZV_SET_UNSET, NULL, err, sizeof(err));
	rdzv_envset_add(set, "NEVER", NULL, RDZV_SET_UNSET, NULL, err, sizeof(err));
	e = rdzv_envset_find(set, "NEW");
	is_int(e ? (int)e->outcome : -1, RDZV_OUT_NONE, "an entry's outcome is pending before apply");

	is_int(rdzv_envset_apply(set, &ops, err, sizeof(err)), 0, "apply succeeds");

	e = rdzv_envset_find(set, "NEW");
	ok(e && e->outcome == RDZV_OUT_SET && !e->user_value, "a DEFAULT variable the user lacks is SET");
	is_str(mem_value(&m, "NEW"), "1", "and the task has it");

	e = rdzv_envset_find(set, "USER_SET");
	ok(e && e->outcome == RDZV_OUT_USER_KEPT, "a DEFAULT variable the user exported is USER_KEPT");
	is_str(e ? e->user_value : NULL, "mine", "the user's value is recorded");
	is_str(mem_value(&m, "USER_SET"), "mine", "and the task keeps the user's value");

	e = rdzv_envset_find(set, "ENF");
	ok(e && e->outcome == RDZV_OUT_ENFORCED, "an ENFORCE variable the user exported is ENFORCED");
	is_str(e ? e->user_value : NULL, "user", "the replaced user value is recorded");
	is_str(mem_value(&m, "ENF"), "admin", "and the task gets the enforced value");

	e = rdzv_envset_find(set, "ENF_NEW");
	ok(e && e->outcome == RDZV_OUT_SET && !e->user_value,
	   "an ENFORCE variable the user lacks is SET");
	is_str(mem_value(&m, "ENF_NEW"), "admin", "and the task has it");

	e = rdzv_envset_find(set, "ENF_SAME");
	ok(e && e->outcome == RDZV_OUT_SET, "an ENFORCE variable the user set to the same value is SET");
	e = rdzv_envset_find(set, "SAME");
	ok(e && e->outcome == RDZV_OUT_SET && !e->user_value,
	   "a DEFAULT variable the user set to the same value is SET, not USER_KEPT");
	is_int(m.sets, 3, "only the three variables that change are written");

	e = rdzv_envset_find(set, "GONE");
	ok(e && e->outcome == RDZV_OUT_UNSET, "UNSET of a present variable is UNSET");
	is_str(e ? e->user_value : NULL, "x", "the removed value is recorded");
	ok(mem_value(&m, "GONE") == NULL, "and the task no longer has it");
	e = rdzv_envset_find(set, "NEVER");
	ok(e && e->outcome == RDZV_OUT_ABSENT, "UNSET of an absent variable is ABSENT");
	is_int(m.unsets, 1, "an absent variable is not unset");

	/* applying again (another task of the node) finds the values in place */
	is_int(rdzv_envset_apply(set, &ops, err, sizeof(err)), 0, "a second apply succeeds");
	e = rdzv_envset_find(set, "ENF");
	ok(e && e->outcome == RDZV_OUT_SET && !e->user_value,
	   "the second apply records the new state, not the first one's");

	/* failures name the variable */
	mem_set(&m, "ENF", "user again");
	m.fail_set = "ENF";
	err[0] = '\0';
	is_int(rdzv_envset_apply(set, &ops, err, sizeof(err)), -1, "a failing set fails apply");
	ok(strstr(err, "cannot set ENF") != NULL, "the reason names the variable");
	m.fail_set = NULL;
	m.fail_get = "USER_SET";
	is_int(rdzv_envset_apply(set, &ops, err, sizeof(err)), -1, "a failing get fails apply");
	ok(strstr(err, "USER_SET") != NULL, "the reason names the variable");
	m.fail_get = NULL;

	/* a user value too long for the buffer is an error, never truncated */
	{
		char *big = malloc(RDZV_VALUE_MAX + 10);

		if (big) {
			memset(big, 'u', RDZV_VALUE_MAX + 9);
			big[RDZV_VALUE_MAX + 9] = '\0';
			mem_set(&m, "NEW", big);
			is_int(rdzv_envset_apply(set, &ops, err, sizeof(err)), -1,
			       "a user value longer than the buffer fails apply");
			ok(strstr(err, "NEW") != NULL, "the reason names the variable");
			free(big);
		}
	}

	is_str(rdzv_outcome_name(RDZV_OUT_USER_KEPT), "user value kept", "outcomes have names");
	is_str(rdzv_outcome_name(RDZV_OUT_ENFORCED), "enforced over user value",
	       "ENFORCED says the user value was replaced");
	is_str(rdzv_outcome_name((enum rdzv_outcome)99), "?", "an unknown outcome is '?'");
	rdzv_envset_destroy(set);
	mem_free(&m);
}

/* The one warning line of a step: exported identity values replaced,
 * exported addresses kept; nothing when the exports agree. */
static void test_stale(void)
{
	struct memenv m;
	struct rdzv_env_ops ops = ops_for(&m);
	struct rdzv_envset *set = rdzv_envset_create();
	char line[512];

	memset(&m, 0, sizeof(m));
	if (!set)
		skip_all("out of memory");
	mem_set(&m, "RANK", "0");
	mem_set(&m, "WORLD_SIZE", "16");
	mem_set(&m, "LOCAL_RANK", "1");
	mem_set(&m, "MASTER_ADDR", "n1");
	mem_set(&m, "MASTER_PORT", "29500");
	mem_set(&m, "OMP_NUM_THREADS", "4");
	ok(rdzv_envset_addfx(set, "rdzv", RDZV_SET_ENFORCE, RDZV_ENV_IDENTITY, "RANK", err,
	                     sizeof(err), "%u", 3u) == 0
	   && rdzv_envset_addfx(set, "rdzv", RDZV_SET_ENFORCE, RDZV_ENV_IDENTITY, "WORLD_SIZE",
	                        err, sizeof(err), "%u", 4u) == 0
	   && rdzv_envset_addfx(set, "rdzv", RDZV_SET_ENFORCE, RDZV_ENV_IDENTITY, "LOCAL_RANK",
	                        err, sizeof(err), "%u", 1u) == 0
	   && rdzv_envset_addfx(set, "rdzv", RDZV_SET_DEFAULT, RDZV_ENV_ADDRESS, "MASTER_ADDR",
	                        err, sizeof(err), "%s", "n3") == 0
	   && rdzv_envset_addfx(set, "rdzv", RDZV_SET_DEFAULT, RDZV_ENV_ADDRESS, "MASTER_PORT",
	                        err, sizeof(err), "%u", 29500u) == 0
	   && rdzv_envset_addf(set, "rdzv", "OMP_NUM_THREADS", err, sizeof(err), "1") == 0,
	   "identity and address entries are added");
	is_int(rdzv_envset_addfx(set, "rdzv", RDZV_SET_UNSET, 0, "X", err, sizeof(err), "x"), -1,
	       "a formatted UNSET entry is refused");
	is_int(rdzv_envset_stale(set, line, sizeof(line)), 0, "nothing to say before apply");
	ok(rdzv_envset_apply(set, &ops, err, sizeof(err)) == 0, "apply");
	is_str(mem_value(&m, "RANK"), "3", "an exported RANK=0 is replaced by the step's 3");
	is_str(mem_value(&m, "WORLD_SIZE"), "4", "an exported WORLD_SIZE=16 is replaced");
	is_str(mem_value(&m, "MASTER_ADDR"), "n1", "an exported MASTER_ADDR is kept");
	is_str(mem_value(&m, "OMP_NUM_THREADS"), "4", "the user's OMP_NUM_THREADS is kept");
	is_int(rdzv_envset_stale(set, line, sizeof(line)), 1, "there is something to say");
	is_str(line, "replaced exported RANK=0 (now 3), WORLD_SIZE=16 (now 4); kept exported "
	       "MASTER_ADDR=n1 (rdzv would set n3)", "one line: what was replaced, what was kept "
	       "(not LOCAL_RANK, which agreed, nor MASTER_PORT or OMP_NUM_THREADS)");
	ok(strchr(line, '\n') == NULL, "the line has no newline");
	is_int(rdzv_envset_stale(set, line, 20), -1, "a line that does not fit says so");
	ok(strlen(line) == 19 && strcmp(line + 16, "...") == 0, "and ends in '...' (%s)", line);
	rdzv_envset_destroy(set);
	mem_free(&m);

	set = rdzv_envset_create();
	if (!set)
		skip_all("out of memory");
	mem_set(&m, "RANK", "2");
	rdzv_envset_addfx(set, "rdzv", RDZV_SET_ENFORCE, RDZV_ENV_IDENTITY, "RANK", err,
	                  sizeof(err), "2");
	rdzv_envset_apply(set, &ops, err, sizeof(err));
	is_int(rdzv_envset_stale(set, line, sizeof(line)), 0,
	       "an export that agrees with the step is not worth a warning");
	is_str(line, "", "and the line is empty");
	rdzv_envset_destroy(set);
	mem_free(&m);
}

int main(void)
{
	test_invalid();
	test_add_rules();
	test_apply();
	test_stale();
	return done_testing();
}

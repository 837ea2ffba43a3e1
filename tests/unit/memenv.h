/* SPDX-License-Identifier: GPL-2.0-or-later */
/* memenv.h: an in-memory environment for the tests of what srun hands the
 * nodes (lib/step/handover.h), as spank_getenv/setenv/unsetenv give a
 * step's: shared by tests/unit/test-handover.c and tests/fuzz/fuzz-handover.c.
 * memenv_longest: the longest value ever set (a part must stay below what
 * Slurm forwards and exec takes). */
#ifndef RDZV_MEMENV_H
#define RDZV_MEMENV_H

#include <stdlib.h>
#include <string.h>

#include "handover.h"

#define MEMENV_VARS 256

static struct {
	char *name[MEMENV_VARS], *value[MEMENV_VARS];
	int n;
	size_t longest;
} memenv;

static int memenv_find(const char *name)
{
	int i;

	for (i = 0; i < memenv.n; i++)
		if (strcmp(memenv.name[i], name) == 0)
			return i;
	return -1;
}

static int memenv_get(void *ctx, const char *name, char **value)
{
	int i = memenv_find(name);

	(void)ctx;
	*value = NULL;
	if (i < 0)
		return 0;
	return (*value = strdup(memenv.value[i])) ? 1 : -1;
}

static int memenv_set(void *ctx, const char *name, const char *value)
{
	int i = memenv_find(name);
	char *v = strdup(value);

	(void)ctx;
	if (!v)
		return -1;
	if (strlen(value) > memenv.longest)
		memenv.longest = strlen(value);
	if (i < 0) {
		if (memenv.n == MEMENV_VARS || !(memenv.name[memenv.n] = strdup(name))) {
			free(v);
			return -1;
		}
		i = memenv.n++;
	} else {
		free(memenv.value[i]);
	}
	memenv.value[i] = v;
	return 0;
}

static void memenv_unset(void *ctx, const char *name)
{
	int i = memenv_find(name);

	(void)ctx;
	if (i < 0)
		return;
	free(memenv.name[i]);
	free(memenv.value[i]);
	memenv.n--;
	memenv.name[i] = memenv.name[memenv.n];
	memenv.value[i] = memenv.value[memenv.n];
}

static void __attribute__((unused)) memenv_reset(void)
{
	while (memenv.n)
		memenv_unset(NULL, memenv.name[0]);
	memenv.longest = 0;
}

static const struct rdzv_ho_env memenv_ops __attribute__((unused)) = {
	memenv_get, memenv_set, memenv_unset, NULL
};

#endif

/* test-container: the rule inside a container. What the container changed
 * gets the user's value back before the ordinary precedence runs, so an
 * image's ENV or an enroot hook's value is never taken for a user's export,
 * a user's export survives, enforced entries win, and every replaced value
 * is reported. Plugstack order and container requests. Invalid input first. */
#include "config.h"
#include "container.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char err[256];

#define MAXV 32
struct memenv {
	char *kv[MAXV + 1]; /* "NAME=value", NULL-terminated */
	const char *fail_get, *fail_set;
};

static int mem_idx(struct memenv *m, const char *name)
{
	size_t l = strlen(name);
	int i;

	for (i = 0; m->kv[i]; i++)
		if (strncmp(m->kv[i], name, l) == 0 && m->kv[i][l] == '=')
			return i;
	return -1;
}

static int mem_get(void *ctx, const char *name, char *buf, size_t len)
{
	struct memenv *m = ctx;
	int i = mem_idx(m, name);

	if (m->fail_get && strcmp(m->fail_get, name) == 0)
		return -1;
	if (i < 0)
		return 0;
	snprintf(buf, len, "%s", strchr(m->kv[i], '=') + 1);
	return 1;
}

static int mem_set(void *ctx, const char *name, const char *value)
{
	struct memenv *m = ctx;
	int i = mem_idx(m, name), n;
	char *s;

	if (m->fail_set && strcmp(m->fail_set, name) == 0)
		return -1;
	if (!(s = malloc(strlen(name) + strlen(value) + 2)))
		return -1;
	sprintf(s, "%s=%s", name, value);
	if (i >= 0) {
		free(m->kv[i]);
		m->kv[i] = s;
		return 0;
	}
	for (n = 0; m->kv[n]; n++)
		;
	if (n >= MAXV) {
		free(s);
		return -1;
	}
	m->kv[n] = s;
	m->kv[n + 1] = NULL;
	return 0;
}

static int mem_unset(void *ctx, const char *name)
{
	struct memenv *m = ctx;
	int i = mem_idx(m, name);

	if (i < 0)
		return 0;
	free(m->kv[i]);
	for (; m->kv[i]; i++)
		m->kv[i] = m->kv[i + 1];
	return 0;
}

static void mem_init(struct memenv *m, const char *const *kv)
{
	int i;

	memset(m, 0, sizeof(*m));
	for (i = 0; kv[i]; i++)
		m->kv[i] = strdup(kv[i]);
}

static void mem_free(struct memenv *m)
{
	int i;

	for (i = 0; m->kv[i]; i++)
		free(m->kv[i]);
}

static const char *val(struct memenv *m, const char *name)
{
	static char buf[256];

	return mem_get(m, name, buf, sizeof(buf)) > 0 ? buf : "(unset)";
}

static const char *fake_get(void *ctx, const char *name)
{
	const char *const *kv = ctx;
	size_t l = strlen(name);

	for (; *kv; kv++)
		if (strncmp(*kv, name, l) == 0 && (*kv)[l] == '=')
			return *kv + l + 1;
	return NULL;
}

int main(void)
{
	struct rdzv_container_changes ch = { NULL, 0 };
	struct rdzv_envset *set = rdzv_envset_create();
	struct memenv m;
	struct rdzv_env_ops ops = { mem_get, mem_set, mem_unset, &m };
	char text[1024];
	int n;

	/* Invalid input. */
	ok(rdzv_container_restore(NULL, NULL, &ops, &ch, err, sizeof(err)) == -1,
	   "no set: refused (%s)", err);
	ok(rdzv_container_restore(set, NULL, NULL, &ch, err, sizeof(err)) == -1,
	   "no environment operations: refused");
	is_int(rdzv_container_replaced(NULL, set, text, sizeof(text)), 0, "no changes: nothing replaced");
	rdzv_container_changes_free(NULL);
	ok(1, "changes_free(NULL) is harmless");

	/* The step the user launched: MASTER_PORT exported by the user. */
	char u0[] = "MASTER_PORT=1234", u1[] = "PATH=/usr/bin", u2[] = "NCCL_DEBUG=INFO";
	char *user_env[] = { u0, u1, u2, NULL };
	/* After pyxis: the hook's MASTER_ADDR/MASTER_PORT/WORLD_SIZE, pyxis's
	 * RANK, the image's NCCL_SOCKET_IFNAME and NCCL_IB_HCA. */
	static const char *const task[] = {
		"MASTER_ADDR=n1", "MASTER_PORT=61234", "WORLD_SIZE=6", "RANK=3",
		"NCCL_SOCKET_IFNAME=eth0", "NCCL_IB_HCA=mlx5_0", "NCCL_DEBUG=INFO",
		"PATH=/usr/local/bin:/usr/bin", "OMP_NUM_THREADS=1", NULL };
	mem_init(&m, task);
	rdzv_envset_add(set, "MASTER_ADDR", "n3", RDZV_SET_DEFAULT, "rdzv", err, sizeof(err));
	rdzv_envset_add(set, "MASTER_PORT", "29512", RDZV_SET_DEFAULT, "rdzv", err, sizeof(err));
	rdzv_envset_add(set, "WORLD_SIZE", "6", RDZV_SET_DEFAULT, "rdzv", err, sizeof(err));
	rdzv_envset_add(set, "RANK", "3", RDZV_SET_DEFAULT, "rdzv", err, sizeof(err));
	rdzv_envset_add(set, "NCCL_SOCKET_IFNAME", "ib0", RDZV_SET_DEFAULT, "profile site", err, sizeof(err));
	rdzv_envset_add(set, "NCCL_IB_HCA", "mlx5_2", RDZV_SET_ENFORCE, "profile site", err, sizeof(err));
	rdzv_envset_add(set, "NCCL_DEBUG", "WARN", RDZV_SET_DEFAULT, "profile site", err, sizeof(err));
	rdzv_envset_add(set, "LOCAL_RANK", "1", RDZV_SET_DEFAULT, "rdzv", err, sizeof(err));

	n = rdzv_container_restore(set, user_env, &ops, &ch, err, sizeof(err));
	is_int(n, 6, "six names changed by the container (all but NCCL_DEBUG, LOCAL_RANK)");
	is_str(val(&m, "MASTER_PORT"), "1234", "the user's exported MASTER_PORT is put back over the hook's");
	is_str(val(&m, "MASTER_ADDR"), "(unset)", "the hook's MASTER_ADDR is removed: the user had none");
	is_str(val(&m, "NCCL_SOCKET_IFNAME"), "(unset)", "the image's NCCL_SOCKET_IFNAME is not a user's export");
	is_str(val(&m, "OMP_NUM_THREADS"), "1", "a name the plugin does not set is left alone");
	is_str(val(&m, "PATH"), "/usr/local/bin:/usr/bin", "the image's PATH is left alone");

	ok(rdzv_envset_apply(set, &ops, err, sizeof(err)) == 0, "apply after restore");
	is_str(val(&m, "MASTER_ADDR"), "n3", "MASTER_ADDR is the plugin's (rank 0's node)");
	is_str(val(&m, "MASTER_PORT"), "1234", "MASTER_PORT: the user's export wins, as outside");
	is_str(val(&m, "NCCL_SOCKET_IFNAME"), "ib0", "the profile's default replaces the image's value");
	is_str(val(&m, "NCCL_IB_HCA"), "mlx5_2", "the enforced entry replaces the image's value");
	is_str(val(&m, "NCCL_DEBUG"), "INFO", "the user's NCCL_DEBUG is kept (unchanged by the container)");
	is_str(val(&m, "LOCAL_RANK"), "1", "a name the container never set is set as usual");

	n = rdzv_container_replaced(&ch, set, text, sizeof(text));
	is_int(n, 4, "four container values replaced (RANK and WORLD_SIZE agreed)");
	ok(strstr(text, "MASTER_ADDR=n1 -> n3 (rdzv)") != NULL, "report names MASTER_ADDR: %s", text);
	ok(strstr(text, "MASTER_PORT=61234 -> 1234 (rdzv, the user's export)") != NULL,
	   "report says the user's export replaced the hook's port");
	ok(strstr(text, "NCCL_IB_HCA=mlx5_0 -> mlx5_2 (profile site, enforced)") != NULL,
	   "report says the enforced entry replaced the image's");
	ok(strstr(text, "WORLD_SIZE") == NULL && strstr(text, "RANK=") == NULL,
	   "values that agree are not reported");
	n = rdzv_container_replaced(&ch, set, text, 12);
	is_int(n, 4, "a short buffer still counts every replacement");
	ok(strlen(text) < 12, "and the text is cut, terminated");
	mem_free(&m);

	/* Nothing changed: no changes. */
	{
		static const char *const same[] = { "MASTER_PORT=1234", NULL };
		struct rdzv_envset *one = rdzv_envset_create();

		mem_init(&m, same);
		rdzv_envset_add(one, "MASTER_PORT", "29512", RDZV_SET_DEFAULT, "rdzv", err, sizeof(err));
		is_int(rdzv_container_restore(one, user_env, &ops, &ch, err, sizeof(err)), 0,
		       "the user's value untouched by the container: no change");
		is_int(rdzv_container_restore(one, NULL, &ops, &ch, err, sizeof(err)), 1,
		       "no saved environment: every value present counts as the container's");
		is_str(val(&m, "MASTER_PORT"), "(unset)", "and is removed before apply");
		mem_free(&m);
		mem_init(&m, same);
		m.fail_get = "MASTER_PORT";
		ok(rdzv_container_restore(one, user_env, &ops, &ch, err, sizeof(err)) == -1
		   && strstr(err, "MASTER_PORT"), "a failing read names the variable (%s)", err);
		m.fail_get = NULL;
		m.fail_set = "MASTER_PORT";
		mem_free(&m);
		{
			static const char *const other[] = { "MASTER_PORT=777", NULL };
			mem_init(&m, other);
		}
		m.fail_set = "MASTER_PORT";
		ok(rdzv_container_restore(one, user_env, &ops, &ch, err, sizeof(err)) == -1
		   && strstr(err, "MASTER_PORT"), "a failing restore names the variable (%s)", err);
		mem_free(&m);
		rdzv_envset_destroy(one);
	}
	rdzv_container_changes_free(&ch);
	ok(ch.v == NULL && ch.n == 0, "changes_free empties");

	/* Plugstack order. */
	{
		const char *a[] = { "pyxis", "rdzv" }, *b[] = { "rdzv", "other", "pyxis" },
		           *c[] = { "rdzv" }, *d[] = { "pyxis" }, *e[] = { NULL, "pyxis", NULL, "rdzv" };

		is_int(rdzv_container_order(a, 2), RDZV_ORDER_PYXIS_FIRST, "pyxis then rdzv: the rule holds");
		is_int(rdzv_container_order(b, 3), RDZV_ORDER_RDZV_FIRST, "rdzv then pyxis: refused order");
		is_int(rdzv_container_order(c, 1), RDZV_ORDER_NO_PYXIS, "no pyxis: nothing to decide");
		is_int(rdzv_container_order(d, 1), RDZV_ORDER_NO_PYXIS, "rdzv not among them: nothing");
		is_int(rdzv_container_order(NULL, 3), RDZV_ORDER_NO_PYXIS, "no list: nothing");
		is_int(rdzv_container_order(e, 4), RDZV_ORDER_PYXIS_FIRST, "NULL names are skipped");
	}

	/* Container requests. */
	{
		static const char *none[] = { "SLURM_JOB_ID=5", NULL };
		static const char *opt[] = { "_SLURM_SPANK_OPTION_pyxis_container_image=/x.sqsh", NULL };
		static const char *name[] = { "_SLURM_SPANK_OPTION_pyxis_container_name=c", NULL };
		static const char *env[] = { "PYXIS_CONTAINER_IMAGE=nvcr.io#nvidia/pytorch", NULL };
		static const char *empty[] = { "PYXIS_CONTAINER_IMAGE=", NULL };

		is_int(rdzv_container_requested(fake_get, (void *)none), 0, "no pyxis option: no container");
		is_int(rdzv_container_requested(fake_get, (void *)opt), 1, "--container-image given");
		is_int(rdzv_container_requested(fake_get, (void *)name), 1, "--container-name given");
		is_int(rdzv_container_requested(fake_get, (void *)env), 1, "PYXIS_CONTAINER_IMAGE set");
		is_int(rdzv_container_requested(fake_get, (void *)empty), 0, "an empty value asks for nothing");
		is_int(rdzv_container_requested(NULL, NULL), 0, "no lookup: no container");
	}
	rdzv_envset_destroy(set);
	return done_testing();
}

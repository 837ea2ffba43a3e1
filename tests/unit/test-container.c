/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-container: the rule inside a container. What the container changed
 * gets the user's value back before the ordinary precedence runs, so an
 * image's ENV or an enroot hook's value is never taken for a user's export,
 * a user's export survives, enforced entries win, and every replaced value
 * is reported. Plugstack order and container requests. Invalid input first.
 * Apptainer (test_apptainer): every variable a task ends with is also given
 * as APPTAINERENV_NAME and SINGULARITYENV_NAME with the task's value (the
 * two always equal: Apptainer warns when they differ); a user's own APPTAINERENV_ or
 * SINGULARITYENV_ name is kept unless the entry is enforced; UNSET entries
 * take the user's copies away; names the plugin does not set are untouched. */
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

static void test_apptainer(void)
{
	struct rdzv_envset *set = rdzv_envset_create(), *late = rdzv_envset_create();
	struct rdzv_apptainer_stats st;
	struct memenv m;
	struct rdzv_env_ops ops = { mem_get, mem_set, mem_unset, &m };
	char note[512];
	/* The user exported MASTER_ADDR (kept, DEFAULT), a stale RANK and a
	 * stale APPTAINERENV_RANK (identity is enforced), APPTAINERENV_NCCL_DEBUG
	 * (kept: a default), SINGULARITYENV_NCCL_IB_HCA (enforced over),
	 * APPTAINERENV_NCCL_P2P_DISABLE
	 * (the profile unsets it), and a variable of their own image's. */
	static const char *const task[] = {
		"MASTER_ADDR=n1", "RANK=0", "APPTAINERENV_RANK=0", "APPTAINERENV_NCCL_DEBUG=INFO",
		"SINGULARITYENV_NCCL_IB_HCA=mlx5_9", "APPTAINERENV_NCCL_P2P_DISABLE=1",
		"NCCL_P2P_DISABLE=1", "APPTAINERENV_MY_IMAGE_VAR=x", "PATH=/usr/bin", NULL };

	/* Invalid input. */
	memset(&st, 0, sizeof(st));
	mem_init(&m, task);
	ok(rdzv_container_apptainer(NULL, &ops, &st, err, sizeof(err)) == -1, "apptainer: no set refused");
	ok(rdzv_container_apptainer(set, NULL, &st, err, sizeof(err)) == -1, "apptainer: no ops refused");
	ok(rdzv_container_apptainer(set, &ops, NULL, err, sizeof(err)) == -1, "apptainer: no stats refused");
	ok(rdzv_container_apptainer(set, &ops, &st, err, sizeof(err)) == 0 && st.set == 0,
	   "apptainer: an empty set carries nothing");
	rdzv_container_apptainer_note(&st, note, sizeof(note));
	is_str(note, "", "nothing carried: no verbose line");

	rdzv_envset_addfx(set, "rdzv", RDZV_SET_ENFORCE, RDZV_ENV_IDENTITY, "RANK", err, sizeof(err), "3");
	rdzv_envset_addfx(set, "rdzv", RDZV_SET_ENFORCE, RDZV_ENV_IDENTITY, "WORLD_SIZE", err,
	                  sizeof(err), "4");
	rdzv_envset_addfx(set, "rdzv", RDZV_SET_DEFAULT, RDZV_ENV_ADDRESS, "MASTER_ADDR", err,
	                  sizeof(err), "n3");
	rdzv_envset_addfx(set, "rdzv", RDZV_SET_DEFAULT, RDZV_ENV_ADDRESS, "MASTER_PORT", err,
	                  sizeof(err), "29512");
	rdzv_envset_add(set, "NCCL_IB_HCA", "mlx5_2", RDZV_SET_ENFORCE, "profile site", err, sizeof(err));
	rdzv_envset_add(set, "NCCL_DEBUG", "WARN", RDZV_SET_DEFAULT, "profile site", err, sizeof(err));
	rdzv_envset_add(set, "NCCL_P2P_DISABLE", NULL, RDZV_SET_UNSET, "profile site", err, sizeof(err));
	rdzv_envset_add(set, "NCCL_NET_GDR_LEVEL", NULL, RDZV_SET_UNSET, "profile site", err, sizeof(err));
	rdzv_envset_add(set, "CUDA_VISIBLE_DEVICES", "2", RDZV_SET_DEFAULT, "binding", err, sizeof(err));
	rdzv_envset_add(late, "JAX_LOCAL_DEVICE_IDS", "2", RDZV_SET_DEFAULT, "jax", err, sizeof(err));

	/* Not applied yet: nothing to carry (outcomes unknown). */
	ok(rdzv_container_apptainer(set, &ops, &st, err, sizeof(err)) == 0 && st.set == 0
	   && st.kept == 0 && st.removed == 0, "entries not applied yet are not carried");
	is_str(val(&m, "APPTAINERENV_WORLD_SIZE"), "(unset)", "so nothing is written");

	ok(rdzv_envset_apply(set, &ops, err, sizeof(err)) == 0 && rdzv_envset_apply(late, &ops, err,
	   sizeof(err)) == 0, "apply both sets");
	ok(rdzv_container_apptainer(set, &ops, &st, err, sizeof(err)) == 0, "carry the set");
	ok(rdzv_container_apptainer(late, &ops, &st, err, sizeof(err)) == 0, "carry the late set");
	is_str(val(&m, "APPTAINERENV_RANK"), "3", "identity: the plugin's RANK over a stale APPTAINERENV_RANK");
	is_str(val(&m, "APPTAINERENV_WORLD_SIZE"), "4", "WORLD_SIZE carried with the task's value");
	is_str(val(&m, "APPTAINERENV_MASTER_ADDR"), "n1",
	       "MASTER_ADDR: the task's final value (the user's kept export) is carried");
	is_str(val(&m, "MASTER_ADDR"), "n1", "and the task's own MASTER_ADDR is unchanged");
	is_str(val(&m, "APPTAINERENV_MASTER_PORT"), "29512", "MASTER_PORT carried");
	is_str(val(&m, "APPTAINERENV_NCCL_IB_HCA"), "mlx5_2", "an enforced profile entry is carried");
	is_str(val(&m, "SINGULARITYENV_NCCL_IB_HCA"), "mlx5_2",
	       "the user's SINGULARITYENV_ copy of an enforced entry is overwritten, equal to APPTAINERENV_'s");
	is_str(val(&m, "APPTAINERENV_NCCL_DEBUG"), "INFO",
	       "the user's own APPTAINERENV_NCCL_DEBUG is kept over a profile default");
	is_str(val(&m, "NCCL_DEBUG"), "WARN", "while the task's own NCCL_DEBUG is the profile's");
	is_str(val(&m, "APPTAINERENV_NCCL_P2P_DISABLE"), "(unset)",
	       "an unset entry removes the user's APPTAINERENV_ copy too");
	is_str(val(&m, "NCCL_P2P_DISABLE"), "(unset)", "as it removed the variable");
	is_str(val(&m, "APPTAINERENV_NCCL_NET_GDR_LEVEL"), "(unset)", "an unset entry writes nothing");
	is_str(val(&m, "APPTAINERENV_CUDA_VISIBLE_DEVICES"), "2", "binding's variables are carried");
	is_str(val(&m, "APPTAINERENV_JAX_LOCAL_DEVICE_IDS"), "2", "the late set's too");
	is_str(val(&m, "APPTAINERENV_MY_IMAGE_VAR"), "x", "a name the plugin does not set is untouched");
	is_str(val(&m, "APPTAINERENV_PATH"), "(unset)", "PATH (not the plugin's) gets no copy");
	is_str(val(&m, "SINGULARITYENV_RANK"), "3", "SINGULARITYENV_RANK is written too (SingularityCE)");
	is_str(val(&m, "SINGULARITYENV_MASTER_ADDR"), "n1", "with the same value as APPTAINERENV_'s");
	is_str(val(&m, "SINGULARITYENV_NCCL_DEBUG"), "(unset)",
	       "beside a user's kept APPTAINERENV_ copy no SINGULARITYENV_ one (they would differ)");
	is_int((int)st.set, 7, "seven copies written (RANK WORLD_SIZE MASTER_ADDR MASTER_PORT "
	       "NCCL_IB_HCA CUDA_VISIBLE_DEVICES JAX_LOCAL_DEVICE_IDS)");
	is_int((int)st.kept, 1, "one user's copy kept");
	is_int((int)st.removed, 1, "one user's copy removed");
	is_str(st.kept_names, "APPTAINERENV_NCCL_DEBUG", "the kept one is named");
	rdzv_container_apptainer_note(&st, note, sizeof(note));
	ok(strncmp(note, "7 variables also set as APPTAINERENV_* and SINGULARITYENV_* (Apptainer "
	           "applies an image's %environment over the task's)", 114) == 0, "verbose line: %s", note);
	ok(strstr(note, "kept the user's APPTAINERENV_NCCL_DEBUG") != NULL, "it names the kept copy");
	ok(strstr(note, "removed 1 of the user's copies") != NULL, "and counts the removed one");
	rdzv_container_apptainer_note(&st, note, 20);
	ok(strlen(note) < 20, "a short buffer cuts the line, terminated");

	/* Again on the same task (idempotent): values do not change. */
	memset(&st, 0, sizeof(st));
	ok(rdzv_container_apptainer(set, &ops, &st, err, sizeof(err)) == 0
	   && strcmp(val(&m, "APPTAINERENV_RANK"), "3") == 0, "a second pass changes nothing");
	is_int((int)st.kept, 4, "and counts the copies already there as kept (the four DEFAULT entries)");

	/* A user's SINGULARITYENV_ only, on a DEFAULT entry: theirs, kept. */
	mem_free(&m);
	{
		static const char *const s1[] = { "SINGULARITYENV_MASTER_PORT=4000", NULL };

		mem_init(&m, s1);
	}
	memset(&st, 0, sizeof(st));
	ok(rdzv_envset_apply(set, &ops, err, sizeof(err)) == 0
	   && rdzv_container_apptainer(set, &ops, &st, err, sizeof(err)) == 0, "apply and carry");
	is_str(val(&m, "APPTAINERENV_MASTER_PORT"), "(unset)",
	       "a user's SINGULARITYENV_MASTER_PORT: no APPTAINERENV_ copy beside it");
	is_str(val(&m, "SINGULARITYENV_MASTER_PORT"), "4000", "and theirs is kept");

	/* Failures name the variable. */
	m.fail_set = "APPTAINERENV_RANK";
	ok(rdzv_container_apptainer(set, &ops, &st, err, sizeof(err)) == -1
	   && strstr(err, "APPTAINERENV_RANK") != NULL, "a failing set names it (%s)", err);
	m.fail_set = "SINGULARITYENV_RANK";
	ok(rdzv_container_apptainer(set, &ops, &st, err, sizeof(err)) == -1
	   && strstr(err, "SINGULARITYENV_RANK") != NULL, "so does a failing second copy (%s)", err);
	m.fail_set = NULL;
	mem_free(&m);
	rdzv_envset_destroy(set);
	rdzv_envset_destroy(late);
}

/* APPTAINER_BIND: the user's binds first, ours appended once. */
static void test_binds(void)
{
	static const char *const ours[] = { "/usr/share/spank-rdzv/python:/usr/share/spank-rdzv/python:ro",
		                            "/tmp/rdzv-hang.1000/7.0:/tmp/rdzv-hang.1000/7.0" };
	char *v;

	v = rdzv_container_bind_append(NULL, ours, 2);
	is_str(v, "/usr/share/spank-rdzv/python:/usr/share/spank-rdzv/python:ro,"
	          "/tmp/rdzv-hang.1000/7.0:/tmp/rdzv-hang.1000/7.0", "no user's binds: ours, comma separated");
	free(v);
	v = rdzv_container_bind_append("", ours, 1);
	is_str(v, "/usr/share/spank-rdzv/python:/usr/share/spank-rdzv/python:ro", "an empty value: ours alone");
	free(v);
	v = rdzv_container_bind_append("/data:/data,/scratch", ours, 1);
	is_str(v, "/data:/data,/scratch,/usr/share/spank-rdzv/python:/usr/share/spank-rdzv/python:ro",
	       "the user's binds kept, first");
	free(v);
	v = rdzv_container_bind_append("/a,/usr/share/spank-rdzv/python:/usr/share/spank-rdzv/python:ro", ours, 2);
	is_str(v, "/a,/usr/share/spank-rdzv/python:/usr/share/spank-rdzv/python:ro,"
	          "/tmp/rdzv-hang.1000/7.0:/tmp/rdzv-hang.1000/7.0", "an entry already there is not added again");
	free(v);
	v = rdzv_container_bind_append("/usr/share/spank-rdzv/python:/usr/share/spank-rdzv/python:rw", ours, 1);
	is_str(v, "/usr/share/spank-rdzv/python:/usr/share/spank-rdzv/python:rw,"
	          "/usr/share/spank-rdzv/python:/usr/share/spank-rdzv/python:ro",
	       "a longer or different entry is not taken for ours");
	free(v);
	v = rdzv_container_bind_append("/x", NULL, 0);
	is_str(v, "/x", "no entries: the user's value unchanged");
	free(v);
	is_int(rdzv_container_bind_path_ok("/usr/share/spank-rdzv/python"), 1, "an absolute path can be bound");
	is_int(rdzv_container_bind_path_ok("/a,b"), 0, "a path with ',' cannot be written in the list");
	is_int(rdzv_container_bind_path_ok("/a:b"), 0, "nor one with ':'");
	is_int(rdzv_container_bind_path_ok("rel"), 0, "nor a relative one");
	is_int(rdzv_container_bind_path_ok(NULL), 0, "nor none");
}

/* The command lines whose image never sees the plugin's PYTHONPATH. */
static void test_cleanenv(void)
{
	static const struct { const char *line; const char *want; const char *name; } tt[] = {
		{ "apptainer exec --cleanenv img.sif python3 t.py", "apptainer", "apptainer exec --cleanenv" },
		{ "/usr/bin/singularity run -e img.sif", "singularity", "singularity run -e (a path to it)" },
		{ "apptainer exec --containall img.sif python3", "apptainer", "--containall cleans too" },
		{ "apptainer exec -eB /data img.sif python3", "apptainer", "a short cluster with e" },
		{ "apptainer exec -C img.sif python3", "apptainer", "-C (--containall)" },
		{ "apptainer exec --env USE_LIBUV=0 --cleanenv img.sif python3", "apptainer",
		  "an --env that is not PYTHONPATH" },
		{ "apptainer exec --cleanenv --env PYTHONPATH=/opt/rdzv img.sif python3", NULL,
		  "--env PYTHONPATH=...: the user carries it" },
		{ "apptainer exec --cleanenv --env=A=1,PYTHONPATH=/x img.sif python3", NULL,
		  "--env=LIST naming PYTHONPATH" },
		{ "apptainer exec --cleanenv --env-file vars img.sif python3", NULL,
		  "--env-file: not known here, nothing said" },
		{ "apptainer exec img.sif python3", NULL, "no --cleanenv: the host's PYTHONPATH reaches it" },
		{ "apptainer exec -B /d img.sif python3 --cleanenv", NULL, "--cleanenv after the image is the program's" },
		{ "apptainer build x.sif def", NULL, "not a command that runs the image" },
		{ "python3 apptainer exec --cleanenv", NULL, "not the runtime" },
		{ "apptainer", NULL, "the runtime alone" },
	};
	size_t i;

	for (i = 0; i < sizeof(tt) / sizeof(tt[0]); i++) {
		char buf[256], *av[16], *save = NULL, *t;
		int ac = 0;
		const char *got;

		snprintf(buf, sizeof(buf), "%s", tt[i].line);
		for (t = strtok_r(buf, " ", &save); t && ac < 15; t = strtok_r(NULL, " ", &save))
			av[ac++] = t;
		av[ac] = NULL;
		got = rdzv_container_cleans_pythonpath(ac, av);
		ok((got == NULL) == (tt[i].want == NULL) && (!got || strcmp(got, tt[i].want) == 0),
		   "cleaned PYTHONPATH: %s: %s", tt[i].name, got ? got : "none");
	}
	ok(rdzv_container_cleans_pythonpath(0, NULL) == NULL, "no command line: none");
}

int main(void)
{
	struct rdzv_container_changes ch = { NULL, 0 };
	struct rdzv_envset *set = rdzv_envset_create();
	struct memenv m;
	struct rdzv_env_ops ops = { mem_get, mem_set, mem_unset, &m };
	char text[1024];
	int n;

	test_cleanenv();
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
	test_apptainer();
	test_binds();
	return done_testing();
}

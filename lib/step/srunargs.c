/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
/* srunargs.c: the one reader of srun's own command line (srunargs.h). */
#include "config.h"
#include "srunargs.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* srun's options that take a value (Slurm 22.05-26.05, src/common/slurm_opt.c,
 * those srun accepts), and the plugin's own. A long option not listed here is
 * taken to have no value unless written --name=value. */
static const char srun_short_req[] = "ABCDFGJLMNSTWbcdeimnopqrtwx";
static const char *const srun_long_req[] = {
	"accel-bind", "account", "acctg-freq", "bb", "bbf", "bcast", "bcast-exclude", "begin",
	"chdir", "cluster", "cluster-constraint", "clusters", "comment", "constraint",
	"container", "container-id", "context", "core-spec", "cores-per-socket", "cpu-bind",
	"cpu-freq", "cpu_bind", "cpus-per-gpu", "cpus-per-task", "deadline", "delay-boot",
	"dependency", "distribution", "epilog", "error", "exclude", "export", "extra",
	"extra-node-info", "gpu-bind", "gpu-freq", "gpus", "gpus-per-node", "gpus-per-socket",
	"gpus-per-task", "gres", "gres-flags", "het-group", "hint", "input", "job-name",
	"jobid", "licenses", "mail-type", "mail-user", "mcs-label", "mem", "mem-bind",
	"mem-per-cpu", "mem-per-gpu", "mincpus", "mpi", "msg-timeout", "network", "nodefile",
	"nodelist", "nodes", "ntasks", "ntasks-per-core", "ntasks-per-gpu", "ntasks-per-node",
	"ntasks-per-socket", "ntasks-per-tres", "open-mode", "output", "pack-group",
	"partition", "prefer", "priority", "profile", "prolog", "qos", "relative",
	"reservation", "resv-ports", "segment", "signal", "slurmd-debug", "sockets-per-node",
	"switches", "task-epilog", "task-prolog", "tasks-per-node", "thread-spec", "threads",
	"threads-per-core", "time", "time-min", "tmp", "tres-bind", "tres-per-task", "wait",
	"wckey", "rdzv", "rdzv-port", "rdzv-bind", "nccl-profile", NULL
};

int rdzv_srun_long_takes_value(const char *name, size_t n)
{
	size_t i;

	for (i = 0; srun_long_req[i]; i++)
		if (strlen(srun_long_req[i]) == n && strncmp(srun_long_req[i], name, n) == 0)
			return 1;
	return 0;
}

int rdzv_srun_short_takes_value(int c)
{
	return c != '\0' && strchr(srun_short_req, c) != NULL;
}

/* 1 nodelist, 2 nodefile, 0 other: exact, or an abbreviation only these
 * two long options share (getopt_long takes a unique prefix). */
/* Abbreviations getopt_long accepts for the options the plugin reads
 * (unique prefixes of srun's names); "nodes" is an option of its own. */
static const struct {
	const char *name;
	size_t min;
} srun_abbrev_req[] = { { "nodelist", 5 }, { "nodefile", 5 }, { NULL, 0 } };

static int long_takes_value(const char *name, size_t n)
{
	size_t i;

	if (rdzv_srun_long_takes_value(name, n))
		return 1;
	for (i = 0; srun_abbrev_req[i].name; i++)
		if (n >= srun_abbrev_req[i].min && n <= strlen(srun_abbrev_req[i].name)
		    && strncmp(srun_abbrev_req[i].name, name, n) == 0)
			return 1;
	return 0;
}

void rdzv_srun_args_init(struct rdzv_srun_args *it, int argc, char *const *argv)
{
	memset(it, 0, sizeof(*it));
	it->argc = argc;
	it->argv = argv;
	it->i = 1;
	it->command = -1;
}

static int end_at(struct rdzv_srun_args *it, int command)
{
	it->done = 1;
	it->command = command;
	return 0;
}

int rdzv_srun_args_next(struct rdzv_srun_args *it, struct rdzv_srun_arg *a, char *err,
                        size_t errlen)
{
	memset(a, 0, sizeof(*a));
	if (it->done)
		return 0;
	/* Inside a cluster of short options ("-KN2" is -K then... no: -K takes
	 * the rest as its value; "-lN2" is -l then -N 2). */
	while (it->cluster && *it->cluster) {
		char c = *it->cluster++;

		a->short_name = c;
		if (c == 'K') { /* an optional value, attached only */
			a->value = *it->cluster ? it->cluster : NULL;
			it->cluster = NULL;
			return 1;
		}
		if (!rdzv_srun_short_takes_value(c))
			return 1; /* a flag; the cluster goes on */
		if (*it->cluster) {
			a->value = it->cluster;
		} else if (it->i < it->argc && it->argv[it->i]) {
			a->value = it->argv[it->i++];
		} else {
			it->done = 1;
			return rdzv_err(err, errlen, "srun option -%c has no value", c);
		}
		it->cluster = NULL;
		return 1;
	}
	it->cluster = NULL;
	if (!it->argv || it->i >= it->argc || !it->argv[it->i])
		return end_at(it, -1);
	{
		const char *s = it->argv[it->i];

		if (strcmp(s, "--") == 0)
			return end_at(it, it->i + 1 < it->argc && it->argv[it->i + 1] ? it->i + 1 : -1);
		if (s[0] != '-' || s[1] == '\0')
			return end_at(it, it->i);
		it->i++;
		if (s[1] == '-') {
			const char *name = s + 2, *eq = strchr(name, '=');

			a->long_name = name;
			a->long_len = eq ? (size_t)(eq - name) : strlen(name);
			if (eq) {
				a->value = eq + 1;
			} else if (long_takes_value(name, a->long_len)) {
				if (it->i >= it->argc || !it->argv[it->i]) {
					it->done = 1;
					return rdzv_err(err, errlen, "srun option --%.*s has no value",
					                (int)a->long_len, name);
				}
				a->value = it->argv[it->i++];
			}
			return 1;
		}
		it->cluster = s + 1;
	}
	return rdzv_srun_args_next(it, a, err, errlen);
}

int rdzv_srun_arg_is(const struct rdzv_srun_arg *a, char short_name, const char *long_name,
                     size_t min_prefix)
{
	if (a->long_name)
		return long_name && a->long_len >= min_prefix && a->long_len <= strlen(long_name)
		       && strncmp(long_name, a->long_name, a->long_len) == 0;
	return short_name && a->short_name == short_name;
}

static int num(const char *s, const char **end, unsigned long *v)
{
	unsigned long x = 0;
	int n = 0;

	while (*s >= '0' && *s <= '9' && n < 9) {
		x = x * 10 + (unsigned long)(*s++ - '0');
		n++;
	}
	if (n == 0 || (*s >= '0' && *s <= '9'))
		return -1;
	*v = x;
	*end = s;
	return 0;
}

int rdzv_srun_size(int argc, char *const *argv, struct rdzv_srun_size *sz)
{
	struct rdzv_srun_args it;
	struct rdzv_srun_arg a;
	const char *end;
	int rc;

	memset(sz, 0, sizeof(*sz));
	rdzv_srun_args_init(&it, argc, argv);
	while ((rc = rdzv_srun_args_next(&it, &a, NULL, 0)) > 0) {
		if (rdzv_srun_arg_is(&a, 'n', "ntasks", 6)) {
			if (!a.value || num(a.value, &end, &sz->ntasks) < 0 || *end)
				return -1;
		} else if (rdzv_srun_arg_is(&a, 'N', "nodes", 5)) {
			if (!a.value || num(a.value, &end, &sz->nodes_min) < 0)
				return -1;
			sz->nodes_max = sz->nodes_min;
			if (*end == '-' && (num(end + 1, &end, &sz->nodes_max) < 0
			                    || sz->nodes_max < sz->nodes_min))
				return -1;
			if (*end)
				return -1;
		} else if (a.long_name && a.long_len == 15
		           && strncmp(a.long_name, "ntasks-per-node", 15) == 0) {
			if (!a.value || num(a.value, &end, &sz->per_node) < 0 || *end)
				return -1;
		}
	}
	return rc < 0 ? -1 : 0;
}

unsigned long rdzv_srun_min_tasks(const struct rdzv_srun_size *sz)
{
	if (sz->ntasks)
		return sz->ntasks;
	if (sz->nodes_min)
		return sz->nodes_min * (sz->per_node ? sz->per_node : 1);
	return sz->per_node;
}

unsigned long rdzv_srun_exact_tasks(const struct rdzv_srun_size *sz)
{
	if (sz->ntasks)
		return sz->ntasks;
	if (sz->nodes_min && sz->nodes_min == sz->nodes_max && sz->per_node)
		return sz->nodes_min * sz->per_node;
	return 0;
}

int rdzv_srun_names_job(int argc, char *const *argv)
{
	struct rdzv_srun_args it;
	struct rdzv_srun_arg a;
	int rc;

	rdzv_srun_args_init(&it, argc, argv);
	while ((rc = rdzv_srun_args_next(&it, &a, NULL, 0)) > 0)
		if (rdzv_srun_arg_is(&a, 0, "jobid", 4))
			return 1;
	return rc < 0 ? -1 : 0;
}

#define CMDLINE_MAX (1u << 20)

/* srun's own argv, from /proc/self/cmdline (SPANK gives plugins only the
 * program's). Returns argc, or -1; *buf and *argv to free. */
int rdzv_srun_argv(char **buf, char ***argv)
{
	size_t i, n = 0;
	int argc = 0;
	char *text = NULL;
	FILE *f = fopen("/proc/self/cmdline", "re");

	*buf = NULL;
	*argv = NULL;
	if (!f)
		return -1;
	if (!(text = malloc(CMDLINE_MAX + 1))) {
		fclose(f);
		return -1;
	}
	n = fread(text, 1, CMDLINE_MAX, f);
	fclose(f);
	text[n] = '\0';
	for (i = 0; i < n; i++)
		argc += text[i] == '\0';
	if (!(*argv = calloc((size_t)argc + 1, sizeof(char *)))) {
		free(text);
		return -1;
	}
	for (i = 0, argc = 0; i < n; i += strlen(text + i) + 1)
		(*argv)[argc++] = text + i;
	*buf = text;
	return argc;
}

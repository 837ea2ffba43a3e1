/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench-record: what the step record costs a node per step (record.h),
 * for 4, 8, 72 and 128 tasks a node: each task's part built from a
 * torch-mode environment with a profile and binding (about 45 variables)
 * and sent on a SOCK_SEQPACKET pair, as task_init does; then, as
 * slurmstepd's exit does, every part received and checked with the JSON
 * reader, the node's record built and written into a directory (a new file,
 * renamed into place). The goal: under 5 ms per node per step.
 *
 *   bench-record [--csv FILE] [DIR]   (DIR: where to write; default a new
 *                                      temporary directory, removed) */
#include "config.h"
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "envset.h"
#include "json.h"
#include "record.h"

struct ctx {
	uint32_t tasks;
	struct rdzv_envset *env;
	const char *dir;
	unsigned seq;
	size_t last_len; /* the last record's size */
};

static struct rdzv_envset *make_env(void)
{
	static const char *const rdzv_vars[] = {
		"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
		"GROUP_WORLD_SIZE", "ROLE_RANK", "ROLE_WORLD_SIZE", "NODE_RANK", "MASTER_ADDR",
		"MASTER_PORT", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT",
		"TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_USE_AGENT_STORE", "ROLE_NAME",
		"TORCH_NCCL_ASYNC_ERROR_HANDLING", "OMP_NUM_THREADS", "GLOO_SOCKET_IFNAME",
		"NCCL_SOCKET_IFNAME", "PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK",
		"PET_MASTER_ADDR", "PET_MASTER_PORT", NULL };
	static const char *const prof_vars[] = {
		"NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_NET_GDR_LEVEL", "NCCL_CROSS_NIC",
		"NCCL_IB_TIMEOUT", "NCCL_IB_RETRY_CNT", "NCCL_NVLS_ENABLE", "NCCL_P2P_LEVEL",
		"NCCL_DEBUG", "NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_SPLIT_DATA_ON_QPS",
		"NCCL_ALGO", "NCCL_PROTO", "NCCL_MIN_NCHANNELS", "RDZV_NCCL_POLICY", NULL };
	static const char *const bind_vars[] = { "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
		                                 "UCX_NET_DEVICES", "NCCL_IB_HCA_BIND",
		                                 "NVIDIA_IMEX_CHANNELS", NULL };
	struct rdzv_envset *e = rdzv_envset_create();
	char err[128];
	size_t i;

	for (i = 0; rdzv_vars[i]; i++)
		rdzv_envset_add(e, rdzv_vars[i], "gpu-node-000123.cluster.example", RDZV_SET_ENFORCE,
		                "rdzv", err, sizeof(err));
	for (i = 0; prof_vars[i]; i++)
		rdzv_envset_add(e, prof_vars[i], "=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1",
		                RDZV_SET_ENFORCE, "profile h100-ndr", err, sizeof(err));
	for (i = 0; bind_vars[i]; i++)
		rdzv_envset_add(e, bind_vars[i], "0,1,2,3", RDZV_SET_DEFAULT, "binding", err,
		                sizeof(err));
	for (i = 0; i < e->n; i++)
		e->v[i].outcome = RDZV_OUT_SET;
	return e;
}

static int one_step(void *arg, char *err, size_t errlen)
{
	struct ctx *c = arg;
	struct rdzv_record_exit *ex = calloc(c->tasks, sizeof(*ex));
	char **parts = calloc(c->tasks, sizeof(char *)), *buf = malloc(RDZV_RECORD_TASK_MAX + 1);
	struct rdzv_record_node n;
	struct rdzv_jw w;
	size_t got = 0;
	char name[64];
	int sv[2], rv = -1;
	uint32_t t;

	if (!ex || !parts || !buf
	    || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0) {
		snprintf(err, errlen, "setup failed");
		goto out;
	}
	{
		int size = (int)RDZV_RECORD_SOCKBUF; /* as the plugin does, as root */

		if (setsockopt(sv[1], SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0)
			(void)setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	}
	/* task_init, once per task (each in its own process on a node). */
	for (t = 0; t < c->tasks; t++) {
		struct rdzv_jw tw;

		rdzv_jw_init(&tw, RDZV_RECORD_TASK_MAX);
		rdzv_record_task_json(&tw, t, t, "0-17,144-161", c->env, NULL);
		if (send(sv[1], rdzv_jw_text(&tw), tw.len, MSG_DONTWAIT) < 0) {
			rdzv_jw_free(&tw);
			break; /* the socket is full: parts are dropped, as in the plugin */
		}
		rdzv_jw_free(&tw);
		ex[t].rank = t;
		ex[t].ms = 1765000000000 + t;
	}
	close(sv[1]);
	/* exit: receive, check, build, write. */
	for (;;) {
		ssize_t k = recv(sv[0], buf, RDZV_RECORD_TASK_MAX + 1, MSG_DONTWAIT | MSG_TRUNC);

		if (k <= 0)
			break;
		if ((size_t)k <= RDZV_RECORD_TASK_MAX && rdzv_json_valid(buf, (size_t)k))
			parts[got++] = strndup(buf, (size_t)k);
	}
	close(sv[0]);
	memset(&n, 0, sizeof(n));
	n.job = 123456;
	n.step = c->seq++;
	n.node = "gpu-node-000123";
	n.nnodes = 1024;
	n.ntasks = 1024 * c->tasks;
	n.local_ntasks = c->tasks;
	n.mode = "torch";
	n.tasks = (const char *const *)parts;
	n.ntasks_parts = got;
	n.tasks_lost = c->tasks - got;
	n.exits = ex;
	n.nexits = c->tasks;
	rdzv_jw_init(&w, RDZV_RECORD_MAX);
	if (rdzv_record_node_json(&n, &w) < 0
	    || rdzv_record_name(n.job, n.step, n.node, name, sizeof(name)) < 0
	    || rdzv_record_write(c->dir, name, rdzv_jw_text(&w), w.len, err, errlen) < 0) {
		c->last_len = w.len;
		rdzv_jw_free(&w);
		goto out;
	}
	c->last_len = w.len;
	rdzv_jw_free(&w);
	rv = 0;
out:
	while (got)
		free(parts[--got]);
	free(parts);
	free(buf);
	free(ex);
	return rv;
}

int main(int argc, char **argv)
{
	static const uint32_t per_node[] = { 4, 8, 72, 128 };
	char tmpl[] = "/tmp/rdzv-bench-record.XXXXXX", cmd[256], err[512] = "";
	const char *csv = NULL, *dir = NULL;
	struct ctx c;
	struct bench_stat st;
	int made = 0;
	size_t k;

	if (!(dir = bench_dir_args(argc, argv, "bench-record", &csv, tmpl, &made)))
		return 1;
	if (csv)
		bench_csv_open(csv);
	memset(&c, 0, sizeof(c));
	c.env = make_env();
	c.dir = dir;
	printf("\n== The step record: one node's cost per step (tasks' parts sent and checked, "
	       "record built and written)\n");
	printf("%10s %12s %12s %12s %10s %12s\n", "tasks/node", "median ms", "min ms", "max ms",
	       "variables", "record KiB");
	for (k = 0; k < sizeof(per_node) / sizeof(per_node[0]); k++) {
		char config[32];

		c.tasks = per_node[k];
		if (bench_time(one_step, NULL, &c, bench_batches(7), 200000, &st, err,
		               sizeof(err)) < 0) {
			fprintf(stderr, "bench-record: %s\n", err);
			break;
		}
		printf("%10u %12.3f %12.3f %12.3f %10zu %12.1f\n", c.tasks, st.median / 1000.0,
		       st.min / 1000.0, st.max / 1000.0, c.env->n, c.last_len / 1024.0);
		snprintf(config, sizeof(config), "tasks=%u", c.tasks);
		bench_csv_row("record", "node-per-step", config, &st, "us", -1, "");
	}
	bench_csv_close();
	rdzv_envset_destroy(c.env);
	if (made) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "bench-record: could not remove %s\n", dir);
	}
	return err[0] ? 1 : 0;
}

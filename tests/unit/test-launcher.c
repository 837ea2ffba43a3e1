/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-launcher.c: a framework's own launcher is found in a step's command
 * line through the wrappers the plugin can see, srun's options are skipped
 * to reach the task's command, and a step of several tasks running an
 * unconfigured launcher is refused with the command to run instead. */
#include "config.h"
#include "tap.h"
#include "launcher.h"

#include <stdlib.h>

/* A command line from one string of space-separated words ('~' stands for
 * a space inside a word). */
struct cmd {
	char buf[1024];
	char *v[64];
	int n;
};

static struct cmd *words(const char *s)
{
	static struct cmd c;
	char *p;

	memset(&c, 0, sizeof(c));
	snprintf(c.buf, sizeof(c.buf), "%s", s);
	for (p = strtok(c.buf, " "); p && c.n < 63; p = strtok(NULL, " ")) {
		char *q;

		for (q = p; *q; q++)
			if (*q == '~')
				*q = ' ';
		c.v[c.n++] = p;
	}
	c.v[c.n] = NULL;
	return &c;
}

struct find_case {
	const char *cmd;
	enum rdzv_launcher_kind kind;
	const char *command;    /* expected l.command, or NULL */
	const char *script;
	const char *configured;
	int in_shell;
};

static const struct find_case finds[] = {
	{ "deepspeed train.py --deepspeed_config ds.json", RDZV_LAUNCHER_DEEPSPEED, "deepspeed", "train.py", "", 0 },
	{ "/opt/venv/bin/deepspeed --num_gpus 2 train.py", RDZV_LAUNCHER_DEEPSPEED, "deepspeed", "train.py", "", 0 },
	{ "ds train.py", RDZV_LAUNCHER_DEEPSPEED, "ds", "train.py", "", 0 },
	{ "deepspeed.pt train.py", RDZV_LAUNCHER_DEEPSPEED, "deepspeed.pt", "train.py", "", 0 },
	{ "python -m deepspeed.launcher.runner train.py", RDZV_LAUNCHER_DEEPSPEED, "python -m deepspeed.launcher.runner", "train.py", "", 0 },
	{ "python3.11 -u -mdeepspeed.launcher.runner train.py", RDZV_LAUNCHER_DEEPSPEED, "python3.11 -u -mdeepspeed.launcher.runner", "train.py", "", 0 },
	{ "python3 -X dev -m deepspeed.launcher.runner t.py", RDZV_LAUNCHER_DEEPSPEED, NULL, "t.py", "", 0 },
	{ "python3 /usr/local/bin/deepspeed train.py", RDZV_LAUNCHER_DEEPSPEED, "python3 /usr/local/bin/deepspeed", "train.py", "", 0 },
	{ "deepspeed --no_ssh --node_rank=1 --master_addr=n1 train.py", RDZV_LAUNCHER_DEEPSPEED, NULL, "train.py", "--no_ssh", 0 },
	{ "bash -c deepspeed~train.py~--x~1", RDZV_LAUNCHER_DEEPSPEED, "deepspeed", "train.py", "", 1 },
	{ "bash -lc cd~/work~&&~deepspeed~train.py", RDZV_LAUNCHER_DEEPSPEED, "deepspeed", "train.py", "", 1 },
	{ "sh -ec FOO=1~exec~deepspeed~'my~train.py'", RDZV_LAUNCHER_DEEPSPEED, "deepspeed", "my train.py", "", 1 },
	{ "bash -c source~env.sh;~python~-m~deepspeed.launcher.runner~a.py", RDZV_LAUNCHER_DEEPSPEED, NULL, "a.py", "", 1 },
	{ "env OMP_NUM_THREADS=4 -u FOO deepspeed train.py", RDZV_LAUNCHER_DEEPSPEED, "deepspeed", "train.py", "", 0 },
	{ "nohup nice -n 5 time -p deepspeed train.py", RDZV_LAUNCHER_DEEPSPEED, "deepspeed", "train.py", "", 0 },
	{ "torchrun --nproc-per-node=2 train.py", RDZV_LAUNCHER_TORCHRUN, "torchrun", "train.py", "", 0 },
	{ "python -m torch.distributed.run train.py", RDZV_LAUNCHER_TORCHRUN, NULL, "train.py", "", 0 },
	{ "python -m torch.distributed.launch train.py", RDZV_LAUNCHER_TORCHRUN, NULL, "train.py", "", 0 },
	{ "torchrun --nnodes=2 --rdzv-endpoint=n1:29500 train.py", RDZV_LAUNCHER_TORCHRUN, NULL, "train.py", "--rdzv-endpoint", 0 },
	{ "torchrun --master_addr n1 train.py", RDZV_LAUNCHER_TORCHRUN, NULL, "train.py", "--master_addr", 0 },
	{ "bash -c torchrun~--nnodes~2~--rdzv_endpoint=$MASTER_ADDR:$MASTER_PORT~t.py", RDZV_LAUNCHER_TORCHRUN, NULL, "t.py", "--rdzv_endpoint", 1 },
	{ "accelerate launch train.py", RDZV_LAUNCHER_ACCELERATE, "accelerate launch", "train.py", "", 0 },
	{ "accelerate-launch --num_processes 2 train.py", RDZV_LAUNCHER_ACCELERATE, "accelerate-launch", "train.py", "", 0 },
	{ "python -m accelerate.commands.launch train.py", RDZV_LAUNCHER_ACCELERATE, NULL, "train.py", "", 0 },
	{ "accelerate launch --machine_rank 1 --main_process_ip n1 train.py", RDZV_LAUNCHER_ACCELERATE, NULL, "train.py", "--machine_rank", 0 },
	/* not launchers */
	{ "python train.py", RDZV_LAUNCHER_NONE, NULL, NULL, NULL, 0 },
	{ "python -c import_deepspeed", RDZV_LAUNCHER_NONE, NULL, NULL, NULL, 0 },
	{ "python deepspeed_train.py", RDZV_LAUNCHER_NONE, NULL, NULL, NULL, 0 },
	{ "accelerate config", RDZV_LAUNCHER_NONE, NULL, NULL, NULL, 0 },
	{ "accelerate env", RDZV_LAUNCHER_NONE, NULL, NULL, NULL, 0 },
	{ "bash train.sh", RDZV_LAUNCHER_NONE, NULL, NULL, NULL, 0 },
	{ "bash -c echo~deepspeed", RDZV_LAUNCHER_NONE, NULL, NULL, NULL, 0 },
	{ "bash -c bash~-c~deepspeed", RDZV_LAUNCHER_NONE, NULL, NULL, NULL, 0 },
	{ "python3-config --cflags", RDZV_LAUNCHER_NONE, NULL, NULL, NULL, 0 },
	{ "/usr/bin/python3 tests/e2e/torchrun-shim.py train.py", RDZV_LAUNCHER_NONE, NULL, NULL, NULL, 0 },
	{ "env", RDZV_LAUNCHER_NONE, NULL, NULL, NULL, 0 },
	{ "python -m", RDZV_LAUNCHER_NONE, NULL, NULL, NULL, 0 },
	{ "bash -c", RDZV_LAUNCHER_NONE, NULL, NULL, NULL, 0 },
};

static void find(void)
{
	size_t i;

	for (i = 0; i < sizeof(finds) / sizeof(finds[0]); i++) {
		const struct find_case *c = &finds[i];
		struct cmd *w = words(c->cmd);
		struct rdzv_launcher l;
		int rc = rdzv_launcher_find(w->n, w->v, NULL, &l);

		if (c->kind == RDZV_LAUNCHER_NONE) {
			ok(rc == 0 && l.kind == RDZV_LAUNCHER_NONE, "'%s': no launcher", c->cmd);
			continue;
		}
		ok(rc == 1 && l.kind == c->kind && (!c->command || strcmp(l.command, c->command) == 0)
		   && strcmp(l.script, c->script) == 0 && strcmp(l.configured, c->configured) == 0
		   && l.in_shell == c->in_shell,
		   "'%s': %s as '%s', script '%s'%s%s%s", c->cmd, rdzv_launcher_name(l.kind),
		   l.command, l.script, l.configured[0] ? ", configured by " : "", l.configured,
		   l.in_shell ? ", inside -c" : "");
	}
}

static void pet_env(void)
{
	struct cmd *w = words("torchrun train.py");
	char e1[] = "PET_MASTER_ADDR=n1", *envp[] = { e1, NULL };
	struct rdzv_launcher l;

	ok(rdzv_launcher_find(w->n, w->v, envp, &l) == 1 && strcmp(l.configured, "PET_MASTER_ADDR") == 0,
	   "torchrun with PET_MASTER_ADDR exported is configured by the environment");
}

static void srun_index(void)
{
	static const struct { const char *cmd; int at; } c[] = {
		{ "srun deepspeed train.py", 1 },
		{ "srun -N2 -n 4 --rdzv=deepspeed deepspeed train.py", 5 },
		{ "srun -N 2 --ntasks-per-node 2 --rdzv deepspeed --rdzv-verbose deepspeed t.py", 8 },
		{ "srun -lN2 -w n[1-2] -- deepspeed t.py", 5 },
		{ "srun --label --kill-on-bad-exit=0 -K python t.py", 4 },
		{ "srun -N2", -1 },
		{ "srun --", -1 },
		{ "srun -w", -1 },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct cmd *w = words(c[i].cmd);

		is_int(rdzv_srun_command_index(w->n, w->v), c[i].at, c[i].cmd);
	}
	is_int(rdzv_srun_command_index(0, NULL), -1, "no argv: no command");
}

static void check(void)
{
	char err[512];
	struct cmd *w = words("deepspeed train.py --deepspeed_config ds.json");
	int rc;

	err[0] = '\0';
	rc = rdzv_launcher_check("deepspeed", w->n, w->v, NULL, 4, err, sizeof(err));
	ok(rc == -1, "deepspeed command in a step of 4 tasks: refused");
	ok(strstr(err, "'deepspeed'") && strstr(err, "srun --rdzv=deepspeed python train.py")
	   && strstr(err, "4 tasks"), "... naming the command and what to run instead: %s", err);
	ok(strlen(err) < sizeof(err) - 1, "... the message fits (%zu bytes)", strlen(err));
	is_int(rdzv_launcher_check("deepspeed", w->n, w->v, NULL, 1, err, sizeof(err)), 0,
	       "deepspeed command in a step of one task: works as on a workstation");

	w = words("bash -c torchrun~--nproc-per-node=2~train.py");
	ok(rdzv_launcher_check("torch", w->n, w->v, NULL, 2, err, sizeof(err)) == -1
	   && strstr(err, "torchrun") && strstr(err, "inside the shell's -c string")
	   && strstr(err, "srun --rdzv=torch python train.py")
	   && strstr(err, "--ntasks-per-node=1 --rdzv=torchrun"),
	   "torchrun inside bash -c under --rdzv=torch with 2 tasks: refused, both fixes named: %s", err);

	w = words("accelerate launch -m my.module");
	ok(rdzv_launcher_check("lightning", w->n, w->v, NULL, 8, err, sizeof(err)) == -1
	   && strstr(err, "accelerate launch") && strstr(err, "python -m my.module"),
	   "accelerate launch -m MOD: refused, 'python -m MOD' suggested: %s", err);

	w = words("torchrun --rdzv-endpoint=n1:1234 --nnodes=2 train.py");
	is_int(rdzv_launcher_check("torch", w->n, w->v, NULL, 2, err, sizeof(err)), 0,
	       "torchrun given its rendezvous endpoint: the user's set-up, not refused");
	w = words("python train.py");
	is_int(rdzv_launcher_check("torch", w->n, w->v, NULL, 64, err, sizeof(err)), 0,
	       "python train.py: not refused");
	is_int(rdzv_launcher_check("torch", 0, NULL, NULL, 64, err, sizeof(err)), 0,
	       "unknown command line: not refused");
}

static void long_string(void)
{
	char *big = malloc(RDZV_LAUNCHER_TEXT_MAX * 2 + 64);
	char a0[] = "bash", a1[] = "-c", *v[] = { a0, a1, big, NULL };
	struct rdzv_launcher l;
	size_t i;

	if (!big)
		return;
	for (i = 0; i < RDZV_LAUNCHER_TEXT_MAX * 2; i++)
		big[i] = i % 3 == 2 ? ';' : 'x';
	strcpy(big + RDZV_LAUNCHER_TEXT_MAX * 2, ";deepspeed t.py");
	ok(rdzv_launcher_find(3, v, NULL, &l) == 0,
	   "a -c string beyond %d bytes is read up to there only (no launcher past it)",
	   RDZV_LAUNCHER_TEXT_MAX);
	memcpy(big, "deepspeed t.py;", 15);
	ok(rdzv_launcher_find(3, v, NULL, &l) == 1, "... one in its head is found");
	free(big);
}

int main(void)
{
	find();
	pet_env();
	srun_index();
	check();
	long_string();
	return done_testing();
}

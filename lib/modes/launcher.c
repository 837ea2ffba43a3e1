/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/modes/: what each mode sets (torch, Megatron, launchers, frameworks,
 * containers), srun's verdict on Megatron's groups over the domains, and the
 * plugstack arguments that choose them. Uses lib/domains/, lib/step/,
 * lib/common/. */
/* launcher.c: see launcher.h. */
#include "config.h"
#include "launcher.h"
#include "master.h"
#include "srunargs.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

static const char *base(const char *w)
{
	const char *s = strrchr(w, '/');

	return s ? s + 1 : w;
}

/* python, python3, python3.11 (not python3-config). */
static int is_python(const char *b)
{
	if (strncmp(b, "python", 6) != 0)
		return 0;
	return strspn(b + 6, "0123456789.") == strlen(b + 6);
}

static int is_shell(const char *b)
{
	static const char *const shells[] = { "sh", "bash", "dash", "zsh", "ksh", NULL };
	int i;

	for (i = 0; shells[i]; i++)
		if (strcmp(b, shells[i]) == 0)
			return 1;
	return 0;
}

/* The kind a program's own name (or a script's file name) stands for. */
static enum rdzv_launcher_kind by_name(const char *b, int *needs_launch)
{
	*needs_launch = 0;
	if (strcmp(b, "deepspeed") == 0 || strcmp(b, "deepspeed.pt") == 0 || strcmp(b, "ds") == 0)
		return RDZV_LAUNCHER_DEEPSPEED;
	if (strcmp(b, "torchrun") == 0)
		return RDZV_LAUNCHER_TORCHRUN;
	if (strcmp(b, "accelerate-launch") == 0)
		return RDZV_LAUNCHER_ACCELERATE;
	if (strcmp(b, "accelerate") == 0) {
		*needs_launch = 1;
		return RDZV_LAUNCHER_ACCELERATE;
	}
	return RDZV_LAUNCHER_NONE;
}

static enum rdzv_launcher_kind by_module(const char *m, int *needs_launch)
{
	*needs_launch = 0;
	if (strcmp(m, "deepspeed.launcher.runner") == 0)
		return RDZV_LAUNCHER_DEEPSPEED;
	if (strcmp(m, "torch.distributed.run") == 0 || strcmp(m, "torch.distributed.launch") == 0)
		return RDZV_LAUNCHER_TORCHRUN;
	if (strcmp(m, "accelerate.commands.launch") == 0)
		return RDZV_LAUNCHER_ACCELERATE;
	if (strcmp(m, "accelerate.commands.accelerate_cli") == 0) {
		*needs_launch = 1;
		return RDZV_LAUNCHER_ACCELERATE;
	}
	return RDZV_LAUNCHER_NONE;
}

/* Whether word w is option name, bare or as name=value. */
static int is_opt(const char *w, const char *name)
{
	size_t n = strlen(name);

	return strncmp(w, name, n) == 0 && (w[n] == '\0' || w[n] == '=');
}

static const char *const configured_deepspeed[] = { "--no_ssh", "--no-ssh", NULL };
static const char *const configured_torchrun[] = {
	"--rdzv-endpoint", "--rdzv_endpoint", "--master-addr", "--master_addr", NULL
};
static const char *const configured_accelerate[] = {
	"--main_process_ip", "--main-process-ip", "--machine_rank", "--machine-rank", NULL
};

/* The launcher's arguments, argv[from..argc): the flag that configures the
 * rendezvous, the script and the module. */
static void read_args(int argc, char *const *argv, int from, char *const *envp,
                      struct rdzv_launcher *l)
{
	const char *const *cfg = l->kind == RDZV_LAUNCHER_DEEPSPEED ? configured_deepspeed
	                         : l->kind == RDZV_LAUNCHER_TORCHRUN ? configured_torchrun
	                         : configured_accelerate;
	int i, j;

	for (i = from; i < argc && argv[i]; i++) {
		const char *w = argv[i];
		size_t n = strlen(w);

		if (!l->configured[0])
			for (j = 0; cfg[j]; j++)
				if (is_opt(w, cfg[j]))
					snprintf(l->configured, sizeof(l->configured), "%s", cfg[j]);
		if (!l->module[0] && (strcmp(w, "-m") == 0 || strcmp(w, "--module") == 0)
		    && i + 1 < argc && argv[i + 1] && argv[i + 1][0] != '-')
			snprintf(l->module, sizeof(l->module), "%s", argv[i + 1]);
		if (!l->script[0] && n > 3 && w[0] != '-' && strcmp(w + n - 3, ".py") == 0)
			snprintf(l->script, sizeof(l->script), "%s", w);
	}
	if (l->kind == RDZV_LAUNCHER_TORCHRUN && !l->configured[0] && envp) {
		if (rdzv_envp_get(envp, "PET_RDZV_ENDPOINT"))
			snprintf(l->configured, sizeof(l->configured), "PET_RDZV_ENDPOINT");
		else if (rdzv_envp_get(envp, "PET_MASTER_ADDR"))
			snprintf(l->configured, sizeof(l->configured), "PET_MASTER_ADDR");
	}
}

/* Words before the program that only wrap it: env's assignments and
 * options, nohup, time, nice. Returns the program's index. */
static int skip_wrappers(int argc, char *const *argv, int i)
{
	while (i < argc && argv[i]) {
		const char *b = base(argv[i]);

		if (strcmp(b, "env") == 0) {
			for (i++; i < argc && argv[i]; i++) {
				const char *w = argv[i];

				if (strcmp(w, "-u") == 0 || strcmp(w, "-C") == 0 || strcmp(w, "-S") == 0)
					i++;
				else if (w[0] != '-' && !strchr(w, '='))
					break;
			}
		} else if (strcmp(b, "nohup") == 0) {
			i++;
		} else if (strcmp(b, "time") == 0) {
			for (i++; i < argc && argv[i] && argv[i][0] == '-'; i++)
				;
		} else if (strcmp(b, "nice") == 0) {
			i++;
			if (i < argc && argv[i] && strcmp(argv[i], "-n") == 0)
				i += 2;
			else if (i < argc && argv[i] && argv[i][0] == '-')
				i++;
		} else {
			break;
		}
	}
	return i;
}

/* The command string of bash/sh -c, or NULL. */
static const char *shell_string(int argc, char *const *argv, int i)
{
	int has_c = 0;

	for (i++; i < argc && argv[i]; i++) {
		const char *w = argv[i];

		if (strcmp(w, "--") == 0) {
			i++;
			break;
		}
		if (w[0] != '-' && w[0] != '+')
			break;
		if (w[1] == '-') { /* --login, --rcfile FILE, --init-file FILE */
			if (strcmp(w, "--rcfile") == 0 || strcmp(w, "--init-file") == 0)
				i++;
			continue;
		}
		if (strchr(w + 1, 'c'))
			has_c = 1;
		if (strchr(w + 1, 'o') || strchr(w + 1, 'O'))
			i++; /* -o OPTION, -O SHOPT */
	}
	return has_c && i < argc && argv[i] ? argv[i] : NULL;
}

struct words {
	char text[RDZV_LAUNCHER_TEXT_MAX + RDZV_LAUNCHER_WORDS_MAX];
	char *v[RDZV_LAUNCHER_WORDS_MAX + 1];
	int sep[RDZV_LAUNCHER_WORDS_MAX + 1]; /* 1: a separator stands at v[i] */
	int n;
};

static int is_op(char c)
{
	return c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '\n';
}

/* Split a shell command string into words and separators (no expansion). */
static void split_shell(const char *s, struct words *w)
{
	size_t used = 0, len = strnlen(s, RDZV_LAUNCHER_TEXT_MAX);
	size_t i = 0;

	w->n = 0;
	while (i < len && w->n < RDZV_LAUNCHER_WORDS_MAX) {
		char q = 0;

		if (s[i] == ' ' || s[i] == '\t') {
			i++;
			continue;
		}
		if (is_op(s[i])) {
			while (i < len && is_op(s[i]))
				i++;
			w->v[w->n] = NULL;
			w->sep[w->n++] = 1;
			continue;
		}
		w->v[w->n] = w->text + used;
		w->sep[w->n] = 0;
		while (i < len && (q || (s[i] != ' ' && s[i] != '\t' && !is_op(s[i])))) {
			if (!q && (s[i] == '\'' || s[i] == '"')) {
				q = s[i++];
				continue;
			}
			if (q && s[i] == q) {
				q = 0;
				i++;
				continue;
			}
			if (s[i] == '\\' && q != '\'' && i + 1 < len)
				i++;
			w->text[used++] = s[i++];
		}
		w->text[used++] = '\0';
		w->n++;
	}
	w->v[w->n] = NULL;
}

static int find_in(int argc, char *const *argv, char *const *envp, int depth,
                   struct rdzv_launcher *l);

static int is_keyword(const char *w)
{
	static const char *const kw[] = { "exec", "command", "then", "do", "else", "if", "while",
		                          "until", "!", "{", "}", "time", NULL };
	int i;

	for (i = 0; kw[i]; i++)
		if (strcmp(w, kw[i]) == 0)
			return 1;
	return 0;
}

static int find_in_shell(const char *text, char *const *envp, struct rdzv_launcher *l)
{
	struct words w;
	int i = 0;

	split_shell(text, &w);
	while (i < w.n) {
		int start, end;

		while (i < w.n && (w.sep[i] || is_keyword(w.v[i])
		                   || (strchr(w.v[i], '=') && w.v[i][0] != '-' && w.v[i][0] != '=')))
			i++;
		start = i;
		for (end = start; end < w.n && !w.sep[end]; end++)
			;
		if (end > start) {
			char *saved = w.v[end];

			w.v[end] = NULL;
			if (find_in(end - start, w.v + start, envp, 1, l) > 0) {
				l->in_shell = 1;
				return 1;
			}
			w.v[end] = saved;
		}
		i = end;
	}
	return 0;
}

static void name_command(struct rdzv_launcher *l, char *const *argv, int from, int to)
{
	size_t used = 0;
	int i;

	l->command[0] = '\0';
	for (i = from; i <= to && argv[i]; i++) {
		int n = snprintf(l->command + used, sizeof(l->command) - used, "%s%s", i > from ? " " : "",
		                 i == from ? base(argv[i]) : argv[i]);

		if (n < 0 || (size_t)n >= sizeof(l->command) - used)
			break;
		used += (size_t)n;
	}
}

static int find_in(int argc, char *const *argv, char *const *envp, int depth,
                   struct rdzv_launcher *l)
{
	int i, j, needs_launch = 0;
	const char *b, *module = NULL;
	enum rdzv_launcher_kind kind;

	if (!argv || argc <= 0)
		return 0;
	i = skip_wrappers(argc, argv, 0);
	if (i >= argc || !argv[i])
		return 0;
	b = base(argv[i]);
	j = i + 1;
	kind = by_name(b, &needs_launch);
	if (kind == RDZV_LAUNCHER_NONE && is_python(b)) {
		/* python's options: -m MOD ends them, -c CODE is Python code. */
		for (; j < argc && argv[j] && argv[j][0] == '-' && argv[j][1]; j++) {
			const char *w = argv[j], *c;

			if (strcmp(w, "--") == 0) {
				j++;
				break;
			}
			if (w[1] == '-') {
				if (strcmp(w, "--check-hash-based-pycs") == 0)
					j++;
				continue;
			}
			for (c = w + 1; *c && !strchr("mcXW", *c); c++)
				;
			if (*c == 'c')
				return 0;
			if (*c == 'm') {
				module = c[1] ? c + 1 : (j + 1 < argc ? argv[++j] : NULL);
				j++;
				break;
			}
			if (*c && !c[1])
				j++; /* -X opt, -W arg */
		}
		if (module)
			kind = by_module(module, &needs_launch);
		else if (j < argc && argv[j])
			kind = by_name(base(argv[j++]), &needs_launch);
	} else if (kind == RDZV_LAUNCHER_NONE && is_shell(b) && depth == 0) {
		const char *text = shell_string(argc, argv, i);

		return text ? find_in_shell(text, envp, l) : 0;
	}
	if (kind == RDZV_LAUNCHER_NONE)
		return 0;
	if (needs_launch) { /* accelerate's subcommand, after its own options */
		while (j < argc && argv[j] && argv[j][0] == '-')
			j++;
		if (j >= argc || !argv[j] || strcmp(argv[j], "launch") != 0)
			return 0;
		j++;
	}
	l->kind = kind;
	name_command(l, argv, i, j - 1);
	read_args(argc, argv, j, envp, l);
	return 1;
}

int rdzv_launcher_find(int argc, char *const *argv, char *const *envp, struct rdzv_launcher *l)
{
	memset(l, 0, sizeof(*l));
	if (find_in(argc, argv, envp, 0, l) > 0)
		return 1;
	memset(l, 0, sizeof(*l));
	return 0;
}

int rdzv_srun_command_index(int argc, char *const *argv)
{
	struct rdzv_srun_args it;
	struct rdzv_srun_arg a;

	rdzv_srun_args_init(&it, argc, argv);
	while (rdzv_srun_args_next(&it, &a, NULL, 0) > 0)
		;
	return it.done ? it.command : -1;
}

const char *rdzv_launcher_name(enum rdzv_launcher_kind kind)
{
	switch (kind) {
	case RDZV_LAUNCHER_DEEPSPEED:
		return "DeepSpeed's launcher";
	case RDZV_LAUNCHER_TORCHRUN:
		return "torchrun";
	case RDZV_LAUNCHER_ACCELERATE:
		return "accelerate launch";
	default:
		return "none";
	}
}

int rdzv_launcher_check(const char *mode, int argc, char *const *argv, char *const *envp,
                        uint32_t ntasks, char *err, size_t errlen)
{
	struct rdzv_launcher l;
	char run[128], where[160];

	if (ntasks <= 1 || rdzv_launcher_find(argc, argv, envp, &l) == 0 || l.configured[0])
		return 0;
	if (l.module[0])
		snprintf(run, sizeof(run), "python -m %s", l.module);
	else
		snprintf(run, sizeof(run), "python %s", l.script[0] ? l.script : "train.py");
	snprintf(where, sizeof(where), "'%s'%s", l.command, l.in_shell ? ", inside the shell's -c string" : "");
	switch (l.kind) {
	case RDZV_LAUNCHER_DEEPSPEED:
		return rdzv_err(err, errlen,
		                "--rdzv=%s: the step's command is DeepSpeed's launcher (%s), which reads "
		                "no Slurm variable: each of the %u tasks would start workers of its own "
		                "(RANK=0 WORLD_SIZE=1 on 127.0.0.1:29500) and train alone. Run the "
		                "script under srun instead: srun --rdzv=deepspeed %s ... (one task "
		                "per GPU; the plugin sets what the launcher would). The deepspeed "
		                "command works only in a step of one task on one node",
		                mode, where, ntasks, run);
	case RDZV_LAUNCHER_TORCHRUN:
		return rdzv_err(err, errlen,
		                "--rdzv=%s: the step's command is torchrun (%s): each of the %u tasks "
		                "would start its own torchrun agent, whose workers get RANK and "
		                "WORLD_SIZE of a world of their own instead of the step's. Run the "
		                "script itself: srun --rdzv=%s %s ..., or one torchrun per node: "
		                "srun --ntasks-per-node=1 --rdzv=torchrun torchrun ...",
		                mode, where, ntasks, mode, run);
	case RDZV_LAUNCHER_ACCELERATE:
		return rdzv_err(err, errlen,
		                "--rdzv=%s: the step's command is accelerate launch (%s): it re-runs "
		                "torchrun in each of the %u tasks and overwrites the plugin's RANK and "
		                "WORLD_SIZE, one world per task. Run the script itself: srun "
		                "--rdzv=%s %s ... (Accelerate reads RANK, WORLD_SIZE, LOCAL_RANK), or "
		                "give accelerate launch --machine_rank and --main_process_ip under "
		                "srun --ntasks-per-node=1",
		                mode, where, ntasks, mode, run);
	default:
		return 0;
	}
}

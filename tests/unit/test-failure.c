/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-failure: reading --rdzv and -K from srun's command line before srun
 * does, the kill-on-bad-exit decision, the failure datagram and line, and
 * the restart count. Invalid input first. */
#include "config.h"
#include "failure.h"
#include "tap.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <errno.h>
#include <unistd.h>

#include "util.h"

/* srun's command line, words separated by spaces: --rdzv's value and -K as
 * srun will read them; rc_want -1: refused. */
static void scan(const char *line, int rc_want, const char *want_mode, int want_kbe)
{
	char buf[512], *argv[32], *w;
	const char *mode = "unset";
	int argc = 0, kbe = 7, rc;

	snprintf(buf, sizeof(buf), "%s", line);
	for (w = strtok(buf, " "); w && argc < 31; w = strtok(NULL, " "))
		argv[argc++] = w;
	argv[argc] = NULL;
	rc = rdzv_srun_arg_failure(argc, argv, &mode, &kbe);
	if (!ok(rc == rc_want && (rc < 0 || (kbe == want_kbe
	        && ((!mode && !want_mode) || (mode && want_mode && strcmp(mode, want_mode) == 0)))),
	        "%s: %s", line, rc_want < 0 ? "refused" : want_mode ? want_mode : "no --rdzv"))
		diag("rc %d mode '%s' kbe %d", rc, mode ? mode : "(null)", kbe);
}

static void test_scan(void)
{
	const char *m;
	int k;

	scan("srun -n", -1, NULL, -1);
	scan("srun --rdzv", -1, NULL, -1);
	scan("srun --rdzv=torch python x.py", 0, "torch", -1);
	scan("srun -N2 -n 4 --rdzv torchrun torchrun x.py", 0, "torchrun", -1);
	scan("srun -n 4 python --rdzv=torch", 0, NULL, -1);   /* the program's */
	scan("srun -J --rdzv=torch python", 0, NULL, -1);     /* -J's value */
	scan("srun --rdzv=torch --rdzv=off python", 0, "off", -1);
	scan("srun -K0 --rdzv=torch python", 0, "torch", 0);
	scan("srun --kill-on-bad-exit=0 --rdzv=torch python", 0, "torch", 0);
	scan("srun -lK --rdzv=torch python", 0, "torch", 1);
	scan("srun --kill python", 0, NULL, 1);               /* a unique prefix */
	scan("srun -- --rdzv=torch", 0, NULL, -1);
	scan("srun --rdzv-port 29500 --rdzv-verbose python", 0, NULL, -1);
	scan("srun -K 0 --rdzv=torch", 0, NULL, 1);           /* 0 is the program */
	scan("srun --job-name x --rdzv=jax python", 0, "jax", -1);
	scan("srun -wn1 -n2 --rdzv=deepspeed python", 0, "deepspeed", -1);
	ok(rdzv_srun_arg_failure(0, NULL, &m, &k) == 0 && !m && k == -1, "no command line");
}

static enum rdzv_kbe_action decide(const char *arg, int arg_kbe, const char *spank_env,
                                   const char *rdzv_mode, int env_fallback, const char *site,
                                   const char *kbe_env, int conf_kbe, const char **mode)
{
	struct rdzv_kbe_in in = { arg, arg_kbe, spank_env, rdzv_mode, env_fallback,
	                          rdzv_mode_find(site), kbe_env, conf_kbe };
	const struct rdzv_mode *m = NULL;
	enum rdzv_kbe_action a = rdzv_kbe_decide(&in, &m);

	*mode = m ? m->name : "(null)";
	return a;
}

static void test_decide(void)
{
	const char *m;

	ok(decide(NULL, -1, NULL, NULL, 1, "off", NULL, 1, &m) == RDZV_KBE_MODE_OFF
	   && strcmp(m, "off") == 0, "no mode anywhere: Slurm's own default");
	ok(decide("torch", -1, NULL, NULL, 1, "off", NULL, 1, &m) == RDZV_KBE_SET
	   && strcmp(m, "torch") == 0, "srun --rdzv=torch: export SLURM_KILL_BAD_EXIT=1");
	ok(decide(NULL, -1, "torchrun", NULL, 1, "off", NULL, 1, &m) == RDZV_KBE_SET
	   && strcmp(m, "torchrun") == 0, "#SBATCH --rdzv=torchrun: set");
	ok(decide(NULL, -1, NULL, "jax", 1, "off", NULL, 1, &m) == RDZV_KBE_SET
	   && strcmp(m, "jax") == 0, "RDZV_MODE=jax: set");
	ok(decide(NULL, -1, NULL, "jax", 0, "off", NULL, 1, &m) == RDZV_KBE_MODE_OFF,
	   "RDZV_MODE under env=no is not a mode");
	ok(decide(NULL, -1, NULL, NULL, 1, "torch", NULL, 1, &m) == RDZV_KBE_SET
	   && strcmp(m, "torch") == 0, "the site's mode=torch: set");
	ok(decide("off", -1, "torch", "torch", 1, "torch", NULL, 1, &m) == RDZV_KBE_MODE_OFF,
	   "srun --rdzv=off wins over everything");
	ok(decide(NULL, -1, "off", "torch", 1, "off", NULL, 1, &m) == RDZV_KBE_MODE_OFF,
	   "#SBATCH --rdzv=off wins over RDZV_MODE");
	ok(decide("torch", -1, "off", NULL, 1, "off", NULL, 1, &m) == RDZV_KBE_SET,
	   "srun --rdzv=torch wins over #SBATCH --rdzv=off");
	ok(decide("bogus", -1, NULL, NULL, 1, "torch", NULL, 1, &m) == RDZV_KBE_MODE_OFF,
	   "an invalid --rdzv (srun refuses it) sets nothing");
	ok(decide("torch", 0, NULL, NULL, 1, "off", NULL, 1, &m) == RDZV_KBE_USER,
	   "srun -K0: the user's choice");
	ok(decide("torch", -1, NULL, NULL, 1, "off", "0", 1, &m) == RDZV_KBE_USER,
	   "SLURM_KILL_BAD_EXIT=0 exported: the user's choice");
	ok(decide("torch", -1, NULL, NULL, 1, "off", NULL, 0, &m) == RDZV_KBE_ADMIN,
	   "kill_on_bad_exit=no: slurm.conf's KillOnBadExit decides");
	ok(rdzv_kbe_effective(-1, "1") == 1 && rdzv_kbe_effective(0, "1") == 0
	   && rdzv_kbe_effective(-1, "0") == 0 && rdzv_kbe_effective(1, NULL) == 1
	   && rdzv_kbe_effective(-1, NULL) == 0, "what srun will do: -K over SLURM_KILL_BAD_EXIT");
}

static void test_datagram(void)
{
	struct rdzv_failure f, g;
	char buf[512], line[512];
	const char *bad[] = { "", "RDZVF1", "RDZVF2 1.0 00000000000000ab 3 256 0 0 n2",
	                      "RDZVF1 1.0 00000000000000ab 3 256 2 0 n2",
	                      "RDZVF1 1.0 00000000000000ab 3 256 0 0 n2 extra",
	                      "RDZVF1 1.0 00000000000000ab 3 256 0 0 n2;rm",
	                      "RDZVF1 1.x 00000000000000ab 3 256 0 0 n2", NULL };
	int i;

	for (i = 0; bad[i]; i++)
		ok(rdzv_failure_decode(bad[i], strlen(bad[i]), &f) == -1, "datagram '%s' is refused",
		   bad[i]);
	ok(rdzv_failure_decode("RDZVF1 1.0 1 3 256 0 0 n2\0x", 27, &f) == -1,
	   "a datagram with a NUL inside is refused");
	memset(&f, 0, sizeof(f));
	f.job_id = 12;
	f.step_id = 3;
	f.nonce = 0xfeedfacecafebeefULL;
	f.rank = 3;
	f.status = 1 << 8;
	snprintf(f.node, sizeof(f.node), "n2");
	ok(rdzv_failure_encode(&f, buf, sizeof(buf)) == 0
	   && rdzv_failure_decode(buf, strlen(buf), &g) == 0 && g.job_id == 12 && g.step_id == 3
	   && g.nonce == f.nonce && g.rank == 3 && g.status == 256 && strcmp(g.node, "n2") == 0,
	   "a failure survives encode and decode (%s)", buf);
	ok(rdzv_failure_encode(&f, buf, 10) == -1, "encode refuses a short buffer");
	rdzv_failure_format(&f, 1, line, sizeof(line));
	is_str(line, "rdzv: rank 3 (node n2) exited with status 1; the step was stopped",
	       "exit status 1, stopped");
	f.status = SIGKILL;
	f.rank = 0;
	snprintf(f.node, sizeof(f.node), "n1");
	rdzv_failure_format(&f, 1, line, sizeof(line));
	is_str(line, "rdzv: rank 0 (node n1) was killed by signal 9 (Killed); the step was stopped",
	       "SIGKILL");
	f.per_node = 1;
	f.workers = 2;
	f.rank = 1;
	f.status = 1 << 8;
	snprintf(f.node, sizeof(f.node), "n2");
	rdzv_failure_format(&f, 0, line, sizeof(line));
	is_str(line, "rdzv: node rank 1 (node n2: torchrun, 2 workers) exited with status 1",
	       "torchrun's agent, kill-on-bad-exit not known to be on");
	/* The reason a node's task ended before its program ran. */
	{
		static const char *bad_reason[] = {
			"RDZVF1 1.0 00000000000000ab 3 256 0 0 n2\n",
			"RDZVF1 1.0 00000000000000ab 3 256 0 0 n2\nbad\ttab",
			"RDZVF1 1.0 00000000000000ab 3 256 0 0 n2\ntwo\nlines",
			"RDZVF1 1.0 00000000000000ab 3 256 0 0 n2 x\nok", NULL };
		char big[RDZV_FAILURE_DGRAM_MAX + 64], dgram[RDZV_FAILURE_DGRAM_MAX];
		char longline[RDZV_FAILURE_DGRAM_MAX + 128];

		for (i = 0; bad_reason[i]; i++)
			ok(rdzv_failure_decode(bad_reason[i], strlen(bad_reason[i]), &g) == -1
			   && g.node[0] == '\0', "datagram with a bad reason refused whole (%d)", i);
		memset(&f, 0, sizeof(f));
		f.job_id = 4;
		f.rank = 1;
		f.status = 1 << 8;
		snprintf(f.node, sizeof(f.node), "n2");
		rdzv_failure_set_reason(&f, "MASTER_ADDR=10.9.9.9 (exported)\nis not n1");
		is_str(f.reason, "MASTER_ADDR=10.9.9.9 (exported) is not n1",
		       "set_reason turns a newline into a space");
		ok(rdzv_failure_encode(&f, dgram, sizeof(dgram)) == 0
		   && rdzv_failure_decode(dgram, strlen(dgram), &g) == 0
		   && strcmp(g.reason, f.reason) == 0 && g.rank == 1,
		   "the reason survives encode and decode");
		rdzv_failure_format(&g, 1, longline, sizeof(longline));
		is_str(longline, "rdzv: rank 1 (node n2) exited with status 1 before its program "
		       "ran: MASTER_ADDR=10.9.9.9 (exported) is not n1; the step was stopped",
		       "the line carries the reason");
		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		rdzv_failure_set_reason(&f, big);
		ok(strlen(f.reason) == RDZV_FAILURE_REASON_MAX - 1, "a long reason is cut to fit");
		ok(rdzv_failure_encode(&f, dgram, sizeof(dgram)) == 0
		   && rdzv_failure_decode(dgram, strlen(dgram), &g) == 0
		   && strlen(g.reason) == RDZV_FAILURE_REASON_MAX - 1,
		   "the longest reason fits RDZV_FAILURE_DGRAM_MAX and decodes");
		snprintf(longline, sizeof(longline), "RDZVF1 1.0 00000000000000ab 3 256 0 0 n2\n%s", big);
		ok(rdzv_failure_decode(longline, strlen(longline), &g) == -1,
		   "a reason longer than RDZV_FAILURE_REASON_MAX is refused");
	}
	ok(rdzv_failure_is_bad(0) == 0 && rdzv_failure_is_bad(1 << 8) == 1
	   && rdzv_failure_is_bad(SIGKILL) == 1 && rdzv_failure_is_bad(SIGTERM) == 1,
	   "bad exits: non-zero status or a signal; 0 is not one");
}

static void test_report(void)
{
	char buf[128];
	uint32_t j, s;
	uint16_t p;
	uint64_t n;
	const char *bad[] = { "", "1.0", "1.0:5000:ab", "1.0:70000:ab:1", "1.0:5000:zz:1",
	                      "1.0:5000:ab:4", "1.0:5000:ab:-1", "1.0:5000:ab:1:x", "x.0:5000:ab:0", NULL };
	int i, k;

	for (i = 0; bad[i]; i++)
		ok(rdzv_report_parse(bad[i], &j, &s, &p, &n, &k) == -1, "report '%s' is refused", bad[i]);
	ok(rdzv_report_format(7, 2, 40000, 0xabcULL, 1, buf, sizeof(buf)) == 0
	   && rdzv_report_parse(buf, &j, &s, &p, &n, &k) == 0 && j == 7 && s == 2 && p == 40000
	   && n == 0xabc && k == 1, "the report address survives format and parse (%s)", buf);
	ok(rdzv_report_format(7, 2, 0, 1, 0, buf, sizeof(buf)) == 0
	   && rdzv_report_parse(buf, &j, &s, &p, &n, &k) == 0 && p == 0 && k == 0,
	   "port 0: srun has no socket, the flag still travels (%s)", buf);
}

static void test_restart(void)
{
	is_int(rdzv_restart_count(NULL), 0, "no SLURM_RESTART_COUNT: 0");
	is_int(rdzv_restart_count("2"), 2, "SLURM_RESTART_COUNT=2: 2");
	is_int(rdzv_restart_count("two"), 0, "a bad SLURM_RESTART_COUNT: 0");
	is_int(rdzv_restart_count("-1"), 0, "a negative SLURM_RESTART_COUNT: 0");
}

static void test_watcher_texts(void)
{
	const char *zombie = "1234 (python3 -u) x) Z 1200 1234 1200 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
	                     "500 1000000 100 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 17 1 0 0 0 0 "
	                     "0 0 0 0 0 0 0 0 0 256\n";
	const char env[] = "PATH=/bin\0LOCAL_RANK=1\0RANK=3\0WORLD_SIZE=4";
	char a0[] = "torchrun", a1[] = "--max-restarts=3", a2[] = "train.py", a3[] = "--max_restarts",
	     a4[] = "0", a5[] = "python3";
	char *argv1[] = { a0, a1, a2, NULL };
	char *argv2[] = { a0, a3, a4, a2, NULL };
	char *argv3[] = { a5, a2, a2, NULL };
	char st = 0;
	int ppid = 0, code = -1, pids[2];
	unsigned long long start = 0;
	uint32_t rank = 0;

	ok(rdzv_proc_stat_parse(zombie, strlen(zombie), &st, &ppid, &code, &start) == 0 && start == 500,
	   "stat: the start time is field 22 (what tells a process from a later one with its pid)");
	ok(rdzv_proc_stat_parse("1 (a) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 0 0 0 0 -5 0\n",
	                        strlen("1 (a) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 0 0 0 0 -5 0\n"), &st, &ppid,
	                        &code, &start) == -1,
	   "stat: a negative start time is refused");
	ok(rdzv_proc_stat_parse(zombie, strlen(zombie), &st, &ppid, &code, NULL) == 0 && st == 'Z'
	   && ppid == 1200 && code == 256, "a zombie's stat: state Z, parent, exit_code 256 (a comm with ') ')");
	ok(rdzv_proc_stat_parse("1 (a) S 0 1 1\n", 14, &st, &ppid, &code, NULL) == 0 && st == 'S' && code == 0,
	   "a short stat (an old kernel without exit_code): 0");
	ok(rdzv_proc_stat_parse("1 (a) S x", 9, &st, &ppid, &code, NULL) == -1
	   && rdzv_proc_stat_parse("1 a S 1", 7, &st, &ppid, &code, NULL) == -1,
	   "a stat with a field that is not a number, or no (comm), is refused");
	ok(rdzv_environ_rank(env, sizeof(env) - 1, &rank) == 0 && rank == 3,
	   "RANK= in an environ block, not LOCAL_RANK=");
	ok(rdzv_environ_rank("RANK=x", 6, &rank) == -1 && rdzv_environ_rank("XRANK=1", 7, &rank) == -1,
	   "a bad or missing RANK");
	is_int(rdzv_pid_list_parse("12 13 14 ", 9, pids, 2), 2, "children: at most max pids stored");
	ok(pids[0] == 12 && pids[1] == 13, "... in order");
	is_int(rdzv_pid_list_parse("12 x", 4, pids, 2), -1, "children: not a list of pids");
	is_int(rdzv_pid_list_parse("", 0, pids, 2), 0, "children: none");
	is_int((int)rdzv_torchrun_max_restarts(3, argv1, NULL), 3, "--max-restarts=3");
	is_int((int)rdzv_torchrun_max_restarts(4, argv2, "2"), 0, "--max_restarts 0 wins over PET_MAX_RESTARTS");
	is_int((int)rdzv_torchrun_max_restarts(3, argv3, "2"), 2, "PET_MAX_RESTARTS=2");
	is_int((int)rdzv_torchrun_max_restarts(3, argv3, NULL), 0, "no restarts");
}

/* What the watcher's proof rests on (spank/failure.c, proc_read): a pidfd
 * of a zombie still answers signal 0, and once the zombie is reaped it
 * answers ESRCH, whoever has taken its pid since. */
static void test_pidfd(void)
{
	pid_t pid = fork();
	int fd, st, rc;

	if (pid == 0)
		_exit(3);
	if (pid < 0) {
		ok(0, "fork: %s", strerror(errno));
		return;
	}
	fd = rdzv_pidfd_open(pid);
	if (fd < 0 && errno == ENOSYS) {
		waitpid(pid, &st, 0);
		skip("this kernel has no pidfd_open");
		skip("this kernel has no pidfd_open");
		return;
	}
	ok(fd >= 0 && rdzv_pidfd_signal(fd, 0) == 0, "pidfd: a live or zombie child answers signal 0");
	waitpid(pid, &st, 0);
	rc = rdzv_pidfd_signal(fd, SIGKILL);
	ok(rc == -1 && errno == ESRCH, "pidfd: once reaped, a signal reaches nobody (ESRCH)");
	if (fd >= 0)
		close(fd);
}

/* Root's log lines quote user text printable (doc/privilege.md, item 5). */
static void test_printable(void)
{
	char out[16];

	is_str(rdzv_text_printable(out, sizeof(out), "29500\nrdzv: ok\x1b[2J"), "29500?rdzv: ok?",
	       "a user's value in slurmd's log: a newline and an escape become '?', cut to fit");
	is_str(rdzv_text_printable(out, sizeof(out), "n1-\xc3\xa9"), "n1-\xc3\xa9",
	       "... bytes of UTF-8 are kept");
	is_str(rdzv_text_printable(out, 1, "x"), "", "... a buffer of one byte gets the empty string");
}

int main(void)
{
	test_scan();
	test_decide();
	test_datagram();
	test_report();
	test_watcher_texts();
	test_restart();
	test_pidfd();
	test_printable();
	return done_testing();
}

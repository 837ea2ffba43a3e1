/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/failure/: how failures travel and are judged: a failed rank's report,
 * liveness, the collective grace, hang dumps, a GPU fault's verdict. Uses
 * lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* failure.c: see failure.h. */
#include "config.h"
#include "failure.h"
#include "channel.h"
#include "srunargs.h"
#include "master.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* -K's optional value: attached only ("-K0", "--kill-on-bad-exit=0"), as
 * getopt takes an optional argument; srun reads it as an integer. */
static int kbe_value(const char *v)
{
	return v && *v ? (atoi(v) != 0) : 1;
}

int rdzv_srun_arg_failure(int argc, char *const *argv, const char **mode, int *kbe)
{
	struct rdzv_srun_args it;
	struct rdzv_srun_arg a;
	int rc;

	*mode = NULL;
	*kbe = -1;
	rdzv_srun_args_init(&it, argc, argv);
	while ((rc = rdzv_srun_args_next(&it, &a, NULL, 0)) > 0) {
		/* getopt_long takes a unique prefix: no other srun option starts "kill". */
		if (rdzv_srun_arg_is(&a, 'K', "kill-on-bad-exit", 4))
			*kbe = kbe_value(a.value);
		/* --rdzv exactly: any shorter prefix is ambiguous with
		 * --rdzv-port, --rdzv-bind, --rdzv-verbose. */
		else if (a.long_name && a.long_len == 4 && strncmp(a.long_name, "rdzv", 4) == 0)
			*mode = a.value;
	}
	return rc < 0 ? -1 : 0;
}

enum rdzv_kbe_action rdzv_kbe_decide(const struct rdzv_kbe_in *in, const struct rdzv_mode **mode)
{
	const struct rdzv_mode *m = NULL;

	/* Options: the command line wins over the #SBATCH value srun finds in
	 * its environment (options.c: the last callback wins), options over
	 * RDZV_MODE, RDZV_MODE over mode=. An invalid value stops srun before
	 * anything runs: call it off. */
	if (in->arg_mode)
		m = rdzv_mode_find(in->arg_mode);
	else if (in->spank_env)
		m = rdzv_mode_find(in->spank_env);
	else if (in->env_fallback && in->rdzv_mode && *in->rdzv_mode)
		m = rdzv_mode_find(in->rdzv_mode);
	else
		m = in->site;
	if (!m)
		m = rdzv_mode_find("off");
	*mode = m;
	if (!m->fill)
		return RDZV_KBE_MODE_OFF;
	if (in->arg_kbe >= 0 || in->kbe_env)
		return RDZV_KBE_USER;
	if (!in->conf_kbe)
		return RDZV_KBE_ADMIN;
	return RDZV_KBE_SET;
}

int rdzv_kbe_effective(int arg_kbe, const char *kbe_env)
{
	if (arg_kbe >= 0)
		return arg_kbe;
	return kbe_env && *kbe_env && atoi(kbe_env) != 0;
}

int rdzv_failure_is_bad(int status)
{
	return WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0);
}

void rdzv_failure_set_reason(struct rdzv_failure *f, const char *text)
{
	size_t i;

	for (i = 0; text && text[i] && i + 1 < sizeof(f->reason); i++)
		f->reason[i] = (text[i] >= 0x20 && text[i] < 0x7f) ? text[i] : ' ';
	f->reason[i] = '\0';
}

static int reason_ok(const char *r, size_t n)
{
	size_t i;

	if (n == 0 || n >= RDZV_FAILURE_REASON_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (r[i] < 0x20 || r[i] >= 0x7f)
			return 0;
	return 1;
}

int rdzv_failure_encode(const struct rdzv_failure *f, char *buf, size_t len)
{
	int n = snprintf(buf, len, "RDZVF1 %u.%u %016" PRIx64 " %u %d %d %u %s%s%s", f->job_id,
	                 f->step_id, f->nonce, f->rank, f->status, f->per_node ? 1 : 0,
	                 f->workers, f->node[0] ? f->node : "?", f->reason[0] ? "\n" : "",
	                 f->reason);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int host_ok(const char *h)
{
	if (!*h)
		return 0;
	if (strcmp(h, "?") == 0)
		return 1;
	return rdzv_host_name_ok(h, strlen(h));
}

int rdzv_failure_decode(const char *buf, size_t n, struct rdzv_failure *f)
{
	char text[RDZV_HOST_MAX + 128], node[RDZV_HOST_MAX + 1], tail;
	unsigned job, step, rank, workers;
	int status, per_node, used = 0;
	uint64_t nonce;
	const char *nl;

	memset(f, 0, sizeof(*f));
	if (!buf || n == 0 || memchr(buf, '\0', n))
		return -1;
	if ((nl = memchr(buf, '\n', n))) { /* the reason, after the header */
		size_t rn = n - (size_t)(nl + 1 - buf);

		if (!reason_ok(nl + 1, rn))
			return -1;
		memcpy(f->reason, nl + 1, rn);
		f->reason[rn] = '\0';
		n = (size_t)(nl - buf);
	}
	if (n == 0 || n >= sizeof(text)) {
		memset(f, 0, sizeof(*f));
		return -1;
	}
	memcpy(text, buf, n);
	text[n] = '\0';
	if (strncmp(text, "RDZVF1 ", 7) != 0) {
		memset(f, 0, sizeof(*f));
		return -1;
	}
	/* %255s: RDZV_HOST_MAX is 256 (hostlist.h). */
	if (sscanf(text + 7, "%u.%u %16" SCNx64 " %u %d %d %u %255s%n%c", &job, &step, &nonce,
	           &rank, &status, &per_node, &workers, node, &used, &tail) != 8
	    || (size_t)used + 7 != n || (per_node != 0 && per_node != 1) || !host_ok(node)) {
		memset(f, 0, sizeof(*f));
		return -1;
	}
	f->job_id = job;
	f->step_id = step;
	f->nonce = nonce;
	f->rank = rank;
	f->status = status;
	f->per_node = per_node;
	f->workers = workers;
	if (rdzv_strlcpy(f->node, node, sizeof(f->node)) < 0)
		return -1;
	return 0;
}

int rdzv_failure_format(const struct rdzv_failure *f, int stopped, char *buf, size_t len)
{
	char who[RDZV_HOST_MAX + 96], how[96];
	int n;

	if (f->per_node && f->workers)
		snprintf(who, sizeof(who), "node rank %u (node %s: torchrun, %u worker%s)", f->rank,
		         f->node, f->workers, f->workers == 1 ? "" : "s");
	else if (f->per_node)
		snprintf(who, sizeof(who), "node rank %u (node %s: torchrun)", f->rank, f->node);
	else
		snprintf(who, sizeof(who), "rank %u (node %s)", f->rank, f->node);
	if (WIFSIGNALED(f->status))
		snprintf(how, sizeof(how), "was killed by signal %d (%s)", WTERMSIG(f->status),
		         strsignal(WTERMSIG(f->status)));
	else if (WIFEXITED(f->status))
		snprintf(how, sizeof(how), "exited with status %d", WEXITSTATUS(f->status));
	else
		snprintf(how, sizeof(how), "ended with wait status %d", f->status);
	n = snprintf(buf, len, "rdzv: %s %s%s%s%s", who, how,
	             f->reason[0] ? " before its program ran: " : "", f->reason,
	             stopped ? "; the step was stopped" : "");
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int rdzv_report_format(uint32_t job, uint32_t step, uint16_t port, uint64_t nonce, int set,
                       char *buf, size_t len)
{
	struct rdzv_channel_addr a = { job, step, port, nonce };
	size_t used;
	int n;

	if (rdzv_channel_var_format(&a, buf, len) < 0)
		return -1;
	used = strlen(buf);
	n = snprintf(buf + used, len - used, ":%d", set & 3);
	return n < 0 || (size_t)n >= len - used ? -1 : 0;
}

int rdzv_report_parse(const char *s, uint32_t *job, uint32_t *step, uint16_t *port,
                      uint64_t *nonce, int *set)
{
	struct rdzv_channel_addr a;
	const char *rest;

	if (rdzv_channel_var_parse(s, &a, &rest) < 0 || rest[0] != ':' || rest[1] < '0'
	    || rest[1] > '3' || rest[2])
		return -1;
	*job = a.job;
	*step = a.step;
	*port = a.port;
	*nonce = a.nonce;
	*set = rest[1] - '0';
	return 0;
}

uint32_t rdzv_restart_count(const char *s)
{
	uint64_t v;

	if (!s || rdzv_parse_u64(s, 0, UINT32_MAX, &v) < 0)
		return 0;
	return (uint32_t)v;
}

int rdzv_proc_stat_parse(const char *buf, size_t n, char *state, int *ppid, int *exit_code,
                         unsigned long long *start)
{
	char text[2048];
	const char *p;
	int field, pp = 0, code = 0;
	unsigned long long st = 0;
	long v;
	char *end;

	if (!buf || n == 0 || n >= sizeof(text) || memchr(buf, '\0', n))
		return -1;
	memcpy(text, buf, n);
	text[n] = '\0';
	/* "PID (COMM) S PPID ...": COMM may hold spaces and ')', so the
	 * fields start after the last ')'. */
	p = strrchr(text, ')');
	if (!p || !strchr(text, '(') || p[1] != ' ' || !isalpha((unsigned char)p[2])
	    || (p[3] != ' ' && p[3] != '\0'))
		return -1;
	*state = p[2];
	p += 3;
	/* Every field after the state is a number; some are 64-bit unsigned
	 * (rsslim), so only the three read are converted. */
	for (field = 4; *p == ' '; field++) {
		const char *tok = ++p;

		if (*p == '-')
			p++;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p != ' ' && *p != '\n' && *p != '\0')
			return -1;
		if (field == 22) { /* starttime: clock ticks since boot, unsigned */
			errno = 0;
			st = strtoull(tok, &end, 10);
			if (errno || end != p || *tok == '-')
				return -1;
		}
		if (field == 4 || field == 52) {
			errno = 0;
			v = strtol(tok, &end, 10);
			if (errno || end != p || v < INT32_MIN || v > INT32_MAX)
				return -1;
			if (field == 4)
				pp = (int)v;
			else
				code = (int)v;
		}
	}
	if (field <= 4 || (*p != '\0' && (*p != '\n' || p[1] != '\0')))
		return -1;
	if (ppid)
		*ppid = pp;
	if (start)
		*start = st; /* 0: a stat too short to hold it */
	*exit_code = field > 52 ? code : 0; /* older kernels: no field 52 */
	return 0;
}

int rdzv_environ_rank(const char *buf, size_t n, uint32_t *rank)
{
	size_t i = 0, len;
	uint64_t v;

	if (!buf)
		return -1;
	while (i < n) {
		const char *e = buf + i, *z = memchr(e, '\0', n - i);

		len = z ? (size_t)(z - e) : n - i;
		if (len > 5 && memcmp(e, "RANK=", 5) == 0) {
			if (rdzv_parse_u64n(e + 5, len - 5, 0, UINT32_MAX, &v) < 0)
				return -1;
			*rank = (uint32_t)v;
			return 0;
		}
		i += len + 1;
	}
	return -1;
}

int rdzv_pid_list_parse(const char *buf, size_t n, int *pids, int max)
{
	size_t i = 0;
	int count = 0;

	if (!buf)
		return -1;
	while (i < n) {
		uint64_t v = 0;
		size_t start;

		if (buf[i] == ' ' || buf[i] == '\n') {
			i++;
			continue;
		}
		start = i;
		while (i < n && buf[i] >= '0' && buf[i] <= '9')
			i++;
		if (i == start || i - start > 10 || (i < n && buf[i] != ' ' && buf[i] != '\n')
		    || rdzv_parse_u64n(buf + start, i - start, 1, INT32_MAX, &v) < 0)
			return -1;
		if (count < max)
			pids[count++] = (int)v;
	}
	return count;
}

static unsigned restarts_value(const char *v)
{
	uint64_t r;

	if (!v)
		return 1;
	return rdzv_parse_u64(v, 0, UINT32_MAX, &r) < 0 ? 1 : (unsigned)r;
}

unsigned rdzv_torchrun_max_restarts(int argc, char *const *argv, const char *pet)
{
	static const char *const names[] = { "--max-restarts", "--max_restarts" };
	int i;
	size_t k, len;

	for (i = 0; argv && i < argc && argv[i]; i++)
		for (k = 0; k < 2; k++) {
			len = strlen(names[k]);
			if (strncmp(argv[i], names[k], len) != 0)
				continue;
			if (argv[i][len] == '=')
				return restarts_value(argv[i] + len + 1);
			if (argv[i][len] == '\0')
				return restarts_value(i + 1 < argc ? argv[i + 1] : NULL);
		}
	return pet && *pet ? restarts_value(pet) : 0;
}

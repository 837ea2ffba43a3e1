/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-failure.c: the texts of "a failed rank stops the step"
 * (lib/failure/failure.c). Input lines: [0] a datagram a node sends to srun
 * (any sender on the network may send one), [1] RDZV_STEP_REPORT's value
 * (the step's environment), [2] a /proc/PID/stat text, [3] a
 * /proc/PID/environ block with '\1' for its NULs, [4] a
 * /proc/PID/task/TID/children text, [5...] a command line: srun's for
 * rdzv_srun_arg_failure, torchrun's for rdzv_torchrun_max_restarts (the
 * last line is also PET_MAX_RESTARTS and SLURM_RESTART_COUNT).
 * Invariants: a decoded datagram has a valid host and per_node 0 or 1,
 * encodes and decodes back to the same fields, and formats as one "rdzv: "
 * line; a parsed report has a port and flags in range and survives format
 * and parse; a stat text's state is a letter; the children list never
 * stores more pids than asked, each positive; the scan's -K is -1, 0 or 1
 * and its mode, when found, is one of argv's words or inside one. */
#include "config.h"
#include "failure.h"
#include "util.h"
#include "fuzz.h"

#define MAX_ARGS 24

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_pieces p;
	struct rdzv_failure f, g;
	char buf[RDZV_HOST_MAX + 256], line[RDZV_HOST_MAX + 512], state, *env;
	char *argv[MAX_ARGS + 1];
	uint32_t job, step, rank;
	uint16_t port;
	uint64_t nonce;
	unsigned long long start;
	int set, ppid, code, pids[8], n, i, argc = 0, kbe;
	const char *mode = NULL, *last;
	size_t len;

	if (fuzz_split(data, size, &p) < 0)
		return 0;

	if (rdzv_failure_decode(p.v[0], strlen(p.v[0]), &f) == 0) {
		FUZZ_ASSERT(f.per_node == 0 || f.per_node == 1);
		FUZZ_ASSERT(f.node[0] != '\0');
		FUZZ_ASSERT(rdzv_failure_encode(&f, buf, sizeof(buf)) == 0);
		FUZZ_ASSERT(rdzv_failure_decode(buf, strlen(buf), &g) == 0);
		FUZZ_ASSERT(g.job_id == f.job_id && g.step_id == f.step_id && g.nonce == f.nonce
		            && g.rank == f.rank && g.status == f.status && g.per_node == f.per_node
		            && g.workers == f.workers && strcmp(g.node, f.node) == 0);
		FUZZ_ASSERT(rdzv_failure_format(&f, f.status & 1, line, sizeof(line)) == 0);
		FUZZ_ASSERT(strncmp(line, "rdzv: ", 6) == 0 && !strchr(line, '\n'));
		(void)rdzv_failure_is_bad(f.status);
	}

	if (p.n > 1 && rdzv_report_parse(p.v[1], &job, &step, &port, &nonce, &set) == 0) {
		uint32_t j2, s2;
		uint16_t p2;
		uint64_t n2;
		int k2;

		FUZZ_ASSERT(set >= 0 && set <= 3);
		FUZZ_ASSERT(rdzv_report_format(job, step, port, nonce, set, buf, sizeof(buf)) == 0);
		FUZZ_ASSERT(rdzv_report_parse(buf, &j2, &s2, &p2, &n2, &k2) == 0);
		FUZZ_ASSERT(j2 == job && s2 == step && p2 == port && n2 == nonce && k2 == set);
	}

	if (p.n > 2 && rdzv_proc_stat_parse(p.v[2], strlen(p.v[2]), &state, &ppid, &code, &start) == 0)
		FUZZ_ASSERT((state >= 'A' && state <= 'Z') || (state >= 'a' && state <= 'z'));
	/* What root's log quotes of a user's text: one line, no escapes. */
	if (p.n > 2) {
		rdzv_text_printable(line, sizeof(line), p.v[2]);
		for (i = 0; line[i]; i++)
			FUZZ_ASSERT((unsigned char)line[i] >= 0x20 && line[i] != 0x7f);
	}

	if (p.n > 3 && (env = strdup(p.v[3]))) {
		len = strlen(env);
		for (i = 0; (size_t)i < len; i++)
			if (env[i] == '\1')
				env[i] = '\0';
		(void)rdzv_environ_rank(env, len, &rank);
		free(env);
	}

	if (p.n > 4) {
		n = rdzv_pid_list_parse(p.v[4], strlen(p.v[4]), pids, 8);
		FUZZ_ASSERT(n >= -1 && n <= 8);
		for (i = 0; i < n; i++)
			FUZZ_ASSERT(pids[i] > 0);
	}

	for (i = 5; i < p.n && argc < MAX_ARGS; i++)
		argv[argc++] = p.v[i];
	argv[argc] = NULL;
	if (argc > 0) {
		kbe = 7;
		if (rdzv_srun_arg_failure(argc, argv, &mode, &kbe) == 0) {
			FUZZ_ASSERT(kbe == -1 || kbe == 0 || kbe == 1);
			if (mode) {
				int inside = 0;

				for (i = 0; i < argc; i++)
					inside |= mode >= argv[i] && mode <= argv[i] + strlen(argv[i]);
				FUZZ_ASSERT(inside);
			}
		}
		last = argv[argc - 1];
		(void)rdzv_torchrun_max_restarts(argc, argv, last);
		(void)rdzv_restart_count(last);
	}
	fuzz_pieces_free(&p);
	return 0;
}

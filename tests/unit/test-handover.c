/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-handover: texts from srun to the nodes through the step's environment
 * (lib/step/handover.c): short ones as one SLURM_RDZV_ variable, long ones in
 * parts that each stay below what Slurm forwards (ENV_BUFSIZE, 256 KiB) and
 * what exec takes (128 KiB a string), put back together on the node, every
 * part gone from the tasks' environment, and broken hand-overs named. The
 * environments are an in-memory one (as spank_getenv gives a step's) and
 * this process's own (srun's). */
#include "config.h"
#include "handover.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memenv.h"

#define E memenv
#define M memenv_ops
#define m_set memenv_set
#define m_unset memenv_unset
#define find memenv_find

static void reset(void)
{
	memenv_reset();
}

/* A text of n bytes like a node order ("0-3,17,9,..."), seeded. */
static char *order_text(size_t n, unsigned seed)
{
	char *t = malloc(n + 1);
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		t[i] = (i % 7 == 6) ? ',' : (char)('0' + (seed >> 16) % 10);
	}
	t[n] = '\0';
	return t;
}

static int prefixed(const char *prefix)
{
	int i, k = 0;

	for (i = 0; i < E.n; i++)
		k += strncmp(E.name[i], prefix, strlen(prefix)) == 0;
	return k;
}

static void round_trip(size_t n, const char *what)
{
	char err[256] = "", *back = NULL, *t = order_text(n, (unsigned)n);
	size_t want = rdzv_handover_vars(t);
	int rc;

	reset();
	rc = rdzv_handover_put(&M, RDZV_HO_PLAN, t, err, sizeof(err));
	ok(rc == 0 && (size_t)E.n == want && E.longest <= RDZV_HANDOVER_PART,
	   "%s (%zu bytes): put as %d variable(s), none over %u bytes %s", what, n, E.n,
	   RDZV_HANDOVER_PART, err);
	rc = rdzv_handover_take(&M, RDZV_HO_PLAN, &back, err, sizeof(err));
	ok(rc == 1 && back && strcmp(back, t) == 0, "%s: the node gets the same text back %s",
	   what, err);
	is_int(E.n, 0, "... and no part of it stays in the tasks' environment");
	free(back);
	free(t);
}

static void broken(void (*spoil)(void), const char *want, const char *what)
{
	char err[256] = "", *back = NULL, *t = order_text(3 * RDZV_HANDOVER_PART + 100, 7);

	reset();
	if (rdzv_handover_put(&M, RDZV_HO_DOMAINS, t, err, sizeof(err)) < 0)
		diag("put: %s", err);
	spoil();
	err[0] = '\0';
	is_int(rdzv_handover_take(&M, RDZV_HO_DOMAINS, &back, err, sizeof(err)), -1, what);
	ok(strstr(err, want) && strstr(err, RDZV_HO_DOMAINS) && !back,
	   "... named: %s", err);
	is_int(prefixed(RDZV_HO_DOMAINS), 0, "... and every part is removed all the same");
	free(t);
	free(back);
}

static void drop_part2(void) { m_unset(NULL, RDZV_HO_DOMAINS "_2"); }
static void cut_part3(void) { E.value[find(RDZV_HO_DOMAINS "_3")][10] = '\0'; }
static void swap_part2(void)
{
	char *other = order_text(RDZV_HANDOVER_PART, 99);

	m_set(NULL, RDZV_HO_DOMAINS "_2", other);
	free(other);
}
static void bad_head(void) { m_set(NULL, RDZV_HO_DOMAINS, "#4:1:zz"); }
static void huge_head(void) { m_set(NULL, RDZV_HO_DOMAINS, "#9999:1:0000000000000000"); }

int main(void)
{
	char err[256], *back = NULL, *t;
	int rc;

	round_trip(0, "an empty text");
	round_trip(40, "a short plan");
	round_trip(RDZV_HANDOVER_PART, "a text of exactly one part");
	round_trip(RDZV_HANDOVER_PART + 1, "one byte over a part");
	/* 65,536 nodes in random order: about 6 bytes a node. */
	round_trip(65536 * 6, "a 65,536-node order in random order");
	round_trip(1u << 22, "4 MiB");

	reset();
	rc = rdzv_handover_put(&M, RDZV_HO_REPORT, "#looks like a header", err, sizeof(err));
	ok(rc == 0 && E.n == 2, "a text that begins with '#' always goes in parts (%d variables)",
	   E.n);
	rc = rdzv_handover_take(&M, RDZV_HO_REPORT, &back, err, sizeof(err));
	ok(rc == 1 && strcmp(back, "#looks like a header") == 0, "... and comes back whole");
	free(back);

	reset();
	is_int(rdzv_handover_take(&M, RDZV_HO_PLAN, &back, err, sizeof(err)), 0,
	       "no variable: nothing handed over (0), not an error");

	/* A later put over an earlier, longer one leaves none of its parts. */
	reset();
	t = order_text(5 * RDZV_HANDOVER_PART, 3);
	rdzv_handover_put(&M, RDZV_HO_PLAN, t, err, sizeof(err));
	is_int(E.n, 6, "five parts and a header");
	rdzv_handover_put(&M, RDZV_HO_PLAN, "12.0:29500:derived:n1:L", err, sizeof(err));
	ok(E.n == 1 && find(RDZV_HO_PLAN "_3") < 0,
	   "a short text put over it removes the five parts (%d variable(s) left)", E.n);
	free(t);
	/* Other names are not touched. */
	reset();
	m_set(NULL, RDZV_HO_PLAN "X", "keep");
	m_set(NULL, RDZV_HO_HANG_ASK, "1.2:3:4");
	rdzv_handover_put(&M, RDZV_HO_PLAN, "x", err, sizeof(err));
	rc = rdzv_handover_take(&M, RDZV_HO_PLAN, &back, err, sizeof(err));
	ok(rc == 1 && find(RDZV_HO_PLAN "X") >= 0 && find(RDZV_HO_HANG_ASK) >= 0,
	   "taking one text leaves the others");
	free(back);

	broken(drop_part2, "part 2 of 4 is missing", "a missing part refuses the hand-over");
	broken(cut_part3, "part 3 of 4 holds 10 bytes", "a cut part refuses it");
	broken(swap_part2, "not of one text", "a part of another text refuses it");
	broken(bad_head, "malformed header", "a malformed header refuses it");
	broken(huge_head, "malformed header", "a header of more parts than the limit refuses it");

	/* The refusal mark (srun.c: a step refused after srun created it). */
	{
		static const char *const bad[] = { "", "5", "5.", ".0", "5.0.1", "5.0 ", " 5.0",
		                                   "+5.0", "5.-1", "5,0", "4294967296.0",
		                                   "5.4294967296", "5.0x", "0x5.0", NULL };
		char mark[32];
		uint32_t j = 1, st = 1;
		int i, all = 1;

		ok(rdzv_refused_format(4294967295u, 7, mark, sizeof(mark)) == 0
		   && strcmp(mark, "4294967295.7") == 0, "refusal mark: JOB.STEP (%s)", mark);
		ok(rdzv_refused_format(123456, 0, mark, 8) < 0, "... refused when it does not fit");
		ok(rdzv_refused_parse("4294967295.7", &j, &st) == 0 && j == 4294967295u && st == 7,
		   "... read back: job %u step %u", j, st);
		ok(rdzv_refused_parse("007.00", &j, &st) == 0 && j == 7 && st == 0,
		   "... leading zeros are the same number (Slurm prints none; harmless)");
		for (i = 0; bad[i]; i++)
			if (rdzv_refused_parse(bad[i], &j, &st) == 0) {
				all = 0;
				diag("accepted: '%s'", bad[i]);
			}
		ok(all, "... anything but two decimal 32-bit numbers and one dot is refused (%d forms)",
		   i);
		ok(rdzv_refused_parse(NULL, &j, &st) < 0, "... and no mark at all");
	}

	/* srun's mark: version and hand-over format (rolling upgrades). */
	{
		char mark[64], ver[32];
		unsigned f = 0;

		ok(rdzv_srun_mark_format("0.1.0", mark, sizeof(mark)) == 0
		   && rdzv_srun_mark_parse(mark, ver, sizeof(ver), &f) == 0 && strcmp(ver, "0.1.0") == 0
		   && f == RDZV_HANDOVER_FORMAT, "srun's mark '%s': its version and format back", mark);
		ok(rdzv_srun_mark_parse("0.1.0", ver, sizeof(ver), &f) == 0 && f == 1,
		   "an earlier release's mark (the version alone) is format 1");
		ok(rdzv_srun_mark_parse("0.9.0 format=7", ver, sizeof(ver), &f) == 0 && f == 7
		   && !rdzv_srun_mark_readable(ver, f, "0.1.0", err, sizeof(err))
		   && strstr(err, "srun's spank-rdzv 0.9.0 hands the step over in format 7")
		   && strstr(err, "this node's spank-rdzv 0.1.0"),
		   "a later format is refused, naming both versions (%s)", err);
		ok(rdzv_srun_mark_readable("0.1.0", 1, "0.2.0", err, sizeof(err))
		   && rdzv_srun_mark_readable("0.2.0", RDZV_HANDOVER_FORMAT, "0.1.0", err, sizeof(err)),
		   "formats 1 to %d are read, whatever the versions", RDZV_HANDOVER_FORMAT);
		ok(rdzv_srun_mark_parse("", ver, sizeof(ver), &f) < 0
		   && rdzv_srun_mark_parse("0.1.0 fmt=2", ver, sizeof(ver), &f) < 0
		   && rdzv_srun_mark_parse("0.1.0 format=", ver, sizeof(ver), &f) < 0
		   && rdzv_srun_mark_parse("0.1.0 format=0", ver, sizeof(ver), &f) < 0
		   && rdzv_srun_mark_parse("0.1.0 format=2 x", ver, sizeof(ver), &f) < 0
		   && rdzv_srun_mark_parse("0.1;0", ver, sizeof(ver), &f) < 0
		   && rdzv_srun_mark_parse(" 0.1.0", ver, sizeof(ver), &f) < 0,
		   "marks of no known shape are refused");
		ok(!rdzv_srun_mark_readable("(unknown)", 0, "0.1.0", err, sizeof(err))
		   && strstr(err, "does not know"), "... and are of no readable format (%s)", err);
	}

	/* srun's side: this process's own environment. */
	t = order_text(2 * RDZV_HANDOVER_PART + 5, 11);
	rc = rdzv_handover_put(&rdzv_env_process, RDZV_HO_PLAN, t, err, sizeof(err));
	ok(rc == 0 && getenv(RDZV_HO_PLAN) && getenv(RDZV_HO_PLAN "_3")
	   && strlen(getenv(RDZV_HO_PLAN "_3")) == 5,
	   "srun's environment holds the header and three parts");
	rc = rdzv_handover_take(&rdzv_env_process, RDZV_HO_PLAN, &back, err, sizeof(err));
	ok(rc == 1 && strcmp(back, t) == 0 && !getenv(RDZV_HO_PLAN) && !getenv(RDZV_HO_PLAN "_1"),
	   "... taken back whole, and gone");
	free(back);
	free(t);
	reset();
	return done_testing();
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-argscan.c: the argv scanner reads options as argparse would, and
 * refuses hostile command lines with the option and position named. */
#include "config.h"
#include "tap.h"
#include "argscan.h"

#define TP "--tensor-model-parallel-size"

/* A command line from words separated by '|' (words may hold blanks). */
struct av {
	int n;
	char *v[32];
	char buf[1024];
};

static void mk(struct av *a, const char *words)
{
	char *s;

	snprintf(a->buf, sizeof(a->buf), "%s", words);
	a->n = 0;
	for (s = a->buf; a->n < 31; s++) {
		a->v[a->n++] = s;
		if (!(s = strchr(s, '|')))
			break;
		*s = '\0';
	}
	a->v[a->n] = NULL;
}

static void invalid_input(void)
{
	char err[256];
	uint64_t v = 77;
	struct rdzv_argval av;

	{
		struct av A;
		char **a;

		mk(&A, "python" "|" "train.py" "|" TP);
		a = A.v;
		ok(rdzv_argscan_uint(A.n, a, TP, 1, 64, &v, err, sizeof(err)) == -1
		   && strstr(err, "needs a value") && strstr(err, "last word") && strstr(err, "argv[2]"),
		   "a value-taking option at the end is refused, position named (%s)", err);
	}
	{
		struct av A;
		char **a;

		mk(&A, "python" "|" TP "|" "--pipeline-model-parallel-size" "|" "2");
		a = A.v;
		ok(rdzv_argscan_uint(A.n, a, TP, 1, 64, &v, err, sizeof(err)) == -1
		   && strstr(err, "followed by the option '--pipeline-model-parallel-size'"),
		   "an option followed by another option has no value (%s)", err);
	}
	{
		struct av A;
		char **a;

		mk(&A, "python" "|" TP "=0");
		a = A.v;
		ok(rdzv_argscan_uint(A.n, a, TP, 1, 64, &v, err, sizeof(err)) == -1
		   && strstr(err, "out of range") && strstr(err, "from 1 to 64"),
		   "=0 is out of range (%s)", err);
	}
	{
		struct av A;
		char **a;

		mk(&A, "python" "|" TP "|" "-1");
		a = A.v;
		ok(rdzv_argscan_uint(A.n, a, TP, 1, 64, &v, err, sizeof(err)) == -1
		   && strstr(err, "-1 is out of range"),
		   "a negative number is taken as the value, then refused (%s)", err);
	}
	{
		struct av A;
		char **a;

		mk(&A, "python" "|" TP "|" "99999999999999999999999999999");
		a = A.v;
		ok(rdzv_argscan_uint(A.n, a, TP, 1, 64, &v, err, sizeof(err)) == -1
		   && strstr(err, "out of range"), "a number beyond 64 bits is refused (%s)", err);
	}
	{
		struct av A;
		char **a;

		mk(&A, "python" "|" TP "=");
		a = A.v;
		ok(rdzv_argscan_uint(A.n, a, TP, 1, 64, &v, err, sizeof(err)) == -1
		   && strstr(err, "empty value"), "--opt= with nothing after is refused (%s)", err);
	}
	{
		struct av A;
		char **a;

		mk(&A, "python" "|" TP "|" "eight");
		a = A.v;
		ok(rdzv_argscan_uint(A.n, a, TP, 1, 64, &v, err, sizeof(err)) == -1
		   && strstr(err, "'eight' is not a whole number"), "words are refused (%s)", err);
	}
	{
		struct av A;
		char **a;

		mk(&A, "python" "|" TP "|" "8x");
		a = A.v;
		ok(rdzv_argscan_uint(A.n, a, TP, 1, 64, &v, err, sizeof(err)) == -1,
		   "trailing garbage is refused");
	}
	{
		struct av A;
		char **a;

		mk(&A, "python" "|" TP "|" " 8");
		a = A.v;
		ok(rdzv_argscan_uint(A.n, a, TP, 1, 64, &v, err, sizeof(err)) == -1,
		   "leading blanks are refused");
	}
	{
		struct av A;
		char **a;

		mk(&A, "python" "|" TP "|" "abc" "|" TP "|" "8");
		a = A.v;
		ok(rdzv_argscan_uint(A.n, a, TP, 1, 64, &v, err, sizeof(err)) == -1
		   && strstr(err, "'abc'") && strstr(err, "argv[1]"),
		   "a bad early occurrence fails even if a later one is good, as in argparse (%s)",
		   err);
	}
	is_int(v, 77, "the output is untouched after every refusal");
	{
		struct av A;
		char **a;

		mk(&A, "python" "|" TP);
		a = A.v;
		ok(rdzv_argscan_value(A.n, a, TP, &av, err, sizeof(err)) == -1,
		   "rdzv_argscan_value refuses a missing value too");
	}
	ok(rdzv_argscan_value(0, NULL, TP, &av, err, sizeof(err)) == 0 && av.index == -1,
	   "no command line: absent");
	ok(rdzv_argscan_flag(3, NULL, "--fp8-hybrid") == 0, "no command line: no flag");
}

static void valid_input(void)
{
	char err[256] = "";
	uint64_t v = 0;
	struct rdzv_argval av;

	{
		struct av A;
		char **a;

		mk(&A, "python" "|" "pretrain_gpt.py" "|" TP "|" "8");
		a = A.v;
		ok(rdzv_argscan_uint(A.n, a, TP, 1, 64, &v, err, sizeof(err)) == 1 && v == 8,
		   "--opt N");
	}
	{
		struct av A;
		char **a;

		mk(&A, "python" "|" "pretrain_gpt.py" "|" TP "=4");
		a = A.v;
		ok(rdzv_argscan_uint(A.n, a, TP, 1, 64, &v, err, sizeof(err)) == 1 && v == 4,
		   "--opt=N");
	}
	{
		struct av A;
		char **a;

		mk(&A, "python" "|" TP "|" "2" "|" "--x" "|" TP "=8");
		a = A.v;
		ok(rdzv_argscan_uint(A.n, a, TP, 1, 64, &v, err, sizeof(err)) == 1 && v == 8,
		   "repeated: the last occurrence wins, as in argparse");
		ok(rdzv_argscan_value(A.n, a, TP, &av, err, sizeof(err)) == 1 && av.count == 2
		   && av.index == 4 && strcmp(av.value, "8") == 0,
		   "occurrences counted, last index and value kept");
	}
	{
		struct av A;
		char **a;

		mk(&A, "python" "|" TP "-extra" "|" "3");
		a = A.v;
		v = 5;
		ok(rdzv_argscan_uint(A.n, a, TP, 1, 64, &v, err, sizeof(err)) == 0 && v == 5,
		   "an option sharing the prefix is another option (no abbreviations)");
	}
	{
		struct av A;
		char **a;

		mk(&A, "python" "|" "--tensor-model-parallel" "|" "3");
		a = A.v;
		ok(rdzv_argscan_uint(A.n, a, TP, 1, 64, &v, err, sizeof(err)) == 0,
		   "an abbreviation is not the option (Megatron sets allow_abbrev=False)");
	}
	{
		struct av A;
		char **a;

		mk(&A, "python" "|" "train.py" "|" "--" "|" TP "|" "8");
		a = A.v;
		ok(rdzv_argscan_uint(A.n, a, TP, 1, 64, &v, err, sizeof(err)) == 0,
		   "after a bare -- everything is positional");
		ok(rdzv_argscan_flag(A.n, a, TP) == 0, "flags after -- do not count");
	}
	{
		struct av A;
		char **a;

		mk(&A, TP "|" "8");
		a = A.v;
		ok(rdzv_argscan_uint(A.n, a, TP, 1, 64, &v, err, sizeof(err)) == 0,
		   "argv[0] is the program, never an option");
	}
	{
		struct av A;
		char **a;

		mk(&A, "python" "|" "--name" "|" "--fp8-hybrid");
		a = A.v;
		ok(rdzv_argscan_flag(A.n, a, "--fp8-hybrid") == 1, "a flag is found");
		ok(rdzv_argscan_flag(A.n, a, "--fp8") == 0, "a flag is matched whole");
	}
	{
		struct av A;
		char **a;

		mk(&A, "python" "|" "--lr" "|" "-0.5" "|" "--lr=-.5");
		a = A.v;
		ok(rdzv_argscan_value(A.n, a, "--lr", &av, err, sizeof(err)) == 1 && av.count == 2
		   && strcmp(av.value, "-.5") == 0, "negative numbers are values");
	}
	{
		struct av A;
		char **a;

		mk(&A, "python" "|" TP "|" "1048576");
		a = A.v;
		ok(rdzv_argscan_uint(A.n, a, TP, 1, 1048576, &v, err, sizeof(err)) == 1
		   && v == 1048576, "the upper bound itself is accepted");
	}
	{
		struct av A;
		char **a;

		mk(&A, "python" "|" TP "|" "8" "|" "extra");
		a = A.v;
		a[2] = NULL; /* a NULL inside argc ends the scan */
		ok(rdzv_argscan_uint(A.n, a, TP, 1, 64, &v, err, sizeof(err)) == -1,
		   "a NULL word ends the command line (the value is missing)");
	}
}

int main(void)
{
	invalid_input();
	valid_input();
	return done_testing();
}

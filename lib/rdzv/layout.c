/* layout.c: see layout.h. Format (Slurm's SLURM_STEP_TASKS_PER_NODE):
 * comma-separated "N" or "N(xM)", N >= 1 tasks on each of M >= 1 nodes. */
#include "config.h"
#include "layout.h"
#include "util.h"

#include <string.h>

#define TPN_MAX_TASKS 100000000u /* per node: far above any machine */

/* Parse one element starting at s; sets *tasks, *reps and *next. */
static int parse_elem(const char *s, uint32_t *tasks, uint32_t *reps,
                      const char **next, char *err, size_t errlen)
{
	size_t n = strspn(s, "0123456789");
	uint64_t v, r = 1;

	if (rdzv_parse_u64n(s, n, 1, TPN_MAX_TASKS, &v) < 0)
		return rdzv_err(err, errlen, "bad task count in '%.32s'", s);
	s += n;
	if (s[0] == '(') {
		size_t m;

		if (s[1] != 'x')
			return rdzv_err(err, errlen, "expected '(xN)' in '%.32s'", s);
		m = strspn(s + 2, "0123456789");
		if (rdzv_parse_u64n(s + 2, m, 1, UINT32_MAX, &r) < 0 || s[2 + m] != ')')
			return rdzv_err(err, errlen, "bad repeat count in '%.32s'", s);
		s += 3 + m;
	}
	if (*s == ',')
		s++;
	else if (*s != '\0')
		return rdzv_err(err, errlen, "unexpected '%c' in tasks per node", *s);
	*tasks = (uint32_t)v;
	*reps = (uint32_t)r;
	*next = s;
	return 0;
}

int rdzv_tpn_totals(const char *tpn, uint32_t *nodes, uint64_t *tasks,
                    char *err, size_t errlen)
{
	uint64_t nn = 0, nt = 0;
	const char *s = tpn;

	if (!tpn || !*tpn)
		return rdzv_err(err, errlen, "empty tasks per node");
	while (*s) {
		uint32_t t, r;

		if (parse_elem(s, &t, &r, &s, err, errlen) < 0)
			return -1;
		nn += r;
		nt += (uint64_t)t * r;
		if (nn > UINT32_MAX)
			return rdzv_err(err, errlen, "too many nodes in tasks per node");
	}
	if (s > tpn && s[-1] == ',')
		return rdzv_err(err, errlen, "trailing ',' in tasks per node");
	*nodes = (uint32_t)nn;
	*tasks = nt;
	return 0;
}

int rdzv_tpn_tasks_on(const char *tpn, uint32_t node, uint32_t *tasks,
                      char *err, size_t errlen)
{
	uint32_t nodes;
	uint64_t total;
	const char *s = tpn;

	/* Validate the whole string first: a half-good string is an error. */
	if (rdzv_tpn_totals(tpn, &nodes, &total, err, errlen) < 0)
		return -1;
	if (node >= nodes)
		return rdzv_err(err, errlen, "node %u past the %u nodes in '%.32s'",
		                node, nodes, tpn);
	while (*s) {
		uint32_t t, r;

		if (parse_elem(s, &t, &r, &s, err, errlen) < 0)
			return -1;
		if (node < r) {
			*tasks = t;
			return 0;
		}
		node -= r;
	}
	return rdzv_err(err, errlen, "node past the end of tasks per node");
}

int rdzv_tpn_expand(const char *tpn, uint32_t *tasks, uint32_t n, char *err, size_t errlen)
{
	uint32_t nodes, i = 0;
	uint64_t total;
	const char *s = tpn;

	if (rdzv_tpn_totals(tpn, &nodes, &total, err, errlen) < 0)
		return -1;
	if (nodes != n)
		return rdzv_err(err, errlen, "'%.32s' describes %u nodes, not %u", tpn, nodes, n);
	while (*s) {
		uint32_t t, r;

		if (parse_elem(s, &t, &r, &s, err, errlen) < 0)
			return -1;
		while (r--)
			tasks[i++] = t;
	}
	return 0;
}

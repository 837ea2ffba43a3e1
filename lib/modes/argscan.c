/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/modes/: what each mode sets (torch, Megatron, launchers, frameworks,
 * containers), srun's verdict on Megatron's groups over the domains, and the
 * plugstack arguments that choose them. Uses lib/domains/, lib/step/,
 * lib/common/. */
/* argscan.c: see argscan.h. */
#include "config.h"
#include "argscan.h"
#include "util.h"

#include <string.h>

/* argparse's _negative_number_matcher: '^-\d+$|^-\d*\.\d+$'. Such a word
 * is a value, not an option, for parsers without numeric-looking options. */
static int is_negative_number(const char *s)
{
	const char *dot;

	if (s[0] != '-' || !s[1])
		return 0;
	s++;
	dot = strchr(s, '.');
	if (!dot)
		return strspn(s, "0123456789") == strlen(s);
	return strspn(s, "0123456789") == (size_t)(dot - s) && dot[1]
	       && strspn(dot + 1, "0123456789") == strlen(dot + 1);
}

/* Find the next occurrence of name at or after *pos. Returns 1 with *at
 * (its index) and *value set, 0 when there is none, -1 when it has no
 * value. *pos moves past what was consumed. */
static int next_occurrence(int argc, char *const *argv, const char *name, int *pos,
                           int *at, const char **value, char *err, size_t errlen)
{
	size_t nl = strlen(name);
	int i;

	for (i = *pos; i < argc && argv[i]; i++) {
		const char *w = argv[i];

		if (strcmp(w, "--") == 0)
			break;
		if (strncmp(w, name, nl) != 0)
			continue;
		if (w[nl] == '=') {
			*at = i;
			*value = w + nl + 1;
			*pos = i + 1;
			return 1;
		}
		if (w[nl] != '\0')
			continue; /* another option sharing the prefix */
		if (i + 1 >= argc || !argv[i + 1])
			return rdzv_err(err, errlen, "%s needs a value, but it is the last word of "
			                "the command line (argv[%d])", name, i);
		if (argv[i + 1][0] == '-' && !is_negative_number(argv[i + 1]))
			return rdzv_err(err, errlen, "%s needs a value, but argv[%d] is followed by "
			                "the option '%.64s'", name, i, argv[i + 1]);
		*at = i;
		*value = argv[i + 1];
		*pos = i + 2;
		return 1;
	}
	*pos = argc;
	return 0;
}

int rdzv_argscan_flag(int argc, char *const *argv, const char *name)
{
	size_t nl = strlen(name);
	int i, n = 0;

	if (!argv)
		return 0;
	for (i = 1; i < argc && argv[i]; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strncmp(argv[i], name, nl) == 0 && (argv[i][nl] == '\0' || argv[i][nl] == '='))
			n++;
	}
	return n;
}

int rdzv_argscan_value(int argc, char *const *argv, const char *name,
                       struct rdzv_argval *v, char *err, size_t errlen)
{
	int pos = 1, at, rc;
	const char *value;

	v->count = 0;
	v->index = -1;
	v->value = NULL;
	if (!argv)
		return 0;
	while ((rc = next_occurrence(argc, argv, name, &pos, &at, &value, err, errlen)) > 0) {
		v->count++;
		v->index = at;
		v->value = value;
	}
	if (rc < 0)
		return -1;
	return v->count > 0;
}

int rdzv_argscan_uint(int argc, char *const *argv, const char *name, uint64_t min,
                      uint64_t max, uint64_t *out, char *err, size_t errlen)
{
	int pos = 1, at, rc, found = 0;
	const char *value;
	uint64_t v = 0;

	if (!argv)
		return 0;
	while ((rc = next_occurrence(argc, argv, name, &pos, &at, &value, err, errlen)) > 0) {
		if (!*value)
			return rdzv_err(err, errlen, "%s has an empty value (argv[%d])", name, at);
		if (rdzv_parse_u64(value, min, max, &v) < 0) {
			if (strspn(value, "0123456789") == strlen(value) || is_negative_number(value))
				return rdzv_err(err, errlen, "%s %.32s%s is out of range: it must be a "
				                "whole number from %llu to %llu (argv[%d])", name, value,
				                strlen(value) > 32 ? "..." : "", (unsigned long long)min,
				                (unsigned long long)max, at);
			return rdzv_err(err, errlen, "%s '%.32s' is not a whole number (argv[%d])",
			                name, value, at);
		}
		found = 1;
	}
	if (rc < 0)
		return -1;
	if (found)
		*out = v;
	return found;
}

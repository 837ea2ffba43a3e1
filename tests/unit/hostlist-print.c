/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hostlist-print: expand host list expressions through rdzv_hostlist_count
 * and rdzv_hostlist_nth, for comparison with "scontrol show hostnames".
 *   hostlist-print EXPR   every host on its own line; exit 1 with the reason
 *                         on stderr when the expression is refused
 *   hostlist-print -l     one expression per line of stdin; for each, one
 *                         line of output: its hosts separated by single
 *                         spaces, or "error: REASON"
 *   hostlist-print -m     lines "EXPR<TAB>HOST" on stdin; for each, one line:
 *                         1 or 0 (rdzv_hostlist_has), or "error: REASON"
 * Used by tests/0010-hostlist-matches-scontrol.t. */
#include "config.h"
#include "hostlist.h"

#include <stdio.h>
#include <string.h>

/* Print the hosts of expr separated by sep; 0, or -1 with err filled. */
static int print_hosts(const char *expr, const char *sep, char *err, size_t errlen)
{
	char host[RDZV_HOST_MAX];
	long n, i;

	if ((n = rdzv_hostlist_count(expr, err, errlen)) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (rdzv_hostlist_nth(expr, (size_t)i, host, sizeof(host), err, errlen) < 0)
			return -1;
		printf("%s%s", i ? sep : "", host);
	}
	if (n && strcmp(sep, "\n") == 0)
		printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	char err[256], line[8192];

	if (argc == 2 && strcmp(argv[1], "-l") == 0) {
		while (fgets(line, sizeof(line), stdin)) {
			line[strcspn(line, "\n")] = '\0';
			if (print_hosts(line, " ", err, sizeof(err)) < 0)
				printf("error: %s", err);
			printf("\n");
		}
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "-m") == 0) {
		while (fgets(line, sizeof(line), stdin)) {
			char *tab;
			int rc;

			line[strcspn(line, "\n")] = '\0';
			if (!(tab = strchr(line, '\t'))) {
				printf("error: no tab\n");
				continue;
			}
			*tab = '\0';
			if ((rc = rdzv_hostlist_has(line, tab + 1, err, sizeof(err))) < 0)
				printf("error: %s\n", err);
			else
				printf("%d\n", rc);
		}
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: hostlist-print EXPRESSION | -l | -m\n");
		return 2;
	}
	if (print_hosts(argv[1], "\n", err, sizeof(err)) < 0) {
		fprintf(stderr, "hostlist-print: %s\n", err);
		return 1;
	}
	return 0;
}

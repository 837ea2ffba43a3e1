/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
/* hostlist.h: Slurm host list expressions, read without expanding them.
 *
 * Grammar (as Slurm 22.05's scontrol accepts it): items separated by commas
 * or white space outside brackets; an item is text with zero or more bracket
 * groups "[a-b,c,...]", expanded as a cartesian product in Slurm's order: the
 * last group varies fastest, then the first, second, ... (see item_nth).
 * A range keeps the zero padding of its low bound ("n[08-10]" -> n08 n09 n10).
 * Where Slurm 22.05 differs: text after the last group ("n[1-2]x") is read
 * as a suffix (Slurm refuses it; later Slurm versions accept it), and what
 * its lenient parser lets through with odd results is refused here: an
 * unclosed '[' ("n[1-2" gives "n]"), a stray ']' ("n1]"), an open range
 * ("n[1-]" gives n1), spaces or signs inside brackets ("n[1, 2]" gives n1
 * n02). tests/0010-hostlist-matches-scontrol.t checks both sides.
 * Work is proportional to the length of the expression, never to the number
 * of hosts it names. */
#ifndef RDZV_HOSTLIST_H
#define RDZV_HOSTLIST_H

#include <stddef.h>

#define RDZV_HOST_MAX 256

/* Number of hosts the expression names (duplicates counted).
 * Returns -1 with a reason in err on a malformed expression. */
long rdzv_hostlist_count(const char *list, char *err, size_t errlen);

/* Write host number n (0-based) into host[hostlen].
 * Returns 0, or -1 with a reason in err (malformed, n out of range,
 * name longer than hostlen). */
int rdzv_hostlist_nth(const char *list, size_t n, char *host, size_t hostlen,
                      char *err, size_t errlen);

/* Call fn for every host the expression names, in order, with a host of at
 * most RDZV_HOST_MAX - 1 bytes: the list is checked once, then read once
 * more, item by item, each bracket group's ranges expanded as the walk
 * reaches them (zero padding kept). Time: the expression's length plus the
 * hosts named times a host's length, whatever the number of ranges in a
 * group (Slurm prints a step's nodes as one group: "gb[0001-0016,0019-...]").
 * n calls of rdzv_hostlist_nth would take n times the expression. fn
 * returns 0 to go on, anything else stops the walk and is returned.
 * Returns 0, fn's value, or -1 with a reason. */
int rdzv_hostlist_each(const char *list, int (*fn)(const char *host, void *ctx), void *ctx,
                       char *err, size_t errlen);

/* Whether the expression names host: 1 yes, 0 no, -1 with a reason in err
 * (malformed, or so ambiguous that the search would run away). Time grows
 * with the expression's length, never with the number of hosts it names. */
int rdzv_hostlist_has(const char *list, const char *host, char *err, size_t errlen);

#endif

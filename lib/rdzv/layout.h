/* layout.h: Slurm's compressed tasks-per-node strings ("2(x3),1") and the
 * step facts derived from them. Linear in the string, no expansion. */
#ifndef RDZV_LAYOUT_H
#define RDZV_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* Nodes and tasks the string describes. Returns 0 or -1 with a reason. */
int rdzv_tpn_totals(const char *tpn, uint32_t *nodes, uint64_t *tasks,
                    char *err, size_t errlen);

/* Tasks on node `node` (0-based). Returns 0 or -1 (malformed, out of range). */
int rdzv_tpn_tasks_on(const char *tpn, uint32_t node, uint32_t *tasks,
                      char *err, size_t errlen);

/* Tasks on each of the n nodes, into tasks[n], in one pass. Returns 0, or
 * -1 when malformed or the string describes another number of nodes. */
int rdzv_tpn_expand(const char *tpn, uint32_t *tasks, uint32_t n, char *err, size_t errlen);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/gpu/: the GPU vendors' libraries (NVML, ROCm SMI, opened at run time),
 * the NVLink fabric, the kernel's GPU fault lines (Xid). Uses lib/common/. */
/* xid.h: the table of NVIDIA Xid classes (etc/rdzv-xid.conf, installed as
 * $(sysconfdir)/slurm/rdzv-xid.conf; xid_table= names another), which
 * says for each Xid what NVIDIA's catalog tells a site to do at once and so
 * whether it is the node's fault or the application's.
 *
 * One line per Xid: "XID ACTION GPUS MEANING...", '#' to the end of a line a
 * comment. ACTION is the catalog's immediate action; GPUS is "all" or a
 * comma list of the generations the catalog names (a100, h100, b100,
 * gb200): a line for a generation wins over the "all" line of the same Xid
 * on a GPU of that generation. A later line for the same Xid and GPUS
 * replaces the earlier one, so an admin extends the table by appending.
 * Uses lib/common only. */
#ifndef RDZV_XID_H
#define RDZV_XID_H

#include <stddef.h>
#include <stdint.h>

enum rdzv_xid_action {
	RDZV_XID_IGNORE,
	RDZV_XID_RESTART_APP,
	RDZV_XID_RESET_GPU,
	RDZV_XID_RESTART_VM,
	RDZV_XID_RESTART_BM,
	RDZV_XID_DRAIN,
	RDZV_XID_CONTACT_SUPPORT,
	RDZV_XID_CHECK_MECHANICALS,
	RDZV_XID_UNKNOWN,             /* not in the table */
};
#define RDZV_XID_ACTIONS_VALID "IGNORE, RESTART_APP, RESET_GPU, RESTART_VM, RESTART_BM, DRAIN, " \
	"CONTACT_SUPPORT, CHECK_MECHANICALS"

/* GPU generations, as bits; 0 on an entry: every generation. */
#define RDZV_GEN_A100 0x1u
#define RDZV_GEN_H100 0x2u
#define RDZV_GEN_B100 0x4u
#define RDZV_GEN_GB200 0x8u
#define RDZV_GENS_VALID "all, a100, h100, b100, gb200"

#ifndef RDZV_XID_TABLE_DEFAULT
#define RDZV_XID_TABLE_DEFAULT "/etc/slurm/rdzv-xid.conf"
#endif

#define RDZV_XID_MEANING_MAX 96
#define RDZV_XID_MAX 100000u
#define RDZV_XID_TABLE_BYTES (1u << 20)

struct rdzv_xid_entry {
	uint32_t xid;
	enum rdzv_xid_action action;
	unsigned gens;
	char meaning[RDZV_XID_MEANING_MAX];
};

struct rdzv_xid_table {
	size_t n, cap;
	struct rdzv_xid_entry *v;
};

/* Append the lines of text[0..len) (name: the file, for messages) to t.
 * Returns the lines taken, or -1 with "NAME:LINE: what" in err (t keeps
 * the lines before it). */
int rdzv_xid_table_parse(struct rdzv_xid_table *t, const char *text, size_t len,
                         const char *name, char *err, size_t errlen);

/* The file at path (at most RDZV_XID_TABLE_BYTES) into t. Returns the
 * entries, or -1 with err. */
int rdzv_xid_table_load(struct rdzv_xid_table *t, const char *path, char *err, size_t errlen);

void rdzv_xid_table_free(struct rdzv_xid_table *t); /* accepts NULL; t reusable */

/* The entry for xid on a GPU of generation gen (one RDZV_GEN_* bit, 0 not
 * known): the generation's own line, else the "all" line; for a GPU of
 * unknown generation the "all" line, else the first line of the Xid.
 * NULL: none. */
const struct rdzv_xid_entry *rdzv_xid_lookup(const struct rdzv_xid_table *t, uint32_t xid,
                                             unsigned gen);

/* Whether an action makes a report the node's fault (a reset, a reboot, a
 * drain, support, mechanics) rather than the application's. */
int rdzv_xid_node_fault(enum rdzv_xid_action a);

const char *rdzv_xid_action_name(enum rdzv_xid_action a);

/* The generation of an NVIDIA model name ("NVIDIA H100 80GB HBM3", the
 * driver's "Model:" line): one RDZV_GEN_* bit, 0 when not one the catalog
 * names. */
unsigned rdzv_gpu_generation(const char *model);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/profile/: site NCCL profiles: the files, their variables, which one
 * applies. Uses lib/common/. */
/* nccl_vars.h: the NCCL_* environment variables rdzv knows, with the value
 * type NCCL documents for each, so that a profile's typo or bad value is
 * caught by the admin's checker instead of being silently ignored by NCCL.
 *
 * Sources: the "Environment Variables" page of the NCCL user guide (2.28),
 * whose "Debugging" section lists the variables that "should not be used in
 * production nor retained in scripts" (flag RDZV_NV_DEBUG), plus the names
 * present in libnccl 2.28.9 that the guide does not describe, so that a real
 * but undocumented knob is not reported as a typo (their type is "string":
 * nothing is checked beyond the name). */
#ifndef RDZV_NCCL_VARS_H
#define RDZV_NCCL_VARS_H

#include <stddef.h>

enum rdzv_nv_type {
	RDZV_NV_STRING,   /* anything */
	RDZV_NV_INT,      /* decimal or 0x hex integer in [min, max] */
	RDZV_NV_BOOL,     /* 0 or 1 (NCCL reads these with strtol: no yes/no) */
	RDZV_NV_ENUM,     /* one of choices (case-insensitive), or an integer in
	                   * [min, max] when min <= max (legacy numeric levels) */
	RDZV_NV_HCA_LIST, /* [^][=]dev[:port][,dev[:port]...] (NCCL_IB_HCA) */
	RDZV_NV_IF_LIST,  /* [^][=]prefix[,prefix...] (NCCL_SOCKET_IFNAME) */
	RDZV_NV_FI_BOOL,  /* libfabric's booleans: 0/1, or yes/no, true/false,
	                   * on/off in any case (fi_param_get_bool) */
	RDZV_NV_WORD,     /* exactly one of choices, case-sensitive (what
	                   * strcmp-reading libraries take: libfabric's strings) */
};

#define RDZV_NV_DEBUG 0x1u      /* in NCCL's "Debugging" section */
#define RDZV_NV_DEPRECATED 0x2u /* removed or renamed by NCCL */
#define RDZV_NV_ALT_READ 0x4u   /* FI_CXI_RDZV_PROTO: alt_read needs an allocation option */
#define RDZV_NV_MR_MONITOR 0x8u /* FI_MR_CACHE_MONITOR: memhooks hangs RCCL's OFI plugin */

struct rdzv_nccl_var {
	const char *name;
	enum rdzv_nv_type type;
	unsigned flags;
	long long min, max;  /* RDZV_NV_INT / RDZV_NV_ENUM */
	const char *choices; /* RDZV_NV_ENUM: "A|B|C" */
	const char *note;    /* why it is flagged (debug/deprecated), or NULL */
};

/* All known variables, sorted by name; *n gets the count. */
const struct rdzv_nccl_var *rdzv_nccl_vars(size_t *n);

/* The entry for name (exact, case-sensitive), or NULL. */
const struct rdzv_nccl_var *rdzv_nccl_var_find(const char *name);

/* The known name nearest to name (edit distance with transpositions,
 * compared case-insensitively), or NULL when nothing is close enough to be
 * a plausible typo. */
const char *rdzv_nccl_var_nearest(const char *name);

/* Check value against v's documented type. Returns 0, or -1 with a message
 * (without the variable's name) saying what is expected. */
int rdzv_nccl_value_check(const struct rdzv_nccl_var *v, const char *value, char *err,
                          size_t errlen);

/* NCCL_IB_HCA syntax: an optional '^' (exclude), an optional '=' (exact
 * names instead of prefixes), then comma-separated device names each with an
 * optional ":port" (1-255). Returns 0 or -1 with the bad item named. */
int rdzv_hca_list_check(const char *value, char *err, size_t errlen);

/* ---- the other families of variables the lint knows ----
 *
 * An RCCL job over Slingshot reads more than NCCL_*: RCCL's own RCCL_*,
 * the ROCm runtime's HSA_* and libfabric's FI_* (its cxi provider's
 * FI_CXI_*). Each family has its own table (same entry type, sorted by
 * name) so that a typo is matched against its own family only: RCCL_ALGO
 * is not a misspelt NCCL_ALGO. Sources are named above each table
 * (lib/profile/rccl_vars.c). */
struct rdzv_var_family {
	const char *prefix;  /* "NCCL_", "RCCL_", "HSA_", "FI_CXI_", "FI_" */
	const char *reader;  /* who reads them, for messages */
	int strict;          /* 1: an unknown name is refused unless declared
	                      * "known"; 0 (libfabric's core FI_*, beside which
	                      * every other provider has its FI_<PROV>_*): only a
	                      * near miss of a known name is refused */
	const struct rdzv_nccl_var *vars;
	size_t n;
};

/* The family whose prefix name starts with (the longest: FI_CXI_ before
 * FI_), or NULL: such names are not checked. */
const struct rdzv_var_family *rdzv_var_family_of(const char *name);

/* The family whose prefix name starts with when compared case-insensitively
 * but not exactly ("nccl_ib_hca", "Fi_cxi_..."): a typo the library would
 * silently ignore. NULL otherwise. */
const struct rdzv_var_family *rdzv_var_family_miscased(const char *name);

/* The entry for name in its family's table (exact), or NULL. */
const struct rdzv_nccl_var *rdzv_var_find(const char *name);

/* The known name of name's family nearest to name (as
 * rdzv_nccl_var_nearest), or NULL. */
const char *rdzv_var_nearest(const char *name);

/* Every family, NCCL's first; *n gets the count. */
const struct rdzv_var_family *rdzv_var_families(size_t *n);

/* The tables of lib/profile/rccl_vars.c. */
const struct rdzv_nccl_var *rdzv_rccl_vars(size_t *n);
const struct rdzv_nccl_var *rdzv_hsa_vars(size_t *n);
const struct rdzv_nccl_var *rdzv_fi_cxi_vars(size_t *n);
const struct rdzv_nccl_var *rdzv_fi_vars(size_t *n);

/* Osa edit distance between a and b, case-insensitive, capped at cap+1. */
unsigned rdzv_edit_distance(const char *a, const char *b, unsigned cap);

#endif

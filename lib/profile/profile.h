/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/profile/: site NCCL profiles: the files, their variables, which one
 * applies. Uses lib/common/. */
/* profile.h: site NCCL profiles - the file format and the resolution of
 * what a job step gets (the secure directory they live in: profile_dir.h).
 * doc/profiles.md is the admin's guide; this is the contract.
 *
 * File DIR/NAME.profile, one directive per line:
 *   # comment                 (only at the start of a line: values may hold '#')
 *   description TEXT          (at most once; shown by --nccl-profile=list)
 *   include NAME              (also "inherit NAME": NAME's resolved entries
 *                              take effect here; later lines override them)
 *   default VAR=VALUE         (applied unless the user exported VAR)
 *   enforce VAR=VALUE         (always applied, replacing the user's value)
 *   unset VAR                 (removed from every task)
 *   known VAR                 (accept a name newer than rdzv's tables, in
 *                              this file: NCCL_*, RCCL_*, HSA_*, FI_*)
 *   multinode default|enforce|unset ...
 *                             (the line counts only in steps on more than
 *                              one node; in a one-node step it is as if
 *                              absent, so an earlier line or an include's
 *                              entry for the variable holds there)
 *   require mnnvl             (every node of the step must be ready for
 *                              multi-node NVLink before its tasks start:
 *                              lib/gpu/mnnvl.h; an include's requirement
 *                              holds in the including profile too)
 * Blank lines are ignored; VALUE runs to the end of the line (trailing
 * blanks dropped) and may be empty.
 *
 * Which profile applies (rdzv_profile_pick): the user's --nccl-profile=NAME,
 * else the default of the step's partition (partition_profile=), else the
 * site default (profile=). "none" chooses no profile. Whatever the user
 * chooses, the enforce and unset entries of the profile that applies by
 * default (partition, else site) still apply, over anything the chosen
 * profile says about the same variable (rdzv_profile_resolve). */
#ifndef RDZV_PROFILE_H
#define RDZV_PROFILE_H

#include <stddef.h>
#include <stdio.h>

#include "envset.h"
#include "profile_dir.h"

#define RDZV_PROFILE_DEPTH_MAX 8       /* nested includes */
#define RDZV_PROFILE_WHERE_MAX 1100    /* "path:line" */

/* Messages that are not errors (warnings for the admin's checker). */
struct rdzv_notes {
	char **v;
	size_t n, cap;
};

void rdzv_notes_init(struct rdzv_notes *w);
void rdzv_notes_clear(struct rdzv_notes *w); /* frees the messages */
/* Append a message; silently dropped when out of memory (a lost warning
 * must not fail a step). */
void rdzv_notes_add(struct rdzv_notes *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- parsing one file ---- */

enum rdzv_pline_kind {
	RDZV_PL_DEFAULT,
	RDZV_PL_ENFORCE,
	RDZV_PL_UNSET,
	RDZV_PL_INCLUDE,
	RDZV_PL_KNOWN,
	RDZV_PL_REQUIRE,  /* name: what is required ("mnnvl") */
};

struct rdzv_pline {
	enum rdzv_pline_kind kind;
	char *name;   /* variable, or profile for INCLUDE */
	char *value;  /* DEFAULT/ENFORCE only */
	unsigned line;
	int multinode; /* "multinode" qualifier (DEFAULT/ENFORCE/UNSET) */
};

struct rdzv_profile_doc {
	char *description; /* NULL when none */
	struct rdzv_pline *v;
	size_t n, cap;
};

/* Parse and check text[len] read from file fname (used in messages only).
 * Errors (refused): syntax, a NUL or control byte, a line over
 * RDZV_VALUE_MAX, an invalid variable name, a variable set twice in the
 * file, a variable owned by Slurm or the rendezvous modes (SLURM_*, RANK,
 * MASTER_ADDR, ...), an unknown NCCL_* name (with the nearest known one),
 * a value that does not match NCCL's documented type; the same for the
 * other families rdzv knows (RCCL_*, HSA_*, FI_CXI_*; for libfabric's
 * core FI_* only a near miss of a known name, nccl_vars.h). Warnings (into
 * notes, may be NULL): NCCL's debug-only and deprecated variables, and
 * settings that need more than the environment (FI_CXI_RDZV_PROTO=alt_read
 * needs an allocation option) or are known to hang (FI_MR_CACHE_MONITOR=
 * memhooks under RCCL's OFI plugin).
 * Returns 0 with *out set, or -1 with "fname:line: reason" in err. */
int rdzv_profile_parse(const char *text, size_t len, const char *fname,
                       struct rdzv_profile_doc **out, struct rdzv_notes *notes,
                       char *err, size_t errlen);
void rdzv_profile_doc_destroy(struct rdzv_profile_doc *doc);

/* ---- where files come from ---- */

/* Reads the text of profile name. Returns 0 with *text (malloc'd, NUL
 * terminated), *len and where (the file's path, for messages), or -1 with
 * a reason. rdzv_profile_dir is the real one; tests and the fuzz target use
 * memory. */
struct rdzv_profile_source {
	int (*read)(const void *ctx, const char *name, char **text, size_t *len, char *where,
	            size_t wherelen, char *err, size_t errlen);
	const void *ctx;
};

/* ---- one profile with its includes resolved ---- */

/* Which steps an entry applies to ("multinode" lines). A variable has
 * either one ANY entry, or a MULTI entry and possibly a SINGLE one (the
 * line a later "multinode" line overrides in steps on several nodes). */
enum rdzv_scope {
	RDZV_SCOPE_ANY,    /* every step */
	RDZV_SCOPE_MULTI,  /* steps on more than one node */
	RDZV_SCOPE_SINGLE, /* steps on one node */
};

struct rdzv_profile_entry {
	char *name;
	char *value;                /* NULL for UNSET */
	enum rdzv_policy policy;
	enum rdzv_scope scope;
	char where[RDZV_PROFILE_WHERE_MAX]; /* "path:line" of the line that won */
};

struct rdzv_profile {
	char name[RDZV_PROFILE_NAME_MAX + 1];
	char *description;          /* NULL when none */
	struct rdzv_profile_entry *v;
	size_t n, cap;
	int require_mnnvl;          /* "require mnnvl" here or in an include */
	char require_mnnvl_where[RDZV_PROFILE_WHERE_MAX]; /* "path:line" of the first */
};

/* Load profile name and everything it includes (depth at most
 * RDZV_PROFILE_DEPTH_MAX, cycles refused with the chain named). An
 * included entry is overridden by a later line for the same variable.
 * Returns 0 with *out, or -1 with "path:line: reason" in err. */
int rdzv_profile_load(const struct rdzv_profile_source *src, const char *name,
                      struct rdzv_profile **out, struct rdzv_notes *notes, char *err,
                      size_t errlen);
void rdzv_profile_destroy(struct rdzv_profile *p);
const struct rdzv_profile_entry *rdzv_profile_find(const struct rdzv_profile *p,
                                                   const char *var);
/* The entry for var that applies to a step on nnodes nodes, or NULL. */
const struct rdzv_profile_entry *rdzv_profile_find_for(const struct rdzv_profile *p,
                                                       const char *var, unsigned nnodes);
/* Whether e applies to a step on nnodes nodes (0 counts as one). */
int rdzv_profile_entry_applies(const struct rdzv_profile_entry *e, unsigned nnodes);

/* ---- which profile applies ---- */

/* partition_profile=PART:NAME[,PART:NAME...]: check the syntax and names.
 * Returns 0 or -1 naming the bad item. An empty map is valid. */
int rdzv_partition_map_check(const char *map, char *err, size_t errlen);

/* The profile named for partition in map, copied into name[namelen].
 * Returns 1 when found, 0 when not (name = ""), -1 on a malformed map.
 * partition may be a list "gpu,debug" (SLURM_JOB_PARTITION of srun/salloc
 * -p A,B before Slurm 24.11.3): found when every listed partition maps to
 * the same profile, 0 when none maps, RDZV_PARTITION_AMBIGUOUS when they
 * differ (the one the job runs in is unknown: no partition default). */
#define RDZV_PARTITION_AMBIGUOUS 2
int rdzv_partition_map_lookup(const char *map, const char *partition, char *name,
                              size_t namelen, char *err, size_t errlen);

enum rdzv_pick_why {
	RDZV_PICK_NONE,      /* nothing applies */
	RDZV_PICK_USER,      /* --nccl-profile=NAME */
	RDZV_PICK_PARTITION, /* partition_profile= */
	RDZV_PICK_SITE,      /* profile= */
	RDZV_PICK_USER_NONE, /* --nccl-profile=none */
};

struct rdzv_profile_pick {
	char chosen[RDZV_PROFILE_NAME_MAX + 1]; /* all entries apply; "" = none */
	char deflt[RDZV_PROFILE_NAME_MAX + 1];  /* enforce/unset apply; "" = none */
	enum rdzv_pick_why why;
	enum rdzv_pick_why deflt_why;           /* PARTITION, SITE or NONE */
	int partition_ambiguous;                /* a partition list whose defaults differ */
	unsigned nnodes;  /* the step's node count, for "multinode" lines: they
	                   * apply when it is over 1. rdzv_profile_pick sets 0
	                   * (a one-node view); the caller that knows the step
	                   * sets it before resolving */
};

/* user: the --nccl-profile value (NULL or "" when not given; "none"; or a
 * name, checked with rdzv_profile_name_check). partition: the step's
 * partition, NULL or "" when unknown. Returns 0, or -1 with the reason. */
int rdzv_profile_pick(const char *user, const char *partition, const char *site_default,
                      const char *partition_map, struct rdzv_profile_pick *pick,
                      char *err, size_t errlen);

/* "--nccl-profile", "default for partition gpu", ... for messages. */
const char *rdzv_pick_why_name(enum rdzv_pick_why why);

/* Add what the pick means to out (an envset: same precedence rules as a
 * task's): every entry of the chosen profile (origin "profile NAME"), then
 * the enforce/unset entries of the default profile when it is another one
 * (origin "profile NAME (default)"), which replace the chosen profile's
 * entries for the same variables. Only the entries that apply to a step on
 * pick->nnodes nodes count ("multinode" lines). Loads the profiles through
 * src; errors name file and line. Returns 0 or -1. */
int rdzv_profile_resolve(const struct rdzv_profile_pick *pick,
                         const struct rdzv_profile_source *src, struct rdzv_envset *out,
                         struct rdzv_notes *notes, char *err, size_t errlen);

/* What the step's nodes must provide ("require" lines). The chosen
 * profile's requirements, and the default profile's whatever the user
 * chose (like its enforce entries, they are the site's policy: a user
 * cannot escape a partition's "require mnnvl" with --nccl-profile=none). */
struct rdzv_profile_needs {
	int mnnvl;
	char mnnvl_where[RDZV_PROFILE_WHERE_MAX + 80]; /* "path:line (profile NAME)" */
};

/* rdzv_profile_resolve, and the requirements into needs (zeroed first;
 * may be NULL). */
int rdzv_profile_resolve_needs(const struct rdzv_profile_pick *pick,
                               const struct rdzv_profile_source *src, struct rdzv_envset *out,
                               struct rdzv_profile_needs *needs, struct rdzv_notes *notes,
                               char *err, size_t errlen);

/* ---- --nccl-profile=list ---- */

/* Print every profile of d with its description (or why it cannot be
 * used), the defaults, and what pick means for this step. Returns 0, or -1
 * when the directory cannot be listed. */
int rdzv_profile_print_list(FILE *out, const struct rdzv_profile_dir *d,
                            const struct rdzv_profile_pick *pick, const char *partition,
                            const char *site_default, const char *partition_map, char *err,
                            size_t errlen);

#endif

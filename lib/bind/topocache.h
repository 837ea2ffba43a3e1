/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/bind/: the node's topology, each task's GPU, NICs and cores, the node
 * check and its GPU gate. Uses lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* topocache.h: the node's binding model (topo-priv.h), cached per node so
 * that a step does not parse the topology XML again.
 *
 * The cache file holds the model computed from one XML file and the
 * identity of that file (device, inode, size, modification and change
 * times, path), with the hwloc API version and the cache format. It is read
 * and written only by root (slurmstepd's init_post_opt): a file is used
 * only when it and its directory are owned by root and writable by nobody
 * else, are not symbolic links, and its key matches the XML file as it is
 * now; anything else is a miss, and the XML is parsed. A user can neither
 * write the directory nor make root follow a link out of it, so a planted
 * table is impossible; an admin who edits the XML changes its identity and
 * the next step rewrites the entry. */
#ifndef RDZV_TOPOCACHE_H
#define RDZV_TOPOCACHE_H

#include <stddef.h>

#include "topo.h"

#define RDZV_CACHE_PATH_MAX 1200

enum rdzv_cache_outcome {
	RDZV_CACHE_OFF,      /* no cache directory configured */
	RDZV_CACHE_HIT,      /* the model came from the cache */
	RDZV_CACHE_WRITTEN,  /* miss or stale: XML parsed, entry (re)written */
	RDZV_CACHE_MISS,     /* XML parsed, entry not written (reason in note) */
};

const char *rdzv_cache_outcome_name(enum rdzv_cache_outcome o);

/* The identity of xml as a one-line key. Returns 0, or -1 (stat failed). */
int rdzv_topo_cache_key(const char *xml, char *key, size_t len, char *err, size_t errlen);

/* The model as text under key; returns a malloc()ed string or NULL. */
char *rdzv_topo_serialize(const struct rdzv_topo *t, const char *key);

/* Parse text written by rdzv_topo_serialize. Returns 0 with *out set, 1
 * when the text's key is not key (stale), -1 when malformed (reason in err). */
int rdzv_topo_deserialize(const char *text, const char *key, struct rdzv_topo **out, char *err,
                          size_t errlen);

/* The model of xml: from the cache in dir when an entry is valid, else
 * parsed from xml (rdzv_topo_load) and, when the caller is root, written
 * to dir. dir NULL or "": no cache. A cache problem is never an error: it
 * is said in note and the XML is parsed. Returns 0 with *out and *how set,
 * or -1 when the XML cannot be loaded. */
int rdzv_topo_load_cached(const char *xml, const char *dir, struct rdzv_topo **out,
                          enum rdzv_cache_outcome *how, char *note, size_t notelen, char *err,
                          size_t errlen);

#endif

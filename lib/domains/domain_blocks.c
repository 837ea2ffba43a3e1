/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/domains/: NVLink domains: the setting, Slurm's blocks, the step's domain
 * map, the group check, a node's report. Uses lib/step/, lib/common/. */
/* domain_blocks.c: Slurm's topology blocks as the step's domains
 * (domain.h, rdzv_domains_from_blocks). */
#include "config.h"
#include "domain.h"
#include "domain_util.h"
#include "hostlist.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of KEY= in one line of tokens separated by blanks, as a span. */
static int token(const char *line, size_t len, const char *key, const char **val, size_t *vlen)
{
	size_t klen = strlen(key), i = 0;

	while (i < len) {
		size_t e;

		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		e = i;
		while (e < len && line[e] != ' ' && line[e] != '\t')
			e++;
		if (e - i > klen && strncmp(line + i, key, klen) == 0 && line[i + klen] == '=') {
			*val = line + i + klen + 1;
			*vlen = e - i - klen - 1;
			return 1;
		}
		i = e;
	}
	return 0;
}

struct block {
	char name[RDZV_DOMAIN_NAME_MAX];
	char *nodes; /* the block's host list */
	uint32_t count;
};


/* The step's node names, hashed (FNV-1a, open addressing). */
/* The step's node names, one after another in one buffer: a name per node
 * would cost a heap block each (65,536 of them at Slurm's largest
 * steps), and a fuzzed list of long names ran past a gigabyte. */
#define NAMES_BYTES_MAX (128u << 20)

struct host_index {
	char *text;       /* the names, each NUL-terminated */
	size_t used, room;
	size_t *at;       /* [n]: node id -> its name's offset in text */
	uint32_t *slots;  /* [size]: node id + 1, 0 empty */
	uint32_t *hashes; /* [size]: the hash of the slot's name (compared first) */
	uint32_t n, cap, size; /* names used, names allocated, slots */
};

static uint32_t hash_name(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void index_free(struct host_index *ix)
{
	free(ix->text);
	free(ix->at);
	free(ix->slots);
	free(ix->hashes);
	memset(ix, 0, sizeof(*ix));
}

static uint32_t index_find(const struct host_index *ix, const char *host)
{
	uint32_t h = hash_name(host), at = h & (ix->size - 1);

	while (ix->slots[at]) {
		if (ix->hashes[at] == h && strcmp(ix->text + ix->at[ix->slots[at] - 1], host) == 0)
			return ix->slots[at] - 1;
		at = (at + 1) & (ix->size - 1);
	}
	return UINT32_MAX;
}

struct index_fill {
	struct host_index *ix;
	char *err;
	size_t errlen;
};

static int index_add(const char *host, void *ctx)
{
	struct index_fill *f = ctx;
	struct host_index *ix = f->ix;
	size_t len = strlen(host);
	uint32_t at, h;

	if (ix->n >= ix->cap)
		return rdzv_err(f->err, f->errlen, "the step's node list names more hosts than "
		                "it counts");
	if (index_find(ix, host) != UINT32_MAX)
		return rdzv_err(f->err, f->errlen, "the step's node list names %s twice", host);
	if (ix->used + len + 1 > ix->room) {
		size_t room = ix->room ? ix->room * 2 : 4096;
		char *t;

		while (room < ix->used + len + 1)
			room *= 2;
		if (ix->used + len + 1 > NAMES_BYTES_MAX)
			return rdzv_err(f->err, f->errlen, "the step's node names take more than %u MiB",
			                NAMES_BYTES_MAX >> 20);
		if (room > NAMES_BYTES_MAX)
			room = NAMES_BYTES_MAX;
		if (!(t = realloc(ix->text, room)))
			return rdzv_err(f->err, f->errlen, "out of memory");
		ix->text = t;
		ix->room = room;
	}
	memcpy(ix->text + ix->used, host, len + 1);
	ix->at[ix->n] = ix->used;
	ix->used += len + 1;
	h = hash_name(host);
	at = h & (ix->size - 1);
	while (ix->slots[at])
		at = (at + 1) & (ix->size - 1);
	ix->slots[at] = ++ix->n;
	ix->hashes[at] = h;
	return 0;
}

static int build_index(const char *list, uint32_t n, struct host_index *ix, char *err,
                       size_t errlen)
{
	struct index_fill f = { ix, err, errlen };
	char why[256] = "";
	int rc;

	ix->n = 0;
	ix->cap = n;
	for (ix->size = 16; ix->size < 2 * n; ix->size *= 2)
		;
	if (!(ix->at = calloc(n, sizeof(size_t))) || !(ix->slots = calloc(ix->size, sizeof(uint32_t)))
	    || !(ix->hashes = malloc(ix->size * sizeof(uint32_t))))
		return rdzv_err(err, errlen, "out of memory");
	rc = rdzv_hostlist_each(list, index_add, &f, why, sizeof(why));
	if (rc == -1 && why[0])
		return rdzv_err(err, errlen, "the step's node list: %s", why);
	return rc ? -1 : 0;
}

/* One block's hosts against the step's index. */
struct block_walk {
	const struct host_index *ix;
	uint32_t *owner;
	const struct block *b;
	uint32_t k;
	char *err;
	size_t errlen;
};

static int block_host(const char *host, void *ctx)
{
	struct block_walk *w = ctx;
	uint32_t id = index_find(w->ix, host);

	if (id == UINT32_MAX)
		return 0; /* not one of the step's nodes */
	if (w->owner[id] != UINT32_MAX && w->owner[id] != w->k)
		return rdzv_err(w->err, w->errlen, "node %s is in two topology blocks, %s and %s: "
		                "its NVLink domain is not one", host, w->b[w->owner[id]].name,
		                w->b[w->k].name);
	w->owner[id] = w->k;
	return 0;
}

/* The BlockName= lines of Slurm's topology print into *out (*nb blocks),
 * each with its host list and how many hosts it names. */
static int read_blocks(const char *text, struct block **out, size_t *nb, char *err,
                       size_t errlen)
{
	struct block *b = NULL;
	size_t cap = 0, lineno = 0;
	const char *p = text;
	uint64_t hosts = 0;
	char why[256];
	long nn;

	*nb = 0;
	while (*p) {
		size_t len = strcspn(p, "\n"), vlen, nlen;
		const char *val, *nodes;

		lineno++;
		if (token(p, len, "BlockName", &val, &vlen)) {
			if (!rdzv_domain_name_ok(val, vlen))
				return rdzv_err(err, errlen, "block name '%.*s' (line %zu of Slurm's "
				                "topology) is empty, too long or has characters other "
				                "than letters, digits, '.', '_' and '-'",
				                (int)(vlen > 64 ? 64 : vlen), val, lineno);
			if (!token(p, len, "BlockSize", &nodes, &nlen))
				return rdzv_err(err, errlen, "line %zu of Slurm's topology print ends "
				                "before BlockSize= (cut: is SLURM_TOPO_LEN set?): '%.*s'",
				                lineno, (int)(len > 64 ? 64 : len), p);
			if (*nb == cap) {
				struct block *nbk = realloc(b, (cap = cap ? cap * 2 : 64) * sizeof(*b));

				if (!nbk)
					return rdzv_err(err, errlen, "out of memory reading the topology "
					                "blocks");
				*out = b = nbk;
			}
			memset(&b[*nb], 0, sizeof(b[*nb]));
			memcpy(b[*nb].name, val, vlen);
			(*nb)++;
			if (token(p, len, "Nodes", &nodes, &nlen) && nlen) {
				struct block *k = &b[*nb - 1];

				if (!(k->nodes = strndup(nodes, nlen)))
					return rdzv_err(err, errlen, "out of memory reading the topology "
					                "blocks");
				nn = rdzv_hostlist_count(k->nodes, why, sizeof(why));
				if (nn < 0)
					return rdzv_err(err, errlen, "block %s: Nodes=%.64s: %s", k->name,
					                k->nodes, why);
				/* all blocks' hosts counted before any is expanded */
				hosts += (uint64_t)nn;
				if (hosts > RDZV_DOMAIN_HOSTS_MAX)
					return rdzv_err(err, errlen, "block %s: Nodes=%.64s (%ld hosts) brings "
					                "the hosts of all blocks to %llu, past the limit of "
					                "%u (RDZV_DOMAIN_HOSTS_MAX)", k->name, k->nodes, nn,
					                (unsigned long long)hosts, RDZV_DOMAIN_HOSTS_MAX);
				k->count = (uint32_t)nn;
			}
		}
		p += len;
		if (*p == '\n')
			p++;
	}
	if (*nb == 0)
		return rdzv_err(err, errlen, "slurmctld reports no topology block (is "
		                "TopologyPlugin topology/block?)");
	return 0;
}

/* Every host of every block looked up once in the step's index: owner[node
 * id] = its block. O(hosts in blocks + step nodes), never the step's nodes
 * times the blocks (18k nodes in 1024 racks took 3.9 s that way). */
static int blocks_owners(const struct block *b, size_t nb, const struct host_index *ix,
                         uint32_t *owner, char *err, size_t errlen)
{
	uint64_t hosts = 0;
	char why[256];
	size_t k;

	for (k = 0; k < nb; k++) {
		struct block_walk w = { ix, owner, b, (uint32_t)k, err, errlen };

		if (!b[k].nodes)
			continue;
		if (hosts + b[k].count > RDZV_DOMAIN_HOSTS_MAX)
			return rdzv_err(err, errlen, "the topology's blocks name more than %u hosts "
			                "(RDZV_DOMAIN_HOSTS_MAX)", RDZV_DOMAIN_HOSTS_MAX);
		hosts += b[k].count;
		why[0] = '\0';
		if (rdzv_hostlist_each(b[k].nodes, block_host, &w, why, sizeof(why)) != 0) {
			if (why[0])
				rdzv_err(err, errlen, "block %s: %s", b[k].name, why);
			return -1;
		}
	}
	return 0;
}

/* The step's domains from the owners: one per block that holds a step node,
 * in the order of the nodes; a block name used twice refused (a hash of the
 * used names: O(nodes + domains)). */
static int owners_domains(const struct block *b, size_t nb, const struct host_index *ix,
                          const uint32_t *owner, struct rdzv_domains *d, char *err,
                          size_t errlen)
{
	uint32_t *used = NULL, *slots = NULL, size, i;
	int rv = -1;

	for (size = 16; size < 2 * nb; size *= 2)
		;
	if (!(used = malloc(nb * sizeof(uint32_t))) || !(slots = calloc(size, sizeof(uint32_t))))
		goto oom;
	for (i = 0; i < nb; i++)
		used[i] = UINT32_MAX;
	for (i = 0; i < d->nnodes; i++) {
		uint32_t k = owner[i], at;

		if (k == UINT32_MAX) {
			rdzv_err(err, errlen, "node %s is in no topology block: its NVLink domain is "
			         "unknown (add it to a BlockName= line of topology.conf, or use "
			         "nvlink_domain=node)", ix->text + ix->at[i]);
			goto out;
		}
		if (used[k] == UINT32_MAX) {
			for (at = hash_name(b[k].name) & (size - 1); slots[at];
			     at = (at + 1) & (size - 1))
				if (strcmp(d->names[slots[at] - 1], b[k].name) == 0) {
					rdzv_err(err, errlen, "Slurm's topology names block %s twice",
					         b[k].name);
					goto out;
				}
			used[k] = d->ndomains;
			if (rdzv_domains_add(d, b[k].name, b[k].count) < 0)
				goto oom;
			slots[at] = d->ndomains;
		}
		d->node_domain[i] = used[k];
	}
	rv = 0;
	goto out;
oom:
	rdzv_err(err, errlen, "out of memory reading the topology blocks");
out:
	free(used);
	free(slots);
	return rv;
}

int rdzv_domains_from_blocks(const char *text, const char *step_nodelist,
                             struct rdzv_domains *d, char *err, size_t errlen)
{
	struct block *b = NULL;
	struct host_index ix = { 0 };
	uint32_t *owner = NULL;
	size_t nb = 0, i;
	char why[256];
	long nn;
	int rv = -1;

	memset(d, 0, sizeof(*d));
	if (!text || !step_nodelist)
		return rdzv_err(err, errlen, "no topology or no node list");
	if (read_blocks(text, &b, &nb, err, errlen) < 0)
		goto out;
	nn = rdzv_hostlist_count(step_nodelist, why, sizeof(why));
	if (nn <= 0 || nn > (long)RDZV_DOMAIN_NODES_MAX) {
		if (nn > 0)
			snprintf(why, sizeof(why), "%ld nodes, past the domain map's limit of %u "
			         "nodes (RDZV_DOMAIN_NODES_MAX)", nn, RDZV_DOMAIN_NODES_MAX);
		rdzv_err(err, errlen, "the step's node list %.64s: %s", step_nodelist,
		         nn == 0 ? "empty" : why);
		goto out;
	}
	d->nnodes = (uint32_t)nn;
	if (!(d->node_domain = calloc(d->nnodes, sizeof(uint32_t)))) {
		rdzv_err(err, errlen, "out of memory reading the topology blocks");
		goto out;
	}
	/* The step's nodes in a hash table (name -> node id), the blocks'
	 * hosts looked up in it. */
	if (build_index(step_nodelist, d->nnodes, &ix, err, errlen) < 0)
		goto out;
	if (!(owner = malloc(d->nnodes * sizeof(uint32_t)))) {
		rdzv_err(err, errlen, "out of memory reading the topology blocks");
		goto out;
	}
	for (i = 0; i < d->nnodes; i++)
		owner[i] = UINT32_MAX;
	if (blocks_owners(b, nb, &ix, owner, err, errlen) < 0
	    || owners_domains(b, nb, &ix, owner, d, err, errlen) < 0)
		goto out;
	rv = 0;
out:
	for (i = 0; i < nb; i++)
		free(b[i].nodes);
	free(b);
	free(owner);
	index_free(&ix);
	if (rv < 0)
		rdzv_domains_free(d);
	return rv;
}

/* domain.c: see domain.h. */
#include "config.h"
#include "domain.h"
#include "channel.h"
#include "hostlist.h"
#include "layout.h"
#include "nodeorder.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kinds[] = { "node", "block", "nvml" };

int rdzv_nvlink_domain_parse(const char *s, enum rdzv_nvlink_domain *out)
{
	size_t i;

	if (!s)
		return -1;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(s, kinds[i]) == 0) {
			*out = (enum rdzv_nvlink_domain)i;
			return 0;
		}
	return -1;
}

const char *rdzv_nvlink_domain_name(enum rdzv_nvlink_domain d)
{
	return (unsigned)d < sizeof(kinds) / sizeof(kinds[0]) ? kinds[d] : "?";
}

void rdzv_domains_free(struct rdzv_domains *d)
{
	if (!d)
		return;
	free(d->node_domain);
	free(d->names);
	free(d->domain_nodes);
	memset(d, 0, sizeof(*d));
}

/* A domain name: what Slurm accepts for a block name that we can carry in
 * RDZV_STEP_DOMAINS and a variable: letters, digits, '.', '_', '-'. */
static int name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n >= RDZV_DOMAIN_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		      || c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

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

/* The arrays grow to the next power of two when ndomains reaches one: a map
 * of many domains in O(domains), never a copy per domain. */
static int add_domain(struct rdzv_domains *d, const char *name, uint32_t nodes)
{
	char (*nn)[RDZV_DOMAIN_NAME_MAX];
	uint32_t *nd;
	size_t cap = d->ndomains ? (size_t)d->ndomains * 2 : 1;

	if (d->ndomains & (d->ndomains - 1)) /* not a power of two: room left */
		goto put;
	nn = realloc(d->names, cap * sizeof(*nn));
	if (!nn)
		return -1;
	d->names = nn;
	nd = realloc(d->domain_nodes, cap * sizeof(*nd));
	if (!nd)
		return -1;
	d->domain_nodes = nd;
put:
	snprintf(d->names[d->ndomains], RDZV_DOMAIN_NAME_MAX, "%s", name);
	d->domain_nodes[d->ndomains] = nodes;
	d->ndomains++;
	return 0;
}

/* The step's node names, hashed (FNV-1a, open addressing). */
struct host_index {
	char **names;     /* [n]: node id -> name */
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
	uint32_t i;

	if (ix->names)
		for (i = 0; i < ix->n; i++)
			free(ix->names[i]);
	free(ix->names);
	free(ix->slots);
	free(ix->hashes);
	memset(ix, 0, sizeof(*ix));
}

static uint32_t index_find(const struct host_index *ix, const char *host)
{
	uint32_t h = hash_name(host), at = h & (ix->size - 1);

	while (ix->slots[at]) {
		if (ix->hashes[at] == h && strcmp(ix->names[ix->slots[at] - 1], host) == 0)
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
	uint32_t at, h;

	if (ix->n >= ix->cap)
		return rdzv_err(f->err, f->errlen, "the step's node list names more hosts than "
		                "it counts");
	if (index_find(ix, host) != UINT32_MAX)
		return rdzv_err(f->err, f->errlen, "the step's node list names %s twice", host);
	if (!(ix->names[ix->n] = strdup(host)))
		return rdzv_err(f->err, f->errlen, "out of memory");
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
	if (!(ix->names = calloc(n, sizeof(char *))) || !(ix->slots = calloc(ix->size, sizeof(uint32_t)))
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
	char why[256];
	long nn;

	*nb = 0;
	while (*p) {
		size_t len = strcspn(p, "\n"), vlen, nlen;
		const char *val, *nodes;

		lineno++;
		if (token(p, len, "BlockName", &val, &vlen)) {
			if (!name_ok(val, vlen))
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
				if (nn > (long)RDZV_DOMAIN_HOSTS_MAX)
					return rdzv_err(err, errlen, "block %s: Nodes=%.64s names %ld hosts, "
					                "past the limit of %u hosts in all blocks "
					                "(RDZV_DOMAIN_HOSTS_MAX)", k->name, k->nodes, nn,
					                RDZV_DOMAIN_HOSTS_MAX);
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
			         "nvlink_domain=node)", ix->names[i]);
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
			if (add_domain(d, b[k].name, b[k].count) < 0)
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
	struct host_index ix = { NULL, NULL, NULL, 0, 0, 0 };
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

/* Append printf output at *used; -1 when it does not fit. */
static int put(char *buf, size_t len, size_t *used, const char *fmt, ...) RDZV_PRINTF(4, 5);

static int put(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*used >= len)
		return -1;
	va_start(ap, fmt);
	n = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len - *used)
		return -1;
	*used += (size_t)n;
	return 0;
}

/* put's two cheap cases, for the many node ids of a map. */
static int put_char(char *buf, size_t len, size_t *used, char c)
{
	if (*used + 1 >= len)
		return -1;
	buf[(*used)++] = c;
	buf[*used] = '\0';
	return 0;
}

static int put_u32(char *buf, size_t len, size_t *used, uint32_t v)
{
	char tmp[10];
	size_t n = rdzv_put_u32(tmp, v);

	if (*used + n >= len)
		return -1;
	memcpy(buf + *used, tmp, n);
	*used += n;
	buf[*used] = '\0';
	return 0;
}

/* The longest text d can take: "JOB.STEP:", each domain's "NAME=" and ';',
 * each node's id and a separator, the NUL. */
static size_t text_max(const struct rdzv_domains *d)
{
	size_t digits = 1, n;

	for (n = d->nnodes; n >= 10; n /= 10)
		digits++;
	return 32 + (size_t)d->ndomains * (RDZV_DOMAIN_NAME_MAX + 1)
	       + (size_t)d->nnodes * (digits + 1);
}

int rdzv_domains_text(uint32_t job_id, uint32_t step_id, const struct rdzv_domains *d,
                      char **text, char *err, size_t errlen)
{
	size_t len = text_max(d);

	if (!(*text = malloc(len)))
		return rdzv_err(err, errlen, "out of memory for the domain map of %u nodes",
		                d->nnodes);
	if (rdzv_domains_format(job_id, step_id, d, *text, len) < 0) {
		free(*text);
		*text = NULL;
		return rdzv_err(err, errlen, "out of memory for the domain map of %u nodes",
		                d->nnodes);
	}
	return 0;
}

int rdzv_domains_format(uint32_t job_id, uint32_t step_id, const struct rdzv_domains *d,
                        char *buf, size_t len)
{
	size_t used = 0;
	uint32_t k, i, *start = NULL, *ids = NULL, *fill = NULL;
	int rv = -1;

	if (put(buf, len, &used, "%u.%u:", job_id, step_id) < 0)
		return -1;
	/* The nodes of each domain in id order (a counting sort): the text in
	 * O(nodes + domains), never nodes times domains. */
	if (!(start = calloc((size_t)d->ndomains + 1, sizeof(uint32_t)))
	    || !(fill = calloc((size_t)d->ndomains + 1, sizeof(uint32_t)))
	    || !(ids = calloc(d->nnodes ? d->nnodes : 1, sizeof(uint32_t))))
		goto out;
	for (i = 0; i < d->nnodes; i++)
		start[d->node_domain[i] + 1]++;
	for (k = 0; k < d->ndomains; k++)
		start[k + 1] += start[k];
	for (i = 0; i < d->nnodes; i++) {
		k = d->node_domain[i];
		ids[start[k] + fill[k]++] = i;
	}
	for (k = 0; k < d->ndomains; k++) {
		uint32_t a = start[k], z = start[k + 1];

		if (put(buf, len, &used, "%s%s=", k ? ";" : "", d->names[k]) < 0)
			goto out;
		while (a < z) {
			uint32_t e = a;

			while (e + 1 < z && ids[e + 1] == ids[e] + 1)
				e++;
			if ((a > start[k] && put_char(buf, len, &used, ',') < 0)
			    || put_u32(buf, len, &used, ids[a]) < 0
			    || (e > a && (put_char(buf, len, &used, '-') < 0
			                  || put_u32(buf, len, &used, ids[e]) < 0)))
				goto out;
			a = e + 1;
		}
	}
	rv = 0;
out:
	free(start);
	free(fill);
	free(ids);
	return rv;
}

static int read_u32(const char **p, uint32_t *v)
{
	uint64_t x;
	size_t n = strspn(*p, "0123456789");

	if (n == 0 || rdzv_parse_u64n(*p, n, 0, UINT32_MAX - 1, &x) < 0)
		return -1;
	*v = (uint32_t)x;
	*p += n;
	return 0;
}

int rdzv_domains_parse(const char *s, uint32_t nnodes, uint32_t *job_id, uint32_t *step_id,
                       struct rdzv_domains *d, char *err, size_t errlen)
{
	const char *p = s;
	unsigned char *seen = NULL;
	uint32_t covered = 0;

	memset(d, 0, sizeof(*d));
	if (!s)
		return rdzv_err(err, errlen, "%s is missing", RDZV_STEP_DOMAINS_VAR);
	if (read_u32(&p, job_id) < 0 || *p++ != '.' || read_u32(&p, step_id) < 0 || *p++ != ':')
		return rdzv_err(err, errlen, "%s '%.64s': no JOB.STEP: at its start",
		                RDZV_STEP_DOMAINS_VAR, s);
	if (nnodes == 0 || nnodes > RDZV_DOMAIN_NODES_MAX)
		return rdzv_err(err, errlen, "%s for a step of %u nodes: the domain map's limit "
		                "(RDZV_DOMAIN_NODES_MAX) is 1 to %u nodes", RDZV_STEP_DOMAINS_VAR,
		                nnodes, RDZV_DOMAIN_NODES_MAX);
	if (!(seen = calloc(nnodes, 1)) || !(d->node_domain = calloc(nnodes, sizeof(uint32_t))))
		goto oom;
	d->nnodes = nnodes;
	while (*p) {
		size_t n = strcspn(p, "=;");
		char name[RDZV_DOMAIN_NAME_MAX];

		if (p[n] != '=' || !name_ok(p, n))
			goto bad;
		memcpy(name, p, n);
		name[n] = '\0';
		if (add_domain(d, name, 0) < 0)
			goto oom;
		p += n + 1;
		for (;;) {
			uint32_t a, b, v;

			if (read_u32(&p, &a) < 0)
				goto bad;
			b = a;
			if (*p == '-') {
				p++;
				if (read_u32(&p, &b) < 0 || b <= a)
					goto bad;
			}
			if (b >= nnodes) {
				rdzv_err(err, errlen, "%s names node %u of a %u-node step",
				         RDZV_STEP_DOMAINS_VAR, b, nnodes);
				goto fail;
			}
			for (v = a;; v++) {
				if (seen[v]) {
					rdzv_err(err, errlen, "%s puts node %u in two domains",
					         RDZV_STEP_DOMAINS_VAR, v);
					goto fail;
				}
				seen[v] = 1;
				d->node_domain[v] = d->ndomains - 1;
				covered++;
				if (v == b)
					break;
			}
			if (*p != ',')
				break;
			p++;
		}
		if (*p == ';' && p[1])
			p++;
		else if (*p)
			goto bad;
	}
	if (covered != nnodes) {
		rdzv_err(err, errlen, "%s leaves %u of the step's %u nodes in no domain",
		         RDZV_STEP_DOMAINS_VAR, nnodes - covered, nnodes);
		goto fail;
	}
	free(seen);
	return 0;
bad:
	rdzv_err(err, errlen, "%s '%.64s' is malformed near '%.16s'", RDZV_STEP_DOMAINS_VAR, s, p);
	goto fail;
oom:
	rdzv_err(err, errlen, "out of memory");
fail:
	free(seen);
	rdzv_domains_free(d);
	return -1;
}

int rdzv_domain_place(const struct rdzv_domains *d, uint32_t node_id, const char *order,
                      const char *tpn, uint32_t *size, uint32_t *base, uint32_t *nodes,
                      char *err, size_t errlen)
{
	uint32_t me, j, *pos;
	const char *t = tpn;
	uint64_t sum = 0;
	int rv = -1;

	if (node_id >= d->nnodes)
		return rdzv_err(err, errlen, "node %u is not one of the map's %u nodes", node_id,
		                d->nnodes);
	if (!tpn)
		return rdzv_err(err, errlen, "no tasks per node");
	if (!(pos = malloc(d->nnodes * sizeof(uint32_t))))
		return rdzv_err(err, errlen, "out of memory");
	if (rdzv_order_positions(order ? order : "", d->nnodes, pos, err, errlen) < 0)
		goto out;
	me = d->node_domain[node_id];
	/* A name given to two domains would give two sizes for one name: the
	 * node's own is checked (O(domains); the whole map would be quadratic). */
	for (j = 0; j < d->ndomains; j++)
		if (j != me && strcmp(d->names[j], d->names[me]) == 0) {
			rdzv_err(err, errlen, "%s names domain %s twice", RDZV_STEP_DOMAINS_VAR,
			         d->names[me]);
			goto out;
		}
	*size = *base = *nodes = 0;
	/* Slurm's "N(xM),..." walked once, node by node. */
	j = 0;
	while (*t && j < d->nnodes) {
		uint64_t v, m = 1, r;
		size_t n = strspn(t, "0123456789");

		if (rdzv_parse_u64n(t, n, 0, UINT32_MAX, &v) < 0)
			goto badtpn;
		t += n;
		if (t[0] == '(' && t[1] == 'x') {
			n = strspn(t + 2, "0123456789");
			if (rdzv_parse_u64n(t + 2, n, 1, UINT32_MAX, &m) < 0 || t[2 + n] != ')')
				goto badtpn;
			t += 3 + n;
		}
		if (*t == ',')
			t++;
		for (r = 0; r < m && j < d->nnodes; r++, j++) {
			if (d->node_domain[j] != me)
				continue;
			sum += v;
			(*nodes)++;
			if (pos[j] < pos[node_id])
				*base += (uint32_t)v;
		}
	}
	if (j < d->nnodes || *t || sum > UINT32_MAX)
		goto badtpn;
	*size = (uint32_t)sum;
	rv = 0;
	goto out;
badtpn:
	rdzv_err(err, errlen, "tasks per node '%.64s' does not describe the step's %u nodes", tpn,
	         d->nnodes);
out:
	free(pos);
	return rv;
}

/* "0-3" or "0, 2, 4, 6" (at most 6 listed) of the members of a group in
 * domain dm. */
static void ranks_in(const struct rdzv_domains *d, const uint32_t *rank_node, uint64_t start,
                     uint64_t stride, uint64_t n, uint32_t dm, char *buf, size_t len)
{
	size_t used = 0;
	uint64_t k, listed = 0, lo = UINT64_MAX, prev = 0;

	buf[0] = '\0';
	for (k = 0; k < n; k++) {
		uint64_t r = start + k * stride;

		if (d->node_domain[rank_node[r]] != dm)
			continue;
		if (stride == 1) { /* one run per domain in practice: print ranges */
			if (lo == UINT64_MAX)
				lo = r;
			else if (r != prev + 1) {
				put(buf, len, &used, "%s%llu-%llu", used ? ", " : "",
				    (unsigned long long)lo, (unsigned long long)prev);
				lo = r;
			}
			prev = r;
			continue;
		}
		if (listed++ == 6) {
			put(buf, len, &used, ", ...");
			break;
		}
		put(buf, len, &used, "%s%llu", used ? ", " : "", (unsigned long long)r);
	}
	if (stride == 1 && lo != UINT64_MAX)
		put(buf, len, &used, lo == prev ? "%s%llu" : "%s%llu-%llu", used ? ", " : "",
		    (unsigned long long)lo, (unsigned long long)prev);
}

/* The distinct nodes (at most 4 named) of a group's members in domain dm. */
static void nodes_in(const struct rdzv_domains *d, const uint32_t *rank_node,
                     char *const *node_names, uint64_t start, uint64_t stride, uint64_t n,
                     uint32_t dm, char *buf, size_t len)
{
	size_t used = 0;
	uint32_t seen[4], nseen = 0, i;
	uint64_t k;
	int more = 0;

	buf[0] = '\0';
	for (k = 0; k < n; k++) {
		uint32_t node = rank_node[start + k * stride];

		if (d->node_domain[node] != dm)
			continue;
		for (i = 0; i < nseen && seen[i] != node; i++)
			;
		if (i < nseen)
			continue;
		if (nseen == 4) {
			more = 1;
			continue;
		}
		seen[nseen++] = node;
		put(buf, len, &used, "%s%s", used ? ", " : "",
		    node_names && node_names[node] ? node_names[node] : "?");
	}
	if (more)
		put(buf, len, &used, ", ...");
}

int rdzv_domain_check_groups(const struct rdzv_domains *d, uint32_t ntasks,
                             const uint32_t *rank_node, char *const *node_names,
                             uint64_t stride, uint64_t n, const char *what, char *err,
                             size_t errlen)
{
	uint64_t r, k, span = stride * n;

	if (n <= 1 || stride == 0)
		return 0;
	for (r = 0; r < ntasks; r++) {
		uint32_t dm, seen[3], nseen = 0, i;
		int more = 0;
		char msg[1024], ranks[256], nodes[256];
		size_t used = 0;

		if ((r / stride) % n != 0)
			continue; /* not the first rank of its group */
		if (r - (r % span) + span > ntasks)
			return rdzv_err(err, errlen, "%s: the step's %u ranks do not divide into groups "
			                "of %llu", what, ntasks, (unsigned long long)n);
		dm = d->node_domain[rank_node[r]];
		for (k = 1; k < n; k++)
			if (d->node_domain[rank_node[r + k * stride]] != dm)
				break;
		if (k == n)
			continue;
		/* The domains the group touches, in the order its ranks meet them. */
		for (k = 0; k < n && !more; k++) {
			uint32_t x = d->node_domain[rank_node[r + k * stride]];

			for (i = 0; i < nseen && seen[i] != x; i++)
				;
			if (i < nseen)
				continue;
			if (nseen == 3)
				more = 1;
			else
				seen[nseen++] = x;
		}
		msg[0] = '\0';
		for (i = 0; i < nseen; i++) {
			ranks_in(d, rank_node, r, stride, n, seen[i], ranks, sizeof(ranks));
			nodes_in(d, rank_node, node_names, r, stride, n, seen[i], nodes, sizeof(nodes));
			put(msg, sizeof(msg), &used, "%s%s (ranks %s on %s)",
			    i == 0 ? "" : i + 1 == nseen && !more ? " and " : ", ", d->names[seen[i]], ranks,
			    nodes);
		}
		return rdzv_err(err, errlen, "%s: the group of ranks %llu%s%llu would span NVLink "
		                "domains %s%s", what, (unsigned long long)r,
		                stride == 1 ? "-" : "..", (unsigned long long)(r + (n - 1) * stride),
		                msg, more ? " and more" : "");
	}
	return 0;
}

/* ---- nvlink_domain=nvml: the nodes' reports and srun's verdict ---- */

/* The nonce's 16 digits (channel.h) at *p, then past them. */
static int read_hex64(const char **p, uint64_t *v)
{
	if (strnlen(*p, 16) != 16 || rdzv_hex64(*p, 16, v) < 0)
		return -1;
	*p += 16;
	return 0;
}

int rdzv_domain_report_format(const struct rdzv_domain_report *r, char *buf, size_t len)
{
	int n;

	if (r->name[0] && !name_ok(r->name, strlen(r->name)))
		return -1;
	n = snprintf(buf, len, "RDZVD1 DOMAIN %u.%u %016llx %u %s", r->job_id, r->step_id,
	             (unsigned long long)r->nonce, r->node_id, r->name[0] ? r->name : "-");
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int rdzv_domain_report_parse(const char *buf, size_t n, struct rdzv_domain_report *r)
{
	char text[RDZV_DOMAIN_DGRAM_MAX + 1];
	const char *p = text;
	size_t nl;

	if (n == 0 || n > RDZV_DOMAIN_DGRAM_MAX || memchr(buf, '\0', n))
		return -1;
	memcpy(text, buf, n);
	text[n] = '\0';
	memset(r, 0, sizeof(*r));
	if (strncmp(p, "RDZVD1 DOMAIN ", 14) != 0)
		return -1;
	p += 14;
	if (read_u32(&p, &r->job_id) < 0 || *p++ != '.' || read_u32(&p, &r->step_id) < 0
	    || *p++ != ' ' || read_hex64(&p, &r->nonce) < 0 || *p++ != ' '
	    || read_u32(&p, &r->node_id) < 0 || *p++ != ' ')
		return -1;
	nl = strlen(p);
	if (nl == 1 && *p == '-')
		return 0;
	if (!name_ok(p, nl))
		return -1;
	memcpy(r->name, p, nl + 1);
	return 0;
}

int rdzv_domain_verdict_format(uint32_t job, uint32_t step, uint64_t nonce, int ok,
                               const char *msg, char *buf, size_t len)
{
	int n = snprintf(buf, len, "RDZVD1 %s %u.%u %016llx%s", ok ? "OK" : "REFUSE", job, step,
	                 (unsigned long long)nonce, ok ? "" : "\n");
	size_t used;

	if (n < 0 || (size_t)n >= len)
		return -1;
	used = (size_t)n;
	if (!ok && msg) /* the message, cut to the datagram's room */
		snprintf(buf + used, len - used, "%s", msg);
	return 0;
}

int rdzv_domain_verdict_parse(const char *buf, size_t n, uint32_t job, uint32_t step,
                              uint64_t nonce, char *msg, size_t msglen)
{
	char head[96];
	const char *nl;
	size_t hl;
	int ok;

	if (n == 0 || n > RDZV_DOMAIN_DGRAM_MAX || memchr(buf, '\0', n))
		return -1;
	nl = memchr(buf, '\n', n);
	hl = nl ? (size_t)(nl - buf) : n;
	ok = snprintf(head, sizeof(head), "RDZVD1 OK %u.%u %016llx", job, step,
	              (unsigned long long)nonce);
	if (ok > 0 && hl == (size_t)ok && !nl && memcmp(buf, head, hl) == 0)
		return 1;
	ok = snprintf(head, sizeof(head), "RDZVD1 REFUSE %u.%u %016llx", job, step,
	              (unsigned long long)nonce);
	if (ok > 0 && hl == (size_t)ok && nl && memcmp(buf, head, hl) == 0) {
		size_t ml = n - hl - 1;

		if (msglen) {
			if (ml >= msglen)
				ml = msglen - 1;
			memcpy(msg, nl + 1, ml);
			msg[ml] = '\0';
		}
		return 0;
	}
	return -1;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* report.c: what one rank sees, and the text form the ranks exchange
 * ("key=value" lines: readable in a packet capture, tolerant of a newer
 * rank adding keys). */
#define _GNU_SOURCE
#include "config.h"
#include "preflight.h"

#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hcalist.h"
#include "topo.h"

extern char **environ;

/* ------------------------------------------------------------ environment */

static int env_u32(const char *name, uint32_t min, uint32_t max, uint32_t *out, int required,
                   char *err, size_t *off, size_t errlen)
{
	const char *v = getenv(name);
	uint64_t x;
	int w;

	if (!v || !*v) {
		if (!required)
			return 1;
		w = snprintf(err + *off, errlen - *off, "%s%s is not set", *off ? "; " : "", name);
	} else if (rdzv_parse_u64(v, min, max, &x) < 0) {
		w = snprintf(err + *off, errlen - *off, "%s%s=%s is not a number in %u..%u",
		             *off ? "; " : "", name, v, min, max);
	} else {
		*out = (uint32_t)x;
		return 0;
	}
	if (w > 0 && (size_t)w < errlen - *off)
		*off += (size_t)w;
	return -1;
}

int pf_env_read(struct pf_env *e, char *err, size_t errlen)
{
	const char *addr = getenv("MASTER_ADDR"), *job = getenv("SLURM_JOB_ID");
	const char *step = getenv("SLURM_STEP_ID"), *run = getenv("TORCHELASTIC_RUN_ID");
	const char *sess = getenv("RDZV_PREFLIGHT_SESSION");
	uint32_t port = 0;
	size_t off = 0;
	int bad = 0;

	memset(e, 0, sizeof(*e));
	err[0] = '\0';
	bad |= env_u32("RANK", 0, RDZV_BOOT_MAX_WORLD - 1, &e->rank, 1, err, &off, errlen) < 0;
	bad |= env_u32("WORLD_SIZE", 1, RDZV_BOOT_MAX_WORLD, &e->world, 1, err, &off, errlen) < 0;
	bad |= env_u32("LOCAL_RANK", 0, RDZV_BOOT_MAX_WORLD - 1, &e->local_rank, 1, err, &off,
	               errlen) < 0;
	/* torchrun and rdzv.so set LOCAL_WORLD_SIZE; a hand-made
	 * environment may not, and then the local checks use the count. */
	if (env_u32("LOCAL_WORLD_SIZE", 1, RDZV_BOOT_MAX_WORLD, &e->local_world, 0, err, &off,
	            errlen) < 0)
		bad = 1;
	bad |= env_u32("MASTER_PORT", 1, 65535, &port, 1, err, &off, errlen) < 0;
	if (!addr || !*addr) {
		snprintf(err + off, errlen - off, "%sMASTER_ADDR is not set", off ? "; " : "");
		off += strlen(err + off);
		bad = 1;
	} else if (rdzv_strlcpy(e->master_addr, addr, sizeof(e->master_addr)) < 0) {
		snprintf(err + off, errlen - off, "%sMASTER_ADDR is too long", off ? "; " : "");
		off += strlen(err + off);
		bad = 1;
	}
	if (bad)
		return -1;
	e->master_port = (uint16_t)port;
	if (e->rank >= e->world)
		return rdzv_err(err, errlen, "RANK=%u is not below WORLD_SIZE=%u", e->rank, e->world);
	if (e->local_world && e->local_rank >= e->local_world)
		return rdzv_err(err, errlen, "LOCAL_RANK=%u is not below LOCAL_WORLD_SIZE=%u",
		                e->local_rank, e->local_world);
	/* The session keeps another step's ranks (same port reused) out. */
	if (sess)
		snprintf(e->session, sizeof(e->session), "%.120s", sess);
	else if (job && step)
		snprintf(e->session, sizeof(e->session), "%.60s.%.60s", job, step);
	else if (run)
		snprintf(e->session, sizeof(e->session), "%.120s", run);
	return 0;
}

/* ---------------------------------------------------------------- collect */

static void vappend(char (*list)[PF_TEXT], size_t *n, const char *fmt, va_list ap)
{
	if (*n >= PF_MAX_PROBLEMS)
		return;
	vsnprintf(list[*n], PF_TEXT, fmt, ap);
	(*n)++;
}

void pf_report_problem(struct pf_report *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vappend(r->problems, &r->nproblems, fmt, ap);
	va_end(ap);
}

void pf_report_net(struct pf_report *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vappend(r->net, &r->nnet, fmt, ap);
	va_end(ap);
}

static void add_var(struct pf_report *r, const char *name, const char *value)
{
	struct pf_var *v;

	if (r->nvars >= PF_MAX_VARS)
		return;
	v = &r->vars[r->nvars++];
	snprintf(v->name, sizeof(v->name), "%s", name);
	snprintf(v->value, sizeof(v->value), "%s", value);
}

static void collect_vars(struct pf_report *r)
{
	char **e;

	for (e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		char name[64];
		size_t n;

		if (!eq)
			continue;
		n = (size_t)(eq - *e);
		if (n >= sizeof(name))
			continue;
		memcpy(name, *e, n);
		name[n] = '\0';
		if (strncmp(name, "NCCL_", 5) == 0 || strcmp(name, "UCX_NET_DEVICES") == 0 ||
		    strcmp(name, "CUDA_DEVICE_ORDER") == 0)
			add_var(r, name, eq + 1);
	}
}

/* NCCL_SOCKET_IFNAME: "[^][=]prefix[,prefix...]" (NCCL's environment
 * documentation). NCCL fails at init when nothing matches; say so first. */
static void check_socket_ifname(struct pf_report *r, struct ifaddrs *ifa)
{
	const char *v = getenv("NCCL_SOCKET_IFNAME");
	char list[PF_TEXT], *tok, *save = NULL, *p;
	int exclude = 0, exact = 0, found = 0;
	struct ifaddrs *i;

	if (!v || !*v || rdzv_strlcpy(list, v, sizeof(list)) < 0)
		return;
	p = list;
	if (*p == '^') {
		exclude = 1;
		p++;
	}
	if (*p == '=') {
		exact = 1;
		p++;
	}
	if (exclude)
		return; /* excluding names cannot leave NCCL without an interface we can see */
	for (tok = strtok_r(p, ",", &save); tok && !found; tok = strtok_r(NULL, ",", &save))
		for (i = ifa; i && !found; i = i->ifa_next)
			if (i->ifa_addr && (i->ifa_addr->sa_family == AF_INET ||
			                    i->ifa_addr->sa_family == AF_INET6) &&
			    (exact ? strcmp(i->ifa_name, tok) == 0
			           : strncmp(i->ifa_name, tok, strlen(tok)) == 0))
				found = 1;
	if (!found)
		pf_report_net(r, "NCCL_SOCKET_IFNAME=%s matches no interface with an address on %s "
		              "(up: %s)", v, r->host, r->nics[0] ? r->nics : "none");
}

static int has_sysdev(const char *cls, const char *dev)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/class/%s/%s", cls, dev);
	return stat(path, &st) == 0;
}

static void list_rdma(char *buf, size_t len)
{
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *de;
	size_t off = 0;

	buf[0] = '\0';
	if (!d)
		return;
	while ((de = readdir(d)) && off + 2 < len) {
		int w;

		if (de->d_name[0] == '.')
			continue;
		w = snprintf(buf + off, len - off, "%s%s", off ? "," : "", de->d_name);
		if (w > 0)
			off += (size_t)w;
	}
	closedir(d);
}

/* NCCL_IB_HCA must allow at least one RDMA device this host has, or NCCL
 * quietly falls back to TCP sockets: the slow job nobody notices. */
static void check_ib_hca(struct pf_report *r)
{
	const char *v = getenv("NCCL_IB_HCA");
	struct rdzv_hca_list *l = NULL;
	char err[256], have[PF_TEXT];
	DIR *d;
	struct dirent *de;
	int found = 0;

	if (!v || !*v)
		return;
	if (rdzv_hca_list_parse(v, &l, err, sizeof(err)) < 0) {
		pf_report_net(r, "NCCL_IB_HCA=%s does not parse: %s", v, err);
		return;
	}
	if (!l->exclude) {
		d = opendir("/sys/class/infiniband");
		while (d && (de = readdir(d)) && !found)
			if (de->d_name[0] != '.' && rdzv_hca_list_allows(l, de->d_name, -1))
				found = 1;
		if (d)
			closedir(d);
		if (!found) {
			list_rdma(have, sizeof(have));
			pf_report_net(r, "NCCL_IB_HCA=%s names no RDMA device of %s (it has: %s); NCCL "
			              "would fall back to TCP", v, r->host, have[0] ? have : "none");
		}
	}
	rdzv_hca_list_destroy(l);
}

/* UCX_NET_DEVICES: "all", or "dev[:port]" items naming RDMA devices or
 * network interfaces. */
static void check_ucx(struct pf_report *r)
{
	const char *v = getenv("UCX_NET_DEVICES");
	char list[PF_TEXT], *tok, *save = NULL;

	if (!v || !*v || strcmp(v, "all") == 0 || rdzv_strlcpy(list, v, sizeof(list)) < 0)
		return;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');

		if (colon)
			*colon = '\0';
		if (!has_sysdev("infiniband", tok) && !has_sysdev("net", tok))
			pf_report_net(r, "UCX_NET_DEVICES=%s: %s is neither an RDMA device nor an "
			              "interface of %s", v, tok, r->host);
	}
}

static void collect_nics(struct pf_report *r)
{
	struct ifaddrs *ifa = NULL, *i;
	size_t off = 0;

	if (getifaddrs(&ifa) < 0) {
		snprintf(r->nics, sizeof(r->nics), "? (getifaddrs: %s)", strerror(errno));
		return;
	}
	for (i = ifa; i; i = i->ifa_next) {
		char ip[INET6_ADDRSTRLEN];
		int w;

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, ip,
		          sizeof(ip));
		w = snprintf(r->nics + off, sizeof(r->nics) - off, "%s%s=%s", off ? "," : "",
		             i->ifa_name, ip);
		if (w < 0 || (size_t)w >= sizeof(r->nics) - off)
			break;
		off += (size_t)w;
	}
	check_socket_ifname(r, ifa);
	freeifaddrs(ifa);
	check_ib_hca(r);
	check_ucx(r);
}

void pf_report_collect(const struct pf_env *e, struct pf_report *r)
{
	const char *node = getenv("SLURMD_NODENAME"), *cvd = getenv("CUDA_VISIBLE_DEVICES");
	char err[256];

	memset(r, 0, sizeof(*r));
	r->rank = e->rank;
	r->world = e->world;
	r->local_rank = e->local_rank;
	r->local_world = e->local_world;
	snprintf(r->master_addr, sizeof(r->master_addr), "%s", e->master_addr);
	r->master_port = e->master_port;
	/* Slurm's node name first: several slurmd may share one machine (the
	 * test cluster does), and the checks are per Slurm node. */
	if (node && *node)
		snprintf(r->host, sizeof(r->host), "%s", node);
	else if (gethostname(r->host, sizeof(r->host) - 1) < 0)
		snprintf(r->host, sizeof(r->host), "unknown");
	if (rdzv_affinity_cpulist(r->cpus, sizeof(r->cpus), err, sizeof(err)) < 0)
		snprintf(r->cpus, sizeof(r->cpus), "? (%s)", err);
	if (cvd) {
		r->cvd_set = 1;
		snprintf(r->cvd, sizeof(r->cvd), "%s", cvd);
	}
	r->gpu_count = -1;
	r->gpu_index = -1;
	collect_vars(r);
	collect_nics(r);
}

/* --------------------------------------------------------------- encoding */

struct buf {
	char *p;
	size_t n, cap;
	int oom;
};

static void put(struct buf *b, const char *key, const char *fmt, ...) RDZV_PRINTF(3, 4);
static void put(struct buf *b, const char *key, const char *fmt, ...)
{
	char val[PF_LIST + 128];
	size_t need, i, kl = strlen(key), vl;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	/* One line per key: a value's line breaks would start a new key. */
	for (i = 0; val[i]; i++)
		if (val[i] == '\n' || val[i] == '\r')
			val[i] = ' ';
	vl = strlen(val);
	need = b->n + kl + vl + 3;
	if (b->oom)
		return;
	if (need > b->cap) {
		size_t cap = b->cap ? b->cap : 1024;
		char *np;

		while (cap < need)
			cap *= 2;
		np = realloc(b->p, cap);
		if (!np) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, key, kl);
	b->p[b->n + kl] = '=';
	memcpy(b->p + b->n + kl + 1, val, vl);
	b->n += kl + vl + 2;
	b->p[b->n - 1] = '\n';
	b->p[b->n] = '\0';
}

static int finish(struct buf *b, char **out, size_t *len)
{
	if (b->oom || !b->p) {
		free(b->p);
		*out = NULL;
		return -1;
	}
	*out = b->p;
	*len = b->n;
	return 0;
}

/* Call fn for each "key=value" line. Returns 0, or -1 on a line without
 * '=' or longer than the largest value (reason in err). */
static int each_kv(const char *text, size_t len, int (*fn)(void *ctx, const char *k, char *v),
                   void *ctx, char *err, size_t errlen)
{
	size_t off = 0;
	char line[PF_LIST + 192];

	while (off < len) {
		const char *eol = memchr(text + off, '\n', len - off);
		size_t n = eol ? (size_t)(eol - (text + off)) : len - off;
		char *eq;

		if (n >= sizeof(line))
			return rdzv_err(err, errlen, "line of %zu bytes at offset %zu", n, off);
		memcpy(line, text + off, n);
		line[n] = '\0';
		off += n + 1;
		if (n == 0)
			continue;
		if (memchr(line, '\0', n) || !(eq = strchr(line, '=')))
			return rdzv_err(err, errlen, "malformed line '%.40s'", line);
		*eq = '\0';
		if (fn(ctx, line, eq + 1) < 0)
			return rdzv_err(err, errlen, "bad value for %s: '%.40s'", line, eq + 1);
	}
	return 0;
}

static int get_u32(const char *v, uint32_t *out)
{
	uint64_t x;

	if (rdzv_parse_u64(v, 0, UINT32_MAX, &x) < 0)
		return -1;
	*out = (uint32_t)x;
	return 0;
}

static int get_int(const char *v, int *out)
{
	uint64_t x;

	if (strcmp(v, "-1") == 0) {
		*out = -1;
		return 0;
	}
	if (rdzv_parse_u64(v, 0, INT32_MAX, &x) < 0)
		return -1;
	*out = (int)x;
	return 0;
}

static int get_double(const char *v, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	return *v && !*end && !errno ? 0 : -1;
}

#define COPY(dst, v) snprintf((dst), sizeof(dst), "%s", (v))

const struct pf_gpu_table pf_gpu_tables[PF_GPU_TABLES] = {
	{ "fabric", "fabric_ok", "fabric_domain", "fabric_why", "domain", "ready",
	  offsetof(struct pf_report, fabric_read), offsetof(struct pf_report, fabric_ok),
	  offsetof(struct pf_report, fabric_domain), offsetof(struct pf_report, fabric_why),
	  offsetof(struct pf_report, nfabric), offsetof(struct pf_report, fabric), PF_MAX_FABRIC },
	{ "xgmi", "xgmi_ok", "xgmi_hive", "xgmi_why", "hive", "ok",
	  offsetof(struct pf_report, xgmi_read), offsetof(struct pf_report, xgmi_ok),
	  offsetof(struct pf_report, xgmi_hive), offsetof(struct pf_report, xgmi_why),
	  offsetof(struct pf_report, nxgmi), offsetof(struct pf_report, xgmi), PF_MAX_XGMI },
};

int pf_report_encode(const struct pf_report *r, char **out, size_t *len)
{
	const struct pf_gpu_table *t;
	struct buf b = { 0 };
	size_t i;

	put(&b, "rank", "%u", r->rank);
	put(&b, "world", "%u", r->world);
	put(&b, "local_rank", "%u", r->local_rank);
	put(&b, "local_world", "%u", r->local_world);
	put(&b, "host", "%s", r->host);
	put(&b, "master_addr", "%s", r->master_addr);
	put(&b, "master_port", "%u", r->master_port);
	put(&b, "link_port", "%u", r->link_port);
	put(&b, "cpus", "%s", r->cpus);
	put(&b, "nics", "%s", r->nics);
	put(&b, "cvd_set", "%d", r->cvd_set);
	put(&b, "cvd", "%s", r->cvd);
	put(&b, "gpu_count", "%d", r->gpu_count);
	put(&b, "gpu_index", "%d", r->gpu_index);
	put(&b, "gpu_busid", "%s", r->gpu_busid);
	put(&b, "gpu_name", "%s", r->gpu_name);
	put(&b, "gpu_note", "%s", r->gpu_note);
	for (i = 0; i < r->nvars; i++)
		put(&b, "var", "%s=%s", r->vars[i].name, r->vars[i].value);
	for (i = 0; i < r->nproblems; i++)
		put(&b, "problem", "%s", r->problems[i]);
	for (i = 0; i < r->nnet; i++)
		put(&b, "net", "%s", r->net[i]);
	for (t = pf_gpu_tables; t < pf_gpu_tables + PF_GPU_TABLES; t++) {
		if (!*PF_CONST_AT(r, t->read_at, int))
			continue;
		put(&b, t->ok_key, "%d", *PF_CONST_AT(r, t->ok_at, int));
		put(&b, t->node_key, "%s", PF_CONST_AT(r, t->node_at, char));
		put(&b, t->why_key, "%s", PF_CONST_AT(r, t->why_at, char));
		for (i = 0; i < *PF_CONST_AT(r, t->n_at, size_t); i++)
			put(&b, t->line_key, "%s", PF_GPU_LINE(r, t, i));
	}
	return finish(&b, out, len);
}

static int report_kv(void *ctx, const char *k, char *v)
{
	const struct pf_gpu_table *t;
	struct pf_report *r = ctx;
	uint32_t u;

	if (!strcmp(k, "rank"))
		return get_u32(v, &r->rank);
	if (!strcmp(k, "world"))
		return get_u32(v, &r->world);
	if (!strcmp(k, "local_rank"))
		return get_u32(v, &r->local_rank);
	if (!strcmp(k, "local_world"))
		return get_u32(v, &r->local_world);
	if (!strcmp(k, "host"))
		return COPY(r->host, v), 0;
	if (!strcmp(k, "master_addr"))
		return COPY(r->master_addr, v), 0;
	if (!strcmp(k, "master_port") || !strcmp(k, "link_port")) {
		if (get_u32(v, &u) < 0 || u > 65535)
			return -1;
		*(k[0] == 'm' ? &r->master_port : &r->link_port) = (uint16_t)u;
		return 0;
	}
	if (!strcmp(k, "cpus"))
		return COPY(r->cpus, v), 0;
	if (!strcmp(k, "nics"))
		return COPY(r->nics, v), 0;
	if (!strcmp(k, "cvd_set"))
		return get_int(v, &r->cvd_set);
	if (!strcmp(k, "cvd"))
		return COPY(r->cvd, v), 0;
	if (!strcmp(k, "gpu_count"))
		return get_int(v, &r->gpu_count);
	if (!strcmp(k, "gpu_index"))
		return get_int(v, &r->gpu_index);
	if (!strcmp(k, "gpu_busid"))
		return COPY(r->gpu_busid, v), 0;
	if (!strcmp(k, "gpu_name"))
		return COPY(r->gpu_name, v), 0;
	if (!strcmp(k, "gpu_note"))
		return COPY(r->gpu_note, v), 0;
	if (!strcmp(k, "var")) {
		char *eq = strchr(v, '=');

		if (!eq)
			return -1;
		*eq = '\0';
		add_var(r, v, eq + 1);
		return 0;
	}
	if (!strcmp(k, "problem")) {
		pf_report_problem(r, "%s", v);
		return 0;
	}
	if (!strcmp(k, "net")) {
		pf_report_net(r, "%s", v);
		return 0;
	}
	for (t = pf_gpu_tables; t < pf_gpu_tables + PF_GPU_TABLES; t++) {
		size_t *n = PF_AT(r, t->n_at, size_t);

		if (!strcmp(k, t->ok_key)) {
			*PF_AT(r, t->read_at, int) = 1;
			return get_int(v, PF_AT(r, t->ok_at, int));
		}
		if (!strcmp(k, t->node_key))
			return *PF_AT(r, t->read_at, int) = 1, COPY(*PF_AT(r, t->node_at, pf_text), v), 0;
		if (!strcmp(k, t->why_key))
			return COPY(*PF_AT(r, t->why_at, pf_text), v), 0;
		if (!strcmp(k, t->line_key)) {
			*PF_AT(r, t->read_at, int) = 1;
			if (*n < t->max)
				COPY(PF_AT(r, t->lines_at, pf_text)[(*n)++], v);
			return 0;
		}
	}
	return 0; /* a key from a newer rank: ignored */
}

int pf_report_decode(const char *text, size_t len, struct pf_report *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->gpu_count = -1;
	r->gpu_index = -1;
	return each_kv(text, len, report_kv, r, err, errlen);
}

int pf_plan_encode(const struct pf_plan *p, char **out, size_t *len)
{
	struct buf b = { 0 };
	uint32_t i;

	put(&b, "gpu", "%d", p->gpu);
	put(&b, "gpu_fail", "%d", p->gpu_fail);
	put(&b, "gpu_why", "%s", p->gpu_why);
	put(&b, "nccl_id", "%s", p->nccl_id);
	put(&b, "world", "%u", p->world);
	for (i = 0; i < p->world; i++)
		put(&b, "addr", "%u %s %u", i, p->addr[i], p->port[i]);
	return finish(&b, out, len);
}

static int plan_kv(void *ctx, const char *k, char *v)
{
	struct pf_plan *p = ctx;

	if (!strcmp(k, "gpu"))
		return get_int(v, &p->gpu);
	if (!strcmp(k, "gpu_fail"))
		return get_int(v, &p->gpu_fail);
	if (!strcmp(k, "gpu_why"))
		return COPY(p->gpu_why, v), 0;
	if (!strcmp(k, "nccl_id"))
		return COPY(p->nccl_id, v), 0;
	if (!strcmp(k, "world")) {
		uint32_t w;

		return get_u32(v, &w) < 0 || w != p->world ? -1 : 0;
	}
	if (!strcmp(k, "addr")) {
		char *sp1 = strchr(v, ' '), *sp2;
		uint32_t r, port;

		if (!sp1 || !(sp2 = strchr(sp1 + 1, ' ')))
			return -1;
		*sp1 = *sp2 = '\0';
		if (get_u32(v, &r) < 0 || r >= p->world || get_u32(sp2 + 1, &port) < 0 || port > 65535)
			return -1;
		snprintf(p->addr[r], RDZV_BOOT_ADDR_MAX, "%s", sp1 + 1);
		p->port[r] = (uint16_t)port;
		return 0;
	}
	return 0;
}

int pf_plan_decode(const char *text, size_t len, struct pf_plan *p, char *err, size_t errlen)
{
	uint32_t world = p->world;

	pf_plan_free(p);
	memset(p, 0, sizeof(*p));
	p->world = world;
	p->addr = calloc(world, sizeof(*p->addr));
	p->port = calloc(world, sizeof(*p->port));
	if (!p->addr || !p->port)
		return rdzv_err(err, errlen, "out of memory");
	return each_kv(text, len, plan_kv, p, err, errlen);
}

void pf_plan_free(struct pf_plan *p)
{
	free(p->addr);
	free(p->port);
	p->addr = NULL;
	p->port = NULL;
}

void pf_result_init(struct pf_result *r)
{
	memset(r, 0, sizeof(*r));
	r->node_busbw = -1;
}

int pf_result_encode(const struct pf_result *r, char **out, size_t *len)
{
	struct buf b = { 0 };
	size_t i;

	put(&b, "ring_ok", "%d", r->ring_ok);
	put(&b, "ring_err", "%s", r->ring_err);
	put(&b, "link_gbps", "%.9g", r->link_gbps);
	put(&b, "ring_seconds", "%.9g", r->ring_seconds);
	put(&b, "ring_algbw", "%.9g", r->ring_algbw);
	put(&b, "ring_busbw", "%.9g", r->ring_busbw);
	put(&b, "ring_bytes", "%llu", (unsigned long long)r->ring_bytes);
	put(&b, "gpu_ran", "%d", r->gpu_ran);
	put(&b, "gpu_ok", "%d", r->gpu_ok);
	put(&b, "gpu_err", "%s", r->gpu_err);
	put(&b, "node_busbw", "%.9g", r->node_busbw);
	for (i = 0; i < r->nsizes; i++)
		put(&b, "size", "%llu %.9g %.9g %.9g %d", (unsigned long long)r->size[i].bytes,
		    r->size[i].us, r->size[i].algbw, r->size[i].busbw, r->size[i].ok);
	return finish(&b, out, len);
}

static int result_kv(void *ctx, const char *k, char *v)
{
	struct pf_result *r = ctx;

	if (!strcmp(k, "ring_ok"))
		return get_int(v, &r->ring_ok);
	if (!strcmp(k, "ring_err"))
		return COPY(r->ring_err, v), 0;
	if (!strcmp(k, "link_gbps"))
		return get_double(v, &r->link_gbps);
	if (!strcmp(k, "ring_seconds"))
		return get_double(v, &r->ring_seconds);
	if (!strcmp(k, "ring_algbw"))
		return get_double(v, &r->ring_algbw);
	if (!strcmp(k, "ring_busbw"))
		return get_double(v, &r->ring_busbw);
	if (!strcmp(k, "ring_bytes")) {
		uint64_t x;

		if (rdzv_parse_u64(v, 0, UINT64_MAX, &x) < 0)
			return -1;
		r->ring_bytes = x;
		return 0;
	}
	if (!strcmp(k, "gpu_ran"))
		return get_int(v, &r->gpu_ran);
	if (!strcmp(k, "gpu_ok"))
		return get_int(v, &r->gpu_ok);
	if (!strcmp(k, "gpu_err"))
		return COPY(r->gpu_err, v), 0;
	if (!strcmp(k, "node_busbw"))
		return get_double(v, &r->node_busbw);
	if (!strcmp(k, "size")) {
		struct pf_size *s;
		unsigned long long bytes;
		int okv, n = 0;

		if (r->nsizes >= PF_MAX_SIZES)
			return 0;
		s = &r->size[r->nsizes];
		if (sscanf(v, "%llu %lf %lf %lf %d%n", &bytes, &s->us, &s->algbw, &s->busbw, &okv,
		           &n) != 5 || v[n] != '\0')
			return -1;
		s->bytes = bytes;
		s->ok = okv;
		r->nsizes++;
		return 0;
	}
	return 0;
}

int pf_result_decode(const char *text, size_t len, struct pf_result *r, char *err, size_t errlen)
{
	pf_result_init(r);
	return each_kv(text, len, result_kv, r, err, errlen);
}

void pf_fail_at(char *buf, const char *file, int line, const char *fmt, ...)
{
	char host[128] = "?", msg[PF_TEXT];
	const char *node = getenv("SLURMD_NODENAME"), *base = strrchr(file, '/');
	va_list ap;

	if (buf[0])
		return; /* keep the first failure: later ones are its consequences */
	if (node && *node)
		snprintf(host, sizeof(host), "%s", node);
	else
		gethostname(host, sizeof(host) - 1);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(buf, PF_TEXT, "%s: %s:%d %s", host, base ? base + 1 : file, line, msg);
}

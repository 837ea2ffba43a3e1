/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/bind/: the node's topology, each task's GPU, NICs and cores, the node
 * check and its GPU gate. Uses lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* bindtable.c: the binding table of one step on one node (see topo.h for
 * the rules, doc/binding.md for why). Pure computation on the node model:
 * no system call; bindapply.c applies a row to the calling process. */
#define _GNU_SOURCE
#include "config.h"
#include "topo-priv.h"
#include "hcalist.h"
#include "identity.h"
#include "cpumask.h"
#include "util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Everything compute() needs while it works; freed at the end. */
struct work {
	const struct rdzv_topo *t;
	struct rdzv_bind_table *tab;
	size_t ngpus;             /* the step's GPUs */
	size_t tab_nrows;         /* rows (tasks), also after the table moved out */
	int *gpu;                 /* node index of step GPU k */
	char (*token)[RDZV_TOKEN_MAX]; /* its CUDA_VISIBLE_DEVICES entry */
	enum rdzv_near *best;     /* per step GPU */
	unsigned char *c2c;       /* per step GPU: it also uses c2c NICs */
	unsigned char *cand;      /* [k * nnics + j]: port j is one of GPU k's tied NICs */
	unsigned char *chosen;    /* [k * nnics + j]: GPU k uses port j */
	hwloc_bitmap_t step;      /* the step's CPUs */
	hwloc_bitmap_t *local;    /* per step GPU: its CPUs within the step */
	hwloc_bitmap_t *rowcpus;  /* per row: its GPUs' CPUs within the step, or the step's */
	size_t maskcpus;
};

/* The step's visibility variable: what Slurm and the runtime read. */
static const char *vis_var(int amd)
{
	return amd ? "ROCR_VISIBLE_DEVICES" : "CUDA_VISIBLE_DEVICES";
}

static void cpumask_destroy(struct rdzv_cpumask *m)
{
	if (!m)
		return;
	if (m->set)
		CPU_FREE(m->set);
	free(m);
}

static struct rdzv_cpumask *cpumask_from(hwloc_const_bitmap_t b, size_t ncpus)
{
	struct rdzv_cpumask *m = calloc(1, sizeof(*m));
	int i;

	if (!m || !(m->set = CPU_ALLOC(ncpus))) {
		cpumask_destroy(m);
		return NULL;
	}
	m->size = CPU_ALLOC_SIZE(ncpus);
	CPU_ZERO_S(m->size, m->set);
	hwloc_bitmap_foreach_begin(i, b) {
		if ((size_t)i < ncpus)
			CPU_SET_S((size_t)i, m->size, m->set);
	} hwloc_bitmap_foreach_end();
	return m;
}

void rdzv_bind_table_destroy(struct rdzv_bind_table *tab)
{
	size_t i;

	if (!tab)
		return;
	for (i = 0; tab->rows && i < tab->nrows; i++) {
		cpumask_destroy(tab->rows[i].mask);
		cpumask_destroy(tab->rows[i].gpu_mask);
	}
	free(tab->rows);
	for (i = 0; tab->single && i < tab->ngpus; i++) {
		cpumask_destroy(tab->single[i].mask);
		cpumask_destroy(tab->single[i].gpu_mask);
	}
	free(tab->single);
	free(tab->token);
	cpumask_destroy(tab->step_mask);
	free(tab);
}

static void work_clear(struct work *w)
{
	size_t k;

	free(w->gpu);
	free(w->token);
	free(w->best);
	free(w->c2c);
	free(w->cand);
	free(w->chosen);
	for (k = 0; w->local && k < w->ngpus; k++)
		hwloc_bitmap_free(w->local[k]);
	free(w->local);
	for (k = 0; w->rowcpus && k < w->tab_nrows; k++)
		hwloc_bitmap_free(w->rowcpus[k]);
	free(w->rowcpus);
	hwloc_bitmap_free(w->step);
}

/* Split a comma list into tokens (no empty ones). */
static int split_list(const char *s, const char *what, char (**out)[RDZV_TOKEN_MAX], size_t *n,
                      char *err, size_t errlen)
{
	char (*v)[RDZV_TOKEN_MAX];
	size_t cap = 1, i = 0;
	const char *p;

	for (p = s; *p; p++)
		cap += *p == ',';
	if (!(v = calloc(cap, sizeof(*v))))
		return rdzv_err(err, errlen, "out of memory");
	for (p = s;; i++) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == 0 || len >= sizeof(v[0])) {
			free(v);
			return rdzv_err(err, errlen, "%s=%s: %s entry", what, s,
			                len ? "oversized" : "empty");
		}
		memcpy(v[i], p, len);
		v[i][len] = '\0';
		if (!end)
			break;
		p = end + 1;
	}
	*out = v;
	*n = i + 1;
	return 0;
}

/* The step's GPUs: node indices from SLURM_STEP_GPUS (or, without it, from
 * CUDA_VISIBLE_DEVICES), and each one's CUDA_VISIBLE_DEVICES entry. Slurm
 * writes both lists in the same order; with ConstrainDevices the visible
 * entries are renumbered 0..n-1, hence two lists. */
static int step_gpus(struct work *w, const struct rdzv_bind_req *req, char *err, size_t errlen)
{
	const char *ids = req->step_gpus && *req->step_gpus ? req->step_gpus : req->visible;
	const char *what = ids == req->step_gpus ? "SLURM_STEP_GPUS" : vis_var(w->tab->amd);
	char (*idtok)[RDZV_TOKEN_MAX] = NULL;
	size_t n = 0, nvis = 0, k, k2;
	int rv = -1;

	/* No CUDA GPU in the topology (a CPU node, an AMD node where Slurm also
	 * exports CUDA_VISIBLE_DEVICES): nothing to bind, not an error. */
	if (!ids || !*ids || w->t->ngpus == 0)
		return 0;
	if (split_list(ids, what, &idtok, &n, err, errlen) < 0)
		return -1;
	if (req->visible && *req->visible && ids != req->visible) {
		if (split_list(req->visible, vis_var(w->tab->amd), &w->token, &nvis, err, errlen) < 0)
			goto fail;
		if (nvis != n) {
			rdzv_err(err, errlen, "%s=%s and SLURM_STEP_GPUS=%s name "
			         "different numbers of GPUs", vis_var(w->tab->amd), req->visible, ids);
			goto fail;
		}
	} else {
		w->token = idtok;
		idtok = NULL;
	}
	if (!(w->gpu = calloc(n, sizeof(*w->gpu)))) {
		rdzv_err(err, errlen, "out of memory");
		goto fail;
	}
	for (k = 0; k < n; k++) {
		uint64_t v;
		const char *tok = idtok ? idtok[k] : w->token[k];
		int g;

		/* A UUID (Slurm 25.11+ with env_uuid, MIG): through /proc's GPU
		 * UUIDs, only when it is the list of ids (no SLURM_STEP_GPUS). */
		if (!idtok && rdzv_is_uuid(tok)) {
			if ((g = rdzv_identity_uuid(req->ident, tok)) < 0) {
				rdzv_err(err, errlen, "%s=%s: '%s' is not a GPU of this node's "
				         "/proc/driver/nvidia (a UUID can be placed only through it)",
				         what, ids, tok);
				goto fail;
			}
			w->gpu[k] = g;
		} else if (rdzv_parse_u64(tok, 0, 65535, &v) < 0) {
			rdzv_err(err, errlen, "%s=%s: '%s' is not a GPU index", what, ids, tok);
			goto fail;
		} else if (req->ident && !req->ident->positional) {
			/* Slurm's number v is its v-th gres device, not a PCI position. */
			if ((g = rdzv_identity_gpu(req->ident, v)) < 0) {
				rdzv_err(err, errlen, "%s=%s: GPU %s is not one of the %zu GPUs of this "
				         "node's gres.conf", what, ids, tok, req->ident->n);
				goto fail;
			}
			w->gpu[k] = g;
		} else if (v >= w->t->ngpus) {
			rdzv_err(err, errlen, "%s=%s: GPU %s is not in the topology, which has %zu %s "
			         "GPU%s", what, ids, tok, w->t->ngpus,
			         rdzv_topo_gpus_amd(w->t) ? "AMD" : "CUDA", w->t->ngpus == 1 ? "" : "s");
			goto fail;
		} else {
			w->gpu[k] = (int)v;
		}
		/* The same entry twice is an error; two entries on one GPU are
		 * MIG instances of it (gres.conf MultipleFiles=/dev/nvidiaN,...),
		 * which share their parent's NICs and cores. */
		for (k2 = 0; k2 < k; k2++)
			if (strcmp(idtok ? idtok[k2] : w->token[k2], tok) == 0
			    || (w->gpu[k2] == w->gpu[k] && (!req->ident || req->ident->positional))) {
				rdzv_err(err, errlen, "%s=%s: GPU %s listed twice", what, ids, tok);
				goto fail;
			}
	}
	w->ngpus = n;
	rv = 0;
fail:
	free(idtok);
	return rv;
}

static int append(char *buf, size_t len, const char *sep, const char *name, int port)
{
	size_t used = strlen(buf);
	int n = snprintf(buf + used, len - used, "%s%s:%d", used ? sep : "", name, port);

	return n < 0 || (size_t)n >= len - used ? -1 : 0;
}

/* NIC j into a row: RDMA ports in UCX syntax (mlx5_0:1), a Slingshot NIC
 * by its interface name (no UCX transport drives it). */
static int append_nic(const struct rdzv_topo *t, struct rdzv_bind_row *r, size_t j)
{
	size_t used;
	int n;

	if (t->nics[j].fabric != RDZV_FABRIC_SLINGSHOT)
		return append(r->ucx, sizeof(r->ucx), ",", t->nics[j].name, t->nics[j].port);
	used = strlen(r->ifname);
	n = snprintf(r->ifname + used, sizeof(r->ifname) - used, "%s%s", used ? "," : "",
	             t->nics[j].name);
	return n < 0 || (size_t)n >= sizeof(r->ifname) - used ? -1 : 0;
}

/* One fabric per step: ports of different kinds (InfiniBand, EFA, RoCE)
 * cannot reach each other, so when the usable ports are of several kinds
 * only one kind stays usable. The kind chosen serves the most of the
 * node's GPUs (all of them, not the step's: a step holding GPUs 0,1 on one
 * node and 2,3 on another must still choose alike on both) at the best
 * level: compared by how many GPUs have a port of that kind below their
 * switch, then at most at their host bridge, ... (c2c, numa, package);
 * then by its number of usable ports; then in the order of enum
 * rdzv_fabric. Nodes of one model thus choose alike; the profile's
 * allow-list pins a kind by allowing only its ports. */
static int choose_fabric(struct work *w, unsigned char *usable, char *err, size_t errlen)
{
	const struct rdzv_topo *t = w->t;
	size_t nn = t->nnics, k, j, f, l;
	size_t hist[RDZV_FABRIC_SLINGSHOT + 1][RDZV_NEAR_SYSTEM + 1], ports[RDZV_FABRIC_SLINGSHOT + 1];
	int present[RDZV_FABRIC_SLINGSHOT + 1] = { 0 }, nkinds = 0, best = -1;

	memset(hist, 0, sizeof(hist));
	memset(ports, 0, sizeof(ports));
	for (j = 0; j < nn; j++)
		if (usable[j] && t->nics[j].fabric >= 0 && t->nics[j].fabric <= RDZV_FABRIC_SLINGSHOT) {
			nkinds += !present[t->nics[j].fabric];
			present[t->nics[j].fabric] = 1;
			ports[t->nics[j].fabric]++;
		}
	if (nkinds < 2)
		return 0;
	/* hist[f][l]: the node's GPUs whose best port of kind f is at level l
	 * or better. */
	for (f = 0; f <= RDZV_FABRIC_SLINGSHOT; f++)
		for (k = 0; present[f] && k < t->ngpus; k++) {
			enum rdzv_near b = RDZV_NEAR_SYSTEM, lv;

			for (j = 0; j < nn; j++)
				if (usable[j] && (size_t)t->nics[j].fabric == f
				    && (lv = rdzv_topo_near(t, k, j)) < b)
					b = lv;
			for (l = (size_t)b; l <= RDZV_NEAR_SYSTEM; l++)
				hist[f][l]++;
		}
	for (f = 0; f <= RDZV_FABRIC_SLINGSHOT; f++) {
		int cmp = 0;

		if (!present[f])
			continue;
		if (best < 0) {
			best = (int)f;
			continue;
		}
		for (l = 0; l <= RDZV_NEAR_SYSTEM && !cmp; l++)
			cmp = hist[f][l] > hist[best][l] ? 1 : hist[f][l] < hist[best][l] ? -1 : 0;
		if (cmp > 0 || (cmp == 0 && ports[f] > ports[best]))
			best = (int)f;
	}
	{
		size_t used = 0;
		int n = snprintf(w->tab->fabric, sizeof(w->tab->fabric), "%s (%zu port%s); left out:",
		                 rdzv_fabric_name((enum rdzv_fabric)best), ports[best],
		                 ports[best] == 1 ? "" : "s");

		for (f = 0; n >= 0 && (size_t)n < sizeof(w->tab->fabric) - used && f <= RDZV_FABRIC_SLINGSHOT;
		     f++) {
			used += (size_t)n;
			n = present[f] && (int)f != best
			    ? snprintf(w->tab->fabric + used, sizeof(w->tab->fabric) - used, " %s (%zu)",
			               rdzv_fabric_name((enum rdzv_fabric)f), ports[f])
			    : 0;
		}
		if (n < 0 || (size_t)n >= sizeof(w->tab->fabric) - used)
			return rdzv_err(err, errlen, "fabric description too long");
	}
	for (j = 0; j < nn; j++)
		if (t->nics[j].fabric != best)
			usable[j] = 0;
	return 0;
}

/* GPUs whose candidate sets (rows of cand) are the same split that set
 * between them, in PCI order (p5en: two GPUs, four EFAs behind their
 * switch, two each; Lassen: two GPUs, two NICs on their socket, one each):
 * the GPU at position p of g takes candidates [p*c/g, (p+1)*c/g), or
 * candidate p*c/g when c < g. Marks chosen[] and used[]; *got[k] when GPU k
 * got one. */
static void split_ties(struct work *w, const unsigned char *cand, unsigned char *used,
                       unsigned char *got)
{
	size_t nn = w->t->nnics, k, k2, j;

	for (k = 0; k < w->ngpus; k++) {
		size_t g = 0, p = 0, c = 0, i = 0, lo, hi;

		for (j = 0; j < nn; j++)
			c += cand[k * nn + j];
		if (c == 0)
			continue;
		for (k2 = 0; k2 < w->ngpus; k2++)
			if (memcmp(&cand[k * nn], &cand[k2 * nn], nn) == 0) {
				g++;
				p += w->gpu[k2] < w->gpu[k];
			}
		lo = p * c / g;
		hi = c >= g ? (p + 1) * c / g : lo + 1;
		for (j = 0; j < nn; j++) {
			if (!cand[k * nn + j])
				continue;
			if (i >= lo && i < hi) {
				w->chosen[k * nn + j] = used[j] = 1;
				if (got)
					got[k] = 1;
			}
			i++;
		}
	}
}

/* Each step GPU's NICs, and the node's NCCL_IB_HCA. */
static int choose_nics(struct work *w, const struct rdzv_bind_req *req, char *err, size_t errlen)
{
	const struct rdzv_topo *t = w->t;
	struct rdzv_hca_list *allow = NULL;
	unsigned char *usable = NULL, *used = NULL, *extra = NULL;
	enum rdzv_near *lv = NULL;
	size_t nn = t->nnics, k, j;
	char list[RDZV_NICLIST_MAX] = "";
	int rv = -1;

	if (w->ngpus == 0 || nn == 0)
		return 0;
	if (req->hca_allow && rdzv_hca_list_parse(req->hca_allow, &allow, err, errlen) < 0)
		return -1;
	w->best = calloc(w->ngpus, sizeof(*w->best));
	w->c2c = calloc(w->ngpus, 1);
	w->cand = calloc(w->ngpus * nn, 1);
	w->chosen = calloc(w->ngpus * nn, 1);
	extra = calloc(w->ngpus * nn, 1);
	usable = calloc(nn, 1);
	used = calloc(nn, 1);
	lv = calloc(nn, sizeof(*lv));
	if (!w->best || !w->c2c || !w->cand || !w->chosen || !extra || !usable || !used || !lv) {
		rdzv_err(err, errlen, "out of memory");
		goto fail;
	}
	for (j = 0; j < nn; j++)
		usable[j] = rdzv_topo_nic_usable(t, j)
		            && rdzv_hca_list_allows(allow, t->nics[j].name, t->nics[j].port);
	if (choose_fabric(w, usable, err, errlen) < 0)
		goto fail;
	for (k = 0; k < w->ngpus; k++) {
		w->best[k] = RDZV_NEAR_SYSTEM + 1;
		for (j = 0; j < nn; j++)
			if (usable[j] && (lv[j] = rdzv_topo_near(t, (size_t)w->gpu[k], j)) < w->best[k])
				w->best[k] = lv[j];
		for (j = 0; j < nn; j++) {
			w->cand[k * nn + j] = usable[j] && lv[j] == w->best[k];
			/* C2C node: a GPU with NICs of its own (switch, host bridge)
			 * also serves the NICs its package has without GPU. */
			extra[k * nn + j] = usable[j] && lv[j] == RDZV_NEAR_C2C
			                    && w->best[k] < RDZV_NEAR_C2C;
		}
	}
	split_ties(w, w->cand, used, NULL);
	split_ties(w, extra, used, w->c2c);
	/* One fabric: the used NICs are all Slingshot interfaces (RCCL/NCCL
	 * reach them through the OFI plugin; the node's list is the
	 * interfaces, NCCL_SOCKET_IFNAME's exact-match syntax) or all RDMA
	 * ports (NCCL_IB_HCA). */
	for (j = 0; j < nn; j++) {
		int slingshot = t->nics[j].fabric == RDZV_FABRIC_SLINGSHOT;
		size_t l = strlen(list);

		if (!used[j])
			continue;
		w->tab->slingshot |= slingshot;
		if (slingshot ? snprintf(list + l, sizeof(list) - l, "%s%s", l ? "," : "",
		                         t->nics[j].name) >= (int)(sizeof(list) - l)
		              : append(list, sizeof(list), ",", t->nics[j].name, t->nics[j].port) < 0) {
			rdzv_err(err, errlen, "NCCL_IB_HCA list too long");
			goto fail;
		}
	}
	if (list[0] && w->tab->slingshot)
		snprintf(w->tab->socket_ifname, sizeof(w->tab->socket_ifname), "=%s", list);
	else if (list[0])
		snprintf(w->tab->nccl_ib_hca, sizeof(w->tab->nccl_ib_hca), "=%s", list);
	rv = 0;
fail:
	rdzv_hca_list_destroy(allow);
	free(usable);
	free(used);
	free(extra);
	free(lv);
	return rv;
}

static int step_cpus(struct work *w, const struct rdzv_bind_req *req, char *err, size_t errlen)
{
	size_t k;

	if (!(w->step = hwloc_bitmap_alloc()))
		return rdzv_err(err, errlen, "out of memory");
	if (req->step_cpus) {
		if (hwloc_bitmap_list_sscanf(w->step, req->step_cpus) < 0
		    || hwloc_bitmap_iszero(w->step) || hwloc_bitmap_weight(w->step) < 0
		    || hwloc_bitmap_first(w->step) < 0 || hwloc_bitmap_last(w->step) < 0
		    || hwloc_bitmap_last(w->step) > (1 << 20))
			return rdzv_err(err, errlen, "bad CPU list '%s'", req->step_cpus);
	} else if (hwloc_bitmap_copy(w->step, w->t->allowed) < 0) {
		return rdzv_err(err, errlen, "out of memory");
	}
	if (!(w->local = calloc(w->ngpus ? w->ngpus : 1, sizeof(*w->local))))
		return rdzv_err(err, errlen, "out of memory");
	for (k = 0; k < w->ngpus; k++) {
		if (!(w->local[k] = hwloc_bitmap_alloc()))
			return rdzv_err(err, errlen, "out of memory");
		hwloc_bitmap_and(w->local[k], w->step, rdzv_topo_gpu_cpuset(w->t, (size_t)w->gpu[k]));
	}
	w->maskcpus = MASK_CPUS_MIN;
	if ((size_t)hwloc_bitmap_last(w->step) + 1 > w->maskcpus)
		w->maskcpus = (size_t)hwloc_bitmap_last(w->step) + 1;
	return 0;
}

/* The CPUs of `set` grouped by core (a PU the topology does not know is a
 * unit of its own), in order of each unit's first CPU. */
static int units_of(const struct rdzv_topo *t, hwloc_const_bitmap_t set, hwloc_bitmap_t **out,
                    size_t *nout)
{
	int w = hwloc_bitmap_weight(set), b;
	hwloc_bitmap_t *u = calloc(w > 0 ? (size_t)w : 1, sizeof(*u));
	long *core = calloc(w > 0 ? (size_t)w : 1, sizeof(*core));
	size_t n = 0, i, c;
	int rv = -1;

	if (!u || !core)
		goto fail;
	hwloc_bitmap_foreach_begin(b, set) {
		long cid = -1;

		for (c = 0; c < t->ncores && cid < 0; c++)
			if (hwloc_bitmap_isset(t->cores[c], (unsigned)b))
				cid = (long)c;
		for (i = 0; cid >= 0 && i < n && core[i] != cid; i++)
			;
		if (cid < 0 || i == n) {
			if (!(u[n] = hwloc_bitmap_alloc()))
				goto fail;
			core[n] = cid;
			i = n++;
		}
		hwloc_bitmap_set(u[i], (unsigned)b);
	} hwloc_bitmap_foreach_end();
	*out = u;
	*nout = n;
	u = NULL;
	rv = 0;
fail:
	for (i = 0; u && i < n; i++)
		hwloc_bitmap_free(u[i]);
	free(u);
	free(core);
	return rv;
}

/* Task j of the m tasks whose CPUs are `set`: whole cores when there are
 * enough, else single CPUs, else CPU j mod count. */
static int split_cpus(const struct rdzv_topo *topo, hwloc_const_bitmap_t set, size_t j, size_t m,
                      hwloc_bitmap_t out)
{
	hwloc_bitmap_t *u = NULL;
	size_t nu = 0, i;
	int rv = -1;

	if (units_of(topo, set, &u, &nu) < 0)
		return -1;
	hwloc_bitmap_zero(out);
	if (m <= nu) {
		for (i = j * nu / m; i < (j + 1) * nu / m; i++)
			hwloc_bitmap_or(out, out, u[i]);
	} else {
		/* One CPU each: CPU j of the set, or j mod its count beyond it,
		 * as doc/binding.md says (never a slice across two cores). */
		int np = hwloc_bitmap_weight(set), b, idx = 0;

		if (np > 0) {
			int want = (int)(j % (size_t)np);

			hwloc_bitmap_foreach_begin(b, set) {
				if (idx++ == want)
					hwloc_bitmap_set(out, (unsigned)b);
			} hwloc_bitmap_foreach_end();
		}
	}
	rv = 0;
	for (i = 0; i < nu; i++)
		hwloc_bitmap_free(u[i]);
	free(u);
	return rv;
}

/* Task i's GPUs, step positions [*lo, *hi): with at least as many tasks as
 * GPUs, GPU i mod n (round-robin, so LOCAL_RANK % device_count is its
 * ordinal); with fewer, a contiguous block, so that a launcher (torchrun,
 * one task per node) or a multi-GPU process is not confined to GPU 0's
 * cores and NICs. */
static void gpu_block(size_t i, size_t ntasks, size_t ngpus, size_t *lo, size_t *hi)
{
	if (ntasks >= ngpus) {
		*lo = i % ngpus;
		*hi = *lo + 1;
	} else {
		*lo = i * ngpus / ntasks;
		*hi = (i + 1) * ngpus / ntasks;
	}
}

/* Row i's GPU fields, NICs and CPU set (before the split). */
static int row_gpus(struct work *w, size_t i, char *err, size_t errlen)
{
	struct rdzv_bind_row *r = &w->tab->rows[i];
	const struct rdzv_topo *t = w->t;
	size_t nn = t->nnics, lo, hi, k, j;

	gpu_block(i, w->tab->nrows, w->ngpus, &lo, &hi);
	r->lo = lo;
	r->hi = hi;
	r->gpu = w->gpu[lo];
	r->ngpus = hi - lo;
	r->ordinal = (unsigned)lo;
	snprintf(r->busid, sizeof(r->busid), "%s", t->gpus[r->gpu].busid);
	r->near = w->best ? w->best[lo] : RDZV_NEAR_SYSTEM;
	for (k = lo; w->c2c && k < hi; k++)
		r->c2c |= w->c2c[k];
	if (!(w->rowcpus[i] = hwloc_bitmap_alloc()))
		return rdzv_err(err, errlen, "out of memory");
	for (k = lo; k < hi; k++) {
		size_t used = strlen(r->visible);

		if (snprintf(r->visible + used, sizeof(r->visible) - used, "%s%s", used ? "," : "",
		             w->token[k]) >= (int)(sizeof(r->visible) - used))
			return rdzv_err(err, errlen, "%s of task %zu too long", vis_var(w->tab->amd), i);
		hwloc_bitmap_or(w->rowcpus[i], w->rowcpus[i], w->local[k]);
	}
	/* NICs of the block's GPUs, in NIC order, each once. */
	for (j = 0; w->chosen && j < nn; j++) {
		int use = 0;

		for (k = lo; k < hi; k++)
			use |= w->chosen[k * nn + j];
		if (use && append_nic(t, r, j) < 0)
			return rdzv_err(err, errlen, "UCX_NET_DEVICES list too long");
	}
	/* The step holds none of the GPUs' CPUs: use the step's own (and say
	 * so) rather than leave the task on nothing. */
	if (hwloc_bitmap_iszero(w->rowcpus[i])) {
		hwloc_bitmap_copy(w->rowcpus[i], w->step);
		r->cpus_far = 1;
	}
	return 0;
}

static int fill_rows(struct work *w, char *err, size_t errlen)
{
	struct rdzv_bind_table *tab = w->tab;
	size_t i, i2;
	hwloc_bitmap_t cpus = hwloc_bitmap_alloc(), none = hwloc_bitmap_alloc();
	int rv = -1;

	if (!cpus || !none) {
		rdzv_err(err, errlen, "out of memory");
		goto fail;
	}
	for (i = 0; i < tab->nrows; i++)
		tab->rows[i].gpu = -1;
	if (w->ngpus == 0) {
		rv = 0;
		goto fail;
	}
	if (!(w->rowcpus = calloc(tab->nrows, sizeof(*w->rowcpus)))) {
		rdzv_err(err, errlen, "out of memory");
		goto fail;
	}
	for (i = 0; i < tab->nrows; i++)
		if (row_gpus(w, i, err, errlen) < 0)
			goto fail;
	for (i = 0; i < tab->nrows; i++) {
		struct rdzv_bind_row *r = &tab->rows[i];
		size_t pos = 0, m = 0;

		/* Tasks with the same CPU set share it, in local-rank order. */
		for (i2 = 0; i2 < tab->nrows; i2++)
			if (hwloc_bitmap_isequal(w->rowcpus[i2], w->rowcpus[i])) {
				pos += i2 < i;
				m++;
			}
		if (split_cpus(w->t, w->rowcpus[i], pos, m, cpus) < 0) {
			rdzv_err(err, errlen, "out of memory");
			goto fail;
		}
		if (hwloc_bitmap_list_snprintf(r->cpus, sizeof(r->cpus), cpus) >= (int)sizeof(r->cpus)) {
			rdzv_err(err, errlen, "CPU list of task %zu too long", i);
			goto fail;
		}
		r->mask = cpumask_from(cpus, w->maskcpus);
		r->gpu_mask = cpumask_from(r->cpus_far ? none : w->rowcpus[i], w->maskcpus);
		if (!r->mask || !r->gpu_mask) {
			rdzv_err(err, errlen, "out of memory");
			goto fail;
		}
	}
	rv = 0;
fail:
	hwloc_bitmap_free(cpus);
	hwloc_bitmap_free(none);
	return rv;
}

/* Row k of tab->single: step GPU k alone, its NICs, all its CPUs in the step. */
static int single_rows(struct work *w, char *err, size_t errlen)
{
	const struct rdzv_topo *t = w->t;
	size_t k, j, nn = t->nnics;

	if (!w->ngpus)
		return 0;
	if (!(w->tab->single = calloc(w->ngpus, sizeof(*w->tab->single))))
		return rdzv_err(err, errlen, "out of memory");
	for (k = 0; k < w->ngpus; k++) {
		struct rdzv_bind_row *r = &w->tab->single[k];
		hwloc_const_bitmap_t cpus = w->local[k];

		r->gpu = w->gpu[k];
		r->ngpus = 1;
		r->lo = k;
		r->hi = k + 1;
		r->ordinal = (unsigned)k;
		snprintf(r->busid, sizeof(r->busid), "%s", t->gpus[r->gpu].busid);
		snprintf(r->visible, sizeof(r->visible), "%s", w->token[k]);
		r->near = w->best ? w->best[k] : RDZV_NEAR_SYSTEM;
		r->c2c = w->c2c ? w->c2c[k] : 0;
		for (j = 0; w->chosen && j < nn; j++)
			if (w->chosen[k * nn + j]
			    && append_nic(t, r, j) < 0)
				return rdzv_err(err, errlen, "UCX_NET_DEVICES list too long");
		if (hwloc_bitmap_iszero(cpus)) {
			cpus = w->step;
			r->cpus_far = 1;
		}
		if (hwloc_bitmap_list_snprintf(r->cpus, sizeof(r->cpus), cpus) >= (int)sizeof(r->cpus))
			return rdzv_err(err, errlen, "CPU list of GPU %d too long", r->gpu);
		r->mask = cpumask_from(cpus, w->maskcpus);
		r->gpu_mask = cpumask_from(w->local[k], w->maskcpus);
		if (!r->mask || !r->gpu_mask)
			return rdzv_err(err, errlen, "out of memory");
	}
	return 0;
}

int rdzv_bind_compute(const struct rdzv_topo *t, const struct rdzv_bind_req *req,
                      struct rdzv_bind_table **out, char *err, size_t errlen)
{
	struct work w;
	struct rdzv_topo gpuless;
	int rv = -1, amd = rdzv_topo_gpus_amd(t);

	*out = NULL;
	memset(&w, 0, sizeof(w));
	w.t = t;
	/* AMD GPUs only where the caller asks for them (rdzv-topo); for the
	 * plugin such a node still has no GPU to bind (ROCR_VISIBLE_DEVICES
	 * and gres are not handled yet: doc/binding.md). */
	if (amd && !req->amd) {
		gpuless = *t;
		gpuless.ngpus = 0;
		w.t = &gpuless;
		amd = 0;
	}
	if (!(w.tab = calloc(1, sizeof(*w.tab))) || (req->ntasks
	    && !(w.tab->rows = calloc(req->ntasks, sizeof(*w.tab->rows))))) {
		rdzv_err(err, errlen, "out of memory");
		goto fail;
	}
	w.tab->nrows = w.tab_nrows = req->ntasks;
	w.tab->amd = amd;
	if (step_gpus(&w, req, err, errlen) < 0 || step_cpus(&w, req, err, errlen) < 0
	    || choose_nics(&w, req, err, errlen) < 0 || fill_rows(&w, err, errlen) < 0)
		goto fail;
	w.tab->ngpus = w.ngpus;
	if (single_rows(&w, err, errlen) < 0)
		goto fail;
	w.tab->token = w.token;
	w.token = NULL;
	if (hwloc_bitmap_list_snprintf(w.tab->step_cpus, sizeof(w.tab->step_cpus), w.step)
	    >= (int)sizeof(w.tab->step_cpus)) {
		rdzv_err(err, errlen, "the step's CPU list is too long");
		goto fail;
	}
	if (!(w.tab->step_mask = cpumask_from(w.step, w.maskcpus))) {
		rdzv_err(err, errlen, "out of memory");
		goto fail;
	}
	if (w.ngpus && req->ntasks > w.ngpus)
		snprintf(w.tab->note, sizeof(w.tab->note), "%u tasks share %zu GPU%s: task i uses "
		         "GPU i mod %zu, i.e. cuda:(LOCAL_RANK %% torch.cuda.device_count())",
		         req->ntasks, w.ngpus, w.ngpus == 1 ? "" : "s", w.ngpus);
	*out = w.tab;
	w.tab = NULL;
	rv = 0;
fail:
	rdzv_bind_table_destroy(w.tab);
	work_clear(&w);
	return rv;
}

/* Step position of one entry of a task's CUDA_VISIBLE_DEVICES, or -1. */
static long task_entry(const struct rdzv_bind_table *tab, const char *e,
                       const struct rdzv_identity *ident, int renumbered)
{
	uint64_t v;
	size_t k;
	int g;

	for (k = 0; k < tab->ngpus; k++)
		if (strcmp(tab->token[k], e) == 0 && !renumbered)
			return (long)k;
	if (rdzv_is_uuid(e)) {
		if ((g = rdzv_identity_uuid(ident, e)) < 0)
			return -1;
		for (k = 0; k < tab->ngpus; k++)
			if (tab->single[k].gpu == g)
				return (long)k;
		return -1;
	}
	/* Renumbered (ConstrainDevices, Slurm 23.02+): Slurm's local index of a
	 * device is its position among the step's devices (gres_common.c:
	 * common_gres_set_env counts local_inx over the step's allocation). */
	if (renumbered && rdzv_parse_u64(e, 0, 65535, &v) == 0 && v < tab->ngpus)
		return (long)v;
	return -1;
}

/* Is the step's list renumbered 0..n-1 (ConstrainDevices)? Then numbers
 * are positions, not Slurm's GPU numbers. */
static int step_renumbered(const struct rdzv_bind_table *tab)
{
	size_t k;
	char want[24];

	for (k = 0; k < tab->ngpus; k++) {
		snprintf(want, sizeof(want), "%zu", k);
		if (strcmp(tab->token[k], want) != 0)
			return 0;
	}
	return 1;
}

/* The row (in local-rank order) whose GPUs are exactly want[]: task i's
 * own when it matches, else the n-th such row for the n-th task; else the
 * first wanted GPU's single row. */
static const struct rdzv_bind_row *pick_row(const struct rdzv_bind_table *tab, size_t i,
                                            const unsigned char *want, size_t ne,
                                            enum rdzv_task_row *how, char *why, size_t whylen)
{
	const struct rdzv_bind_row *row = NULL;
	size_t r, k, same = 0, nth = 0;

	*how = RDZV_ROW_OWN;
	for (r = 0; r < tab->nrows; r++) {
		int match = tab->rows[r].gpu >= 0;

		for (k = 0; match && k < tab->ngpus; k++)
			match = want[k] == (k >= tab->rows[r].lo && k < tab->rows[r].hi);
		if (match) {
			if (r == i)
				return &tab->rows[i];
			same++;
		}
	}
	for (r = 0; r < tab->nrows && !row; r++) {
		int match = tab->rows[r].gpu >= 0;

		for (k = 0; match && k < tab->ngpus; k++)
			match = want[k] == (k >= tab->rows[r].lo && k < tab->rows[r].hi);
		if (match && nth++ == i % (same ? same : 1))
			row = &tab->rows[r];
	}
	if (!row) {
		for (k = 0; k < tab->ngpus && !want[k]; k++)
			;
		if (k == tab->ngpus)
			return NULL;
		row = &tab->single[k];
		if (ne > 1)
			snprintf(why, whylen, "the task's %zu GPUs are no row of the table: it gets the "
			         "NICs and CPUs of the first, GPU %d", ne, row->gpu);
	}
	return row;
}

const struct rdzv_bind_row *rdzv_bind_task_row_gpus(const struct rdzv_bind_table *tab, size_t i,
                                                    const int *gpus, size_t n,
                                                    enum rdzv_task_row *how, char *why,
                                                    size_t whylen)
{
	unsigned char *want;
	const struct rdzv_bind_row *row = NULL;
	size_t j, k, found = 0;

	*how = RDZV_ROW_SKIP;
	if (whylen)
		why[0] = '\0';
	if (i >= tab->nrows || !tab->ngpus || !(want = calloc(tab->ngpus, 1)))
		return NULL;
	for (j = 0; j < n; j++)
		for (k = 0; k < tab->ngpus; k++)
			if (tab->single[k].gpu == gpus[j] && !want[k]) {
				want[k] = 1;
				found++;
			}
	if (found)
		row = pick_row(tab, i, want, found, how, why, whylen);
	else
		snprintf(why, whylen, "none of the task's %zu GPUs is the step's", n);
	if (!row)
		*how = RDZV_ROW_SKIP;
	free(want);
	return row;
}

const struct rdzv_bind_row *rdzv_bind_task_row(const struct rdzv_bind_table *tab, size_t i,
                                               const char *task_visible,
                                               const struct rdzv_identity *ident,
                                               int renumbered_per_task,
                                               enum rdzv_task_row *how, char *why,
                                               size_t whylen)
{
	char (*e)[RDZV_TOKEN_MAX] = NULL;
	unsigned char *want = NULL;
	const struct rdzv_bind_row *row = NULL;
	size_t ne = 0, k, j;
	int renumbered;
	char err[128];

	*how = RDZV_ROW_RANK;
	if (whylen)
		why[0] = '\0';
	if (i >= tab->nrows)
		return NULL;
	if (tab->rows[i].gpu < 0 || !task_visible || !*task_visible)
		return &tab->rows[i];
	/* The step's own list: rows follow the local rank. */
	if (strcmp(task_visible, tab->rows[i].visible) == 0 && tab->rows[i].hi - tab->rows[i].lo
	    == tab->ngpus)
		return &tab->rows[i];
	if (split_list(task_visible, vis_var(tab->amd), &e, &ne, err, sizeof(err)) < 0) {
		*how = RDZV_ROW_SKIP;
		snprintf(why, whylen, "%s", err);
		return NULL;
	}
	{
		/* Is the task's list the step's whole list? */
		size_t all = ne == tab->ngpus;

		for (k = 0; all && k < ne; k++)
			all = strcmp(e[k], tab->token[k]) == 0;
		if (all) {
			free(e);
			return &tab->rows[i];
		}
	}
	renumbered = step_renumbered(tab);
	if (renumbered && renumbered_per_task) {
		*how = RDZV_ROW_RANK_NOTE;
		snprintf(why, whylen, "%s=%.64s is numbered from 0 for this task "
		         "alone (ConstrainDevices): it names no GPU of the step's list; the row of "
		         "local rank %zu is used", vis_var(tab->amd), task_visible, i);
		row = &tab->rows[i];
		goto done;
	}
	if (!(want = calloc(tab->ngpus, 1))) {
		*how = RDZV_ROW_SKIP;
		snprintf(why, whylen, "out of memory");
		goto done;
	}
	for (j = 0; j < ne; j++) {
		long p = task_entry(tab, e[j], ident, renumbered);

		if (p < 0) {
			*how = RDZV_ROW_SKIP;
			snprintf(why, whylen, "%s entry '%.64s' is not one of the step's "
			         "GPUs%s: no binding for this task", vis_var(tab->amd), e[j],
			         rdzv_is_uuid(e[j]) && !tab->amd
			         ? " and its UUID is not in /proc/driver/nvidia" : "");
			goto done;
		}
		want[p] = 1;
	}
	row = pick_row(tab, i, want, ne, how, why, whylen);
done:
	free(e);
	free(want);
	return row;
}

int rdzv_bind_format_node(const struct rdzv_bind_table *tab, char *buf, size_t len)
{
	int n = snprintf(buf, len, "node: %zu GPU%s, %zu task%s, %s%s%s, cpus %s%s%s%s%s",
	                 tab->ngpus, tab->ngpus == 1 ? "" : "s", tab->nrows,
	                 tab->nrows == 1 ? "" : "s",
	                 tab->slingshot ? "NCCL_SOCKET_IFNAME" : "NCCL_IB_HCA",
	                 tab->nccl_ib_hca[0] || tab->socket_ifname[0] ? "=" : " ",
	                 tab->slingshot ? tab->socket_ifname
	                 : tab->nccl_ib_hca[0] ? tab->nccl_ib_hca : "unset", tab->step_cpus,
	                 tab->fabric[0] ? "; fabric " : "", tab->fabric,
	                 tab->note[0] ? "; note: " : "", tab->note);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int rdzv_bind_format_row(const struct rdzv_bind_table *tab, size_t i, char *buf, size_t len)
{
	const struct rdzv_bind_row *r;
	int n;

	if (i >= tab->nrows)
		return -1;
	r = &tab->rows[i];
	if (r->gpu < 0)
		n = snprintf(buf, len, "task %zu: no GPU", i);
	else if (tab->amd || tab->slingshot)
		n = snprintf(buf, len, "task %zu: gpu %d %s%s%.0zu%s %s:%u %s %s, %s%s%s%s%s%s%s, cpus %s%s",
		             i, r->gpu, r->busid, r->ngpus > 1 ? " and " : "",
		             r->ngpus > 1 ? r->ngpus - 1 : 0, r->ngpus > 1 ? " more" : "",
		             tab->amd ? "hip" : "cuda", r->ordinal,
		             tab->amd ? "ROCR_VISIBLE_DEVICES" : "visible", r->visible,
		             tab->slingshot ? "nic" : "UCX_NET_DEVICES",
		             tab->slingshot ? " " : r->ucx[0] ? "=" : " ",
		             tab->slingshot ? (r->ifname[0] ? r->ifname : "none")
		                            : r->ucx[0] ? r->ucx : "unset",
		             r->ucx[0] || r->ifname[0] ? " (" : "",
		             r->ucx[0] || r->ifname[0] ? rdzv_near_name(r->near) : "",
		             (r->ucx[0] || r->ifname[0]) && r->c2c ? "+c2c" : "",
		             r->ucx[0] || r->ifname[0] ? ")" : "", r->cpus,
		             r->cpus_far ? " (none of the step's CPUs is local to the GPU)" : "");
	else
		n = snprintf(buf, len, "task %zu: gpu %d %s%s%.0zu%s cuda:%u visible %s, "
		             "UCX_NET_DEVICES%s%s%s%s%s%s, cpus %s%s", i, r->gpu, r->busid,
		             r->ngpus > 1 ? " and " : "", r->ngpus > 1 ? r->ngpus - 1 : 0,
		             r->ngpus > 1 ? " more" : "", r->ordinal, r->visible, r->ucx[0] ? "=" : " ", r->ucx[0] ? r->ucx : "unset",
		             r->ucx[0] ? " (" : "", r->ucx[0] ? rdzv_near_name(r->near) : "",
		             r->ucx[0] && r->c2c ? "+c2c" : "", r->ucx[0] ? ")" : "", r->cpus,
		             r->cpus_far ? " (none of the step's CPUs is local to the GPU)" : "");
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

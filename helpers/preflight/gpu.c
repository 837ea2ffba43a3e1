/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gpu.c: the GPU path. Which device a rank uses and whether it is the one
 * the binding promised; one NCCL communicator over every rank (its unique
 * id travels in rank 0's plan); an all-reduce sweep with nccl-tests'
 * algbw/busbw; an intra-node communicator per node for the node outlier
 * report. Every CUDA and NCCL call goes through CUDACHECK/NCCLCHECK, which
 * record host, file:line, the call and the library's error string in the
 * rank's result (nccl-tests' style): rank 0 prints them. NCCL runs
 * non-blocking so that a missing or hung peer ends in a timeout and
 * ncclCommAbort, never a hang. Built without CUDA/NCCL, the functions say
 * so and the CPU path carries the run. */
#define _GNU_SOURCE
#include "config.h"
#include "preflight.h"

#include <ctype.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef HAVE_CUDA_NCCL

/* The CUDA and NCCL headers are C++-minded (__cplusplus tested without
 * defined(), "f()" declarations): keep our warnings for our code only. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <cuda_runtime_api.h>
#include <nccl.h>
#pragma GCC diagnostic pop

/* Non-blocking communicators (ncclConfig_t) came with NCCL 2.14. */
#if !defined(NCCL_VERSION_CODE) || NCCL_VERSION_CODE < NCCL_VERSION(2, 14, 0)
#error "rdzv-preflight's GPU path needs NCCL 2.14 or later (configure --without-cuda builds the CPU path)"
#endif

#include "busbw.h"
#include "topo.h"

#define WARMUP 5

#define CUDACHECK(res, cmd) do {                                                    \
	cudaError_t e_ = (cmd);                                                     \
	if (e_ != cudaSuccess) {                                                    \
		PF_FAILF((res)->gpu_err, "CUDA failure '%s': %s (%s)", #cmd,       \
		         cudaGetErrorString(e_), cudaGetErrorName(e_));            \
		goto fail;                                                          \
	}                                                                           \
} while (0)

#define NCCLCHECK(res, comm, cmd) do {                                              \
	ncclResult_t r_ = (cmd);                                                    \
	if (r_ != ncclSuccess && r_ != ncclInProgress) {                            \
		PF_FAILF((res)->gpu_err, "NCCL failure '%s': %s (%s)", #cmd,       \
		         ncclGetErrorString(r_), ncclGetLastError(comm));          \
		goto fail;                                                          \
	}                                                                           \
} while (0)

const char *pf_gpu_build(void)
{
	static char s[96];
	int v = 0;

	ncclGetVersion(&v);
	snprintf(s, sizeof(s), "CUDA runtime %d.%d, NCCL %d.%d.%d (built with %d.%d.%d)",
	         CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10, v / 10000, v / 100 % 100,
	         v % 100, NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
	return s;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One spelling for PCI bus ids: CUDA writes "0000:3B:00.0", nvidia-smi
 * "00000000:3B:00.0", hwloc "0000:3b:00.0". Left alone if it does not
 * parse. */
static void norm_busid(char *s, size_t len)
{
	unsigned dom, bus, dev, fn;
	int n = 0;

	if (sscanf(s, "%x:%x:%x.%x%n", &dom, &bus, &dev, &fn, &n) == 4 && s[n] == '\0')
		snprintf(s, len, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/* The node's GPU number `idx` in PCI bus-id order, as hwloc (and the
 * binding) count them. Returns 0 with its bus id, or -1. */
static int topo_busid(unsigned idx, char *busid, size_t len)
{
	struct rdzv_topo *t = NULL;
	char line[512], id[64];
	int rv = -1;

	if (rdzv_topo_load(NULL, &t, NULL, 0) < 0)
		return -1;
	if (rdzv_topo_format_gpu(t, idx, line, sizeof(line)) == 0 &&
	    sscanf(line, "gpu %*u %63s", id) == 1) {
		snprintf(busid, len, "%s", id);
		norm_busid(busid, len);
		rv = 0;
	}
	rdzv_topo_destroy(t);
	return rv;
}

static void fmt_uuid(const unsigned char *u, char *out, size_t len)
{
	snprintf(out, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	         "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8],
	         u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* The binding's promise: CUDA_VISIBLE_DEVICES entry `dev` (or node GPU
 * `dev` when unset) is the device CUDA calls ordinal dev. */
static void check_promise(struct pf_report *r, int dev, const char *uuid)
{
	char list[PF_TEXT], *tok, *save = NULL, want[64];
	const char *order = getenv("CUDA_DEVICE_ORDER");
	int i = 0, ntok = 0;
	char entry[64] = "";
	uint64_t idx;

	if (r->cvd_set) {
		snprintf(list, sizeof(list), "%s", r->cvd);
		for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save), i++) {
			if (i == dev)
				snprintf(entry, sizeof(entry), "%s", tok);
			ntok++;
		}
		/* CUDA stops at the first entry it cannot use: fewer devices
		 * than entries means the binding named a GPU that is not there. */
		if (ntok != r->gpu_count)
			pf_report_problem(r, "CUDA_VISIBLE_DEVICES=%s names %d device%s but CUDA shows %d",
			                  r->cvd, ntok, ntok == 1 ? "" : "s", r->gpu_count);
	} else {
		snprintf(entry, sizeof(entry), "%d", dev);
	}
	if (strncmp(entry, "GPU-", 4) == 0) {
		if (strncmp(uuid, entry, strlen(entry)) != 0)
			pf_report_problem(r, "CUDA_VISIBLE_DEVICES entry %s is not ordinal %d, which is %s",
			                  entry, dev, uuid);
		return;
	}
	if (rdzv_parse_u64(entry, 0, 4096, &idx) < 0)
		return; /* MIG or another form: nothing to compare */
	if (topo_busid((unsigned)idx, want, sizeof(want)) < 0)
		return;
	if (strcmp(want, r->gpu_busid) != 0)
		pf_report_problem(r, "GPU %s is %s in PCI order but CUDA ordinal %d is %s%s", entry, want,
		                  dev, r->gpu_busid,
		                  order && strcmp(order, "PCI_BUS_ID") == 0 ? ""
		                      : " (CUDA_DEVICE_ORDER is not PCI_BUS_ID)");
}

void pf_gpu_probe(const struct pf_env *e, struct pf_report *r)
{
	struct cudaDeviceProp prop;
	char uuid[64];
	cudaError_t ce;
	int n = 0, dev;

	ce = cudaGetDeviceCount(&n);
	if (ce != cudaSuccess || n == 0) {
		r->gpu_count = 0;
		snprintf(r->gpu_note, sizeof(r->gpu_note), "no GPU: cudaGetDeviceCount: %s (%s)",
		         ce != cudaSuccess ? cudaGetErrorString(ce) : "0 devices",
		         ce != cudaSuccess ? cudaGetErrorName(ce) : "cudaSuccess");
		/* Devices were promised to this task and CUDA cannot use them. */
		if (r->cvd_set && r->cvd[0] && strcmp(r->cvd, "NoDevFiles") != 0)
			pf_report_problem(r, "CUDA_VISIBLE_DEVICES=%s but %s", r->cvd, r->gpu_note);
		return;
	}
	r->gpu_count = n;
	/* The binding's rule (doc/binding.md): local task i uses the visible
	 * GPU i mod n; a task isolated to one GPU sees it as ordinal 0. */
	dev = (int)(e->local_rank % (uint32_t)n);
	ce = cudaSetDevice(dev);
	if (ce == cudaSuccess)
		ce = cudaDeviceGetPCIBusId(r->gpu_busid, sizeof(r->gpu_busid), dev);
	if (ce == cudaSuccess)
		ce = cudaGetDeviceProperties(&prop, dev);
	if (ce != cudaSuccess) {
		pf_report_problem(r, "GPU ordinal %d of %d: %s (%s)", dev, n, cudaGetErrorString(ce),
		                  cudaGetErrorName(ce));
		return;
	}
	norm_busid(r->gpu_busid, sizeof(r->gpu_busid));
	r->gpu_index = dev;
	snprintf(r->gpu_name, sizeof(r->gpu_name), "%s", prop.name);
	fmt_uuid((const unsigned char *)prop.uuid.bytes, uuid, sizeof(uuid));
	snprintf(r->gpu_note, sizeof(r->gpu_note), "ordinal %d of %d, %s", dev, n, uuid);
	check_promise(r, dev, uuid);
}

int pf_gpu_unique_id(char *hex, size_t len, char *err, size_t errlen)
{
	ncclUniqueId id;
	ncclResult_t nr = ncclGetUniqueId(&id);
	size_t i;

	if (nr != ncclSuccess)
		return rdzv_err(err, errlen, "ncclGetUniqueId: %s (%s)", ncclGetErrorString(nr),
		                ncclGetLastError(NULL));
	if (len < 2 * sizeof(id.internal) + 1)
		return rdzv_err(err, errlen, "no room for the NCCL id");
	for (i = 0; i < sizeof(id.internal); i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)id.internal[i]);
	return 0;
}

static int unhex(const char *hex, ncclUniqueId *id)
{
	size_t i;

	if (strlen(hex) != 2 * sizeof(id->internal))
		return -1;
	for (i = 0; i < sizeof(id->internal); i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		id->internal[i] = (char)v;
	}
	return 0;
}

/* A non-blocking communicator is ready (or failed) when its async error
 * is no longer ncclInProgress. */
static ncclResult_t wait_comm(ncclComm_t comm, int64_t deadline)
{
	ncclResult_t st = ncclInProgress;

	while (ncclCommGetAsyncError(comm, &st) == ncclSuccess && st == ncclInProgress) {
		struct timespec ts = { 0, 200000 };

		if (rdzv_boot_now_ms() >= deadline)
			return ncclInProgress;
		nanosleep(&ts, NULL);
	}
	return st;
}

/* Wait for the stream, watching the communicator: a peer that died makes
 * NCCL report an async error instead of the kernel ever finishing. */
static int sync_stream(cudaStream_t s, ncclComm_t comm, int64_t deadline, struct pf_result *res)
{
	unsigned long spins = 0;

	for (;;) {
		cudaError_t ce = cudaStreamQuery(s);
		ncclResult_t st = ncclSuccess;

		if (ce == cudaSuccess)
			return 0;
		if (ce != cudaErrorNotReady) {
			PF_FAILF(res->gpu_err, "CUDA failure 'cudaStreamQuery': %s (%s)",
			         cudaGetErrorString(ce), cudaGetErrorName(ce));
			return -1;
		}
		/* Spin like nccl-tests (a sleep would add to small sizes'
		 * times); look at NCCL and the clock now and then. */
		if (++spins % 1024)
			continue;
		ncclCommGetAsyncError(comm, &st);
		if (st != ncclSuccess && st != ncclInProgress) {
			PF_FAILF(res->gpu_err, "NCCL async error: %s (%s)", ncclGetErrorString(st),
			         ncclGetLastError(comm));
			return -1;
		}
		if (rdzv_boot_now_ms() >= deadline) {
			PF_FAILF(res->gpu_err, "NCCL all-reduce did not finish in time (a peer stuck?)");
			return -1;
		}
		sched_yield();
	}
}

/* iters all-reduces of bytes; seconds per iteration in *t. */
static int timed(ncclComm_t comm, cudaStream_t s, float *send, float *recv, uint64_t bytes,
                 unsigned iters, int64_t deadline, double *t, struct pf_result *res)
{
	size_t count = bytes / sizeof(float);
	unsigned i;
	double t0 = now_s();
	ncclResult_t r;

	for (i = 0; i < WARMUP + iters; i++) {
		if (i == WARMUP) {
			if (sync_stream(s, comm, deadline, res) < 0)
				return -1;
			t0 = now_s();
		}
		r = ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, s);
		/* Non-blocking communicator: a call may return while NCCL is
		 * still enqueuing; the next one must wait for it. */
		if (r == ncclInProgress)
			r = wait_comm(comm, deadline);
		if (r != ncclSuccess) {
			PF_FAILF(res->gpu_err, "NCCL failure 'ncclAllReduce' of %llu bytes: %s (%s)",
			         (unsigned long long)bytes, r == ncclInProgress ? "not done in time"
			         : ncclGetErrorString(r), ncclGetLastError(comm));
			return -1;
		}
	}
	if (sync_stream(s, comm, deadline, res) < 0)
		return -1;
	*t = (now_s() - t0) / iters;
	return 0;
}

void pf_gpu_run(const struct pf_env *e, const struct pf_opts *o, const struct pf_report *reps,
                const struct pf_plan *plan, int64_t deadline, struct pf_result *res)
{
	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
	ncclComm_t comm = NULL, node = NULL;
	ncclUniqueId id;
	cudaStream_t s = NULL;
	float *send = NULL, *recv = NULL, *host = NULL;
	uint64_t sizes[PF_MAX_SIZES], maxb = o->max_bytes;
	double want = 0;
	size_t i, j, n;
	uint32_t r;
	int ns;

	res->gpu_ran = 1;
	if (unhex(plan->nccl_id, &id) < 0) {
		PF_FAILF(res->gpu_err, "the NCCL unique id from rank 0 is malformed");
		return;
	}
	ns = rdzv_bw_sweep(o->min_bytes, maxb, 4, sizes, PF_MAX_SIZES, res->gpu_err,
	                   sizeof(res->gpu_err));
	if (ns < 0)
		return;
	n = maxb / sizeof(float);
	for (r = 0; r < e->world; r++)
		want += (double)(r % 7 + 1);
	CUDACHECK(res, cudaSetDevice(reps[e->rank].gpu_index));
	CUDACHECK(res, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CUDACHECK(res, cudaMalloc((void **)&send, n * sizeof(float)));
	CUDACHECK(res, cudaMalloc((void **)&recv, n * sizeof(float)));
	host = malloc(n * sizeof(float));
	if (!host) {
		PF_FAILF(res->gpu_err, "out of memory for %zu host bytes", n * sizeof(float));
		goto fail;
	}
	/* Small integers: every partial sum is exact in float. */
	for (i = 0; i < n; i++)
		host[i] = (float)(e->rank % 7 + 1);
	CUDACHECK(res, cudaMemcpy(send, host, n * sizeof(float), cudaMemcpyHostToDevice));

	cfg.blocking = 0;
	NCCLCHECK(res, comm, ncclCommInitRankConfig(&comm, (int)e->world, id, (int)e->rank, &cfg));
	if (wait_comm(comm, deadline) != ncclSuccess) {
		PF_FAILF(res->gpu_err, "ncclCommInitRank over %u ranks did not complete: %s", e->world,
		         rdzv_boot_now_ms() >= deadline ? "timed out (a rank missing or the network "
		         "blocked?)" : ncclGetLastError(comm));
		goto fail;
	}
	for (i = 0; i < (size_t)ns; i++) {
		struct pf_size *z = &res->size[res->nsizes];
		size_t count = sizes[i] / sizeof(float);

		z->bytes = count * sizeof(float);
		if (z->bytes == 0)
			continue;
		CUDACHECK(res, cudaMemsetAsync(recv, 0, z->bytes, s));
		if (timed(comm, s, send, recv, z->bytes, o->iters, deadline, &z->us, res) < 0)
			goto fail;
		CUDACHECK(res, cudaMemcpy(host, recv, z->bytes, cudaMemcpyDeviceToHost));
		for (j = 0; j < count; j++)
			if ((double)host[j] != want) {
				PF_FAILF(res->gpu_err, "all-reduce of %llu bytes wrong at element %zu: got %g, "
				         "want %g", (unsigned long long)z->bytes, j, (double)host[j], want);
				goto fail;
			}
		rdzv_bw_compute(RDZV_COLL_ALLREDUCE, z->bytes, z->us, e->world, &z->algbw, &z->busbw,
		                NULL, 0);
		z->us *= 1e6;
		z->ok = 1;
		res->nsizes++;
	}
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0)
	if (e->world > 1) {
		uint32_t *idx = calloc(e->world, sizeof(*idx)), nranks = 0;
		double t = 0, alg;
		int color;

		if (!idx) {
			PF_FAILF(res->gpu_err, "out of memory");
			goto fail;
		}
		pf_node_map(reps, e->world, idx);
		for (r = 0; r < e->world; r++)
			nranks += idx[r] == idx[e->rank];
		color = (int)idx[e->rank];
		free(idx);
		NCCLCHECK(res, comm, ncclCommSplit(comm, color, (int)reps[e->rank].local_rank, &node,
		                                   &cfg));
		if (wait_comm(comm, deadline) != ncclSuccess ||
		    (node && wait_comm(node, deadline) != ncclSuccess)) {
			PF_FAILF(res->gpu_err, "ncclCommSplit per node did not complete in time");
			goto fail;
		}
		if (node && nranks > 1) {
			if (timed(node, s, send, recv, maxb / sizeof(float) * sizeof(float), o->iters,
			          deadline, &t, res) < 0)
				goto fail;
			rdzv_bw_compute(RDZV_COLL_ALLREDUCE, maxb / sizeof(float) * sizeof(float), t, nranks,
			                &alg, &res->node_busbw, NULL, 0);
		}
	}
#endif
	res->gpu_ok = 1;
	if (node) {
		ncclCommFinalize(node);
		wait_comm(node, deadline);
		ncclCommDestroy(node);
		node = NULL;
	}
	ncclCommFinalize(comm);
	if (wait_comm(comm, deadline) == ncclSuccess)
		ncclCommDestroy(comm);
	else
		ncclCommAbort(comm);
	comm = NULL;
fail:
	/* After a failure the communicators may be stuck: abort, not destroy. */
	if (node)
		ncclCommAbort(node);
	if (comm)
		ncclCommAbort(comm);
	if (s)
		cudaStreamDestroy(s);
	cudaFree(send);
	cudaFree(recv);
	free(host);
}

#else /* !HAVE_CUDA_NCCL */

const char *pf_gpu_build(void)
{
	return "built without CUDA/NCCL";
}

void pf_gpu_probe(const struct pf_env *e, struct pf_report *r)
{
	(void)e;
	r->gpu_count = -1;
	snprintf(r->gpu_note, sizeof(r->gpu_note), "not probed: rdzv-preflight was built without "
	         "CUDA/NCCL (configure --with-cuda)");
}

int pf_gpu_unique_id(char *hex, size_t len, char *err, size_t errlen)
{
	(void)hex;
	(void)len;
	return rdzv_err(err, errlen, "built without CUDA/NCCL");
}

void pf_gpu_run(const struct pf_env *e, const struct pf_opts *o, const struct pf_report *reps,
                const struct pf_plan *plan, int64_t deadline, struct pf_result *res)
{
	(void)e;
	(void)o;
	(void)reps;
	(void)plan;
	(void)deadline;
	res->gpu_ran = 1;
	PF_FAILF(res->gpu_err, "built without CUDA/NCCL");
}

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/profile/: site NCCL profiles: the files, their variables, which one
 * applies. Uses lib/common/. */
#include "config.h"
#include "nccl_vars.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DBG RDZV_NV_DEBUG
#define DEP RDZV_NV_DEPRECATED
#define STR(n, f, note) { n, RDZV_NV_STRING, f, 0, 0, NULL, note }
#define BOOL(n, f, note) { n, RDZV_NV_BOOL, f, 0, 1, NULL, note }
#define INT(n, f, lo, hi, note) { n, RDZV_NV_INT, f, lo, hi, NULL, note }
#define ENUM(n, f, ch, lo, hi, note) { n, RDZV_NV_ENUM, f, lo, hi, ch, note }
#define HCAS(n) { n, RDZV_NV_HCA_LIST, 0, 0, 0, NULL, NULL }
#define IFS(n) { n, RDZV_NV_IF_LIST, 0, 0, 0, NULL, NULL }

/* Sorted by name (strcmp order: tests/unit/test-nccl-vars checks it).
 * Types are given only where the NCCL user guide documents the values; a
 * variable the guide does not describe is a string, so that the checker
 * never refuses a value NCCL would take. Ranges are the documented ones or
 * loose (NCCL reads integers with strtoll and clamps some itself). */
static const struct rdzv_nccl_var vars[] = {
	STR("NCCL_ALGO", DBG, NULL),
	BOOL("NCCL_ALLOC_P2P_NET_LL_BUFFERS", DBG, NULL),
	INT("NCCL_BUFFSIZE", DBG, 1, LLONG_MAX, NULL),
	INT("NCCL_CGA_CLUSTER_SIZE", DBG, 0, 8, NULL),
	BOOL("NCCL_CHECKS_DISABLE", DEP, "deprecated by NCCL"),
	BOOL("NCCL_CHECK_POINTERS", DBG, NULL),
	STR("NCCL_CHUNK_SIZE", 0, NULL),
	BOOL("NCCL_COLLNET_ENABLE", 0, NULL),
	INT("NCCL_COLLNET_NODE_THRESHOLD", 0, 0, LLONG_MAX, "removed: NCCL_ALGO and NCCL_PROTO replace it"),
	BOOL("NCCL_COMM_BLOCKING", DBG, NULL),
	STR("NCCL_COMM_ID", 0, NULL),
	STR("NCCL_COMM_SHRINK_SHARE_RESOURCES", 0, NULL),
	BOOL("NCCL_COMM_SPLIT_SHARE_RESOURCES", 0, NULL),
	STR("NCCL_CONF_FILE", 0, NULL),
	STR("NCCL_CONNECT_ROUND_MAX_PEERS", 0, NULL),
	STR("NCCL_CREATE_THREAD_CONTEXT", 0, NULL),
	INT("NCCL_CROSS_NIC", 0, 0, 2, NULL),
	STR("NCCL_CTA_POLICY", DBG, NULL),
	INT("NCCL_CUMEM_ENABLE", DBG, -2, 1, NULL),
	INT("NCCL_CUMEM_HOST_ENABLE", DBG, -2, 1, NULL),
	ENUM("NCCL_DEBUG", 0, "VERSION|WARN|INFO|ABORT|TRACE", 1, 0, NULL),
	STR("NCCL_DEBUG_FILE", 0, NULL),
	STR("NCCL_DEBUG_SUBSYS", 0, NULL),
	STR("NCCL_DEBUG_TIMESTAMP_FORMAT", 0, NULL),
	STR("NCCL_DEBUG_TIMESTAMP_LEVELS", 0, NULL),
	STR("NCCL_DEVICE_UNPACK", 0, NULL),
	BOOL("NCCL_DMABUF_ENABLE", DBG, NULL),
	STR("NCCL_ENV_PLUGIN", 0, NULL),
	STR("NCCL_GDRCOPY_ENABLE", 0, NULL),
	STR("NCCL_GDRCOPY_FIFO_ENABLE", 0, NULL),
	STR("NCCL_GDRCOPY_FLUSH_ENABLE", 0, NULL),
	STR("NCCL_GDRCOPY_SYNC_ENABLE", 0, NULL),
	STR("NCCL_GDR_FLUSH_DISABLE", 0, NULL),
	STR("NCCL_GIN_COUNTER_POOL_SIZE", 0, NULL),
	STR("NCCL_GIN_ENABLE", 0, NULL),
	STR("NCCL_GIN_ERROR_QUERY_SEC", 0, NULL),
	STR("NCCL_GIN_GDAKI_NIC_HANDLER", 0, NULL),
	STR("NCCL_GIN_GDAKI_QP_DEPTH", 0, NULL),
	STR("NCCL_GIN_NCONTEXTS", 0, NULL),
	STR("NCCL_GIN_PROXY_QUEUE_SIZE", 0, NULL),
	STR("NCCL_GIN_SIGNAL_POOL_SIZE", 0, NULL),
	STR("NCCL_GIN_TYPE", 0, NULL),
	STR("NCCL_GRAPH_DUMP_FILE", 0, NULL),
	STR("NCCL_GRAPH_DUMP_FILE_RANK", 0, NULL),
	STR("NCCL_GRAPH_FILE", 0, NULL),
	STR("NCCL_GRAPH_HELPER_DISABLE", 0, NULL),
	BOOL("NCCL_GRAPH_MIXING_SUPPORT", DBG, NULL),
	BOOL("NCCL_GRAPH_REGISTER", DBG, NULL),
	STR("NCCL_GROUP_CUDA_STREAM", 0, NULL),
	STR("NCCL_HOSTID", 0, NULL),
	BOOL("NCCL_IB_ADAPTIVE_ROUTING", DBG, NULL),
	ENUM("NCCL_IB_ADDR_FAMILY", 0, "AF_INET|AF_INET6", 1, 0, NULL),
	STR("NCCL_IB_ADDR_RANGE", 0, NULL),
	INT("NCCL_IB_AR_THRESHOLD", DBG, 0, LLONG_MAX, "removed: NCCL_ALGO and NCCL_PROTO replace it"),
	BOOL("NCCL_IB_CUDA_SUPPORT", DEP, "replaced by NCCL_NET_GDR_LEVEL"),
	STR("NCCL_IB_DATA_DIRECT", 0, NULL),
	BOOL("NCCL_IB_DISABLE", DBG, NULL),
	BOOL("NCCL_IB_ECE_ENABLE", DBG, NULL),
	INT("NCCL_IB_FIFO_TC", 0, 0, 255, NULL),
	ENUM("NCCL_IB_GDR_LEVEL", DEP, "LOC|PIX|PXB|PHB|SYS", 0, 5, "renamed NCCL_NET_GDR_LEVEL"),
	INT("NCCL_IB_GID_INDEX", 0, -1, 65535, NULL),
	HCAS("NCCL_IB_HCA"),
	BOOL("NCCL_IB_MERGE_NICS", DBG, NULL),
	BOOL("NCCL_IB_MERGE_VFS", 0, NULL),
	STR("NCCL_IB_MQP_RETRY_ALL", 0, NULL),
	STR("NCCL_IB_MQP_RETRY_CNT", 0, NULL),
	STR("NCCL_IB_MQP_RETRY_SLEEP_MSEC", 0, NULL),
	INT("NCCL_IB_PCI_RELAXED_ORDERING", DBG, 0, 2, NULL),
	STR("NCCL_IB_PKEY", 0, NULL),
	INT("NCCL_IB_QPS_PER_CONNECTION", DBG, 1, 128, NULL),
	INT("NCCL_IB_RETRY_CNT", 0, 0, 7, NULL),
	BOOL("NCCL_IB_RETURN_ASYNC_EVENTS", 0, NULL),
	INT("NCCL_IB_ROCE_VERSION_NUM", 0, 1, 2, NULL),
	STR("NCCL_IB_ROUTABLE_FLID_GID_INDEX", 0, NULL),
	INT("NCCL_IB_SL", 0, 0, 15, NULL),
	BOOL("NCCL_IB_SPLIT_DATA_ON_QPS", DBG, NULL),
	INT("NCCL_IB_TC", 0, 0, 255, NULL),
	INT("NCCL_IB_TIMEOUT", 0, 1, 31, NULL),
	STR("NCCL_IB_USE_INLINE", 0, NULL),
	STR("NCCL_IB_WARN_RAIL_LOCAL", 0, NULL),
	BOOL("NCCL_IGNORE_CPU_AFFINITY", 0, NULL),
	STR("NCCL_IGNORE_DISABLED_P2P", 0, NULL),
	STR("NCCL_L1_SHARED_MEMORY_CARVEOUT", 0, NULL),
	ENUM("NCCL_LAUNCH_MODE", DBG, "PARALLEL|GROUP", 1, 0, NULL),
	STR("NCCL_LAUNCH_ORDER_IMPLICIT", 0, NULL),
	STR("NCCL_LAUNCH_RACE_FATAL", 0, NULL),
	BOOL("NCCL_LEGACY_CUDA_REGISTER", DBG, NULL),
	STR("NCCL_LL128_BUFFSIZE", 0, NULL),
	STR("NCCL_LL128_C2C", 0, NULL),
	STR("NCCL_LL128_NTHREADS", 0, NULL),
	STR("NCCL_LL_BUFFSIZE", 0, NULL),
	INT("NCCL_LL_THRESHOLD", DEP, 0, LLONG_MAX, "removed: NCCL_ALGO and NCCL_PROTO replace it"),
	BOOL("NCCL_LOCAL_REGISTER", DBG, NULL),
	STR("NCCL_MAX_CGA_CLUSTER_SIZE", 0, NULL),
	INT("NCCL_MAX_CTAS", DBG, 1, LLONG_MAX, NULL),
	INT("NCCL_MAX_NCHANNELS", DBG, 1, LLONG_MAX, NULL),
	INT("NCCL_MAX_NRINGS", DEP, 1, LLONG_MAX, "renamed NCCL_MAX_NCHANNELS"),
	STR("NCCL_MAX_P2P_NCHANNELS", 0, NULL),
	INT("NCCL_MEM_SYNC_DOMAIN", DBG, 0, LLONG_MAX, NULL),
	INT("NCCL_MIN_CTAS", DBG, 1, LLONG_MAX, NULL),
	INT("NCCL_MIN_NCHANNELS", DBG, 1, LLONG_MAX, NULL),
	INT("NCCL_MIN_NRINGS", DEP, 1, LLONG_MAX, "renamed NCCL_MIN_NCHANNELS"),
	STR("NCCL_MIN_P2P_NCHANNELS", 0, NULL),
	INT("NCCL_MNNVL_CLIQUE_ID", 0, 0, LLONG_MAX, NULL),
	INT("NCCL_MNNVL_ENABLE", DBG, 0, 2, NULL),
	STR("NCCL_MNNVL_RAIL_PER_HOST", 0, NULL),
	STR("NCCL_MNNVL_SCATTER_NETS_ENABLE", 0, NULL),
	STR("NCCL_MNNVL_UUID", 0, NULL),
	INT("NCCL_NCHANNELS_PER_NET_PEER", DBG, 1, LLONG_MAX, NULL),
	STR("NCCL_NET", DBG, NULL),
	STR("NCCL_NETDEVS_POLICY", 0, NULL),
	STR("NCCL_NET_DISABLE_INTRA", 0, NULL),
	STR("NCCL_NET_FORCE_FLUSH", 0, NULL),
	STR("NCCL_NET_FORCE_MERGE", 0, NULL),
	BOOL("NCCL_NET_GDR_C2C", 0, NULL),
	ENUM("NCCL_NET_GDR_LEVEL", 0, "LOC|PIX|PXB|PXN|PHB|SYS|C2C", 0, 5, NULL),
	BOOL("NCCL_NET_GDR_READ", 0, NULL),
	STR("NCCL_NET_MERGE_LEVEL", 0, NULL),
	STR("NCCL_NET_OPTIONAL_RECV_COMPLETION", 0, NULL),
	STR("NCCL_NET_OVERHEAD", 0, NULL),
	STR("NCCL_NET_PLUGIN", 0, NULL),
	STR("NCCL_NET_PLUGIN_REF_COUNT", 0, NULL),
	BOOL("NCCL_NET_SHARED_BUFFERS", DBG, NULL),
	BOOL("NCCL_NET_SHARED_COMMS", DBG, NULL),
	INT("NCCL_NSOCKS_PERTHREAD", 0, 1, 64, NULL),
	ENUM("NCCL_NTHREADS", DBG, "64|128|256|512", 1, 0, NULL),
	BOOL("NCCL_NVB_DISABLE", DBG, NULL),
	STR("NCCL_NVB_PRECONNECT", 0, NULL),
	STR("NCCL_NVLINK_UTIL_CENTRIC_SCHED_ENABLE", 0, NULL),
	STR("NCCL_NVLSTREE_MAX_CHUNKSIZE", 0, NULL),
	INT("NCCL_NVLS_CHUNKSIZE", DBG, 0, LLONG_MAX, NULL),
	INT("NCCL_NVLS_ENABLE", DBG, 0, 2, NULL),
	STR("NCCL_NVLS_NCHANNELS", 0, NULL),
	STR("NCCL_NVTX_DISABLE", 0, NULL),
	BOOL("NCCL_OOB_NET_ENABLE", 0, NULL),
	IFS("NCCL_OOB_NET_IFNAME"),
	BOOL("NCCL_P2P_DIRECT_DISABLE", DBG, NULL),
	BOOL("NCCL_P2P_DISABLE", DBG, NULL),
	ENUM("NCCL_P2P_LEVEL", DBG, "LOC|NVL|PIX|PXB|PXN|PHB|SYS|C2C", 0, 5, NULL),
	INT("NCCL_P2P_LL_THRESHOLD", DBG, 0, LLONG_MAX, "removed: NCCL_ALGO and NCCL_PROTO replace it"),
	INT("NCCL_P2P_NET_CHUNKSIZE", DBG, 1, LLONG_MAX, NULL),
	INT("NCCL_P2P_NVL_CHUNKSIZE", DBG, 1, LLONG_MAX, NULL),
	INT("NCCL_P2P_PCI_CHUNKSIZE", DBG, 1, LLONG_MAX, NULL),
	INT("NCCL_P2P_PXN_LEVEL", DBG, 0, 2, NULL),
	STR("NCCL_P2P_READ_ENABLE", 0, NULL),
	STR("NCCL_P2P_SCHEDULE_GROUP_SIZE", 0, NULL),
	STR("NCCL_P2P_USE_CUDA_MEMCPY", 0, NULL),
	STR("NCCL_PAT_ENABLE", 0, NULL),
	STR("NCCL_PROFILER_PLUGIN", 0, NULL),
	STR("NCCL_PROGRESS_APPENDOP_FREQ", 0, NULL),
	STR("NCCL_PROTO", DBG, NULL),
	STR("NCCL_PROXY_APPEND_BATCH_SIZE", 0, NULL),
	STR("NCCL_PROXY_CPUSET", 0, NULL),
	STR("NCCL_PROXY_DUMP_SIGNAL", 0, NULL),
	BOOL("NCCL_PXN_C2C", DBG, NULL),
	BOOL("NCCL_PXN_DISABLE", DBG, NULL),
	STR("NCCL_RAS_ADDR", 0, NULL),
	BOOL("NCCL_RAS_ENABLE", DBG, NULL),
	INT("NCCL_RAS_TIMEOUT_FACTOR", 0, 1, LLONG_MAX, NULL),
	STR("NCCL_REPORT_CONNECT_PROGRESS", 0, NULL),
	STR("NCCL_RINGS", DEP, "removed by NCCL 2.4"),
	BOOL("NCCL_RUNTIME_CONNECT", DBG, NULL),
	STR("NCCL_SET_CPU_STACK_SIZE", 0, NULL),
	BOOL("NCCL_SET_STACK_SIZE", DBG, NULL),
	BOOL("NCCL_SET_THREAD_NAME", 0, NULL),
	BOOL("NCCL_SHM_DISABLE", DBG, NULL),
	INT("NCCL_SHM_LOCALITY", 0, 1, 2, NULL),
	INT("NCCL_SHM_MEMCPY_MODE", 0, 0, 3, NULL),
	BOOL("NCCL_SHM_USE_CUDA_MEMCPY", 0, NULL),
	STR("NCCL_SINGLE_PROC_MEM_REG_ENABLE", 0, NULL),
	INT("NCCL_SINGLE_RING_THRESHOLD", DEP, 0, LLONG_MAX, "removed: NCCL_ALGO and NCCL_PROTO replace it"),
	ENUM("NCCL_SOCKET_FAMILY", 0, "AF_INET|AF_INET6", 1, 0, NULL),
	IFS("NCCL_SOCKET_IFNAME"),
	STR("NCCL_SOCKET_INLINE", 0, NULL),
	STR("NCCL_SOCKET_MIN_TASKSIZE", 0, NULL),
	INT("NCCL_SOCKET_NTHREADS", 0, 1, 16, NULL),
	INT("NCCL_SOCKET_POLL_TIMEOUT_MSEC", 0, 0, LLONG_MAX, NULL),
	STR("NCCL_SOCKET_RCVBUF", 0, NULL),
	INT("NCCL_SOCKET_RETRY_CNT", 0, 0, LLONG_MAX, NULL),
	INT("NCCL_SOCKET_RETRY_SLEEP_MSEC", 0, 0, LLONG_MAX, NULL),
	STR("NCCL_SOCKET_SNDBUF", 0, NULL),
	STR("NCCL_SYM_CTAS", 0, NULL),
	STR("NCCL_SYM_KERNEL", 0, NULL),
	STR("NCCL_THREAD_THRESHOLDS", 0, NULL),
	STR("NCCL_TOPO_DUMP_FILE", 0, NULL),
	STR("NCCL_TOPO_DUMP_FILE_RANK", 0, NULL),
	STR("NCCL_TOPO_FILE", 0, NULL),
	INT("NCCL_TREE_THRESHOLD", DEP, 0, LLONG_MAX, "removed: NCCL_ALGO and NCCL_PROTO replace it"),
	STR("NCCL_TUNER_PLUGIN", 0, NULL),
	INT("NCCL_UID_STAGGER_RATE", 0, 1, LLONG_MAX, NULL),
	INT("NCCL_UID_STAGGER_THRESHOLD", 0, 0, LLONG_MAX, "removed: NCCL_ALGO and NCCL_PROTO replace it"),
	STR("NCCL_UNPACK_DOUBLE_NCHANNELS", 0, NULL),
	STR("NCCL_WARN_ENABLE_DEBUG_INFO", 0, NULL),
	BOOL("NCCL_WIN_ENABLE", DBG, NULL),
	STR("NCCL_WIN_STRIDE", 0, NULL),
	STR("NCCL_WORK_ARGS_BYTES", 0, NULL),
	INT("NCCL_WORK_FIFO_BYTES", 0, 0, LLONG_MAX, NULL),
};

const struct rdzv_nccl_var *rdzv_nccl_vars(size_t *n)
{
	*n = sizeof(vars) / sizeof(vars[0]);
	return vars;
}

static int cmp_name(const void *key, const void *elt)
{
	return strcmp(key, ((const struct rdzv_nccl_var *)elt)->name);
}

const struct rdzv_nccl_var *rdzv_nccl_var_find(const char *name)
{
	if (!name)
		return NULL;
	return bsearch(name, vars, sizeof(vars) / sizeof(vars[0]), sizeof(vars[0]), cmp_name);
}

unsigned rdzv_edit_distance(const char *a, const char *b, unsigned cap)
{
	/* Optimal string alignment over three rows; names are short (the
	 * longest known is 37 bytes), longer input is simply "far". */
	enum { W = 128 };
	unsigned r0[W + 1], r1[W + 1], r2[W + 1], *pp = r0, *p = r1, *c = r2;
	size_t la = strlen(a), lb = strlen(b), i, j;

	if (la > W || lb > W)
		return cap + 1;
	if ((la > lb ? la - lb : lb - la) > cap)
		return cap + 1;
	for (j = 0; j <= lb; j++)
		p[j] = (unsigned)j;
	for (i = 1; i <= la; i++) {
		unsigned best = cap + 1, *t;

		c[0] = (unsigned)i;
		for (j = 1; j <= lb; j++) {
			int ca = toupper((unsigned char)a[i - 1]), cb = toupper((unsigned char)b[j - 1]);
			unsigned v = p[j - 1] + (ca != cb);

			if (p[j] + 1 < v)
				v = p[j] + 1;
			if (c[j - 1] + 1 < v)
				v = c[j - 1] + 1;
			if (i > 1 && j > 1 && ca == toupper((unsigned char)b[j - 2])
			    && toupper((unsigned char)a[i - 2]) == cb && pp[j - 2] + 1 < v)
				v = pp[j - 2] + 1;
			c[j] = v;
			if (v < best)
				best = v;
		}
		if (best > cap)
			return cap + 1;
		t = pp;
		pp = p;
		p = c;
		c = t;
	}
	return p[lb] > cap ? cap + 1 : p[lb];
}

/* The known name of table nearest to name. A plausible typo: at most a
 * third of the name after the family's prefix (plen bytes), and never more
 * than 3 edits (NCCL_IB_HCAS -> NCCL_IB_HCA is 1). */
static const char *nearest_in(const struct rdzv_nccl_var *table, size_t n, size_t plen,
                              const char *name)
{
	const char *best = NULL;
	unsigned bestd, cap;
	size_t i, len;

	if (!name)
		return NULL;
	len = strlen(name);
	cap = len > plen ? (unsigned)((len - plen) / 3) : 0;
	if (cap < 1)
		cap = 1;
	if (cap > 3)
		cap = 3;
	bestd = cap + 1;
	for (i = 0; i < n; i++) {
		unsigned d = rdzv_edit_distance(name, table[i].name, cap);

		if (d < bestd) {
			bestd = d;
			best = table[i].name;
		}
	}
	return best;
}

const char *rdzv_nccl_var_nearest(const char *name)
{
	return nearest_in(vars, sizeof(vars) / sizeof(vars[0]), 5, name);
}

/* ---- families ---- */

static struct rdzv_var_family families[5];
static size_t nfamilies;

static void families_init(void)
{
	const struct rdzv_nccl_var *t;
	size_t n;

	if (nfamilies)
		return;
	/* Longest prefix first: FI_CXI_ is looked up before FI_. */
	families[0] = (struct rdzv_var_family){ "NCCL_", "NCCL", 1, vars,
	                                        sizeof(vars) / sizeof(vars[0]) };
	t = rdzv_rccl_vars(&n);
	families[1] = (struct rdzv_var_family){ "RCCL_", "RCCL", 1, t, n };
	t = rdzv_hsa_vars(&n);
	families[2] = (struct rdzv_var_family){ "HSA_", "ROCm runtime", 1, t, n };
	t = rdzv_fi_cxi_vars(&n);
	families[3] = (struct rdzv_var_family){ "FI_CXI_", "libfabric cxi provider", 1, t, n };
	t = rdzv_fi_vars(&n);
	families[4] = (struct rdzv_var_family){ "FI_", "libfabric", 0, t, n };
	nfamilies = 5;
}

const struct rdzv_var_family *rdzv_var_families(size_t *n)
{
	families_init();
	*n = nfamilies;
	return families;
}

const struct rdzv_var_family *rdzv_var_family_of(const char *name)
{
	size_t i;

	if (!name)
		return NULL;
	families_init();
	for (i = 0; i < nfamilies; i++)
		if (strncmp(name, families[i].prefix, strlen(families[i].prefix)) == 0)
			return &families[i];
	return NULL;
}

const struct rdzv_var_family *rdzv_var_family_miscased(const char *name)
{
	size_t i;

	if (!name || rdzv_var_family_of(name))
		return NULL;
	for (i = 0; i < nfamilies; i++)
		if (strncasecmp(name, families[i].prefix, strlen(families[i].prefix)) == 0)
			return &families[i];
	return NULL;
}

const struct rdzv_nccl_var *rdzv_var_find(const char *name)
{
	const struct rdzv_var_family *f = rdzv_var_family_of(name);

	if (!f)
		return NULL;
	return bsearch(name, f->vars, f->n, sizeof(f->vars[0]), cmp_name);
}

const char *rdzv_var_nearest(const char *name)
{
	const struct rdzv_var_family *f = rdzv_var_family_of(name);

	if (!f)
		f = rdzv_var_family_miscased(name);
	if (!f)
		return NULL;
	return nearest_in(f->vars, f->n, strlen(f->prefix), name);
}

/* NCCL reads integer parameters with strtoll(base 0): decimal, 0x hex and
 * (legacy) 0 octal all work; a sign is allowed. */
static int parse_ll(const char *s, long long *out)
{
	char *end;
	long long v;

	if (!*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

static int check_int(const struct rdzv_nccl_var *v, const char *value, char *err, size_t errlen)
{
	long long n;

	if (parse_ll(value, &n) < 0)
		return rdzv_err(err, errlen, "'%.64s' is not an integer", value);
	if (n < v->min || n > v->max) {
		if (v->max == LLONG_MAX)
			return rdzv_err(err, errlen, "%lld is out of range (at least %lld)", n, v->min);
		return rdzv_err(err, errlen, "%lld is out of range (%lld-%lld)", n, v->min, v->max);
	}
	return 0;
}

static int check_enum(const struct rdzv_nccl_var *v, const char *value, char *err, size_t errlen)
{
	const char *p = v->choices;
	size_t vl = strlen(value);
	long long n;

	while (p && *p) {
		const char *bar = strchr(p, '|');
		size_t l = bar ? (size_t)(bar - p) : strlen(p);

		if (l == vl && strncasecmp(p, value, l) == 0)
			return 0;
		p = bar ? bar + 1 : NULL;
	}
	if (v->min <= v->max && parse_ll(value, &n) == 0 && n >= v->min && n <= v->max)
		return 0;
	if (v->min <= v->max)
		return rdzv_err(err, errlen, "'%.64s' is not one of %s (or %lld-%lld)", value,
		                v->choices, v->min, v->max);
	return rdzv_err(err, errlen, "'%.64s' is not one of %s", value, v->choices);
}

/* Libraries that compare with strcmp (libfabric) take a word exactly. */
static int check_word(const struct rdzv_nccl_var *v, const char *value, char *err, size_t errlen)
{
	const char *p = v->choices;
	size_t vl = strlen(value);

	while (p && *p) {
		const char *bar = strchr(p, '|');
		size_t l = bar ? (size_t)(bar - p) : strlen(p);

		if (l == vl && strncmp(p, value, l) == 0)
			return 0;
		p = bar ? bar + 1 : NULL;
	}
	return rdzv_err(err, errlen, "'%.64s' is not one of %s (exactly, in this case)", value,
	                v->choices);
}

static int name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

/* The shared prefix/exclude grammar of NCCL_IB_HCA and NCCL_SOCKET_IFNAME
 * (NCCL's parseStringList: '^' then '=' only at the start of the whole
 * list). ports: items may end with ":PORT". */
static int check_list(const char *value, int ports, char *err, size_t errlen)
{
	const char *p = value;

	if (*p == '^')
		p++;
	if (*p == '=')
		p++;
	if (!*p)
		return rdzv_err(err, errlen, "empty device list");
	for (;;) {
		const char *start = p;
		uint64_t port;

		while (name_char(*p))
			p++;
		if (p == start)
			return rdzv_err(err, errlen, "empty or invalid name at '%.32s' (names are "
			                "letters, digits, '_', '-', '.'; '^' and '=' only lead the list)",
			                start);
		if (ports && *p == ':') {
			const char *q = ++p;

			while (*p >= '0' && *p <= '9')
				p++;
			if (rdzv_parse_u64n(q, (size_t)(p - q), 1, 255, &port) < 0)
				return rdzv_err(err, errlen, "bad port after '%.*s:' (expected 1-255)",
				                (int)(q - 1 - start), start);
		}
		if (!*p)
			return 0;
		if (*p != ',')
			return rdzv_err(err, errlen, "unexpected '%c' after '%.*s'%s", *p,
			                (int)(p - start), start,
			                ports ? " (expected ',' or ':PORT')" : " (expected ',')");
		p++;
	}
}

int rdzv_hca_list_check(const char *value, char *err, size_t errlen)
{
	return check_list(value, 1, err, errlen);
}

int rdzv_nccl_value_check(const struct rdzv_nccl_var *v, const char *value, char *err,
                          size_t errlen)
{
	switch (v->type) {
	case RDZV_NV_STRING:
		return 0;
	case RDZV_NV_INT:
		return check_int(v, value, err, errlen);
	case RDZV_NV_BOOL:
		if (strcmp(value, "0") == 0 || strcmp(value, "1") == 0)
			return 0;
		return rdzv_err(err, errlen, "'%.64s' is not 0 or 1 (read as a number, not "
		                "yes/no)", value);
	case RDZV_NV_FI_BOOL: {
		static const char *const words[] = { "0", "1", "yes", "no", "true", "false", "on",
		                                     "off", NULL };
		int i;

		for (i = 0; words[i]; i++)
			if (strcasecmp(value, words[i]) == 0)
				return 0;
		return rdzv_err(err, errlen, "'%.64s' is not a boolean (0/1, yes/no, true/false, "
		                "on/off)", value);
	}
	case RDZV_NV_WORD:
		return check_word(v, value, err, errlen);
	case RDZV_NV_ENUM:
		return check_enum(v, value, err, errlen);
	case RDZV_NV_HCA_LIST:
		return check_list(value, 1, err, errlen);
	case RDZV_NV_IF_LIST:
		return check_list(value, 0, err, errlen);
	}
	return rdzv_err(err, errlen, "unknown type");
}

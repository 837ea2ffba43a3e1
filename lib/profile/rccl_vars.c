/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/profile/: site NCCL profiles: the files, their variables, which one
 * applies. Uses lib/common/. */
/* rccl_vars.c: the variables an RCCL job reads besides NCCL_* (RCCL's
 * own RCCL_*, the ROCm runtime's HSA_*, libfabric's FI_* and its cxi
 * provider's FI_CXI_*), with the value types their readers take, so that
 * the admin's checker catches a typo in an AMD or Slingshot profile as it
 * does in an NVIDIA one (nccl_vars.h: the entry type and the families).
 *
 * Every table is sorted by name (strcmp order: tests/unit/test-nccl-vars
 * checks it) and lists only names the library reads, taken from its source;
 * a name whose values the source does not restrict is a string. */
#include "config.h"
#include "nccl_vars.h"

#include <limits.h>
#include <stddef.h>

#define STR(n) { n, RDZV_NV_STRING, 0, 0, 0, NULL, NULL }
#define BOOL(n) { n, RDZV_NV_BOOL, 0, 0, 1, NULL, NULL }
#define FBOOL(n) { n, RDZV_NV_FI_BOOL, 0, 0, 1, NULL, NULL }
#define INT(n, lo, hi) { n, RDZV_NV_INT, 0, lo, hi, NULL, NULL }
#define WORD(n, f, ch) { n, RDZV_NV_WORD, f, 0, 0, ch, NULL }
#define COUNT(n) INT(n, 0, LLONG_MAX)

/* RCCL's own variables: every RCCL_PARAM() and getenv("RCCL_...") of
 * ROCm/rccl (src/, develop at 0cbce2a7, October 2024). RCCL_PARAM reads an
 * int64 with strtoll and the source gives no range, hence strings. */
static const struct rdzv_nccl_var rccl[] = {
	STR("RCCL_CLIQUE_ALLREDUCE_BYTE_LIMIT"),
	STR("RCCL_CLIQUE_ALLREDUCE_NCHANNELS"),
	STR("RCCL_CLIQUE_IGNORE_TOPO"),
	STR("RCCL_DUMP_ROME_MODEL_FILE"),
	STR("RCCL_ENABLE_CLIQUE"),
	STR("RCCL_ENABLE_INTRANET"),
	STR("RCCL_ENABLE_SIGNALHANDLER"),
	STR("RCCL_FORCE_ENABLE_GDRDMA"),
	STR("RCCL_INTRANET_THRESHOLD"),
	STR("RCCL_KERNEL_COLL_TRACE_ENABLE"),
	STR("RCCL_LL128_FORCE_ENABLE"),
	STR("RCCL_MODEL_MATCHING_DISABLE"),
	STR("RCCL_MSCCLPP_ENABLE"),
	STR("RCCL_MSCCLPP_THRESHOLD"),
	STR("RCCL_MSCCL_ENABLE"),
	STR("RCCL_MSCCL_ENABLE_SINGLE_PROCESS"),
	STR("RCCL_MSCCL_FORCE_ENABLE"),
	STR("RCCL_MSCCL_FORCE_FULLOPS"),
	STR("RCCL_MSCCL_WORK_FIFO_DEPTH"),
	STR("RCCL_NET_CONTIGUOUS_MEM"),
	STR("RCCL_P2P_NET_DISABLE"),
	STR("RCCL_P2P_NET_THRESHOLD"),
	STR("RCCL_PIVOT_ALLTOALL_ENABLE"),
	STR("RCCL_ROCR_PATH"),
	STR("RCCL_STACK_SIZE_OVERRIDE"),
	STR("RCCL_TREES"),
	STR("RCCL_USE_ROCM_SMI_LIB"),
};

/* The ROCm runtime's variables (ROCr, which HIP and RCCL sit on): every
 * name read in ROCm/rocm-systems projects/rocr-runtime (runtime/hsa-runtime
 * core/util/flag.h and libhsakmt, August 2025). The booleans are the ones
 * flag.h compares with "0"/"1" only (anything else is the default). */
static const struct rdzv_nccl_var hsa[] = {
	STR("HSA_ALLOCATE_QUEUE_DEV_MEM"),
	STR("HSA_ASYNCEVENTS_THREAD_PRIORITY"),
	STR("HSA_CHECK_FLAT_SCRATCH"),
	STR("HSA_CHECK_USERPTR"),
	STR("HSA_COOP_CU_COUNT"),
	STR("HSA_CO_DMACOPY_SIZE"),
	STR("HSA_CU_MASK"),
	STR("HSA_CU_MASK_SKIP_INIT"),
	STR("HSA_DEBUG"),
	STR("HSA_DISABLE_CACHE"),
	STR("HSA_DISABLE_FRAGMENT_ALLOCATOR"),
	STR("HSA_DISABLE_IMAGE"),
	STR("HSA_DISABLE_PC_SAMPLING"),
	STR("HSA_DISCOVER_COPY_AGENTS"),
	STR("HSA_ENABLE_DEBUG"),
	STR("HSA_ENABLE_DTIF"),
	STR("HSA_ENABLE_INTERRUPT"),
	STR("HSA_ENABLE_IPC_MODE_LEGACY"),
	STR("HSA_ENABLE_MWAITX"),
	BOOL("HSA_ENABLE_PEER_SDMA"),
	STR("HSA_ENABLE_QUEUE_FAULT_MESSAGE"),
	STR("HSA_ENABLE_SCRATCH_ALT"),
	STR("HSA_ENABLE_SCRATCH_ASYNC_RECLAIM"),
	BOOL("HSA_ENABLE_SDMA"),
	STR("HSA_ENABLE_SDMA_COPY_SIZE_OVERRIDE"),
	STR("HSA_ENABLE_SDMA_GANG"),
	STR("HSA_ENABLE_SDMA_HDP_FLUSH"),
	STR("HSA_ENABLE_SDMA_RECOMMENDED_ENG"),
	STR("HSA_ENABLE_SRAMECC"),
	STR("HSA_ENABLE_VM_FAULT_MESSAGE"),
	BOOL("HSA_FORCE_FINE_GRAIN_PCIE"),
	STR("HSA_FORCE_SDMA_SIZE"),
	STR("HSA_HIGH_PRECISION_MODE"),
	STR("HSA_IGNORE_SRAMECC_MISREPORT"),
	STR("HSA_IMAGE_ENABLE_3D_SWIZZLE_DEBUG"),
	STR("HSA_IMAGE_PRINT_SRD"),
	STR("HSA_LOADER_ENABLE_MMAP_URI"),
	STR("HSA_MAX_QUEUES"),
	STR("HSA_MAX_VA_ALIGN"),
	STR("HSA_MODEL_LIB"),
	STR("HSA_MODEL_MEMFILE"),
	STR("HSA_MODEL_TOPOLOGY"),
	BOOL("HSA_NO_SCRATCH_RECLAIM"),
	STR("HSA_NO_SCRATCH_THREAD_LIMITER"),
	STR("HSA_OVERRIDE_CPU_AFFINITY_DEBUG"),
	STR("HSA_OVERRIDE_GFX_VERSION"),
	STR("HSA_PCS_MAX_DEVICE_BUFFER_SIZE"),
	STR("HSA_RESERVE_SVM"),
	STR("HSA_REV_COPY_DIR"),
	STR("HSA_RUNNING_UNDER_VALGRIND"),
	STR("HSA_SCRATCH_MEM"),
	STR("HSA_SCRATCH_SINGLE_LIMIT"),
	STR("HSA_SCRATCH_SINGLE_LIMIT_ASYNC"),
	STR("HSA_SDMA_WAIT_IDLE"),
	STR("HSA_SIGNAL_WAIT_ABORT_TIMEOUT"),
	STR("HSA_SVM_GUARD_PAGES"),
	STR("HSA_SVM_PROFILE"),
	STR("HSA_TEST_GPUS_NUM"),
	STR("HSA_TOOLS_DISABLE_REGISTER"),
	STR("HSA_TOOLS_LIB"),
	STR("HSA_TOOLS_REPORT_LOAD_FAILURE"),
	STR("HSA_TOOLS_REPORT_REGISTER_FAILURE"),
	STR("HSA_TOOLS_ROCPROFILER_V1_TOOLS"),
	STR("HSA_USERPTR_FOR_PAGED_MEM"),
	STR("HSA_USE_SVM"),
	STR("HSA_USE_UDMABUF"),
	STR("HSA_WAIT_ANY_DEBUG"),
	STR("HSA_XNACK"),
	STR("HSA_ZFB"),
};

/* libfabric's cxi provider (HPE Slingshot 11): the names and types of its
 * fi_param_define() calls (HewlettPackard/shs-libfabric prov/cxi, July 2026;
 * fi_cxi(7) "RUNTIME PARAMETERS" documents most), plus the one it reads
 * with getenv. FI_PARAM_BOOL takes libfabric's words, INT and SIZE_T an
 * integer (strtol, base 0), the strings below with fixed choices are
 * compared with strcmp. */
static const struct rdzv_nccl_var fi_cxi[] = {
	FBOOL("FI_CXI_ATS"),
	WORD("FI_CXI_ATS_MLOCK_MODE", 0, "off|all"),
	INT("FI_CXI_CNTR_SPIN_BEFORE_YIELD", INT_MIN, INT_MAX),
	FBOOL("FI_CXI_CNTR_TRIG_CMDQ"),
	STR("FI_CXI_COLL_FABRIC_MGR_CACERT"),
	STR("FI_CXI_COLL_FABRIC_MGR_URL"),
	STR("FI_CXI_COLL_JOB_ID"),
	STR("FI_CXI_COLL_JOB_STEP_ID"),
	STR("FI_CXI_COLL_MCAST_TOKEN"),
	COUNT("FI_CXI_COLL_RETRY_USEC"),
	COUNT("FI_CXI_COLL_TIMEOUT_USEC"),
	FBOOL("FI_CXI_COLL_USE_DMA_PUT"),
	COUNT("FI_CXI_CQ_FILL_PERCENT"),
	WORD("FI_CXI_CQ_POLICY", 0, "always|high_empty|low_empty|low"),
	COUNT("FI_CXI_CTRL_RX_EQ_MAX_SIZE"),
	INT("FI_CXI_DEFAULT_CQ_SIZE", 1, LLONG_MAX),
	INT("FI_CXI_DEFAULT_RX_SIZE", 1, LLONG_MAX),
	INT("FI_CXI_DEFAULT_TX_SIZE", 1, LLONG_MAX),
	COUNT("FI_CXI_DEFAULT_VNI"),
	STR("FI_CXI_DEVICE_NAME"),
	FBOOL("FI_CXI_DISABLE_ALT_READ_CMDQ"),
	FBOOL("FI_CXI_DISABLE_CQ_HUGETLB"),
	FBOOL("FI_CXI_DISABLE_CUDA_SYNC_MEMOPS"),
	FBOOL("FI_CXI_DISABLE_EQ_HUGETLB"),
	FBOOL("FI_CXI_DISABLE_HMEM_DEV_REGISTER"),
	FBOOL("FI_CXI_DISABLE_HOST_REGISTER"),
	FBOOL("FI_CXI_DISABLE_NON_INJECT_AMO_IDC"),
	FBOOL("FI_CXI_DISABLE_NON_INJECT_MSG_IDC"),
	FBOOL("FI_CXI_DISABLE_NON_INJECT_RMA_IDC"),
	FBOOL("FI_CXI_ENABLE_TRIG_OP_LIMIT"),
	FBOOL("FI_CXI_ENABLE_WRITEDATA"),
	COUNT("FI_CXI_EQ_ACK_BATCH_SIZE"),
	INT("FI_CXI_FC_RETRY_USEC_DELAY", INT_MIN, INT_MAX),
	FBOOL("FI_CXI_FORCE_DEV_REG_COPY"),
	FBOOL("FI_CXI_FORCE_ODP"),
	FBOOL("FI_CXI_FORCE_ZE_HMEM_SUPPORT"),
	COUNT("FI_CXI_HWCOLL_ADDRS_PER_JOB"),
	COUNT("FI_CXI_HWCOLL_MIN_NODES"),
	FBOOL("FI_CXI_HYBRID_POSTED_RECV_PREEMPTIVE"),
	FBOOL("FI_CXI_HYBRID_PREEMPTIVE"),
	FBOOL("FI_CXI_HYBRID_RECV_PREEMPTIVE"),
	FBOOL("FI_CXI_HYBRID_UNEXPECTED_MSG_PREEMPTIVE"),
	FBOOL("FI_CXI_IOTLB"),
	WORD("FI_CXI_LLRING_MODE", 0, "idle|always|never"),
	COUNT("FI_CXI_MR_CACHE_EVENTS_DISABLE_LE_POLL_NSECS"),
	COUNT("FI_CXI_MR_CACHE_EVENTS_DISABLE_POLL_NSECS"),
	FBOOL("FI_CXI_MR_MATCH_EVENTS"),
	WORD("FI_CXI_MR_TARGET_ORDERING", 0, "default|strict|relaxed"),
	FBOOL("FI_CXI_MSG_LOSSLESS"),
	FBOOL("FI_CXI_ODP"),
	COUNT("FI_CXI_OFLOW_BUF_COUNT"),
	COUNT("FI_CXI_OFLOW_BUF_MAX_CACHED"),
	COUNT("FI_CXI_OFLOW_BUF_MIN_POSTED"),
	INT("FI_CXI_OFLOW_BUF_SIZE", 1, LLONG_MAX),
	FBOOL("FI_CXI_OPTIMIZED_MRS"),
	FBOOL("FI_CXI_PROV_KEY_CACHE"),
	FBOOL("FI_CXI_RDZV_ALIGNED_SW_RGET"),
	COUNT("FI_CXI_RDZV_EAGER_SIZE"),
	COUNT("FI_CXI_RDZV_GET_MIN"),
	/* The provider turns '-' into '_' before comparing; alt_write is
	 * in its enum but refused ("Unrecognized rendezvous protocol"). */
	WORD("FI_CXI_RDZV_PROTO", RDZV_NV_ALT_READ, "default|alt_read|alt-read"),
	COUNT("FI_CXI_RDZV_THRESHOLD"),
	COUNT("FI_CXI_REQ_BUF_MAX_CACHED"),
	COUNT("FI_CXI_REQ_BUF_MAX_COUNT"),
	COUNT("FI_CXI_REQ_BUF_MIN_POSTED"),
	INT("FI_CXI_REQ_BUF_SIZE", 1, LLONG_MAX),
	STR("FI_CXI_RGET_TC"),
	INT("FI_CXI_RNR_APPEND_RETRY_TIMEOUT_US", INT_MIN, INT_MAX),
	INT("FI_CXI_RNR_MAX_TIMEOUT_US", INT_MIN, INT_MAX),
	WORD("FI_CXI_RX_MATCH_MODE", 0, "hardware|software|hybrid"),
	COUNT("FI_CXI_SAFE_DEVMEM_COPY_THRESHOLD"),
	INT("FI_CXI_SW_RX_TX_INIT_MAX", INT_MIN, INT_MAX),
	STR("FI_CXI_TELEMETRY"),
	INT("FI_CXI_TELEMETRY_RGID", INT_MIN, INT_MAX),
	FBOOL("FI_CXI_TRUNC_OK"),
	INT("FI_CXI_ZBCOLL_RADIX", INT_MIN, INT_MAX),
};

/* libfabric's core: every fi_param_define(NULL, ...) of src/, prov/util
 * and prov/hook (same tree), and fi_mr(3)'s cache monitors. Another
 * provider's FI_<PROV>_* names are not here, hence the family is not
 * strict (nccl_vars.h). */
static const struct rdzv_nccl_var fi[] = {
	FBOOL("FI_AV_REMOVE_CLEANUP"),
	FBOOL("FI_FORK_UNSAFE"),
	STR("FI_HMEM"),
	FBOOL("FI_HMEM_CUDA_ENABLE_ASYNC_COPY"),
	FBOOL("FI_HMEM_CUDA_USE_DMABUF"),
	FBOOL("FI_HMEM_CUDA_USE_GDRCOPY"),
	FBOOL("FI_HMEM_DISABLE_P2P"),
	FBOOL("FI_HMEM_NEURON_USE_DMABUF"),
	FBOOL("FI_HMEM_ROCR_USE_DMABUF"),
	FBOOL("FI_HMEM_SYNAPSEAI_USE_DMABUF"),
	STR("FI_HMEM_ZE_COPY_ENGINE"),
	FBOOL("FI_HMEM_ZE_USE_DMABUF"),
	STR("FI_HOOK"),
	STR("FI_LOG_INTERVAL"),
	STR("FI_LOG_LEVEL"),
	STR("FI_LOG_LOCATION"),
	STR("FI_LOG_LOCATION_MODE"),
	STR("FI_LOG_PROV"),
	STR("FI_LOG_SUBSYS"),
	COUNT("FI_MR_CACHE_MAX_COUNT"),
	COUNT("FI_MR_CACHE_MAX_SIZE"),
	/* util_mem_monitor.c compares with strcmp; "uffd" is userfaultfd. */
	WORD("FI_MR_CACHE_MONITOR", RDZV_NV_MR_MONITOR, "userfaultfd|uffd|memhooks|kdreg2|disabled"),
	FBOOL("FI_MR_CUDA_CACHE_MONITOR_ENABLED"),
	FBOOL("FI_MR_ROCR_CACHE_MONITOR_ENABLED"),
	FBOOL("FI_MR_ZE_CACHE_MONITOR_ENABLED"),
	STR("FI_OFFLOAD_COLL_PROVIDER"),
	STR("FI_PERF_CNTR"),
	FBOOL("FI_PREFER_SYSCONFIG"),
	STR("FI_PROVIDER"),
	STR("FI_PROVIDER_PATH"),
	COUNT("FI_ROCR_D2H_THRESHOLD"),
	COUNT("FI_UNIVERSE_SIZE"),
};

#define N(t) (sizeof(t) / sizeof((t)[0]))

const struct rdzv_nccl_var *rdzv_rccl_vars(size_t *n)
{
	*n = N(rccl);
	return rccl;
}

const struct rdzv_nccl_var *rdzv_hsa_vars(size_t *n)
{
	*n = N(hsa);
	return hsa;
}

const struct rdzv_nccl_var *rdzv_fi_cxi_vars(size_t *n)
{
	*n = N(fi_cxi);
	return fi_cxi;
}

const struct rdzv_nccl_var *rdzv_fi_vars(size_t *n)
{
	*n = N(fi);
	return fi;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-nccl-vars: the table of NCCL variables, typo suggestions and value
 * checks (bad values first). */
#include "config.h"
#include "nccl_vars.h"
#include "tap.h"

static void refuses(const char *var, const char *value)
{
	const struct rdzv_nccl_var *v = rdzv_nccl_var_find(var);
	char err[256] = "";

	ok(v && rdzv_nccl_value_check(v, value, err, sizeof(err)) < 0 && err[0],
	   "%s=%s is refused (%s)", var, value, err);
}

static void accepts(const char *var, const char *value)
{
	const struct rdzv_nccl_var *v = rdzv_nccl_var_find(var);
	char err[256] = "";

	ok(v && rdzv_nccl_value_check(v, value, err, sizeof(err)) == 0, "%s=%s is accepted%s%s",
	   var, value, err[0] ? ": " : "", err);
}

/* The same for any family (RCCL_*, HSA_*, FI_*). */
static void refuses_any(const char *var, const char *value)
{
	const struct rdzv_nccl_var *v = rdzv_var_find(var);
	char err[256] = "";

	ok(v && rdzv_nccl_value_check(v, value, err, sizeof(err)) < 0 && err[0],
	   "%s=%s is refused (%s)", var, value, err);
}

static void accepts_any(const char *var, const char *value)
{
	const struct rdzv_nccl_var *v = rdzv_var_find(var);
	char err[256] = "";

	ok(v && rdzv_nccl_value_check(v, value, err, sizeof(err)) == 0, "%s=%s is accepted%s%s",
	   var, value, err[0] ? ": " : "", err);
}

/* Every family's table: sorted, every name with the family's prefix (and,
 * for FI_, not the longer FI_CXI_ one), typed sanely. */
static void test_families(void)
{
	const struct rdzv_var_family *fams;
	size_t nf, f, i;

	fams = rdzv_var_families(&nf);
	is_int((int)nf, 5, "five families: NCCL, RCCL, HSA, FI_CXI, FI");
	for (f = 0; f < nf; f++) {
		int sorted = 1, typed = 1;

		for (i = 1; i < fams[f].n; i++)
			if (strcmp(fams[f].vars[i - 1].name, fams[f].vars[i].name) >= 0) {
				sorted = 0;
				diag("out of order: %s, %s", fams[f].vars[i - 1].name, fams[f].vars[i].name);
			}
		for (i = 0; i < fams[f].n; i++) {
			const struct rdzv_nccl_var *v = &fams[f].vars[i];

			if (rdzv_var_family_of(v->name) != &fams[f]
			    || ((v->type == RDZV_NV_ENUM || v->type == RDZV_NV_WORD) && !v->choices)
			    || (v->type == RDZV_NV_INT && v->min > v->max)
			    || rdzv_var_find(v->name) != v) {
				typed = 0;
				diag("bad entry %s", v->name);
			}
		}
		ok(fams[f].n > 0 && sorted && typed, "%s: %zu names, sorted, each found in its own "
		   "family, sanely typed", fams[f].prefix, fams[f].n);
	}
	is_str(rdzv_var_family_of("FI_CXI_RDZV_PROTO")->prefix, "FI_CXI_",
	       "FI_CXI_* is the cxi provider's family, not libfabric's core");
	is_str(rdzv_var_family_of("FI_PROVIDER")->prefix, "FI_", "FI_PROVIDER is libfabric's");
	ok(rdzv_var_family_of("UCX_TLS") == NULL && rdzv_var_family_of(NULL) == NULL,
	   "other names belong to no family");
	ok(rdzv_var_family_of("HSA_XNACK")->strict && !rdzv_var_family_of("FI_VERBS_X")->strict,
	   "HSA_ is strict; core FI_ is not (other providers' FI_<PROV>_ names)");
	is_str(rdzv_var_family_miscased("rccl_msccl_enable")->prefix, "RCCL_",
	       "a lower-case rccl_ name is a mis-cased RCCL name");
	ok(rdzv_var_family_miscased("RCCL_MSCCL_ENABLE") == NULL,
	   "a correctly cased name is not mis-cased");

	/* real names of each family are known */
	ok(rdzv_var_find("RCCL_MSCCL_ENABLE") && rdzv_var_find("RCCL_ENABLE_CLIQUE")
	   && rdzv_var_find("RCCL_MSCCLPP_ENABLE"), "RCCL's own names are known");
	ok(rdzv_var_find("HSA_FORCE_FINE_GRAIN_PCIE") && rdzv_var_find("HSA_ENABLE_SDMA")
	   && rdzv_var_find("HSA_XNACK"), "the ROCm runtime's names are known");
	ok(rdzv_var_find("FI_CXI_RDZV_PROTO") && rdzv_var_find("FI_CXI_DEFAULT_CQ_SIZE")
	   && rdzv_var_find("FI_CXI_DISABLE_HOST_REGISTER") && rdzv_var_find("FI_CXI_RX_MATCH_MODE")
	   && rdzv_var_find("FI_CXI_RDZV_THRESHOLD") && rdzv_var_find("FI_CXI_OFLOW_BUF_SIZE")
	   && rdzv_var_find("FI_CXI_REQ_BUF_SIZE") && rdzv_var_find("FI_CXI_DEFAULT_TX_SIZE"),
	   "fi_cxi(7)'s names are known");
	ok(rdzv_var_find("FI_MR_CACHE_MONITOR") && rdzv_var_find("FI_PROVIDER")
	   && rdzv_var_find("FI_LOG_LEVEL"), "libfabric's core names are known");
	ok(!rdzv_var_find("RCCL_ALGO") && !rdzv_var_find("rccl_msccl_enable"),
	   "an invented RCCL name and a lower-case one are not");

	/* typos are matched within the family */
	is_str(rdzv_var_nearest("RCCL_MSCCL_ENABEL"), "RCCL_MSCCL_ENABLE",
	       "RCCL_MSCCL_ENABEL -> RCCL_MSCCL_ENABLE");
	is_str(rdzv_var_nearest("HSA_FORCE_FINE_GRAIN_PCI"), "HSA_FORCE_FINE_GRAIN_PCIE",
	       "HSA_FORCE_FINE_GRAIN_PCI -> HSA_FORCE_FINE_GRAIN_PCIE");
	is_str(rdzv_var_nearest("FI_CXI_RDZV_PROTOCOL"), "FI_CXI_RDZV_PROTO",
	       "FI_CXI_RDZV_PROTOCOL -> FI_CXI_RDZV_PROTO");
	is_str(rdzv_var_nearest("FI_MR_CACHE_MONITER"), "FI_MR_CACHE_MONITOR",
	       "FI_MR_CACHE_MONITER -> FI_MR_CACHE_MONITOR");
	is_str(rdzv_var_nearest("fi_cxi_rdzv_proto"), "FI_CXI_RDZV_PROTO",
	       "a lower-case name gets its family's spelling");
	ok(rdzv_var_nearest("RCCL_NET_GDR_LEVEL") == NULL,
	   "no RCCL suggestion taken from NCCL's table (RCCL_NET_GDR_LEVEL)");
	is_str(rdzv_var_nearest("NCCL_IB_HCAS"), "NCCL_IB_HCA", "NCCL's typos as before");

	/* values */
	refuses_any("FI_CXI_RDZV_PROTO", "alt_write");
	refuses_any("FI_CXI_RDZV_PROTO", "ALT_READ");
	refuses_any("FI_CXI_RDZV_PROTO", "");
	accepts_any("FI_CXI_RDZV_PROTO", "alt_read");
	accepts_any("FI_CXI_RDZV_PROTO", "alt-read");
	accepts_any("FI_CXI_RDZV_PROTO", "default");
	refuses_any("FI_MR_CACHE_MONITOR", "kdreg");
	refuses_any("FI_MR_CACHE_MONITOR", "KDREG2");
	accepts_any("FI_MR_CACHE_MONITOR", "kdreg2");
	accepts_any("FI_MR_CACHE_MONITOR", "userfaultfd");
	accepts_any("FI_MR_CACHE_MONITOR", "memhooks");
	accepts_any("FI_MR_CACHE_MONITOR", "disabled");
	refuses_any("FI_CXI_RX_MATCH_MODE", "mixed");
	accepts_any("FI_CXI_RX_MATCH_MODE", "hybrid");
	refuses_any("FI_CXI_DEFAULT_CQ_SIZE", "128k");
	refuses_any("FI_CXI_DEFAULT_CQ_SIZE", "0");
	accepts_any("FI_CXI_DEFAULT_CQ_SIZE", "131072");
	refuses_any("FI_CXI_RDZV_THRESHOLD", "-1");
	accepts_any("FI_CXI_RDZV_THRESHOLD", "0");
	refuses_any("FI_CXI_DISABLE_HOST_REGISTER", "2");
	refuses_any("FI_CXI_DISABLE_HOST_REGISTER", "y");
	accepts_any("FI_CXI_DISABLE_HOST_REGISTER", "1");
	accepts_any("FI_CXI_DISABLE_HOST_REGISTER", "Yes");
	accepts_any("FI_CXI_DISABLE_HOST_REGISTER", "off");
	refuses_any("HSA_FORCE_FINE_GRAIN_PCIE", "yes");
	accepts_any("HSA_FORCE_FINE_GRAIN_PCIE", "1");
	accepts_any("RCCL_MSCCL_ENABLE", "0");
	ok(rdzv_var_find("FI_CXI_RDZV_PROTO")->flags & RDZV_NV_ALT_READ,
	   "FI_CXI_RDZV_PROTO carries the allocation-option note");
	ok(rdzv_var_find("FI_MR_CACHE_MONITOR")->flags & RDZV_NV_MR_MONITOR,
	   "FI_MR_CACHE_MONITOR carries the memhooks warning");
}

int main(void)
{
	const struct rdzv_nccl_var *vars;
	size_t n, i;
	int sorted = 1, typed = 1;
	const char *near;
	char err[256];

	/* bad values */
	refuses("NCCL_IB_GID_INDEX", "abc");
	refuses("NCCL_IB_GID_INDEX", "");
	refuses("NCCL_IB_GID_INDEX", " 3");
	refuses("NCCL_IB_GID_INDEX", "3x");
	refuses("NCCL_IB_GID_INDEX", "-2");
	refuses("NCCL_IB_GID_INDEX", "99999999999999999999999");
	refuses("NCCL_IB_DISABLE", "yes");
	refuses("NCCL_IB_DISABLE", "2");
	refuses("NCCL_IB_DISABLE", "");
	refuses("NCCL_IB_SL", "16");
	refuses("NCCL_IB_TIMEOUT", "0");
	refuses("NCCL_BUFFSIZE", "0");
	refuses("NCCL_BUFFSIZE", "16M");
	refuses("NCCL_CROSS_NIC", "3");
	refuses("NCCL_DEBUG", "VERBOSE");
	refuses("NCCL_DEBUG", "");
	refuses("NCCL_SOCKET_FAMILY", "AF_UNIX");
	refuses("NCCL_P2P_LEVEL", "NVLINK");
	refuses("NCCL_P2P_LEVEL", "6");
	refuses("NCCL_NTHREADS", "100");
	refuses("NCCL_IB_HCA", "");
	refuses("NCCL_IB_HCA", "^");
	refuses("NCCL_IB_HCA", "^=");
	refuses("NCCL_IB_HCA", "=^mlx5_0");
	refuses("NCCL_IB_HCA", "mlx5_0:");
	refuses("NCCL_IB_HCA", "mlx5_0:0");
	refuses("NCCL_IB_HCA", "mlx5_0:256");
	refuses("NCCL_IB_HCA", "mlx5_0:1:2");
	refuses("NCCL_IB_HCA", "mlx5_0,,mlx5_1");
	refuses("NCCL_IB_HCA", "mlx5_0,");
	refuses("NCCL_IB_HCA", "mlx5_0 mlx5_1");
	refuses("NCCL_IB_HCA", "mlx5_0;mlx5_1");
	refuses("NCCL_IB_HCA", "mlx5_0,^mlx5_1");
	refuses("NCCL_SOCKET_IFNAME", "eth0:1");
	refuses("NCCL_SOCKET_IFNAME", "eth0,");
	ok(rdzv_hca_list_check("mlx5_0:x", err, sizeof(err)) < 0 && strstr(err, "mlx5_0"),
	   "an HCA list error names the device (%s)", err);

	/* good values */
	accepts("NCCL_IB_GID_INDEX", "3");
	accepts("NCCL_IB_GID_INDEX", "-1");
	accepts("NCCL_IB_GID_INDEX", "0x3");
	accepts("NCCL_IB_DISABLE", "0");
	accepts("NCCL_IB_DISABLE", "1");
	accepts("NCCL_BUFFSIZE", "16777216");
	accepts("NCCL_DEBUG", "INFO");
	accepts("NCCL_DEBUG", "warn");
	accepts("NCCL_P2P_LEVEL", "NVL");
	accepts("NCCL_P2P_LEVEL", "2");
	accepts("NCCL_NTHREADS", "256");
	accepts("NCCL_IB_HCA", "mlx5_0");
	accepts("NCCL_IB_HCA", "mlx5_0:1,mlx5_1:1");
	accepts("NCCL_IB_HCA", "^mlx5_3");
	accepts("NCCL_IB_HCA", "=mlx5_0");
	accepts("NCCL_IB_HCA", "^=mlx5_0:1,mlx5_bond_0");
	accepts("NCCL_SOCKET_IFNAME", "=eth0,eth1");
	accepts("NCCL_SOCKET_IFNAME", "^docker,lo");
	accepts("NCCL_ALGO", "allreduce:tree;^ring");

	/* unknown names and typos */
	ok(!rdzv_nccl_var_find("NCCL_IB_HCAS"), "NCCL_IB_HCAS is not a known variable");
	ok(!rdzv_nccl_var_find("nccl_ib_hca"), "lookups are case-sensitive");
	ok(!rdzv_nccl_var_find(NULL), "NULL is not a known variable");
	near = rdzv_nccl_var_nearest("NCCL_IB_HCAS");
	is_str(near, "NCCL_IB_HCA", "NCCL_IB_HCAS -> did you mean NCCL_IB_HCA");
	near = rdzv_nccl_var_nearest("NCCL_BUFSIZE");
	is_str(near, "NCCL_BUFFSIZE", "NCCL_BUFSIZE -> NCCL_BUFFSIZE");
	near = rdzv_nccl_var_nearest("NCCL_SOCKET_IFANME");
	is_str(near, "NCCL_SOCKET_IFNAME", "a transposition counts as one edit");
	near = rdzv_nccl_var_nearest("nccl_ib_gid_index");
	is_str(near, "NCCL_IB_GID_INDEX", "suggestions ignore case");
	ok(rdzv_nccl_var_nearest("NCCL_COMPLETELY_DIFFERENT_THING") == NULL,
	   "no suggestion when nothing is close");
	ok(rdzv_nccl_var_nearest("NCCL_") == NULL || 1, "a bare prefix does not crash");
	is_int(rdzv_edit_distance("kitten", "sitting", 5), 3, "edit distance kitten/sitting is 3");
	is_int(rdzv_edit_distance("abc", "abcdefgh", 2), 3, "edit distance is capped at cap+1");

	/* the table itself */
	vars = rdzv_nccl_vars(&n);
	for (i = 1; i < n; i++)
		if (strcmp(vars[i - 1].name, vars[i].name) >= 0) {
			sorted = 0;
			diag("out of order: %s, %s", vars[i - 1].name, vars[i].name);
		}
	ok(sorted, "the table is sorted and has no duplicates (%zu variables)", n);
	for (i = 0; i < n; i++)
		if (strncmp(vars[i].name, "NCCL_", 5) != 0
		    || (vars[i].type == RDZV_NV_ENUM && !vars[i].choices)
		    || (vars[i].type == RDZV_NV_INT && vars[i].min > vars[i].max))
			typed = 0;
	ok(typed, "every entry is NCCL_*, every enum has choices, every range is sane");
	ok(rdzv_nccl_var_find("NCCL_IB_HCA") && rdzv_nccl_var_find("NCCL_IB_HCA")->type
	   == RDZV_NV_HCA_LIST, "NCCL_IB_HCA is an HCA list");
	ok(rdzv_nccl_var_find("NCCL_BUFFSIZE")->flags & RDZV_NV_DEBUG,
	   "NCCL_BUFFSIZE is debug-only (NCCL's Debugging section)");
	ok(rdzv_nccl_var_find("NCCL_IB_DISABLE")->flags & RDZV_NV_DEBUG,
	   "NCCL_IB_DISABLE is debug-only");
	ok(!(rdzv_nccl_var_find("NCCL_IB_GID_INDEX")->flags & RDZV_NV_DEBUG),
	   "NCCL_IB_GID_INDEX is system configuration");
	ok(!(rdzv_nccl_var_find("NCCL_DEBUG")->flags & RDZV_NV_DEBUG),
	   "NCCL_DEBUG is system configuration");
	ok(rdzv_nccl_var_find("NCCL_IB_GDR_LEVEL")->flags & RDZV_NV_DEPRECATED,
	   "NCCL_IB_GDR_LEVEL is deprecated");
	test_families();
	return done_testing();
}

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
	return done_testing();
}

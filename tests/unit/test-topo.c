/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-topo: the binding logic on real topologies (tests/topo/fixtures or
 * $RDZV_TOPOLOGIES): bad input refused first, then the cases naive rules
 * get wrong, each answer derived from the XML tree (see the comments and
 * the goldens in tests/topo for the full tables), then --rdzv-bind values, the
 * variables a row adds, and the CPU binding applied in this process. */
#define _GNU_SOURCE
#include "config.h"

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bindmode.h"
#include "envset.h"
#include "tap.h"
#include "topo.h"

static char dir[4096];

static struct rdzv_topo *load(const char *file)
{
	char path[8192], err[512] = "";
	struct rdzv_topo *t = NULL;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (rdzv_topo_load(path, &t, err, sizeof(err)) < 0)
		diag("load %s: %s", file, err);
	return t;
}

static struct rdzv_bind_table *table(const struct rdzv_topo *t, const char *gpus,
                                     const char *visible, unsigned ntasks, const char *allow,
                                     const char *cpus)
{
	struct rdzv_bind_req req = { gpus, visible, ntasks, allow, cpus, NULL, 0 };
	struct rdzv_bind_table *tab = NULL;
	char err[512] = "";

	if (!t || rdzv_bind_compute(t, &req, &tab, err, sizeof(err)) < 0)
		diag("compute %s: %s", gpus ? gpus : "-", err);
	return tab;
}

static void refused(const struct rdzv_topo *t, const char *gpus, const char *visible,
                    const char *allow, const char *cpus, const char *why_part)
{
	struct rdzv_bind_req req = { gpus, visible, 2, allow, cpus, NULL, 0 };
	struct rdzv_bind_table *tab = (struct rdzv_bind_table *)1;
	char err[512] = "";

	ok(rdzv_bind_compute(t, &req, &tab, err, sizeof(err)) < 0 && !tab && strstr(err, why_part),
	   "gpus '%s' visible '%s' allow '%s' cpus '%s' refused (%s)", gpus ? gpus : "-",
	   visible ? visible : "-", allow ? allow : "-", cpus ? cpus : "-", err);
}

static const char *row_ucx(const struct rdzv_bind_table *tab, size_t i)
{
	return tab && i < tab->nrows ? tab->rows[i].ucx : "(no table)";
}

static void test_load_errors(void)
{
	struct rdzv_topo *t = (struct rdzv_topo *)1;
	char err[512] = "";

	ok(rdzv_topo_load("/nonexistent/topo.xml", &t, err, sizeof(err)) < 0 && !t
	   && strstr(err, "/nonexistent/topo.xml"), "a missing XML file is refused, named (%s)", err);
	rdzv_topo_destroy(NULL);
	rdzv_bind_table_destroy(NULL);
	ok(1, "destroy functions accept NULL");
}

static void test_bad_requests(void)
{
	struct rdzv_topo *t = load("psmgmt__tests__hwloc__topo.jwb0004.xml");

	if (!t) {
		ok(0, "jwb0004 loads");
		return;
	}
	refused(t, "0,4", NULL, NULL, NULL, "GPU 4 is not in the topology");
	refused(t, "0,0", NULL, NULL, NULL, "listed twice");
	refused(t, "0,,1", NULL, NULL, NULL, "empty");
	refused(t, "0-3", NULL, NULL, NULL, "not a GPU index");
	refused(t, NULL, "GPU-5e7f", NULL, NULL, "a UUID can be placed only through it");
	refused(t, "0,1", "0", NULL, NULL, "different numbers of GPUs");
	refused(t, "0", NULL, "mlx5_0:", NULL, "bad port");
	refused(t, "0", NULL, NULL, "zero", "bad CPU list");
	rdzv_topo_destroy(t);
}

/* p4d: no PCIe switch is visible in the VM; each host bridge holds two
 * GPUs and one EFA (lstopo: HostBridge > PCI 10:1b.0 rdmap16s27, 10:1c.0,
 * 10:1d.0 ...). The NVSwitch functions (class 0680) are not GPUs. */
static void test_p4d_host_bridge_pairing(void)
{
	struct rdzv_topo *t = load("aws-ofi-nccl__tests__unit__fixtures__topology__p4d__topology.xml");
	struct rdzv_bind_table *tab = table(t, "0,1,2,3,4,5,6,7", NULL, 8, NULL, NULL);

	is_int(t ? rdzv_topo_gpu_count(t) : 0, 8, "p4d: 8 CUDA GPUs, NVSwitches not counted");
	is_str(row_ucx(tab, 0), "rdmap16s27:1", "p4d: GPU 0 uses the EFA of its host bridge");
	is_str(row_ucx(tab, 1), "rdmap16s27:1", "p4d: GPU 1 shares it");
	is_str(row_ucx(tab, 7), "rdmap160s27:1", "p4d: GPU 7 uses a0:1b.0");
	ok(tab && tab->rows[0].near == RDZV_NEAR_HOSTBRIDGE, "p4d: the level is hostbridge");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
}

/* p5en: GPUs 59:00.0 and 5a:00.0 share a switch with four EFAs
 * (55-58:00.0 = rdmap85s0..88s0): two each, in PCI order. */
static void test_p5en_four_way_tie(void)
{
	struct rdzv_topo *t = load("aws-ofi-nccl__tests__unit__fixtures__topology__p5en__topology.xml");
	struct rdzv_bind_table *tab = table(t, "0,1", NULL, 2, NULL, NULL);

	is_str(row_ucx(tab, 0), "rdmap85s0:1,rdmap86s0:1", "p5en: GPU 0 takes the first half of the tie");
	is_str(row_ucx(tab, 1), "rdmap87s0:1,rdmap88s0:1", "p5en: GPU 1 the second half");
	is_str(tab ? tab->nccl_ib_hca : "", "=rdmap85s0:1,rdmap86s0:1,rdmap87s0:1,rdmap88s0:1",
	       "p5en: NCCL_IB_HCA is the union, exact-match syntax");
	rdzv_bind_table_destroy(tab);
	/* GPU 1 alone: the whole tie is its own. */
	tab = table(t, "1", "0", 1, NULL, NULL);
	is_str(row_ucx(tab, 0), "rdmap85s0:1,rdmap86s0:1,rdmap87s0:1,rdmap88s0:1",
	       "p5en: a GPU alone in the step takes its whole tied set");
	is_str(tab ? tab->rows[0].visible : "", "0", "p5en: its CUDA_VISIBLE_DEVICES entry is Slurm's");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
}

/* jwb0001 and jwb0004: same PCI tree, mlx5_N names permuted. GPU 03:00.0
 * shares its switch with 04:00.0, which is mlx5_1 on jwb0001 and mlx5_0 on
 * jwb0004; GPU 44:00.0 with 43:00.0 (mlx5_0 / mlx5_1). */
static void test_jwb_permuted_names(void)
{
	struct rdzv_topo *a = load("psmgmt__tests__hwloc__topo.jwb0001.xml");
	struct rdzv_topo *b = load("psmgmt__tests__hwloc__topo.jwb0004.xml");
	struct rdzv_bind_table *ta = table(a, "0,1,2,3", NULL, 4, NULL, NULL);
	struct rdzv_bind_table *tb = table(b, "0,1,2,3", NULL, 4, NULL, NULL);

	is_int(a ? rdzv_topo_gpu_count(a) : 0, 4, "jwb0001: the BMC VGA (ASPEED, DRM card0) is no GPU");
	is_str(row_ucx(ta, 0), "mlx5_1:1", "jwb0001: GPU 0 gets mlx5_1 (04:00.0, its switch)");
	is_str(row_ucx(tb, 0), "mlx5_0:1", "jwb0004: GPU 0 gets mlx5_0 (04:00.0, its switch)");
	is_str(row_ucx(ta, 1), "mlx5_0:1", "jwb0001: GPU 1 gets mlx5_0 (43:00.0)");
	is_str(row_ucx(tb, 1), "mlx5_1:1", "jwb0004: GPU 1 gets mlx5_1 (43:00.0)");
	rdzv_bind_table_destroy(ta);
	rdzv_bind_table_destroy(tb);
	rdzv_topo_destroy(a);
	rdzv_topo_destroy(b);
}

/* ipa20: only mlx5_0 (4d:00.0) is ACTIVE; mlx5_1..3 are DOWN. mel2001:
 * mlx5_0 (43:00.0) DOWN, mlx5_1 (83:00.0) ACTIVE. */
static void test_down_ports(void)
{
	struct rdzv_topo *t = load("flux-core__t__hwloc-data__ipa20.xml");
	struct rdzv_bind_table *tab = table(t, "0,1,2,3", NULL, 4, NULL, NULL);
	size_t i;

	is_str(tab ? tab->nccl_ib_hca : "", "=mlx5_0:1", "ipa20: NCCL_IB_HCA leaves the DOWN ports out");
	for (i = 0; i < 4; i++)
		is_str(row_ucx(tab, i), "mlx5_0:1", "ipa20: every GPU falls back to the live mlx5_0");
	ok(tab && tab->rows[0].near == RDZV_NEAR_SWITCH && tab->rows[1].near == RDZV_NEAR_PACKAGE
	   && tab->rows[2].near == RDZV_NEAR_SYSTEM, "ipa20: switch, package, system");
	rdzv_bind_table_destroy(tab);
	/* An allow-list that excludes the only live port leaves no NIC: no error. */
	tab = table(t, "0,1,2,3", NULL, 4, "^=mlx5_0", NULL);
	ok(tab && !tab->nccl_ib_hca[0] && !tab->rows[0].ucx[0],
	   "ipa20: allow-list without live ports: NCCL_IB_HCA and UCX unset, no error");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);

	t = load("psmgmt__tests__hwloc__topo.mel2001.xml");
	tab = table(t, "0,1,2,3", NULL, 4, NULL, NULL);
	is_str(tab ? tab->nccl_ib_hca : "", "=mlx5_1:1", "mel2001: only the ACTIVE mlx5_1");
	is_str(row_ucx(tab, 1), "mlx5_1:1", "mel2001: GPU 1 skips the DOWN mlx5_0 on its own switch");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
}

/* chimera: no OpenFabrics device; NVIDIA 08:00.0 is a GPU, AMD 44:00.0
 * is not. g4dnmetal: the only EFA is on package 1. */
static void test_no_nic_and_other_socket(void)
{
	struct rdzv_topo *t = load("flux-sched__t__data__hwloc-data__001N__multi_gpu_types__chimera.xml");
	struct rdzv_bind_table *tab = table(t, "0", NULL, 1, NULL, NULL);

	is_int(t ? rdzv_topo_gpu_count(t) : 0, 1, "chimera: the AMD GPU is not a CUDA GPU");
	is_int(t ? rdzv_topo_nic_count(t) : 1, 0, "chimera: no RDMA NIC");
	ok(tab && !tab->nccl_ib_hca[0] && !tab->rows[0].ucx[0] && tab->rows[0].gpu == 0,
	   "chimera: a GPU without NIC is no error, NIC variables unset");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);

	t = load("mpibind__topo-xml__g4dnmetal.xml");
	tab = table(t, "0,1", NULL, 2, NULL, NULL);
	is_str(row_ucx(tab, 0), "rdmap197s0:1", "g4dnmetal: a package-0 GPU still gets the package-1 EFA");
	ok(tab && tab->rows[0].near == RDZV_NEAR_SYSTEM, "g4dnmetal: at system level");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);

	t = load("mpibind__topo-xml__eas-tioga.xml");
	tab = table(t, "0,1", "0,1", 2, NULL, NULL);
	ok(tab && tab->ngpus == 0 && tab->rows[0].gpu < 0 && !tab->rows[0].mask,
	   "tioga: AMD GPUs exported by Slurm, the plugin (amd 0): nothing to bind, no error");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
}

/* Lassen: 2 GPUs and 2 NICs per socket on different host bridges: a NUMA
 * tie, split in PCI order. CPUs: 20 allowed SMT4 cores per socket (PUs
 * 0-7 and 88-95 disallowed by the cgroup in the file). */
static void test_lassen_numa_tie_and_cpus(void)
{
	struct rdzv_topo *t = load("mpibind__topo-xml__coral-lassen.xml");
	struct rdzv_bind_table *tab = table(t, "0,1,2,3", NULL, 4, NULL, NULL);

	is_str(row_ucx(tab, 0), "mlx5_0:1", "lassen: GPU 0 takes mlx5_0");
	is_str(row_ucx(tab, 1), "mlx5_1:1", "lassen: GPU 1 takes mlx5_1");
	is_str(tab ? tab->rows[0].cpus : "", "8-47", "lassen: task 0 gets 10 allowed cores of socket 0");
	is_str(tab ? tab->rows[3].cpus : "", "136-175", "lassen: task 3 the last 10 of socket 8");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
}

/* More tasks than GPUs: round-robin, with a note. */
static void test_oversubscription(void)
{
	struct rdzv_topo *t = load("psmgmt__tests__hwloc__topo.jwc09n003.xml");
	struct rdzv_bind_table *tab = table(t, "0,1", NULL, 4, NULL, NULL);

	ok(tab && tab->rows[2].gpu == 0 && tab->rows[3].gpu == 1 && tab->rows[3].ordinal == 1,
	   "4 tasks on 2 GPUs: task i on GPU i mod 2");
	ok(tab && strstr(tab->note, "4 tasks share 2 GPUs"), "and a note says so (%s)",
	   tab ? tab->note : "");
	ok(tab && strcmp(tab->rows[0].cpus, tab->rows[2].cpus) != 0,
	   "tasks sharing a GPU get distinct cores (%s, %s)", tab ? tab->rows[0].cpus : "",
	   tab ? tab->rows[2].cpus : "");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
}

/* Fewer tasks than GPUs: contiguous blocks, so one launcher per node
 * (torchrun) is not confined to GPU 0's NIC and cores (p4d: GPUs 0-3 on
 * package 0 = PUs 0-23,48-71, GPUs 4-7 on package 1). */
static void test_blocks(void)
{
	struct rdzv_topo *t = load("aws-ofi-nccl__tests__unit__fixtures__topology__p4d__topology.xml");
	struct rdzv_bind_table *tab = table(t, "0,1,2,3,4,5,6,7", NULL, 1, NULL, NULL);

	ok(tab && tab->rows[0].ngpus == 8 && strcmp(tab->rows[0].visible, "0,1,2,3,4,5,6,7") == 0
	   && strcmp(tab->rows[0].cpus, "0-95") == 0,
	   "one task on 8 GPUs owns them all, and all their CPUs (%s)", tab ? tab->rows[0].cpus : "");
	is_str(row_ucx(tab, 0), "rdmap16s27:1,rdmap32s27:1,rdmap144s27:1,rdmap160s27:1",
	       "... and all their NICs");
	rdzv_bind_table_destroy(tab);
	tab = table(t, "0,1,2,3,4,5,6,7", NULL, 2, NULL, NULL);
	ok(tab && tab->rows[1].gpu == 4 && tab->rows[1].ordinal == 4
	   && strcmp(tab->rows[1].cpus, "24-47,72-95") == 0,
	   "2 tasks on 8 GPUs: task 1 owns GPUs 4-7 and package 1 (%s)", tab ? tab->rows[1].cpus : "");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
}

static void mode_refused(const char *s, const char *why_part)
{
	unsigned f = 99;
	char err[512] = "";

	ok(rdzv_bind_mode_parse(s, &f, err, sizeof(err)) < 0 && f == 99 && strstr(err, why_part)
	   && strstr(err, "auto, gpu, nic, cpu"), "--rdzv-bind='%s' refused with the valid values (%s)",
	   s ? s : "(null)", err);
}

static void test_modes(void)
{
	unsigned f = 99;

	mode_refused(NULL, "empty");
	mode_refused("", "empty");
	mode_refused("bogus", "'bogus'");
	mode_refused("auto,", "''");
	mode_refused("none,verbose", "none cannot be combined");
	mode_refused("Auto", "'Auto'");
	ok(rdzv_bind_mode_parse("none", &f, NULL, 0) == 0 && f == 0, "none is 0");
	ok(rdzv_bind_mode_parse("auto", &f, NULL, 0) == 0 && f == RDZV_BIND_AUTO, "auto = gpu,nic,cpu");
	ok(rdzv_bind_mode_parse("nic", &f, NULL, 0) == 0 && f == RDZV_BIND_NIC, "nic alone");
	ok(rdzv_bind_mode_parse("isolate", &f, NULL, 0) == 0
	   && f == (RDZV_BIND_AUTO | RDZV_BIND_ISOLATE), "isolate alone = auto,isolate");
	ok(rdzv_bind_mode_parse("gpu,cpu,dry-run", &f, NULL, 0) == 0
	   && f == (RDZV_BIND_GPU | RDZV_BIND_CPU | RDZV_BIND_DRYRUN), "words combine");
	ok(rdzv_bind_mode_parse("verbose", &f, NULL, 0) == 0
	   && f == (RDZV_BIND_AUTO | RDZV_BIND_VERBOSE), "verbose alone = auto,verbose");
}

static const char *val(const struct rdzv_envset *env, const char *name)
{
	const struct rdzv_env_entry *e = rdzv_envset_find(env, name);

	return e ? (e->value ? e->value : "(unset)") : "(absent)";
}

static void test_fill(void)
{
	struct rdzv_topo *t = load("psmgmt__tests__hwloc__topo.jwb0004.xml");
	struct rdzv_bind_table *tab = table(t, "2,3", "0,1", 2, NULL, NULL);
	struct rdzv_envset *env = rdzv_envset_create();
	const struct rdzv_env_entry *e;
	int iso = -1;
	char err[256];

	if (!tab || !env) {
		ok(0, "fill: table and envset");
		goto out;
	}
	ok(rdzv_bind_fill(tab, 1, RDZV_BIND_AUTO, "0,1", "0,1", env, &iso, err, sizeof(err)) == 0,
	   "fill task 1 (auto)");
	is_str(val(env, "CUDA_DEVICE_ORDER"), "PCI_BUS_ID", "auto sets CUDA_DEVICE_ORDER");
	e = rdzv_envset_find(env, "CUDA_DEVICE_ORDER");
	ok(e && e->policy == RDZV_SET_DEFAULT, "... as a default: a user's value wins");
	is_str(val(env, "CUDA_VISIBLE_DEVICES"), "(absent)",
	       "auto keeps all the step's GPUs visible (cuda:LOCAL_RANK is the task's GPU)");
	is_str(val(env, "NCCL_IB_HCA"), "=mlx5_2:1,mlx5_3:1", "the node's NCCL_IB_HCA");
	is_str(val(env, "UCX_NET_DEVICES"), "mlx5_3:1", "task 1's UCX_NET_DEVICES");
	ok(iso == 0, "auto does not isolate");
	rdzv_envset_destroy(env);

	env = rdzv_envset_create();
	ok(env && rdzv_bind_fill(tab, 1, RDZV_BIND_AUTO | RDZV_BIND_ISOLATE, "0,1", "0,1", env, &iso,
	                         err, sizeof(err)) == 0 && iso == 1, "isolate with Slurm's step value");
	is_str(val(env, "CUDA_VISIBLE_DEVICES"), "1", "isolate: only the task's GPU, Slurm's numbering");
	e = rdzv_envset_find(env, "CUDA_VISIBLE_DEVICES");
	ok(e && e->policy == RDZV_SET_ENFORCE, "... enforced over Slurm's step-wide value");
	rdzv_envset_destroy(env);

	env = rdzv_envset_create();
	ok(env && rdzv_bind_fill(tab, 1, RDZV_BIND_AUTO | RDZV_BIND_ISOLATE, "1", "0,1", env, &iso,
	                         err, sizeof(err)) == 0 && iso == 0
	   && !rdzv_envset_find(env, "CUDA_VISIBLE_DEVICES"),
	   "isolate leaves a value Slurm's --gpu-bind already narrowed");
	rdzv_envset_destroy(env);

	env = rdzv_envset_create();
	ok(env && rdzv_bind_fill(tab, 0, RDZV_BIND_NIC, "0,1", "0,1", env, &iso, err, sizeof(err)) == 0
	   && !rdzv_envset_find(env, "CUDA_DEVICE_ORDER") && rdzv_envset_find(env, "NCCL_IB_HCA"),
	   "nic alone sets only NIC variables");
	rdzv_envset_destroy(env);

	env = rdzv_envset_create();
	ok(env && rdzv_bind_fill(tab, 0, RDZV_BIND_AUTO | RDZV_BIND_DRYRUN, "0,1", "0,1", env, &iso,
	                         err, sizeof(err)) == 0 && env->n == 0, "dry-run sets nothing");
	ok(rdzv_bind_fill(tab, 2, RDZV_BIND_AUTO, NULL, NULL, env, &iso, err, sizeof(err)) < 0
	   && strstr(err, "task 2"), "a task beyond the table is refused (%s)", err);
out:
	rdzv_envset_destroy(env);
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
}

/* Binding this very process. The step is this process's affinity; the
 * p4d topology's GPU 0 is local to PUs 0-23,48-71, GPU 4 to 24-47,72-95. */
static void test_apply_cpus(void)
{
	struct rdzv_topo *t = load("aws-ofi-nccl__tests__unit__fixtures__topology__p4d__topology.xml");
	struct rdzv_bind_table *tab = NULL;
	enum rdzv_cpu_outcome oc;
	char step[1024], err[256];
	cpu_set_t saved, one, now;

	if (!t || sched_getaffinity(0, sizeof(saved), &saved) < 0
	    || rdzv_affinity_cpulist(step, sizeof(step), err, sizeof(err)) < 0
	    || !CPU_ISSET(0, &saved) || CPU_COUNT(&saved) < 2) {
		ok(1, "# SKIP apply: needs CPU 0 and another CPU in this process's affinity");
		rdzv_topo_destroy(t);
		return;
	}
	tab = table(t, "0,4", NULL, 2, NULL, step);
	ok(tab && rdzv_bind_apply_cpus(tab, 0, 1, &oc, err, sizeof(err)) == 0 && oc == RDZV_CPU_BOUND,
	   "an unbound task is bound (dry run decides only)");
	ok(tab && rdzv_bind_apply_cpus(tab, 0, 0, &oc, err, sizeof(err)) == 0 && oc == RDZV_CPU_BOUND
	   && sched_getaffinity(0, sizeof(now), &now) == 0 && CPU_COUNT(&now) >= 1,
	   "... and really bound (%s)", tab ? tab->rows[0].cpus : "");
	sched_setaffinity(0, sizeof(saved), &saved);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);
	ok(tab && rdzv_bind_apply_cpus(tab, 0, 0, &oc, err, sizeof(err)) == 0 && oc == RDZV_CPU_KEPT
	   && sched_getaffinity(0, sizeof(now), &now) == 0 && CPU_EQUAL(&now, &one),
	   "a task Slurm already bound (narrower than the step) is kept");
	if (step[0] == '0' && tab && tab->rows[1].cpus_far)
		ok(rdzv_bind_apply_cpus(tab, 1, 0, &oc, err, sizeof(err)) == 0 && oc == RDZV_CPU_KEPT_FAR,
		   "kept but far: none of its CPUs is local to GPU 4");
	sched_setaffinity(0, sizeof(saved), &saved);
	ok(tab && rdzv_bind_apply_cpus(tab, 5, 0, &oc, err, sizeof(err)) < 0, "no row 5: refused");
	rdzv_bind_table_destroy(tab);
	tab = table(t, NULL, NULL, 1, NULL, step);
	ok(tab && rdzv_bind_apply_cpus(tab, 0, 0, &oc, err, sizeof(err)) == 0
	   && oc == RDZV_CPU_NOTHING, "a task without GPU is left alone");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
}

/* A task Slurm gave its own CUDA_VISIBLE_DEVICES binds by it (p4d: GPUs
 * 0,1 -> rdmap16s27, 2,3 -> rdmap32s27, 4,5 -> rdmap144s27, 6,7 ->
 * rdmap160s27, tests/topo/p4d-all.out's header). */
static void test_task_rows(void)
{
	struct rdzv_topo *t = load("aws-ofi-nccl__tests__unit__fixtures__topology__p4d__topology.xml");
	struct rdzv_bind_table *tab = table(t, "0,2,4,6", NULL, 4, NULL, NULL);
	const struct rdzv_bind_row *r;
	enum rdzv_task_row how;
	char why[512];

	r = tab ? rdzv_bind_task_row(tab, 1, NULL, NULL, 0, &how, why, sizeof(why)) : NULL;
	ok(r == &tab->rows[1] && how == RDZV_ROW_RANK, "no list of its own: the local-rank row");
	r = tab ? rdzv_bind_task_row(tab, 1, "0,2,4,6", NULL, 0, &how, why, sizeof(why)) : NULL;
	ok(r == &tab->rows[1] && how == RDZV_ROW_RANK, "the step's list: the local-rank row");
	r = tab ? rdzv_bind_task_row(tab, 0, "6", NULL, 0, &how, why, sizeof(why)) : NULL;
	ok(r && how == RDZV_ROW_OWN && r->gpu == 6 && strcmp(r->ucx, "rdmap160s27:1") == 0,
	   "task 0 with its own list '6' (map_gpu) gets GPU 6's NIC (%s)", r ? r->ucx : "none");
	ok(r && strcmp(r->cpus, tab->rows[3].cpus) == 0, "... and the cores local rank 3 would have");
	r = tab ? rdzv_bind_task_row(tab, 0, "4,6", NULL, 0, &how, why, sizeof(why)) : NULL;
	ok(r && r->gpu == 4 && strstr(why, "2 GPUs are no row"),
	   "two GPUs no row has: the first one's own row, said (%s)", why);
	r = tab ? rdzv_bind_task_row(tab, 2, "7", NULL, 0, &how, why, sizeof(why)) : NULL;
	ok(!r && how == RDZV_ROW_SKIP && strstr(why, "'7' is not one of the step's GPUs"),
	   "a GPU outside the step: no binding for the task, and why (%s)", why);
	r = tab ? rdzv_bind_task_row(tab, 2, "GPU-0000", NULL, 0, &how, why, sizeof(why)) : NULL;
	ok(!r && how == RDZV_ROW_SKIP && strstr(why, "UUID"), "an unknown UUID: skipped (%s)", why);
	r = tab ? rdzv_bind_task_row(tab, 2, "6,,", NULL, 0, &how, why, sizeof(why)) : NULL;
	ok(!r && how == RDZV_ROW_SKIP, "a malformed list: skipped (%s)", why);
	rdzv_bind_table_destroy(tab);

	/* ConstrainDevices: the step's list renumbered 0..n-1. */
	tab = table(t, "2,3", "0,1", 2, NULL, NULL);
	r = tab ? rdzv_bind_task_row(tab, 0, "1", NULL, 0, &how, why, sizeof(why)) : NULL;
	ok(r && how == RDZV_ROW_OWN && r->gpu == 3, "renumbered (23.02+): '1' is the step's second GPU");
	r = tab ? rdzv_bind_task_row(tab, 1, "0", NULL, 1, &how, why, sizeof(why)) : NULL;
	ok(r == &tab->rows[1] && how == RDZV_ROW_RANK_NOTE && strstr(why, "numbered from 0"),
	   "renumbered per task (22.05): the local-rank row, and why");
	rdzv_bind_table_destroy(tab);

	/* Fewer tasks than GPUs: blocks; a task whose own list is a block. */
	tab = table(t, "0,1,2,3", NULL, 2, NULL, NULL);
	r = tab ? rdzv_bind_task_row(tab, 0, "2,3", NULL, 0, &how, why, sizeof(why)) : NULL;
	ok(r == &tab->rows[1], "task 0 given GPUs 2,3 takes the block row of GPUs 2,3");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
}

int main(void)
{
	const char *env = getenv("RDZV_TOPOLOGIES"), *top = getenv("top_srcdir");
	struct stat st;

	if (env && *env)
		snprintf(dir, sizeof(dir), "%s", env);
	else
		snprintf(dir, sizeof(dir), "%s/tests/topo/fixtures", top ? top : "..");
	test_load_errors();
	test_modes();
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		/* They belong to the repository: missing is a failure, not a skip. */
		ok(0, "topology fixtures at %s (tests/topo/fixtures)", dir);
		return done_testing();
	}
	test_bad_requests();
	test_p4d_host_bridge_pairing();
	test_p5en_four_way_tie();
	test_jwb_permuted_names();
	test_down_ports();
	test_no_nic_and_other_socket();
	test_lassen_numa_tie_and_cpus();
	test_oversubscription();
	test_blocks();
	test_task_rows();
	test_fill();
	test_apply_cpus();
	return done_testing();
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/bind/: the node's topology, each task's GPU, NICs and cores, the node
 * check and its GPU gate. Uses lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* topo.c: load the topology and list the node's GPUs (NVIDIA's CUDA GPUs,
 * else AMD's) and RDMA NIC ports (and Slingshot interfaces), each by PCI
 * bus id (names such as mlx5_N differ between nodes of one model: JUWELS
 * Booster jwb0001 vs jwb0004). */
#include "config.h"
#include "topo-priv.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCI_VENDOR_NVIDIA 0x10de
#define PCI_VENDOR_AMAZON 0x1d0f
#define PCI_VENDOR_AMD 0x1002
#define PCI_VENDOR_HPE_CRAY 0x17db
#define PCI_DEVICE_CASSINI 0x0501
#define PCI_CLASS_DISPLAY_OTHER 0x0380
#define PCI_CLASS_ACCELERATOR 0x1200
#define PCI_CLASS_VGA 0x0300
#define PCI_CLASS_3D 0x0302
#define PCI_CLASS_ETHERNET 0x0200
#define PCI_CLASS_INFINIBAND 0x0207
#define IB_PORT_ACTIVE 4
#define PORTS_MAX 8

/* Probes that initialise GPU drivers or talk to a display server: the cuda
 * and nvml components create driver state inside slurmstepd, gl opens X
 * displays and can block; the GPUs are found by their PCI ids anyway. */
static const char *const skipped_components[] = {
	"gl", "opencl", "cuda", "nvml", "rsmi", "levelzero",
};

const char *rdzv_near_name(enum rdzv_near n)
{
	switch (n) {
	case RDZV_NEAR_SWITCH:
		return "switch";
	case RDZV_NEAR_HOSTBRIDGE:
		return "hostbridge";
	case RDZV_NEAR_C2C:
		return "c2c";
	case RDZV_NEAR_NUMA:
		return "numa";
	case RDZV_NEAR_PACKAGE:
		return "package";
	case RDZV_NEAR_SYSTEM:
		return "system";
	}
	return "?";
}

const char *rdzv_fabric_name(enum rdzv_fabric f)
{
	switch (f) {
	case RDZV_FABRIC_IB:
		return "infiniband";
	case RDZV_FABRIC_EFA:
		return "efa";
	case RDZV_FABRIC_ETH:
		return "ethernet";
	case RDZV_FABRIC_OTHER:
		return "other";
	case RDZV_FABRIC_SLINGSHOT:
		return "slingshot";
	}
	return "?";
}

static void format_busid(hwloc_obj_t pci, char *buf, size_t len)
{
	snprintf(buf, len, "%04x:%02x:%02x.%x", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
	         pci->attr->pcidev.dev, pci->attr->pcidev.func);
}

static int cmp_pci(hwloc_obj_t a, hwloc_obj_t b)
{
	const struct hwloc_pcidev_attr_s *x = &a->attr->pcidev, *y = &b->attr->pcidev;

	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	if (x->bus != y->bus)
		return x->bus < y->bus ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	return 0;
}

/* While loading: the hwloc objects behind the model's entries. */
struct found_nic {
	hwloc_obj_t pci, osdev;     /* osdev: NULL for a Slingshot NIC */
	const char *name;
	int port, state;
	int gpuless;   /* no CUDA GPU below its host bridge */
};

/* A logical GPU: a PCI function, and which of its partitions (MI300
 * TPX/CPX: several per function, in rsmi order). */
struct found_gpu {
	hwloc_obj_t pci;
	size_t sub;
};

static int cmp_gpu_obj(const void *a, const void *b)
{
	const struct found_gpu *x = a, *y = b;
	int c = cmp_pci(x->pci, y->pci);

	return c ? c : x->sub < y->sub ? -1 : x->sub > y->sub;
}

static int cmp_nic(const void *a, const void *b)
{
	const struct found_nic *x = a, *y = b;
	int c = cmp_pci(x->pci, y->pci);

	if (c)
		return c;
	if ((c = strcmp(x->name, y->name)))
		return c;
	return x->port - y->port;
}

static int is_cuda_gpu(hwloc_obj_t pci)
{
	return pci->attr->pcidev.vendor_id == PCI_VENDOR_NVIDIA
	       && (pci->attr->pcidev.class_id == PCI_CLASS_VGA
	           || pci->attr->pcidev.class_id == PCI_CLASS_3D);
}

/* Does a PCI function have an OS device whose name starts with prefix? */
static size_t osdevs_named(hwloc_obj_t pci, const char *prefix)
{
	hwloc_obj_t os;
	size_t n = 0;

	for (os = pci->io_first_child; os; os = os->next_sibling)
		n += os->type == HWLOC_OBJ_OS_DEVICE && os->name
		     && strncmp(os->name, prefix, strlen(prefix)) == 0;
	return n;
}

/* The logical AMD GPUs of a PCI function, 0 if it is none. Instinct GPUs
 * are vendor 1002 of class 0380 (MI50, MI100, MI250X GCDs) or 1200 (MI300A,
 * MI300X), with or without OS devices; a display-class (0300/0302) AMD
 * function (MI25, workstation GPUs) counts when ROCm SMI (rsmiN) or the DRM
 * render node (renderDN) shows it. One function shows several logical GPUs
 * in MI300's TPX/CPX partition modes, one rsmiN each (hwloc built with ROCm
 * SMI); without rsmi OS devices it is one GPU. */
static size_t amd_gpus_of(hwloc_obj_t pci)
{
	size_t rsmi;

	if (pci->attr->pcidev.vendor_id != PCI_VENDOR_AMD)
		return 0;
	rsmi = osdevs_named(pci, "rsmi");
	switch (pci->attr->pcidev.class_id) {
	case PCI_CLASS_DISPLAY_OTHER:
	case PCI_CLASS_ACCELERATOR:
		return rsmi ? rsmi : 1;
	case PCI_CLASS_VGA:
	case PCI_CLASS_3D:
		return rsmi ? rsmi : osdevs_named(pci, "renderD") ? 1 : 0;
	}
	return 0;
}

/* An HPE Slingshot NIC (Cassini): by its PCI ids, or by hwloc's marks
 * (subtype Slingshot on its interface from 2.9.1, cxiN OS devices from
 * 2.14). It has no OpenFabrics device; binding names its interface. */
static int is_slingshot(hwloc_obj_t pci)
{
	hwloc_obj_t os;

	if (pci->attr->pcidev.vendor_id == PCI_VENDOR_HPE_CRAY
	    && pci->attr->pcidev.device_id == PCI_DEVICE_CASSINI)
		return 1;
	for (os = pci->io_first_child; os; os = os->next_sibling)
		if (os->type == HWLOC_OBJ_OS_DEVICE
		    && ((os->subtype && strcmp(os->subtype, "Slingshot") == 0)
		        || (os->name && strncmp(os->name, "cxi", 3) == 0)))
			return 1;
	return 0;
}

/* The name binding gives a Slingshot NIC: its network interface (hsn0,
 * hsi0), else its cxi device; NULL when it has neither (not usable). */
static const char *slingshot_name(hwloc_obj_t pci)
{
	hwloc_obj_t os;
	const char *cxi = NULL;

	for (os = pci->io_first_child; os; os = os->next_sibling) {
		if (os->type != HWLOC_OBJ_OS_DEVICE || !os->name || strlen(os->name) >= RDZV_TOKEN_MAX)
			continue;
		if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK)
			return os->name;
		if (!cxi && strncmp(os->name, "cxi", 3) == 0)
			cxi = os->name;
	}
	return cxi;
}

/* The PCI function an OS device hangs from, or NULL. */
static hwloc_obj_t pci_parent(hwloc_obj_t os)
{
	hwloc_obj_t p = os->parent;

	return p && p->type == HWLOC_OBJ_PCI_DEVICE ? p : NULL;
}

/* Ports of an OpenFabrics device from its PortNState infos (hwloc's Linux
 * backend writes them from /sys/class/infiniband/DEV/ports/N/state). A
 * device without them is taken as one port, 1, state unknown. */
static size_t ports_of(hwloc_obj_t os, int *ports, int *states)
{
	size_t n = 0;
	int p;

	for (p = 1; p <= PORTS_MAX; p++) {
		char key[32];
		const char *v;

		snprintf(key, sizeof(key), "Port%dState", p);
		if ((v = hwloc_obj_get_info_by_name(os, key))) {
			ports[n] = p;
			states[n] = atoi(v);
			n++;
		}
	}
	if (n == 0) {
		ports[0] = 1;
		states[0] = -1;
		n = 1;
	}
	return n;
}

/* The network an RDMA function is on. EFA by its vendor (its class is
 * Ethernet, 0200, but it speaks only SRD to other EFAs); otherwise by PCI
 * class, which for Mellanox VPI cards follows the port's configured link
 * type: 0207 InfiniBand, 0200 Ethernet (RoCE; also iWARP, bnxt_re...). */
static enum rdzv_fabric fabric_of(hwloc_obj_t pci)
{
	if (is_slingshot(pci))
		return RDZV_FABRIC_SLINGSHOT;
	if (pci->attr->pcidev.vendor_id == PCI_VENDOR_AMAZON)
		return RDZV_FABRIC_EFA;
	switch (pci->attr->pcidev.class_id) {
	case PCI_CLASS_INFINIBAND:
		return RDZV_FABRIC_IB;
	case PCI_CLASS_ETHERNET:
		return RDZV_FABRIC_ETH;
	}
	return RDZV_FABRIC_OTHER;
}

static int is_rdma(hwloc_obj_t os)
{
	return os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && pci_parent(os) && os->name
	       && strlen(os->name) < RDZV_TOKEN_MAX && !is_slingshot(pci_parent(os));
}

static hwloc_obj_t package_of(hwloc_topology_t topo, hwloc_obj_t o)
{
	return o->type == HWLOC_OBJ_PACKAGE ? o
	                                     : hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, o);
}

/* hwloc_get_common_ancestor_obj() compares depths, which I/O objects do
 * not have in the usual sense (they all sit at special negative depths):
 * walk the parent chains instead. */
static hwloc_obj_t common_ancestor(hwloc_obj_t a, hwloc_obj_t b)
{
	hwloc_obj_t x, y;

	for (x = a; x; x = x->parent)
		for (y = b; y; y = y->parent)
			if (x == y)
				return x;
	return NULL;
}

/* The topmost host bridge above a PCI object, or NULL. */
static hwloc_obj_t host_bridge_of(hwloc_obj_t o)
{
	hwloc_obj_t hb = NULL;

	for (; o && hwloc_obj_type_is_io(o->type); o = o->parent)
		if (o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST)
			hb = o;
	return hb;
}

static int is_ancestor(hwloc_obj_t anc, hwloc_obj_t o)
{
	for (; o; o = o->parent)
		if (o == anc)
			return 1;
	return 0;
}

/* The CPUs of o's NUMA locality, or NULL (no node, or several: a package
 * of an SNC/NPS machine, the whole machine). hwloc gives a NUMA node the
 * cpuset of the object it hangs from, and o's nodeset also holds the nodes
 * hung from o's ancestors. So: the nodes of o's nodeset whose cpuset holds
 * no other's (the nearest to o) must all have one and the same cpuset.
 * Nodes with the same cpuset are memory of the same CPUs, and one hung
 * higher (a larger cpuset) is farther: a node without CPUs of its own (a
 * Grace GPU's HBM under hwloc 2.10+, subtype GPUMemory, beside its CPU's
 * node or under the machine; HBM, CXL) is no second locality. */
static hwloc_const_cpuset_t numa_cpus_of(hwloc_topology_t topo, hwloc_obj_t o)
{
	hwloc_const_cpuset_t one = NULL;
	hwloc_obj_t n, m;
	int i, k, nearest;

	if (!o->nodeset)
		return NULL;
	hwloc_bitmap_foreach_begin(i, o->nodeset) {
		if (!(n = hwloc_get_numanode_obj_by_os_index(topo, (unsigned)i)) || !n->cpuset)
			continue;
		nearest = 1;
		hwloc_bitmap_foreach_begin(k, o->nodeset) {
			m = hwloc_get_numanode_obj_by_os_index(topo, (unsigned)k);
			if (m && m->cpuset && hwloc_bitmap_isincluded(m->cpuset, n->cpuset)
			    && !hwloc_bitmap_isequal(m->cpuset, n->cpuset))
				nearest = 0;
		} hwloc_bitmap_foreach_end();
		if (!nearest)
			continue;
		if (one && !hwloc_bitmap_isequal(one, n->cpuset))
			return NULL;
		one = n->cpuset;
	} hwloc_bitmap_foreach_end();
	return one && !hwloc_bitmap_iszero(one) ? one : NULL;
}

/* Does the node's CPU reach its GPUs over NVLink-C2C (Grace)? hwloc shows
 * it in two ways: an Arm CPU (NVIDIA GPUs beside an Arm CPU are Grace
 * superchips: GH200, GB200, GB300), and, hwloc 2.10+ on bare metal, NUMA
 * nodes of subtype GPUMemory (the GPUs' HBM, coherent over C2C). */
static int c2c_node(hwloc_topology_t topo)
{
	const char *arch = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topo), "Architecture");
	hwloc_obj_t n = NULL;

	if (arch && (strcmp(arch, "aarch64") == 0 || strncmp(arch, "arm", 3) == 0))
		return 1;
	while ((n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n)))
		if (n->subtype && strcmp(n->subtype, "GPUMemory") == 0)
			return 1;
	return 0;
}

/* Nearness of GPU a to NIC function b. c2c: the node is an NVLink-C2C node
 * and b's host bridge holds no GPU. */
static enum rdzv_near near_of(hwloc_topology_t topo, hwloc_obj_t a, hwloc_obj_t b, int c2c)
{
	hwloc_obj_t common = common_ancestor(a, b);
	hwloc_obj_t la, lb, pa, pb;
	hwloc_const_cpuset_t na, nb;

	/* A PCI-PCI bridge above both is a switch (or a root port shared by
	 * both, which is as near); a host bridge alone is the next level
	 * (p4d's VMs show no switch, only GPU and EFA under one host bridge). */
	if (!common)
		return RDZV_NEAR_SYSTEM;
	if (common->type == HWLOC_OBJ_BRIDGE)
		return common->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI
		       ? RDZV_NEAR_SWITCH : RDZV_NEAR_HOSTBRIDGE;
	if (common->type == HWLOC_OBJ_PCI_DEVICE)
		return RDZV_NEAR_SWITCH;
	la = hwloc_get_non_io_ancestor_obj(topo, a);
	lb = hwloc_get_non_io_ancestor_obj(topo, b);
	/* hwloc attaches I/O to the object whose CPUs are the device's local
	 * CPUs. Both attached where one and the same NUMA locality is (the
	 * memory of the same CPUs): same NUMA. Attached higher (a package of
	 * an SNC/NPS machine, the whole machine), the topology does not say
	 * which node: not NUMA. On a C2C node, a NIC of the GPU's NUMA node or package on a
	 * host bridge without GPU is c2c: the GPU's traffic reaches it through
	 * the CPU, over NVLink-C2C, not over another GPU's PCIe links. */
	na = numa_cpus_of(topo, la);
	nb = numa_cpus_of(topo, lb);
	if (na && nb && hwloc_bitmap_isequal(na, nb))
		return c2c ? RDZV_NEAR_C2C : RDZV_NEAR_NUMA;
	pa = package_of(topo, la);
	pb = package_of(topo, lb);
	if (pa && pa == pb)
		return c2c ? RDZV_NEAR_C2C : RDZV_NEAR_PACKAGE;
	return RDZV_NEAR_SYSTEM;
}

/* The CPUs local to a device: its first non-I/O ancestor's, or the first
 * non-empty cpuset above it (never an empty set from an object of memory
 * only). */
static hwloc_const_cpuset_t local_cpus_of(hwloc_topology_t topo, hwloc_obj_t o)
{
	hwloc_obj_t l = hwloc_get_non_io_ancestor_obj(topo, o);

	while (l->parent && (!l->cpuset || hwloc_bitmap_iszero(l->cpuset)))
		l = l->parent;
	return l->cpuset;
}

static const char *gpu_model_of(hwloc_obj_t pci)
{
	hwloc_obj_t os;
	const char *model = NULL;

	for (os = pci->io_first_child; os && !model; os = os->next_sibling)
		if (os->type == HWLOC_OBJ_OS_DEVICE)
			model = hwloc_obj_get_info_by_name(os, "GPUModel");
	if (!model)
		model = hwloc_obj_get_info_by_name(pci, "PCIDevice");
	return model ? model : "";
}

struct rdzv_topo *rdzv_topo_alloc(size_t ngpus, size_t nnics, size_t ncores)
{
	struct rdzv_topo *t = calloc(1, sizeof(*t));
	size_t i;

	if (!t)
		return NULL;
	t->ngpus = ngpus;
	t->nnics = nnics;
	t->ncores = ncores;
	if ((ngpus && !(t->gpus = calloc(ngpus, sizeof(*t->gpus))))
	    || (nnics && !(t->nics = calloc(nnics, sizeof(*t->nics))))
	    || (ngpus && nnics && !(t->near = calloc(ngpus * nnics, 1)))
	    || (ncores && !(t->cores = calloc(ncores, sizeof(*t->cores))))
	    || !(t->allowed = hwloc_bitmap_alloc()))
		goto fail;
	for (i = 0; i < ngpus; i++)
		if (!(t->gpus[i].cpus = hwloc_bitmap_alloc()))
			goto fail;
	for (i = 0; i < ncores; i++)
		if (!(t->cores[i] = hwloc_bitmap_alloc()))
			goto fail;
	return t;
fail:
	rdzv_topo_destroy(t);
	return NULL;
}

/* Copy what binding needs out of the loaded hwloc tree. */
static int extract(hwloc_topology_t topo, struct rdzv_topo **out, char *err, size_t errlen)
{
	int ports[PORTS_MAX], states[PORTS_MAX];
	hwloc_obj_t o = NULL;
	struct found_gpu *gpus = NULL;
	struct found_nic *nics = NULL;
	struct rdzv_topo *t = NULL;
	size_t ng = 0, namd = 0, nn = 0, nc, i, j, k, npci = 0;
	int rv = -1, c2c = c2c_node(topo), amd;

	while ((o = hwloc_get_next_pcidev(topo, o))) {
		ng += is_cuda_gpu(o);
		namd += amd_gpus_of(o);
		nn += is_slingshot(o) && slingshot_name(o);
		npci++;
	}
	/* NVIDIA's GPUs where the node has any (a mixed workstation binds its
	 * CUDA GPUs, as before), else AMD's. */
	amd = ng == 0 && namd > 0;
	if (amd)
		ng = namd;
	while ((o = hwloc_get_next_osdev(topo, o)))
		if (is_rdma(o))
			nn += ports_of(o, ports, states);
	nc = (size_t)hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
	if ((ng && !(gpus = calloc(ng, sizeof(*gpus)))) || (nn && !(nics = calloc(nn, sizeof(*nics))))
	    || !(t = rdzv_topo_alloc(ng, nn, nc))) {
		rdzv_err(err, errlen, "out of memory");
		goto fail;
	}
	t->npci = npci;
	ng = nn = 0;
	while ((o = hwloc_get_next_pcidev(topo, o))) {
		size_t nsub = amd ? amd_gpus_of(o) : (size_t)is_cuda_gpu(o);

		for (k = 0; k < nsub; k++, ng++) {
			gpus[ng].pci = o;
			gpus[ng].sub = k;
		}
		if (is_slingshot(o) && slingshot_name(o)) {
			nics[nn].pci = o;
			nics[nn].name = slingshot_name(o);
			nics[nn].port = 1;
			nics[nn].state = -1;
			nn++;
		}
	}
	while ((o = hwloc_get_next_osdev(topo, o))) {
		size_t np;

		if (!is_rdma(o))
			continue;
		np = ports_of(o, ports, states);
		for (i = 0; i < np; i++, nn++) {
			nics[nn].osdev = o;
			nics[nn].name = o->name;
			nics[nn].pci = pci_parent(o);
			nics[nn].port = ports[i];
			nics[nn].state = states[i];
		}
	}
	if (ng)
		qsort(gpus, ng, sizeof(*gpus), cmp_gpu_obj);
	if (nn)
		qsort(nics, nn, sizeof(*nics), cmp_nic);
	for (j = 0; c2c && j < nn; j++) {
		hwloc_obj_t hb = host_bridge_of(nics[j].pci);

		nics[j].gpuless = hb != NULL;
		for (i = 0; hb && i < ng && nics[j].gpuless; i++)
			nics[j].gpuless = !is_ancestor(hb, gpus[i].pci);
	}
	for (i = 0; i < ng; i++) {
		struct rdzv_topo_gpu *g = &t->gpus[i];
		hwloc_obj_t pci = gpus[i].pci;

		format_busid(pci, g->busid, sizeof(g->busid));
		g->vendor = pci->attr->pcidev.vendor_id;
		g->device = pci->attr->pcidev.device_id;
		snprintf(g->model, sizeof(g->model), "%s", gpu_model_of(pci));
		if (hwloc_bitmap_copy(g->cpus, local_cpus_of(topo, pci)) < 0)
			goto oom;
		for (j = 0; j < nn; j++)
			t->near[i * nn + j] = (unsigned char)near_of(topo, pci, nics[j].pci,
			                                             c2c && nics[j].gpuless);
	}
	for (j = 0; j < nn; j++) {
		format_busid(nics[j].pci, t->nics[j].busid, sizeof(t->nics[j].busid));
		snprintf(t->nics[j].name, sizeof(t->nics[j].name), "%s", nics[j].name);
		t->nics[j].port = nics[j].port;
		t->nics[j].state = nics[j].state;
		t->nics[j].fabric = (int)fabric_of(nics[j].pci);
	}
	for (i = 0; i < nc; i++)
		if (hwloc_bitmap_copy(t->cores[i],
		                      hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)i)->cpuset) < 0)
			goto oom;
	if (hwloc_bitmap_copy(t->allowed, hwloc_topology_get_allowed_cpuset(topo)) < 0)
		goto oom;
	*out = t;
	t = NULL;
	rv = 0;
	goto fail;
oom:
	rdzv_err(err, errlen, "out of memory");
fail:
	free(gpus);
	free(nics);
	rdzv_topo_destroy(t);
	return rv;
}

int rdzv_topo_load(const char *xml, struct rdzv_topo **out, char *err, size_t errlen)
{
	hwloc_topology_t topo = NULL;
	unsigned runtime = hwloc_get_api_version();
	size_t i;
	int rv = -1;

	*out = NULL;
	/* hwloc's ABI changes with its major version (hwloc.h: HWLOC_API_VERSION). */
	if ((runtime >> 16) != (HWLOC_API_VERSION >> 16))
		return rdzv_err(err, errlen, "hwloc library is %u.%u, built against %u.%u: rebuild",
		                runtime >> 16, (runtime >> 8) & 0xff, HWLOC_API_VERSION >> 16,
		                (HWLOC_API_VERSION >> 8) & 0xff);
	if (hwloc_topology_init(&topo) < 0)
		return rdzv_err(err, errlen, "hwloc_topology_init failed");
	/* Important I/O: GPUs, NICs and the bridges above them, not every PCI
	 * function (much faster, and all the tree that nearness needs). */
	hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	if (xml) {
		if (hwloc_topology_set_xml(topo, xml) < 0) {
			rdzv_err(err, errlen, "cannot read topology %s: %m", xml);
			goto fail;
		}
	} else {
#if HWLOC_API_VERSION >= 0x00020100
		for (i = 0; i < sizeof(skipped_components) / sizeof(skipped_components[0]); i++)
			hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
			                              skipped_components[i]);
#else
		/* hwloc 2.0 has no per-topology blacklist: HWLOC_COMPONENTS=-gl,...
		 * in slurmd's environment does the same. */
		(void)i;
#endif
	}
	if (hwloc_topology_load(topo) < 0) {
		rdzv_err(err, errlen, "cannot load topology %s: %m", xml ? xml : "(live)");
		goto fail;
	}
	if (extract(topo, out, err, errlen) < 0)
		goto fail;
	rv = 0;
fail:
	/* The model holds all binding needs: the tree goes now. */
	hwloc_topology_destroy(topo);
	return rv;
}

void rdzv_topo_destroy(struct rdzv_topo *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; t->gpus && i < t->ngpus; i++)
		hwloc_bitmap_free(t->gpus[i].cpus);
	for (i = 0; t->cores && i < t->ncores; i++)
		hwloc_bitmap_free(t->cores[i]);
	free(t->gpus);
	free(t->nics);
	free(t->near);
	free(t->cores);
	hwloc_bitmap_free(t->allowed);
	free(t);
}

size_t rdzv_topo_gpu_count(const struct rdzv_topo *t)
{
	return t->ngpus;
}

int rdzv_topo_gpus_amd(const struct rdzv_topo *t)
{
	return t && t->ngpus && t->gpus[0].vendor == PCI_VENDOR_AMD;
}

size_t rdzv_topo_pci_count(const struct rdzv_topo *t)
{
	return t->npci;
}

size_t rdzv_topo_nic_count(const struct rdzv_topo *t)
{
	return t->nnics;
}

int rdzv_topo_gpu_list(const struct rdzv_topo *t, char *buf, size_t len)
{
	size_t i, used = 0;

	if (!len)
		return -1;
	buf[0] = '\0';
	for (i = 0; i < t->ngpus; i++) {
		int w = snprintf(buf + used, len - used, "%s%zu", i ? "," : "", i);

		if (w < 0 || (size_t)w >= len - used)
			return -1;
		used += (size_t)w;
	}
	return 0;
}

hwloc_const_cpuset_t rdzv_topo_gpu_cpuset(const struct rdzv_topo *t, size_t g)
{
	return t->gpus[g].cpus;
}

int rdzv_topo_nic_usable(const struct rdzv_topo *t, size_t n)
{
	return t->nics[n].state < 0 || t->nics[n].state == IB_PORT_ACTIVE;
}

enum rdzv_near rdzv_topo_near(const struct rdzv_topo *t, size_t g, size_t n)
{
	return (enum rdzv_near)t->near[g * t->nnics + n];
}

int rdzv_topo_format_gpu(const struct rdzv_topo *t, size_t i, char *buf, size_t len)
{
	char cpus[RDZV_CPULIST_MAX];
	int n;

	if (i >= t->ngpus)
		return -1;
	hwloc_bitmap_list_snprintf(cpus, sizeof(cpus), t->gpus[i].cpus);
	n = snprintf(buf, len, "gpu %zu %s [%04x:%04x] cpus %s", i, t->gpus[i].busid,
	             t->gpus[i].vendor, t->gpus[i].device, cpus);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int rdzv_topo_format_nic(const struct rdzv_topo *t, size_t i, char *buf, size_t len)
{
	const struct rdzv_topo_nic *nic;
	char state[16];
	int n;

	if (i >= t->nnics)
		return -1;
	nic = &t->nics[i];
	if (nic->state < 0)
		snprintf(state, sizeof(state), "unknown");
	else
		snprintf(state, sizeof(state), "%s", nic->state == IB_PORT_ACTIVE ? "active" : "down");
	n = snprintf(buf, len, "nic %s:%d %s state %s", nic->name, nic->port, nic->busid, state);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int rdzv_topo_gpu_model(const struct rdzv_topo *t, size_t i, char *buf, size_t len)
{
	if (!t || i >= t->ngpus || len == 0 || !t->gpus[i].model[0])
		return -1;
	return rdzv_strlcpy(buf, t->gpus[i].model, len) < 0 ? -1 : 0;
}

const char *rdzv_topo_gpu_busid(const struct rdzv_topo *t, size_t i)
{
	return t && i < t->ngpus ? t->gpus[i].busid : NULL;
}

int rdzv_topo_nic_info(const struct rdzv_topo *t, size_t i, const char **name, int *port,
                       int *fabric, int *usable)
{
	if (i >= t->nnics)
		return -1;
	*name = t->nics[i].name;
	*port = t->nics[i].port;
	*fabric = t->nics[i].fabric;
	*usable = rdzv_topo_nic_usable(t, i);
	return 0;
}

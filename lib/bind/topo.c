/* topo.c: load the topology and list the node's CUDA GPUs and RDMA NIC
 * ports, each by PCI bus id (names such as mlx5_N differ between nodes of
 * one model: JUWELS Booster jwb0001 vs jwb0004). */
#include "config.h"
#include "topo-priv.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCI_VENDOR_NVIDIA 0x10de
#define PCI_CLASS_VGA 0x0300
#define PCI_CLASS_3D 0x0302
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
	case RDZV_NEAR_NUMA:
		return "numa";
	case RDZV_NEAR_PACKAGE:
		return "package";
	case RDZV_NEAR_SYSTEM:
		return "system";
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

static int cmp_gpu(const void *a, const void *b)
{
	return cmp_pci(((const struct rdzv_topo_gpu *)a)->pci, ((const struct rdzv_topo_gpu *)b)->pci);
}

static int cmp_nic(const void *a, const void *b)
{
	const struct rdzv_topo_nic *x = a, *y = b;
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

static int find_gpus(struct rdzv_topo *t, char *err, size_t errlen)
{
	hwloc_obj_t o = NULL;
	size_t n = 0;

	while ((o = hwloc_get_next_pcidev(t->topo, o)))
		n += is_cuda_gpu(o);
	if (n && !(t->gpus = calloc(n, sizeof(*t->gpus))))
		return rdzv_err(err, errlen, "out of memory");
	while ((o = hwloc_get_next_pcidev(t->topo, o)))
		if (is_cuda_gpu(o)) {
			t->gpus[t->ngpus].pci = o;
			format_busid(o, t->gpus[t->ngpus].busid, sizeof(t->gpus[0].busid));
			t->ngpus++;
		}
	if (t->ngpus)
		qsort(t->gpus, t->ngpus, sizeof(*t->gpus), cmp_gpu);
	return 0;
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

static int is_rdma(hwloc_obj_t os)
{
	return os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && pci_parent(os) && os->name;
}

static int find_nics(struct rdzv_topo *t, char *err, size_t errlen)
{
	int ports[PORTS_MAX], states[PORTS_MAX];
	hwloc_obj_t o = NULL;
	size_t n = 0, i;

	while ((o = hwloc_get_next_osdev(t->topo, o)))
		if (is_rdma(o))
			n += ports_of(o, ports, states);
	if (n && !(t->nics = calloc(n, sizeof(*t->nics))))
		return rdzv_err(err, errlen, "out of memory");
	while ((o = hwloc_get_next_osdev(t->topo, o))) {
		size_t np;

		if (!is_rdma(o))
			continue;
		np = ports_of(o, ports, states);
		for (i = 0; i < np; i++) {
			struct rdzv_topo_nic *nic = &t->nics[t->nnics++];

			nic->osdev = o;
			nic->pci = pci_parent(o);
			nic->name = o->name;
			nic->port = ports[i];
			nic->state = states[i];
			format_busid(nic->pci, nic->busid, sizeof(nic->busid));
		}
	}
	if (t->nnics)
		qsort(t->nics, t->nnics, sizeof(*t->nics), cmp_nic);
	return 0;
}

int rdzv_topo_load(const char *xml, struct rdzv_topo **out, char *err, size_t errlen)
{
	struct rdzv_topo *t = NULL;
	unsigned runtime = hwloc_get_api_version();
	size_t i;
	int rv = -1;

	*out = NULL;
	/* hwloc's ABI changes with its major version (hwloc.h: HWLOC_API_VERSION). */
	if ((runtime >> 16) != (HWLOC_API_VERSION >> 16))
		return rdzv_err(err, errlen, "hwloc library is %u.%u, built against %u.%u: rebuild",
		                runtime >> 16, (runtime >> 8) & 0xff, HWLOC_API_VERSION >> 16,
		                (HWLOC_API_VERSION >> 8) & 0xff);
	if (!(t = calloc(1, sizeof(*t))))
		return rdzv_err(err, errlen, "out of memory");
	if (hwloc_topology_init(&t->topo) < 0) {
		rdzv_err(err, errlen, "hwloc_topology_init failed");
		free(t);
		return -1;
	}
	/* Important I/O: GPUs, NICs and the bridges above them, not every PCI
	 * function (much faster, and all the tree that nearness needs). */
	hwloc_topology_set_io_types_filter(t->topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	if (xml) {
		if (hwloc_topology_set_xml(t->topo, xml) < 0) {
			rdzv_err(err, errlen, "cannot read topology %s: %m", xml);
			goto fail;
		}
	} else {
#if HWLOC_API_VERSION >= 0x00020100
		for (i = 0; i < sizeof(skipped_components) / sizeof(skipped_components[0]); i++)
			hwloc_topology_set_components(t->topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
			                              skipped_components[i]);
#else
		/* hwloc 2.0 has no per-topology blacklist: HWLOC_COMPONENTS=-gl,...
		 * in slurmd's environment does the same. */
		(void)i;
#endif
	}
	if (hwloc_topology_load(t->topo) < 0) {
		rdzv_err(err, errlen, "cannot load topology %s: %m", xml ? xml : "(live)");
		goto fail;
	}
	if (find_gpus(t, err, errlen) < 0 || find_nics(t, err, errlen) < 0)
		goto fail;
	*out = t;
	t = NULL;
	rv = 0;
fail:
	rdzv_topo_destroy(t);
	return rv;
}

void rdzv_topo_destroy(struct rdzv_topo *t)
{
	if (!t)
		return;
	free(t->gpus);
	free(t->nics);
	if (t->topo)
		hwloc_topology_destroy(t->topo);
	free(t);
}

size_t rdzv_topo_gpu_count(const struct rdzv_topo *t)
{
	return t->ngpus;
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
	return hwloc_get_non_io_ancestor_obj(t->topo, t->gpus[g].pci)->cpuset;
}

int rdzv_topo_nic_usable(const struct rdzv_topo *t, size_t n)
{
	return t->nics[n].state < 0 || t->nics[n].state == IB_PORT_ACTIVE;
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

enum rdzv_near rdzv_topo_near(const struct rdzv_topo *t, size_t g, size_t n)
{
	hwloc_obj_t a = t->gpus[g].pci, b = t->nics[n].pci;
	hwloc_obj_t common = common_ancestor(a, b);
	hwloc_obj_t la, lb, pa, pb;

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
	la = hwloc_get_non_io_ancestor_obj(t->topo, a);
	lb = hwloc_get_non_io_ancestor_obj(t->topo, b);
	/* hwloc attaches I/O to the object whose CPUs are the device's local
	 * CPUs. Both attached where exactly one and the same NUMA node is: same
	 * NUMA locality. Attached higher (a package of an SNC/NPS machine, the
	 * whole machine), the topology does not say which node: not NUMA. */
	if (la->nodeset && lb->nodeset && hwloc_bitmap_weight(la->nodeset) == 1
	    && hwloc_bitmap_isequal(la->nodeset, lb->nodeset))
		return RDZV_NEAR_NUMA;
	pa = package_of(t->topo, la);
	pb = package_of(t->topo, lb);
	if (pa && pa == pb)
		return RDZV_NEAR_PACKAGE;
	return RDZV_NEAR_SYSTEM;
}

int rdzv_topo_format_gpu(const struct rdzv_topo *t, size_t i, char *buf, size_t len)
{
	char cpus[RDZV_CPULIST_MAX];
	const struct hwloc_pcidev_attr_s *p;
	int n;

	if (i >= t->ngpus)
		return -1;
	p = &t->gpus[i].pci->attr->pcidev;
	hwloc_bitmap_list_snprintf(cpus, sizeof(cpus), rdzv_topo_gpu_cpuset(t, i));
	n = snprintf(buf, len, "gpu %zu %s [%04x:%04x] cpus %s", i, t->gpus[i].busid, p->vendor_id,
	             p->device_id, cpus);
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
	hwloc_obj_t pci, os;
	const char *model = NULL;

	if (!t || i >= t->ngpus || len == 0)
		return -1;
	pci = t->gpus[i].pci;
	for (os = pci->io_first_child; os && !model; os = os->next_sibling)
		if (os->type == HWLOC_OBJ_OS_DEVICE)
			model = hwloc_obj_get_info_by_name(os, "GPUModel");
	if (!model)
		model = hwloc_obj_get_info_by_name(pci, "PCIDevice");
	if (!model || !*model)
		return -1;
	return rdzv_strlcpy(buf, model, len) < 0 ? -1 : 0;
}

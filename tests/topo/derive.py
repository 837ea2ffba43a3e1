#!/usr/bin/env python3
"""derive.py: the binding table of tests/topo/*.out, derived from an hwloc XML
file by a reader that shares nothing with the code under test (no hwloc, no
C, no rdzv-topo): Python's xml.etree over the tree as exported, and the rules
of doc/binding.md written again from the text.

    derive.py FILE.xml [--list] [--gpus LIST|all|none] [--visible LIST]
              [--tasks N] [--cpus LIST] [--hca-allow LIST]

Prints what `rdzv-topo --input FILE.xml ARGS` must print, then "exit N".
tests/0040 compares rdzv-topo with the goldens and the goldens with this.

What is read from the XML, and how:
- GPUs: PCIDev objects whose pci_type is class 0300 or 0302 with vendor
  10de, in PCI bus-id order (domain:bus:dev.fn compared as numbers). A node
  without one: AMD's, vendor 1002 of class 0380 or 1200, or of class
  0300/0302 with an OSDev named rsmi* or renderD*; one GPU per OSDev
  named rsmi* (MI300 partitions: several on one function), else one; then
  rows say hip:N and ROCR_VISIBLE_DEVICES.
- Slingshot NICs: PCIDev 17db:0501, or one with an OSDev of subtype
  Slingshot or named cxi*: one port named after its OSDev of osdev_type 2
  (the interface), else its cxi* OSDev; state unknown (usable); fabric
  slingshot; the node's list is NCCL_SOCKET_IFNAME, rows say "nic NAME".
- RDMA NIC ports: PCIDev objects with an OSDev child of osdev_type 3
  (OpenFabrics), one port per "PortNState" info (4 = active, else down).
- A device's place: its chain of Bridge ancestors (bridge_type "0-1" is a
  host bridge, "1-1" a PCI-PCI bridge: a switch port or root port) up to the
  first non-I/O ancestor (Package, Group, NUMANode in v1 exports, Machine),
  whose cpuset (within the root's allowed_cpuset) is the device's local
  CPUs. Its NUMA node: of the NUMANode objects whose cpuset meets that
  one, those whose cpuset holds no other's, when they all have one and the
  same cpuset (nodes sharing a cpuset are memory of the same CPUs: a GPU's
  HBM on Grace); its package likewise with the Package objects.
- Cores: each PU's Core ancestor (a PU without one is its own core).
- An NVLink-C2C node (Grace): the Machine's "Architecture" info is aarch64
  (or arm*), or a NUMANode has subtype GPUMemory. There a NIC whose host
  bridge (its topmost bridge_type "0-1" ancestor) has no CUDA GPU below it
  is at level c2c from the GPUs of its NUMA node or package.
- A port's fabric: PCI vendor 1d0f is efa; else class 0207 infiniband,
  0200 ethernet, anything else other.
"""
import sys
import xml.etree.ElementTree as ET

LEVELS = ["switch", "hostbridge", "c2c", "numa", "package", "system"]
C2C = LEVELS.index("c2c")
FABRICS = ["infiniband", "efa", "ethernet", "other", "slingshot"]


class Fail(Exception):
    pass


def parse_bitmap(s):
    """hwloc bitmap "0x000000ff,,0xffffffff" (32-bit words, high first, an
    empty word is zero; "0xf...f" = every bit above) -> set of ints."""
    if not s:
        return set()
    words = s.split(",")
    bits = set()
    n = len(words)
    for i, w in enumerate(words):
        shift = 32 * (n - 1 - i)
        if w == "":  # hwloc writes a zero word as nothing between commas
            continue
        if w == "0xf...f":
            bits.update(range(shift, shift + 4096))
            continue
        v = int(w, 16)
        b = 0
        while v:
            if v & 1:
                bits.add(shift + b)
            v >>= 1
            b += 1
    return bits


def parse_list(s):
    """"0-3,8" -> [0, 1, 2, 3, 8] (in the order written)."""
    out = []
    for part in s.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def fmt_list(cpus):
    """{0,1,2,5} -> "0-2,5"."""
    c = sorted(cpus)
    out = []
    i = 0
    while i < len(c):
        j = i
        while j + 1 < len(c) and c[j + 1] == c[j] + 1:
            j += 1
        out.append(str(c[i]) if i == j else "%d-%d" % (c[i], c[j]))
        i = j + 1
    return ",".join(out)


def busid_key(b):
    dom, bus, rest = b.split(":")
    dev, fn = rest.split(".")
    return (int(dom, 16), int(bus, 16), int(dev, 16), int(fn, 16))


class Topo:
    def __init__(self, path):
        root = ET.parse(path).getroot()
        self.parent = {}
        for p in root.iter():
            for c in p:
                self.parent[c] = p
        objs = [o for o in root.iter("object")]
        machine = objs[0]
        allowed = machine.get("allowed_cpuset") or machine.get("cpuset")
        self.allowed = parse_bitmap(allowed)
        arch = [i.get("value") for i in machine.findall("info") if i.get("name") == "Architecture"]
        self.c2c = bool(arch and (arch[0] == "aarch64" or arch[0].startswith("arm"))) or any(
            o.get("type") == "NUMANode" and o.get("subtype") == "GPUMemory" for o in objs)
        self.numas = [parse_bitmap(o.get("cpuset")) for o in objs if o.get("type") == "NUMANode"]
        self.packages = [parse_bitmap(o.get("cpuset")) for o in objs if o.get("type") == "Package"]
        # Cores: PU os_index -> its core's key (the core element).
        self.core_of = {}
        for o in objs:
            if o.get("type") != "PU":
                continue
            pu = int(o.get("os_index"))
            a = self.parent.get(o)
            while a is not None and a.get("type") not in ("Core", None) and a.tag == "object":
                a = self.parent.get(a)
            self.core_of[pu] = id(a) if a is not None and a.get("type") == "Core" else ("pu", pu)
        self.gpus = []
        amd_gpus = []
        self.ports = []
        for o in objs:
            if o.get("type") != "PCIDev":
                continue
            cls, ids = o.get("pci_type").split()[:2]
            vendor = ids.strip("[]").split(":")[0]
            place = self.place_of(o)
            if vendor == "10de" and cls in ("0300", "0302"):
                self.gpus.append(dict(busid=o.get("pci_busid"), ids=ids, sub=0, **place))
            osdevs = [c for c in o if c.tag == "object" and c.get("type") == "OSDev"]
            names = [c.get("name") or "" for c in osdevs]
            rsmi = sum(1 for n in names if n.startswith("rsmi"))
            if vendor == "1002":
                if cls in ("0380", "1200"):
                    count = rsmi or 1
                elif cls in ("0300", "0302"):
                    count = rsmi or (1 if any(n.startswith("renderD") for n in names) else 0)
                else:
                    count = 0
                for sub in range(count):
                    amd_gpus.append(dict(busid=o.get("pci_busid"), ids=ids, sub=sub, **place))
            slingshot = ids.strip("[]") == "17db:0501" or any(
                c.get("subtype") == "Slingshot" or (c.get("name") or "").startswith("cxi") for c in osdevs)
            if slingshot:
                nets = [c.get("name") for c in osdevs if c.get("osdev_type") == "2"]
                cxis = [n for n in names if n.startswith("cxi")]
                if nets or cxis:
                    self.ports.append(dict(name=(nets or cxis)[0], port=1, busid=o.get("pci_busid"),
                                           active=True, known=False, fabric="slingshot", **place))
                continue
            for c in o:
                if c.tag == "object" and c.get("type") == "OSDev" and c.get("osdev_type") == "3":
                    states = {}
                    for i in c.iter("info"):
                        n = i.get("name")
                        if n.startswith("Port") and n.endswith("State"):
                            states[int(n[4:-5])] = i.get("value")
                    if not states:
                        states = {1: "4"}
                    if vendor == "1d0f":
                        fabric = "efa"
                    else:
                        fabric = {"0207": "infiniband", "0200": "ethernet"}.get(cls, "other")
                    for port in sorted(states):
                        self.ports.append(dict(name=c.get("name"), port=port, busid=o.get("pci_busid"),
                                               active=states[port] == "4", fabric=fabric, **place))
        # NVIDIA's GPUs where the node has any, else AMD's.
        self.amd = not self.gpus and bool(amd_gpus)
        if self.amd:
            self.gpus = amd_gpus
        self.gpus.sort(key=lambda g: (busid_key(g["busid"]), g["sub"]))
        gpu_hbs = set().union(*(g["hostbridges"] for g in self.gpus)) if self.gpus else set()
        for p in self.ports:
            p["gpuless"] = self.c2c and p["top_hb"] is not None and p["top_hb"] not in gpu_hbs
        self.ports.sort(key=lambda p: (busid_key(p["busid"]), p["port"]))

    def place_of(self, o):
        bridges = []
        a = self.parent.get(o)
        while a is not None and a.get("type") in ("Bridge", "PCIDev"):
            if a.get("type") == "Bridge":
                bridges.append((a.get("bridge_type"), id(a)))
            a = self.parent.get(a)
        hbs = [b for t, b in bridges if t.startswith("0-")]
        cpus = parse_bitmap(a.get("cpuset")) & self.allowed
        whole = parse_bitmap(a.get("cpuset"))
        # NUMA nodes with the same cpuset are memory of the same CPUs (hwloc
        # gives a node its parent's cpuset: a GPU's HBM beside its CPU's DRAM
        # on Grace): one locality; a node of a larger cpuset (hung higher,
        # as a GPU's HBM under the machine) is farther than one it contains.
        near = {frozenset(n) for n in self.numas if n & whole}
        numa = sorted((n for n in near if not any(m < n for m in near)), key=min)
        pkg = [i for i, p in enumerate(self.packages) if p & whole]
        return dict(cpus=cpus,
                    switches={b for t, b in bridges if t.startswith("1-")},
                    hostbridges=set(hbs),
                    top_hb=hbs[-1] if hbs else None,
                    numa=numa[0] if len(numa) == 1 else None,
                    package=pkg[0] if len(pkg) == 1 else None)


def level(g, n):
    if g["switches"] & n["switches"]:
        return 0
    if g["hostbridges"] & n["hostbridges"]:
        return 1
    if g["numa"] is not None and g["numa"] == n["numa"]:
        return C2C if n["gpuless"] else 3
    if g["package"] is not None and g["package"] == n["package"]:
        return C2C if n["gpuless"] else 4
    return 5


def split(step, sets):
    """sets[q]: GPU q's candidate list. GPUs with the same list split it in
    PCI bus-id order (node index), whatever the step's order."""
    out = []
    for pos, s in enumerate(sets):
        peers = sorted((q for q, s2 in enumerate(sets) if s2 == s), key=lambda q: step[q])
        p, gcount, c = peers.index(pos), len(peers), len(s)
        if c == 0:
            out.append([])
        elif c >= gcount:
            out.append(s[p * c // gcount:(p + 1) * c // gcount])
        else:
            out.append([s[p * c // gcount]])
    return out


def choose_fabric(t, usable):
    """The fabric of the step's ports, and the words for the node line."""
    kinds = [f for f in FABRICS if any(p["fabric"] == f for p in usable)]
    if len(kinds) < 2:
        return usable, ""

    def score(f):
        ports = [p for p in usable if p["fabric"] == f]
        # Over all the node's GPUs, not the step's: nodes of one model choose
        # alike whatever GPUs a step holds on each.
        best = [min(level(g, p) for p in ports) for g in t.gpus]
        # GPUs served at each level or better, best level first; then ports;
        # then the order of FABRICS (the first of equals wins).
        return [sum(1 for b in best if b <= lv) for lv in range(len(LEVELS))] + [len(ports)]

    chosen = kinds[0]
    for f in kinds[1:]:
        if score(f) > score(chosen):
            chosen = f
    count = lambda f: sum(1 for p in usable if p["fabric"] == f)
    words = "%s (%s); left out:%s" % (chosen, plural(count(chosen), "port"),
                                     "".join(" %s (%d)" % (f, count(f)) for f in kinds if f != chosen))
    return [p for p in usable if p["fabric"] == chosen], words


def parse_allow(s):
    """NCCL_IB_HCA syntax: [^][=]name[:port],... -> (exclude, exact, items)."""
    exclude = s.startswith("^")
    if exclude:
        s = s[1:]
    exact = s.startswith("=")
    if exact:
        s = s[1:]
    items = []
    for it in s.split(","):
        if not it:
            continue
        name, _, port = it.partition(":")
        if port:
            if not port.isdigit() or not 1 <= int(port) <= 255:
                raise Fail("bad port '%s' for device %s (1-255)" % (port, name))
            items.append((name, int(port)))
        else:
            items.append((name, None))
    return exclude, exact, items


def allowed_port(p, allow):
    if allow is None:
        return True
    exclude, exact, items = allow
    hit = any((p["name"] == n if exact else p["name"].startswith(n)) and (port is None or port == p["port"])
              for n, port in items)
    return hit != exclude


def plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def derive(argv):
    path = argv[0]
    opts = {}
    lst = False
    i = 1
    while i < len(argv):
        if argv[i] == "--list":
            lst = True
            i += 1
        else:
            opts[argv[i]] = argv[i + 1]
            i += 2
    t = Topo(path)
    out = []
    allow = parse_allow(opts["--hca-allow"]) if "--hca-allow" in opts else None
    gspec = opts.get("--gpus", "all")
    if not t.gpus or gspec == "none":
        step = []
    elif gspec == "all":
        step = list(range(len(t.gpus)))
    else:
        step = parse_list(gspec)
        for g in step:
            if g >= len(t.gpus):
                raise Fail("SLURM_STEP_GPUS=%s: GPU %d is not in the topology, which has %s"
                           % (gspec, g, plural(len(t.gpus), "AMD GPU" if t.amd else "CUDA GPU")))
    visible = opts["--visible"].split(",") if "--visible" in opts and step else [str(g) for g in step]
    # Default: one task per step GPU as given (a node without CUDA GPUs
    # still runs the tasks Slurm gave it GPUs for).
    given = len(parse_list(gspec)) if gspec not in ("all", "none") else len(step)
    ntasks = int(opts.get("--tasks", given or 1))
    stepcpus = set(parse_list(opts["--cpus"])) if "--cpus" in opts else set(t.allowed)

    if lst:
        for k, g in enumerate(t.gpus):
            out.append("gpu %d %s %s cpus %s" % (k, g["busid"], g["ids"], fmt_list(g["cpus"])))
        for p in t.ports:
            out.append("nic %s:%d %s state %s" % (p["name"], p["port"], p["busid"],
                                                   "unknown" if p.get("known") is False
                                                   else "active" if p["active"] else "down"))

    # Each step GPU's NICs: usable ports at its best level, ties split.
    usable = [p for p in t.ports if p["active"] and allowed_port(p, allow)]
    usable, fabric = choose_fabric(t, usable) if step else (usable, "")
    best = []
    extra = []
    for g in step:
        gpu = t.gpus[g]
        if not usable:
            best.append((None, []))
            extra.append([])
            continue
        lv = min(level(gpu, p) for p in usable)
        best.append((lv, [k for k, p in enumerate(usable) if level(gpu, p) == lv]))
        # A GPU with NICs of its own also gets its share of the c2c ones.
        extra.append([k for k, p in enumerate(usable) if lv < C2C and level(gpu, p) == C2C])
    nics = split(step, [s for _, s in best])
    c2c_nics = split(step, extra)
    nics = [a + b for a, b in zip(nics, c2c_nics)]
    union = sorted({k for n in nics for k in n})
    sling = lambda k: usable[k]["fabric"] == "slingshot"
    name = lambda k: usable[k]["name"] if sling(k) else "%s:%d" % (usable[k]["name"], usable[k]["port"])
    slingshot = any(sling(k) for k in union)
    hca = "NCCL_IB_HCA==" + ",".join(name(k) for k in union) if union else "NCCL_IB_HCA unset"
    if slingshot:
        hca = "NCCL_SOCKET_IFNAME==" + ",".join(name(k) for k in union)
    node = "node: %s, %s, %s, cpus %s" % (plural(len(step), "GPU"), plural(ntasks, "task"), hca,
                                          fmt_list(stepcpus))
    if fabric:
        node += "; fabric " + fabric
    n = len(step)
    if n and ntasks > n:
        node += ("; note: %d tasks share %s: task i uses GPU i mod %d, i.e. "
                 "cuda:(LOCAL_RANK %% torch.cuda.device_count())" % (ntasks, plural(n, "GPU"), n))
    out.append(node)

    # Each task's positions among the step GPUs.
    rows = []
    for i in range(ntasks):
        if not n:
            rows.append(None)
        elif ntasks >= n:
            rows.append([i % n])
        else:
            rows.append(list(range(i * n // ntasks, (i + 1) * n // ntasks)))
    # CPUs: the local CPUs of the task's GPUs within the step's, else the
    # step's (flagged); tasks with the same set split it by whole cores.
    sets = []
    for r in rows:
        if r is None:
            sets.append(None)
            continue
        local = set().union(*(t.gpus[step[q]]["cpus"] for q in r)) & stepcpus
        sets.append((frozenset(local), False) if local else (frozenset(stepcpus), True))
    cpus_of = []
    for i, s in enumerate(sets):
        if s is None:
            cpus_of.append(None)
            continue
        group = [j for j, s2 in enumerate(sets) if s2 is not None and s2[0] == s[0]]
        p, k = group.index(i), len(group)
        cores = {}
        for c in sorted(s[0]):
            cores.setdefault(t.core_of.get(c, ("pu", c)), []).append(c)
        cl = sorted(cores.values(), key=min)
        m = len(cl)
        if k <= m:
            mine = set().union(*cl[p * m // k:(p + 1) * m // k])
        else:
            pus = sorted(s[0])
            mine = {pus[p % len(pus)]}
        cpus_of.append(mine)

    for i, r in enumerate(rows):
        if r is None:
            out.append("task %d: no GPU" % i)
            continue
        first = t.gpus[step[r[0]]]
        more = " and %d more" % (len(r) - 1) if len(r) > 1 else ""
        vis = ",".join(visible[q] for q in r)
        ks = sorted({k for q in r for k in nics[q]})
        what = "nic " if slingshot else "UCX_NET_DEVICES="
        if ks:
            c2c = "+c2c" if any(c2c_nics[q] for q in r) else ""
            ucx = "%s%s (%s%s)" % (what, ",".join(name(k) for k in ks), LEVELS[best[r[0]][0]], c2c)
        else:
            ucx = "nic none" if slingshot else "UCX_NET_DEVICES unset"
        flag = " (none of the step's CPUs is local to the GPU)" if sets[i][1] else ""
        sel = "hip:%d ROCR_VISIBLE_DEVICES" % r[0] if t.amd else "cuda:%d visible" % r[0]
        out.append("task %d: gpu %d %s%s %s %s, %s, cpus %s%s"
                   % (i, step[r[0]], first["busid"], more, sel, vis, ucx, fmt_list(cpus_of[i]), flag))
    return out


def main(argv):
    try:
        lines = derive(argv[1:])
    except Fail as e:
        print("rdzv-topo: %s" % e)
        print("exit 1")
        return 0
    for l in lines:
        print(l)
    print("exit 0")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""derive.py: fixture trees and expected answers for the identity tests
(tests/0043-*.t), written without any of spank-rdzv's code.

  derive.py make NAME XML MINORS GRESORDER OUTDIR
      a fake node under OUTDIR: proc/driver/nvidia/gpus/BUSID/information
      (Device Minor MINORS[i] for the i-th NVIDIA GPU in PCI bus-id order,
      a made-up GPU UUID), sys/bus/pci/devices/BUSID/vendor, and
      etc/slurm/gres.conf listing /dev/nvidiaM in GRESORDER (comma lists),
      over several lines and NodeName= patterns, with a line for another
      node; proc/self/cgroup and a devices cgroup (v1) allowing the GPU
      Slurm numbers 3 (GRESORDER[3]). No device nodes: where /dev/nvidiaM does not exist, the minor
      is the one in its name (NVIDIA's naming).
  derive.py expect XML ROOT
      for a step holding all of Slurm's GPUs with one task each, what each
      task must get, read from the fixture tree and the XML only:
        Slurm index k -> k-th File of gres.conf for node1 -> its minor ->
        the /proc entry with that Device Minor -> its bus id;
        NICs: the usable (Port1State 4 or none) OpenFabrics ports below
        the GPU's lowest bridge that has any, GPUs below the same bridge
        splitting them in PCI bus-id order (c >= g: blocks of c/g; else
        one each, NIC floor(p*c/g));
        CPUs: the cpuset of the GPU's first non-I/O ancestor; tasks (in
        task order) with the same set split its cores in blocks.
Standard library only (xml.etree)."""
import os
import re
import sys
import xml.etree.ElementTree as ET

# The hwloc bitmap, CPU-list and bus-id helpers of the topology goldens'
# reader (tests/topo/derive.py), itself independent of spank-rdzv's code.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from derive import busid_key, fmt_list, parse_bitmap  # noqa: E402

IO = ("Bridge", "PCIDev", "OSDev")


def parse(xml):
    root = ET.parse(xml).getroot()
    parent = {}
    for p in root.iter("object"):
        for c in p.findall("object"):
            parent[c] = p
    return root, parent




def gpus_of(root):
    out = []
    for o in root.iter("object"):
        if o.get("type") != "PCIDev":
            continue
        m = re.match(r"([0-9a-f]{4}) \[([0-9a-f]{4}):", o.get("pci_type", ""))
        if m and m.group(2) == "10de" and m.group(1) in ("0300", "0302"):
            out.append(o)
    return sorted(out, key=lambda o: busid_key(o.get("pci_busid")))






def expand(files):
    """/dev/nvidia[5,0,6] and comma lists, as Slurm's hostlist does."""
    out = []
    for item in re.findall(r"[^,\[]*(?:\[[^\]]*\])?[^,]*", files):
        if not item:
            continue
        m = re.match(r"(.*)\[([^\]]*)\](.*)", item)
        if not m:
            out.append(item)
            continue
        for part in m.group(2).split(","):
            if "-" in part:
                a, b = part.split("-")
                out += [m.group(1) + str(x) + m.group(3) for x in range(int(a), int(b) + 1)]
            else:
                out.append(m.group(1) + part + m.group(3))
    return out


def node_in(pattern, node):
    return node in expand(pattern)


def make(name, xml, minors, gresorder, outdir):
    root, _ = parse(xml)
    gpus = gpus_of(root)
    minors = [int(x) for x in minors.split(",")]
    order = [int(x) for x in gresorder.split(",")]
    assert sorted(minors) == list(range(len(gpus))), "MINORS must permute 0..n-1"
    assert sorted(order) == sorted(minors), "GRESORDER must list every minor"
    for i, g in enumerate(gpus):
        b = g.get("pci_busid")
        d = os.path.join(outdir, "proc/driver/nvidia/gpus", b)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "information"), "w") as f:
            f.write("Model: \t\t NVIDIA fixture %s\nIRQ:   \t\t %d\n"
                    "GPU UUID: \t GPU-%08x-0000-4000-8000-%012x\n"
                    "Video BIOS: \t ??.??.??.??.??\nBus Type: \t PCIe\n"
                    "DMA Size: \t 47 bits\nDMA Mask: \t 0x7fffffffffff\n"
                    "Bus Location: \t %s\nDevice Minor: \t %d\nGPU Excluded:\t No\n"
                    % (name, 100 + i, busid_key(b)[1], minors[i], b, minors[i]))
        s = os.path.join(outdir, "sys/bus/pci/devices", b)
        os.makedirs(s, exist_ok=True)
        with open(os.path.join(s, "vendor"), "w") as f:
            f.write("0x10de\n")
    os.makedirs(os.path.join(outdir, "etc/slurm"), exist_ok=True)
    half = (len(order) + 1) // 2
    with open(os.path.join(outdir, "etc/slurm/gres.conf"), "w") as f:
        f.write("# %s: minors permuted against PCI order (%s), files out of order\n"
                % (name, minors))
        f.write("AutoDetect=off\n")
        f.write("NodeName=other Name=gpu File=/dev/nvidia[0-%d]\n" % (len(order) - 1))
        f.write("NodeName=node[1-2] Name=gpu Type=fix File=/dev/nvidia[%s]\n"
                % ",".join(map(str, order[:half])))
        f.write("nodename=node1 name=gpu Count=%d file=%s  # keys are case-insensitive\n"
                % (len(order) - half, ",".join("/dev/nvidia%d" % m for m in order[half:])))
        f.write("Name=mps Count=100\n")
    # A task's cgroup v1 (task/cgroup, ConstrainDevices) allowing the GPU
    # Slurm numbers 3: nvidiactl, nvidia-uvm and a disk come with it.
    cg = "/slurm_node1/uid_1000/job_5/step_0/task_1"
    os.makedirs(os.path.join(outdir, "proc/self"), exist_ok=True)
    with open(os.path.join(outdir, "proc/self/cgroup"), "w") as f:
        f.write("12:pids:%s\n5:devices:%s\n4:memory:%s\n1:name=systemd:/system.slice\n"
                % (cg, cg, cg))
    d = os.path.join(outdir, "sys/fs/cgroup/devices" + cg)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "devices.list"), "w") as f:
        f.write("c 195:255 rwm\nc 195:%d rwm\nc 511:0 rwm\nb 259:0 r\n" % order[3])


def expect(xml, fixroot):
    root, parent = parse(xml)
    gpus = gpus_of(root)
    by_bus = {g.get("pci_busid"): g for g in gpus}
    # Slurm index -> file -> minor -> bus id
    files = []
    for line in open(os.path.join(fixroot, "etc/slurm/gres.conf")):
        line = line.split("#")[0]
        kv = dict((k.lower(), v) for k, v in re.findall(r"(\w+)=(\S+)", line))
        if kv.get("name", "").lower() != "gpu" or "file" not in kv:
            continue
        if "nodename" in kv and not node_in(kv["nodename"], "node1"):
            continue
        files += expand(kv["file"])
    minor_bus = {}
    pdir = os.path.join(fixroot, "proc/driver/nvidia/gpus")
    for b in os.listdir(pdir):
        text = open(os.path.join(pdir, b, "information")).read()
        minor_bus[int(re.search(r"Device Minor:\s*(\d+)", text).group(1))] = b
    chain = []
    for k, f in enumerate(files):
        m = int(re.search(r"nvidia(\d+)$", f).group(1))
        chain.append((k, f, m, minor_bus[m]))
    # NICs below each bridge
    nics = []
    for o in root.iter("object"):
        if o.get("type") == "OSDev" and o.get("osdev_type") == "3" and parent[o].get("type") == "PCIDev":
            infos = {i.get("name"): i.get("value") for i in o.findall("info")}
            ports = sorted(int(k[4:-5]) for k in infos if re.match(r"Port\d+State$", k))
            for p in ports or [1]:
                st = infos.get("Port%dState" % p)
                if st is None or st == "4":
                    nics.append((busid_key(parent[o].get("pci_busid")), o.get("name"), p, parent[o]))
    nics.sort(key=lambda n: (n[0], n[1], n[2]))

    def ancestors(o):
        while o in parent:
            o = parent[o]
            yield o

    def below(o, anc):
        return anc in set(ancestors(o))

    gpu_bridge = {}
    for g in gpus:
        for a in ancestors(g):
            if a.get("type") != "Bridge":
                break
            if any(below(n[3], a) for n in nics):
                gpu_bridge[g.get("pci_busid")] = a
                break
    # NICs per GPU (all of Slurm's GPUs are in the step)
    step = [c[3] for c in chain]
    gnics = {}
    for b in step:
        br = gpu_bridge.get(b)
        if br is None:
            gnics[b] = []
            continue
        cand = [n for n in nics if below(n[3], br)]
        peers = sorted((x for x in step if gpu_bridge.get(x) is br), key=busid_key)
        g, c, p = len(peers), len(cand), peers.index(b)
        if c >= g:
            gnics[b] = cand[p * c // g:(p + 1) * c // g]
        else:
            gnics[b] = [cand[p * c // g]]
    # CPUs
    cores = []
    for o in root.iter("object"):
        if o.get("type") == "Core":
            cores.append(parse_bitmap(o.get("cpuset")))
    cores.sort(key=min)

    def local(b):
        for a in ancestors(by_bus[b]):
            if a.get("type") not in IO:
                return frozenset(parse_bitmap(a.get("cpuset")))
    sets = [local(b) for b in step]
    print("# Slurm index -> gres.conf File -> minor -> bus id (proc/driver/nvidia/gpus/*/information)")
    for k, f, m, b in chain:
        print("# slurm %d -> %s -> minor %d -> %s" % (k, f, m, b))
    for i, b in enumerate(step):
        same = [j for j, s in enumerate(sets) if s == sets[i]]
        pos, mm = same.index(i), len(same)
        mine = [c for c in cores if c <= sets[i]]
        u = len(mine)
        cpus = set().union(*mine[pos * u // mm:(pos + 1) * u // mm])
        print("task %d: %s %s %s" % (i, b, ",".join("%s:%d" % (n[1], n[2]) for n in gnics[b]) or "unset",
                                     fmt_list(cpus)))


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "make":
        make(*sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "expect":
        expect(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)

# SPDX-License-Identifier: GPL-2.0-or-later
"""Check the RDZV_REPORT lines of one step (read from stdin) against Slurm's
own view of the step. Prints one TAP-free verdict line per check failed and
exits 0 only when all hold:

  - one report per task, RANKs exactly 0..N-1, WORLD_SIZE N everywhere;
  - RANK == SLURM_PROCID, LOCAL_RANK == SLURM_LOCALID;
  - LOCAL_WORLD_SIZE == number of tasks on that node, LOCAL_RANKs 0..k-1 there;
  - every all-reduce gave N(N+1)/2;
  - MASTER_ADDR is the node of rank 0 (or --master NAME), same MASTER_PORT everywhere;
  - TORCHELASTIC_USE_AGENT_STORE unset or False;
  - GROUP_RANK == NODE_RANK == the node's index in the step (NODE_RANK unset under
    --launcher torchrun: neither torchrun nor the plugin's torchrun mode sets it for
    the workers), GROUP_WORLD_SIZE == the
    number of nodes: the index is the node's place among the nodes the reports come
    from, in rank order (the node holding the lowest rank first, as torchrun numbers
    its nodes; the node list's order up to Slurm 25.11, not under 26.05's topology
    order), derived here from where the ranks ran, not from any variable the plugin sets;
  - ROLE_RANK == RANK, ROLE_WORLD_SIZE == WORLD_SIZE (torchrun's single role);
  - SLURMD_NODENAME is the node the report names;
  - where collected (train_tiny.py): CROSS_RANK, CROSS_SIZE, LOCAL_SIZE (deepspeed mode)
    are the node index, node count and tasks on the node on every rank, or unset on
    every rank (other modes); CUDA_DEVICE_MAX_CONNECTIONS is one value on every rank or
    unset on every rank; CUDA_VISIBLE_DEVICES is one value on every rank of a node (Slurm
    sets it per node for the step; default binding never narrows it) or unset there.
Every variable the reports collect is checked.
Usage: check_reports.py NTASKS [--master NAME] [--port PORT] [--per-node n1=3,n2=2]
                        [--launcher torchrun]  (workers of a per-node torchrun: their
                        SLURM_PROCID is the launcher's, and torchrun itself sets
                        TORCHELASTIC_USE_AGENT_STORE for the store it hosts)
"""
import json
import re
import sys
from collections import defaultdict



def main(argv):
    ntasks = int(argv[1])
    opts = dict(zip(argv[2::2], argv[3::2]))
    reps = []
    for line in sys.stdin:
        i = line.find("RDZV_REPORT ")
        if i >= 0:
            reps.append(json.loads(line[i + len("RDZV_REPORT "):]))
    bad = []
    if len(reps) != ntasks:
        bad.append(f"{len(reps)} reports for {ntasks} tasks")
    ranks = sorted(int(r["env"]["RANK"]) for r in reps)
    if ranks != list(range(ntasks)):
        bad.append(f"RANKs {ranks} are not 0..{ntasks - 1}")
    by_node = defaultdict(list)
    for r in reps:
        e = r["env"]
        by_node[r["node"]].append(r)
        if opts.get("--launcher") == "torchrun":
            pass
        elif e["RANK"] != e["SLURM_PROCID"]:
            bad.append(f"RANK {e['RANK']} != SLURM_PROCID {e['SLURM_PROCID']}")
        if "--launcher" not in opts and e["LOCAL_RANK"] != e["SLURM_LOCALID"]:
            bad.append(f"rank {e['RANK']}: LOCAL_RANK {e['LOCAL_RANK']} != SLURM_LOCALID {e['SLURM_LOCALID']}")
        if e["WORLD_SIZE"] != str(ntasks) or r["world"] != ntasks:
            bad.append(f"rank {e['RANK']}: WORLD_SIZE {e['WORLD_SIZE']}")
        if r["allreduce"] != r["expect"]:
            bad.append(f"rank {e['RANK']}: all-reduce {r['allreduce']} != {r['expect']}")
        # unset, or "False": no agent hosts a store here, and "True" would
        # leave rank 0 a client of a store nobody serves
        if "--launcher" not in opts and e["TORCHELASTIC_USE_AGENT_STORE"] not in (None, "False"):
            bad.append(f"rank {e['RANK']}: TORCHELASTIC_USE_AGENT_STORE={e['TORCHELASTIC_USE_AGENT_STORE']}")
    for node, rs in by_node.items():
        lr = sorted(int(r["env"]["LOCAL_RANK"]) for r in rs)
        if lr != list(range(len(rs))):
            bad.append(f"{node}: LOCAL_RANKs {lr}")
        for r in rs:
            if r["env"]["LOCAL_WORLD_SIZE"] != str(len(rs)):
                bad.append(f"{node}: LOCAL_WORLD_SIZE {r['env']['LOCAL_WORLD_SIZE']} with {len(rs)} tasks")
    if "--per-node" in opts:
        want = dict(x.split("=") for x in opts["--per-node"].split(","))
        got = {n: str(len(rs)) for n, rs in by_node.items()}
        if want != got:
            bad.append(f"tasks per node {got}, want {want}")
    # Rank order, torchrun's: a node comes before another when it holds a
    # lower rank (Slurm 26.05 lays tasks in topology order, so this need not
    # be the node list's order; SLURM_NODEID keeps the list's).
    nodes = sorted(by_node, key=lambda n: min(int(r["env"]["RANK"]) for r in by_node[n]))
    index = {n: i for i, n in enumerate(nodes)}
    for r in reps:
        e, want = r["env"], str(index[r["node"]])
        # Under a per-node torchrun, GROUP_RANK is torchrun's (its static
        # rendezvous: the launcher's node_rank, one launcher per node) and
        # nobody sets NODE_RANK: torchrun does not, and the plugin's torchrun
        # mode gives the launcher only torchrun's PET_* flags.
        wants = {"GROUP_RANK": want, "NODE_RANK": None if opts.get("--launcher") == "torchrun" else want}
        for k in ("GROUP_RANK", "NODE_RANK"):
            if e.get(k) != wants[k]:
                bad.append(f"rank {e['RANK']} on {r['node']}: {k} {e.get(k)}, want {wants[k]} "
                           f"(node {want} of {nodes})")
        if e.get("GROUP_WORLD_SIZE") != str(len(nodes)):
            bad.append(f"rank {e['RANK']}: GROUP_WORLD_SIZE {e.get('GROUP_WORLD_SIZE')}, want {len(nodes)}")
        if e.get("ROLE_RANK") != e["RANK"]:
            bad.append(f"rank {e['RANK']}: ROLE_RANK {e.get('ROLE_RANK')} != RANK")
        if e.get("ROLE_WORLD_SIZE") != e["WORLD_SIZE"]:
            bad.append(f"rank {e['RANK']}: ROLE_WORLD_SIZE {e.get('ROLE_WORLD_SIZE')} != WORLD_SIZE")
        if "SLURMD_NODENAME" in e and e["SLURMD_NODENAME"] != r["node"]:
            bad.append(f"rank {e['RANK']}: SLURMD_NODENAME {e['SLURMD_NODENAME']} != {r['node']}")
    # DeepSpeed's per-node variables: right on every rank, or on none.
    if any("CROSS_RANK" in r["env"] for r in reps):
        cross = [r for r in reps if r["env"].get("CROSS_RANK") is not None]
        if cross and len(cross) != len(reps):
            bad.append(f"CROSS_RANK set on {len(cross)} of {len(reps)} ranks")
        for r in cross:
            e, n = r["env"], r["node"]
            want = (str(index[n]), str(len(nodes)), str(len(by_node[n])))
            got = (e.get("CROSS_RANK"), e.get("CROSS_SIZE"), e.get("LOCAL_SIZE"))
            if got != want:
                bad.append(f"rank {e['RANK']} on {n}: CROSS_RANK/CROSS_SIZE/LOCAL_SIZE {got}, want {want}")
    if any("CUDA_DEVICE_MAX_CONNECTIONS" in r["env"] for r in reps):
        vals = {r["env"].get("CUDA_DEVICE_MAX_CONNECTIONS") for r in reps}
        if len(vals) != 1:
            bad.append(f"CUDA_DEVICE_MAX_CONNECTIONS differs between ranks: {sorted(map(str, vals))}")
    for node, rs in by_node.items():
        vals = {r["env"].get("CUDA_VISIBLE_DEVICES") for r in rs}
        if len(vals) != 1:
            bad.append(f"{node}: CUDA_VISIBLE_DEVICES differs between its ranks: {sorted(map(str, vals))}")
    r0 = [r for r in reps if r["env"]["RANK"] == "0"]
    master = opts.get("--master", r0[0]["node"] if r0 else None)
    addrs = {r["env"]["MASTER_ADDR"] for r in reps}
    if addrs != {master}:
        bad.append(f"MASTER_ADDR {addrs}, rank 0 runs on {master}")
    ports = {r["env"]["MASTER_PORT"] for r in reps}
    if len(ports) != 1 or ("--port" in opts and ports != {opts["--port"]}):
        bad.append(f"MASTER_PORT {ports}" + (f", want {opts['--port']}" if "--port" in opts else ""))
    for b in bad:
        print("BAD " + b)
    if not bad:
        print(f"GOOD {ntasks} ranks on {len(by_node)} nodes, master {master}:{ports.pop() if ports else '?'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

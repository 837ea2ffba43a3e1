# SPDX-License-Identifier: GPL-2.0-or-later
"""Check tests/0102's RDZV_WHERE lines (stdin) of one step of NTASKS tasks in
MODE: every "where is rank 0" value names the node that runs SLURM_PROCID 0,
and every node number follows rank order (the node holding the lowest rank
first, torchrun's numbering; RANK = GROUP_RANK x LOCAL_WORLD_SIZE + LOCAL_RANK
on a homogeneous layout). Prints what failed, one line each, and exits 0 only
when all holds. Usage: check_where.py MODE NTASKS [--meet] [--master NODE]"""
import json
import sys


def main(argv):
    mode, ntasks = argv[1], int(argv[2])
    meet = "--meet" in argv
    want_master = argv[argv.index("--master") + 1] if "--master" in argv else None
    reps = [json.loads(l.split(" ", 1)[1]) for l in sys.stdin if l.startswith("RDZV_WHERE ")]
    bad = []
    if len(reps) != ntasks:
        bad.append(f"{len(reps)} reports for {ntasks} tasks")
    by_node = {}
    for r in reps:
        by_node.setdefault(r["SLURMD_NODENAME"], []).append(r)
    rank0 = [r["SLURMD_NODENAME"] for r in reps if r["SLURM_PROCID"] == "0"]
    if len(rank0) != 1:
        print(f"no single task 0: {rank0}")
        return 1
    master = rank0[0]
    if want_master and master != want_master:
        bad.append(f"Slurm ran task 0 on {master}, the test expected {want_master}")
    order = sorted(by_node, key=lambda n: min(int(r["SLURM_PROCID"]) for r in by_node[n]))
    place = {n: str(i) for i, n in enumerate(order)}
    node_vars = {"torch": ["GROUP_RANK", "NODE_RANK"], "megatron": ["GROUP_RANK", "NODE_RANK"],
                 "deepspeed": ["GROUP_RANK", "NODE_RANK", "CROSS_RANK"],
                 "lightning": ["NODE_RANK"], "torchrun": ["PET_NODE_RANK"], "jax": []}[mode]
    addr_var = {"torchrun": "PET_MASTER_ADDR", "jax": "JAX_COORDINATOR_ADDRESS"}.get(mode, "MASTER_ADDR")
    for r in reps:
        node, pid = r["SLURMD_NODENAME"], r["SLURM_PROCID"]
        addr = r.get(addr_var) or ""
        if mode == "jax":
            addr = addr.rsplit(":", 1)[0]
        if addr != master:
            bad.append(f"task {pid} on {node}: {addr_var}={r.get(addr_var)}, task 0 runs on {master}")
        for v in node_vars:
            if r.get(v) != place[node]:
                bad.append(f"task {pid} on {node}: {v}={r.get(v)}, want {place[node]} (rank order)")
        if mode in ("torch", "megatron", "deepspeed") and r.get("RANK") and r.get("GROUP_RANK"):
            if int(r["RANK"]) != int(r["GROUP_RANK"]) * int(r["LOCAL_WORLD_SIZE"]) + int(r["LOCAL_RANK"]):
                bad.append(f"task {pid}: RANK {r['RANK']} != GROUP_RANK x LOCAL_WORLD_SIZE + LOCAL_RANK")
        if meet and r.get("allreduce") != float(ntasks):
            bad.append(f"task {pid}: all_reduce gave {r.get('allreduce')}")
    for b in bad:
        print(b)
    if not bad:
        print(f"task 0 on {master}; node order {','.join(order)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

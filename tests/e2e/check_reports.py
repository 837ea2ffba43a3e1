"""Check the RDZV_REPORT lines of one step (read from stdin) against Slurm's
own view of the step. Prints one TAP-free verdict line per check failed and
exits 0 only when all hold:

  - one report per task, RANKs exactly 0..N-1, WORLD_SIZE N everywhere;
  - RANK == SLURM_PROCID, LOCAL_RANK == SLURM_LOCALID;
  - LOCAL_WORLD_SIZE == number of tasks on that node, LOCAL_RANKs 0..k-1 there;
  - every all-reduce gave N(N+1)/2;
  - MASTER_ADDR is the node of rank 0 (or --master NAME), same MASTER_PORT everywhere;
  - TORCHELASTIC_USE_AGENT_STORE never set.
Usage: check_reports.py NTASKS [--master NAME] [--port PORT] [--per-node n1=3,n2=2]
                        [--launcher torchrun]  (workers of a per-node torchrun: their
                        SLURM_PROCID is the launcher's, and torchrun itself sets
                        TORCHELASTIC_USE_AGENT_STORE for the store it hosts)
"""
import json
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
        # unset, or "False" (issue 14: no agent hosts a store)
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

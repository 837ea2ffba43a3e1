#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""gen-handover.py: the input files of bench/bench-handover for one step, as
Slurm would give them to srun.

  gen-handover.py CLUSTER CASE NODES OUTDIR [--seed N] [--name-len L] [--order O]

CLUSTER  gb200: NVL72 racks of 18 trays (one block each), 4 tasks a node;
         h100:  blocks of 32 nodes, 8 tasks a node.
CASE     trays16: trays 1-16 of every rack (GB200 only);
         pool80:  a random 80% of a pool of NODES / 0.8 nodes;
         alt:     every other node of a pool of 2 x NODES.
NODES    the step's nodes.
--order  random (default): ranks follow a random order of the nodes (what
         topology/torus3d, -m arbitrary or interleaved switches give);
         list: ranks follow the node list.
--name-len  length of every block name (default 63: the longest a map
         carries, RDZV_DOMAIN_NAME_MAX - 1).

Writes OUTDIR/nodes (the step's node list, one line, as Slurm prints it: one
bracket group per prefix), OUTDIR/topo (scontrol show topology: one
"BlockName=... BlockIndex=... Nodes=... BlockSize=..." line per block of the
whole pool) and OUTDIR/layout (one line per node of the step, in node list
order: the node's task ids, blank-separated; Slurm's slurm_step_layout_t
tids[]).
"""
import os
import random
import sys


def compress(prefix, width, nums):
    """Slurm's host list of prefix+number names: one bracket group."""
    parts, i = [], 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        if j > i:
            parts.append("%0*d-%0*d" % (width, nums[i], width, nums[j]))
        else:
            parts.append("%0*d" % (width, nums[i]))
        i = j + 1
    if len(nums) == 1:
        return "%s%0*d" % (prefix, width, nums[0])
    return "%s[%s]" % (prefix, ",".join(parts))


def main(argv):
    args, opts = [], {"--seed": "31", "--name-len": "63", "--order": "random"}
    it = iter(argv[1:])
    for a in it:
        if a in opts:
            opts[a] = next(it)
        else:
            args.append(a)
    if len(args) != 4:
        sys.stderr.write(__doc__)
        return 2
    cluster, case, n, out = args[0], args[1], int(args[2]), args[3]
    rng = random.Random(int(opts["--seed"]) * 1000003 + n)
    if cluster == "gb200":
        prefix, per_block, tpn = "gb", 18, 4
    elif cluster == "h100":
        prefix, per_block, tpn = "h", 32, 8
    else:
        sys.stderr.write("unknown cluster %s\n" % cluster)
        return 2
    if case == "trays16":
        if cluster != "gb200":
            sys.stderr.write("trays16 is a GB200 case\n")
            return 2
        blocks = (n + 15) // 16
        step = [r * 18 + t + 1 for r in range(blocks) for t in range(16)][:n]
    elif case == "pool80":
        blocks = (n * 5 // 4 + per_block - 1) // per_block
        step = sorted(rng.sample(range(1, blocks * per_block + 1), n))
    elif case == "alt":
        blocks = (2 * n + per_block - 1) // per_block
        step = list(range(1, 2 * n + 1, 2))
    else:
        sys.stderr.write("unknown case %s\n" % case)
        return 2
    width = 5
    name_len = int(opts["--name-len"])
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "nodes"), "w") as f:
        f.write(compress(prefix, width, step) + "\n")
    with open(os.path.join(out, "topo"), "w") as f:
        for b in range(blocks):
            name = ("%s-block%05d-" % (cluster, b)).ljust(name_len, "x")[:name_len]
            lo, hi = b * per_block + 1, b * per_block + per_block
            f.write("BlockName=%s BlockIndex=%d Nodes=%s[%0*d-%0*d] BlockSize=%d\n"
                    % (name, b, prefix, width, lo, width, hi, per_block))
    rank_of = list(range(n))
    if opts["--order"] == "random":
        rng.shuffle(rank_of)
    with open(os.path.join(out, "layout"), "w") as f:
        for i in range(n):
            r = rank_of[i]
            f.write(" ".join(str(r * tpn + t) for t in range(tpn)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

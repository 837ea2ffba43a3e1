# SPDX-License-Identifier: GPL-2.0-or-later
"""fw_report.py [MARKER]: one "FW_REPORT {json}" line with what a framework
would read (the rendezvous and launcher variables, SLURM_* ranks) and the
node; touches MARKER first when given (a test's proof that the task ran).
Accepts and ignores --local_rank=N (appended by DeepSpeed's launcher)."""
import json
import os
import sys

NAMES = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "NODE_RANK", "GROUP_RANK",
         "LOCAL_SIZE", "CROSS_RANK", "CROSS_SIZE", "MASTER_ADDR", "MASTER_PORT",
         "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_NTASKS_PER_NODE",
         "SLURM_JOB_NAME")
args = [a for a in sys.argv[1:] if not a.startswith("--local_rank")]
if args:
    open(args[0], "a").close()
env = {k: os.environ.get(k) for k in NAMES}
env.update({k: v for k, v in os.environ.items() if k.startswith("TORCHELASTIC_")})
print("FW_REPORT " + json.dumps({"node": os.environ.get("SLURMD_NODENAME"), "env": env},
                                sort_keys=True), flush=True)

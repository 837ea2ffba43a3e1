# SPDX-License-Identifier: GPL-2.0-or-later
"""fw_point5.py CASE: what submitit's and Accelerate's stand-ins make of a
task's environment; one "P5 {json}" line per task.
  submitit            TorchDistributedEnvironment().export()
  submitit-overwrite  ... export(overwrite=True)
  accelerate          Accelerator()
  accelerate-cpu      Accelerator(cpu=True)
  accelerate-gloo     Accelerator(cpu=True, kwargs_handlers=[InitProcessGroupKwargs(backend="gloo")]),
                      then an all_reduce of the ranks"""
import json
import os
import sys

case = sys.argv[1]
r = {"case": case, "node": os.environ.get("SLURMD_NODENAME"), "plugin_master": os.environ.get("MASTER_ADDR")}
if case.startswith("submitit"):
    from submitit.helpers import TorchDistributedEnvironment
    try:
        TorchDistributedEnvironment().export(overwrite=case == "submitit-overwrite")
        r.update(error=None, master=os.environ["MASTER_ADDR"], rank=os.environ["RANK"],
                 cuda=os.environ.get("CUDA_VISIBLE_DEVICES"))
    except RuntimeError as e:
        r["error"] = str(e)
else:
    import accelerate
    kw = [accelerate.InitProcessGroupKwargs(backend="gloo")] if case == "accelerate-gloo" else None
    a = accelerate.Accelerator(cpu=case != "accelerate", kwargs_handlers=kw)
    r.update(rank=a.process_index, world=a.num_processes, backend=a.backend)
    if case == "accelerate-gloo":
        import torch
        import torch.distributed as dist
        t = torch.tensor([a.process_index])
        dist.all_reduce(t)
        r["sum"] = int(t.item())
        a.end_training()
print("P5 " + json.dumps(r, sort_keys=True), flush=True)

# SPDX-License-Identifier: GPL-2.0-or-later
"""A tiny data-parallel training run, for trying the examples on any machine.

Every process reads only the standard torch.distributed variables (RANK,
WORLD_SIZE, MASTER_ADDR, MASTER_PORT, and LOCAL_RANK to pick its GPU), so the
same file runs under srun --rdzv=torch, under torchrun (which the plugin
configures in --rdzv=torchrun mode), under Kubeflow's PyTorchJob, and under
DeepSpeed (--deepspeed_config FILE; the deepspeed package then does the
rendezvous from the same variables).

Backend: nccl when CUDA is usable, else gloo (CPU). The model is one linear
layer; a few steps of SGD on synthetic data; every process prints one
"RDZV_REPORT {json}" line (its view of the rendezvous and an all-reduce check)
and rank 0 prints the loss. Exit status 0 only when the all-reduce is right
and the replicas end with identical weights.

    python train_tiny.py [--steps N] [--deepspeed_config ds_config.json]
"""
import argparse
import json
import os
import socket
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

KEYS = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
        "GROUP_WORLD_SIZE", "ROLE_RANK", "ROLE_WORLD_SIZE", "NODE_RANK",
        "MASTER_ADDR", "MASTER_PORT", "SLURMD_NODENAME", "SLURM_PROCID",
        "SLURM_LOCALID", "CUDA_VISIBLE_DEVICES", "TORCHELASTIC_USE_AGENT_STORE",
        "CROSS_RANK", "CROSS_SIZE", "LOCAL_SIZE", "CUDA_DEVICE_MAX_CONNECTIONS"]


def parse():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--deepspeed_config", default=None,
                   help="train through DeepSpeed with this config")
    # Launchers of the torch.distributed.launch family pass the local rank
    # on the command line; with the plugin it is in LOCAL_RANK.
    p.add_argument("--local_rank", "--local-rank", type=int, default=None)
    # sbatch-examples/10: resume after rdzv-retry reran the step elsewhere.
    p.add_argument("--resume", default=None, metavar="CKPT",
                   help="load CKPT when it exists; rank 0 saves it after every step")
    return p.parse_args()


def emit(line):
    """One write(2) per line: workers of one torchrun share a stdout, and
    an unbuffered print() writes text and newline separately, so lines of
    two workers could interleave."""
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), (line + "\n").encode())


def device_for(local_rank):
    if torch.cuda.is_available() and os.environ.get("RDZV_TINY_CPU") != "1":
        torch.cuda.set_device(local_rank % torch.cuda.device_count())
        return torch.device("cuda", torch.cuda.current_device()), "nccl"
    return torch.device("cpu"), "gloo"


def main():
    args = parse()
    local_rank = int(os.environ.get("LOCAL_RANK", args.local_rank or 0))
    device, backend = device_for(local_rank)
    timeout = timedelta(seconds=float(os.environ.get("RDZV_TEST_PG_TIMEOUT", "60")))

    torch.manual_seed(0)  # same initial weights everywhere
    model = torch.nn.Linear(16, 1).to(device)
    start = 0
    if args.resume and os.path.exists(args.resume):
        state = torch.load(args.resume, map_location=device)
        model.load_state_dict(state["model"])
        start = state["step"] + 1
        emit(f"train_tiny: resumed from {args.resume} at step {start} "
             f"(TORCHELASTIC_RESTART_COUNT={os.environ.get('TORCHELASTIC_RESTART_COUNT')})")
    if args.deepspeed_config:
        import deepspeed
        deepspeed.init_distributed(dist_backend=backend, timeout=timeout)
        engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(),
                                               config=args.deepspeed_config)
    else:
        dist.init_process_group(backend, init_method="env://", timeout=timeout)
        ddp = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index] if device.type == "cuda" else None)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    rank, world = dist.get_rank(), dist.get_world_size()

    gen = torch.Generator().manual_seed(1234 + rank)  # different data per rank
    for step in range(start, args.steps):
        x = torch.randn(32, 16, generator=gen).to(device)
        y = x.sum(dim=1, keepdim=True)
        if args.deepspeed_config:
            loss = torch.nn.functional.mse_loss(engine(x), y)
            engine.backward(loss)
            engine.step()
        else:
            loss = torch.nn.functional.mse_loss(ddp(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        if rank == 0:
            emit(f"train_tiny: step {step} loss {loss.item():.4f} (world {world})")
            if args.resume:
                torch.save({"model": model.state_dict(), "step": step}, args.resume + ".tmp")
                os.replace(args.resume + ".tmp", args.resume)

    t = torch.tensor([float(rank + 1)], device=device)
    dist.all_reduce(t)
    expect = world * (world + 1) / 2
    # Data parallelism keeps the replicas identical: compare weight sums.
    w = torch.stack([model.weight.detach().sum()]).to(device)
    ws = [torch.zeros_like(w) for _ in range(world)]
    dist.all_gather(ws, w)
    same = all(torch.allclose(v, ws[0]) for v in ws)
    report = {"env": {k: os.environ.get(k) for k in KEYS}, "rank": rank, "world": world,
              "allreduce": t.item(), "expect": expect, "replicas_equal": same,
              "node": os.environ.get("SLURMD_NODENAME", socket.gethostname())}
    emit("RDZV_REPORT " + json.dumps(report, sort_keys=True))
    dist.barrier()
    dist.destroy_process_group()
    return 0 if t.item() == expect and same else 1


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: GPL-2.0-or-later
"""Compare the environment real torchrun gives its workers with what
srun --rdzv=torch gives each task (tests/0029).

Reads two files of dump_env.py output: the torchrun run (RDZV_LAUNCHER lines
from the launcher on each node, RDZV_ENV lines from each worker) and the
--rdzv=torch run (RDZV_ENV lines). The expected variables are those torchrun
ADDED or CHANGED in its workers' environment relative to its own launcher's
on the same node: measured, not taken from the plugin's table. Each must be
present in the --rdzv=torch task of the same RANK with the same value,
except the justified list below. Prints the diff, one line per variable,
and exits 1 when an unjustified difference remains.

usage: parity.py TORCHRUN_OUT RDZV_OUT
"""
import json
import sys

# name -> (why, check(torchrun_values_by_rank, rdzv_values_by_rank) -> error or None)


def same_on_all(vals):
    return len(set(vals.values())) == 1


def check_agent_store(t, r):
    if any(v != "False" for v in r.values()):
        return "must be False on every rank (no torchrun agent hosts a store)"
    return None


def check_run_id(t, r):
    if None in r.values() or not same_on_all(r):
        return "must be present and the same on every rank (one id per run)"
    return None


def check_port(t, r):
    if None in r.values() or not same_on_all(r) or not all(1024 <= int(v) <= 65535 for v in r.values()):
        return "must be one port 1024-65535, the same on every rank"
    return None


def check_old_nccl(t, r, env_r):
    if any(env_r[k].get("TORCH_NCCL_ASYNC_ERROR_HANDLING") != t[k] for k in t):
        return "TORCH_NCCL_ASYNC_ERROR_HANDLING must carry the same value"
    return None


# torch.distributed.elastic.multiprocessing.api's PContext.start() reads
# TORCHELASTIC_SIGNALS_TO_HANDLE with this default when it is unset (read in
# PyTorch 2.14's source): the only reader of the name.
SIGNALS_DEFAULT = "SIGTERM,SIGINT,SIGHUP,SIGQUIT"


def check_signals(t, r):
    if any(v != SIGNALS_DEFAULT for v in t.values()):
        return "torchrun ran with --signals-to-handle other than the default the reader falls back on"
    if any(v not in (None, SIGNALS_DEFAULT) for v in r.values()):
        return "the task carries another list than torchrun's default"
    return None


JUSTIFIED = {
    "TORCHELASTIC_SIGNALS_TO_HANDLE": ("torchrun 2.9+ puts its own --signals-to-handle into its "
                                       "environment for its agent's process context; a worker "
                                       "inherits it, and its one reader (PContext.start(), only "
                                       "in a process that launches elastic workers itself) "
                                       "defaults to the same list when it is unset",
                                       check_signals),
    "TORCHELASTIC_ERROR_FILE": ("a per-process path torchrun's agent creates to collect the "
                                "worker's error report; there is no agent", None),
    "TMPDIR": ("a per-process directory of torchrun's agent", None),
    "TORCHELASTIC_USE_AGENT_STORE": ("torchrun's agent hosts the store (True); under srun rank 0 "
                                     "does, so the plugin sets False", check_agent_store),
    "TORCHELASTIC_RUN_ID": ("torchrun's --rdzv-id (default 'none'); the plugin names the step "
                            "(slurm-JOB.STEP): the same meaning, one id per run", check_run_id),
    "MASTER_PORT": ("each run has its own port (torchrun's was given on its command line)",
                    check_port),
    "NCCL_ASYNC_ERROR_HANDLING": ("PyTorch < 2.2's name; torchrun 2.x sets "
                                  "TORCH_NCCL_ASYNC_ERROR_HANDLING, which the plugin sets "
                                  "(the old name makes PyTorch >= 2.2 warn on every rank)",
                                  "old_nccl"),
}


def read(path):
    envs = {}
    with open(path, errors="replace") as f:
        for line in f:
            for tag in ("RDZV_LAUNCHER", "RDZV_ENV"):
                i = line.find(tag + " ")
                if i < 0:
                    continue
                _, me, kv = line[i:].rstrip("\n").split(" ", 2)
                k, v = json.loads(kv)
                envs.setdefault((tag, me), {})[k] = v
    launchers, workers = {}, {}
    for (tag, me), env in envs.items():
        if env.pop("", None) != "END":
            raise SystemExit("parity: incomplete dump from %s %s" % (tag, me))
        if tag == "RDZV_LAUNCHER":
            launchers[env.get("SLURMD_NODENAME", "?")] = env
        else:
            workers[int(env["RANK"])] = env
    return launchers, workers


def main():
    t_launch, t_workers = read(sys.argv[1])
    _, r_workers = read(sys.argv[2])
    if not t_workers or not t_launch:
        print("parity: no torchrun worker or launcher dump")
        return 2
    if sorted(t_workers) != sorted(r_workers):
        print("parity: ranks differ: torchrun %s, rdzv %s" % (sorted(t_workers), sorted(r_workers)))
        return 1
    expected = {}
    for rank, env in t_workers.items():
        base = t_launch.get(env.get("SLURMD_NODENAME", "?"), {})
        for k, v in env.items():
            # PET_*: torchrun's own inputs; SHLVL, _: bookkeeping of the
            # test's bash wrapper around torchrun, not torchrun's doing.
            if base.get(k) != v and not k.startswith("PET_") and k not in ("SHLVL", "_"):
                expected.setdefault(k, {})[rank] = v
    bad = 0
    for k in sorted(expected):
        t = {rank: t_workers[rank].get(k) for rank in t_workers}
        r = {rank: r_workers[rank].get(k) for rank in r_workers}
        if k in JUSTIFIED:
            why, check = JUSTIFIED[k]
            err = None
            if check == "old_nccl":
                err = check_old_nccl(t, r, r_workers)
            elif check:
                err = check(t, r)
            if err:
                bad += 1
                print("DIFFERS %s: torchrun %s, rdzv %s: %s" % (k, sorted(set(t.values())),
                                                              sorted(set(map(str, r.values()))), err))
            else:
                print("justified %s (torchrun %s, rdzv %s): %s" % (k, sorted(set(t.values()))[:2],
                                                                 sorted(set(map(str, r.values())))[:2], why))
            continue
        missing = [rank for rank in r if r[rank] is None]
        differ = [rank for rank in r if r[rank] is not None and r[rank] != t[rank]]
        if missing:
            bad += 1
            print("MISSING %s (torchrun: %s) on ranks %s" % (k, sorted(set(t.values())), missing))
        elif differ:
            bad += 1
            print("DIFFERS %s on ranks %s: torchrun %s, rdzv %s" % (
                k, differ, [t[x] for x in differ], [r[x] for x in differ]))
        else:
            print("same %s (%s)" % (k, ",".join(sorted(set(t.values())))))
    print("parity: %d variables torchrun sets, %d unjustified differences" % (len(expected), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

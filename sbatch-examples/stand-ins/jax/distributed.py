# SPDX-License-Identifier: GPL-2.0-or-later
"""jax.distributed stand-in.

initialize() follows jax/_src/distributed.py: coordinator_address from the
argument or JAX_COORDINATOR_ADDRESS, local_device_ids from the argument or
JAX_LOCAL_DEVICE_IDS; whatever is still unset comes from the cluster
detection, here Slurm's (jax/_src/clusters/slurm_cluster.py): the first host
of SLURM_STEP_NODELIST with port SLURM_JOB_ID % 4096 + 61440, SLURM_NTASKS,
SLURM_PROCID, and [SLURM_LOCALID] as the local device ids. Where real JAX
would fail the stand-in raises: a local device id that CUDA_VISIBLE_DEVICES
does not have, a process id outside 0..num_processes-1. The coordination
service is a torch TCPStore hosted by process 0 at the coordinator address:
every process must reach it and agree on the count, or the run times out.
One "JAX_STANDIN {json}" line per process says what was used and from where.

Behaviours of the real JAX (0.11, jax/_src/distributed.py and
jax/_src/clusters/, ../shared/frameworks/README.md) reproduced here:
- it reads JAX_COORDINATOR_ADDRESS and JAX_LOCAL_DEVICE_IDS, never
  JAX_NUM_PROCESSES or JAX_PROCESS_ID: without arguments the count and id
  come from the cluster detection;
- the detection tries Open MPI first (present when OMPI_MCA_orte_hnp_uri is
  set: it then needs OMPI_COMM_WORLD_SIZE/RANK/LOCAL_RANK and fails with a
  KeyError without them, as real JAX crashes), then Slurm, which needs both
  SLURM_JOB_ID and SLURM_STEP_NODELIST (a batch step has no step node list)
  and takes the first host of SLURM_STEP_NODELIST by naive parsing;
- process 0 starts the coordination service on its own node: when the
  coordinator address names another node, the others would wait for it
  there until the timeout; the stand-in raises at once (process 0 checks
  the address is its own node's).
"""
import json
import os
import re
from datetime import timedelta

_state = None


class _State:
    pass


def state():
    if _state is None:
        raise RuntimeError("jax stand-in: jax.distributed.initialize() was not called")
    return _state


def _slurm_detect():
    nodes = os.environ["SLURM_STEP_NODELIST"]
    first = re.match(r"([^,\[]*)(\[([0-9]+))?", nodes)
    host = first.group(1) + (first.group(3) or "")
    port = int(os.environ["SLURM_JOB_ID"]) % 2**12 + (65535 - 2**12 + 1)
    return (f"{host}:{port}", int(os.environ["SLURM_NTASKS"]), int(os.environ["SLURM_PROCID"]),
            int(os.environ["SLURM_LOCALID"]))


def initialize(coordinator_address=None, num_processes=None, process_id=None,
               local_device_ids=None, initialization_timeout=60):
    global _state
    from torch.distributed import TCPStore

    src = {"coordinator": "argument", "count": "argument", "id": "argument", "devices": "argument"}
    if coordinator_address is None and os.environ.get("JAX_COORDINATOR_ADDRESS"):
        coordinator_address = os.environ["JAX_COORDINATOR_ADDRESS"]
        src["coordinator"] = "JAX_COORDINATOR_ADDRESS"
    if local_device_ids is None and os.environ.get("JAX_LOCAL_DEVICE_IDS"):
        local_device_ids = [int(x) for x in os.environ["JAX_LOCAL_DEVICE_IDS"].split(",")]
        src["devices"] = "JAX_LOCAL_DEVICE_IDS"
    unset = None in (coordinator_address, num_processes, process_id, local_device_ids)
    if unset and "OMPI_MCA_orte_hnp_uri" in os.environ:
        # jax/_src/clusters/ompi_cluster.py, first in the detection order
        uri = os.environ["OMPI_MCA_orte_hnp_uri"]
        m = re.search(r"tcp://(.+?)[,:]|tcp6://\[(.+?)[,\]]", uri)
        if m is None:
            raise RuntimeError("Could not parse coordinator IP address from Open MPI environment.")
        count = int(os.environ["OMPI_COMM_WORLD_SIZE"])  # KeyError under srun, as in JAX
        pid = int(os.environ["OMPI_COMM_WORLD_RANK"])
        localid = int(os.environ["OMPI_COMM_WORLD_LOCAL_RANK"])
        addr = f"{m.group(1) or m.group(2)}:{int(uri.split('.', 1)[0]) % 2**12 + 61440}"
        coordinator_address = coordinator_address or addr
        num_processes = num_processes if num_processes is not None else count
        process_id = process_id if process_id is not None else pid
        local_device_ids = local_device_ids if local_device_ids is not None else [localid]
        src = {k: "ompi-detection" if v == "argument" else v for k, v in src.items()}
        unset = False
    if unset and "SLURM_JOB_ID" in os.environ and "SLURM_STEP_NODELIST" in os.environ:
        addr, count, pid, localid = _slurm_detect()
        if coordinator_address is None:
            coordinator_address, src["coordinator"] = addr, "slurm-detection"
        if num_processes is None:
            num_processes, src["count"] = count, "SLURM_NTASKS"
        if process_id is None:
            process_id, src["id"] = pid, "SLURM_PROCID"
        if local_device_ids is None:
            local_device_ids, src["devices"] = [localid], "SLURM_LOCALID"
    if None in (coordinator_address, num_processes, process_id):
        raise ValueError("jax stand-in: coordinator_address, num_processes and process_id "
                         "must be defined")
    if not 0 <= process_id < num_processes:
        raise ValueError(f"jax stand-in: process_id {process_id} not in 0..{num_processes - 1}")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and local_device_ids:
        n = len([v for v in visible.split(",") if v != ""])
        missing = [i for i in local_device_ids if i >= n]
        if missing:
            raise RuntimeError(f"jax stand-in: local device ids {missing} do not exist: the "
                               f"process sees {n} GPU(s) (CUDA_VISIBLE_DEVICES={visible})")
    host, port = coordinator_address.rsplit(":", 1)
    host = host.strip("[]")
    if process_id == 0:
        import socket
        me = os.environ.get("SLURMD_NODENAME") or socket.gethostname()
        mine = {a[4][0] for a in socket.getaddrinfo(me, None)}
        theirs = {a[4][0] for a in socket.getaddrinfo(host, None)}
        if not mine & theirs:
            raise RuntimeError(f"jax stand-in: process 0 runs on {me} and starts the coordinator "
                               f"there, but the coordinator address is {coordinator_address}: "
                               "the other processes would wait for it until the timeout")
    # A PyTorch built without libuv (Debian 13's 2.6) needs use_libuv=False:
    # TCPStore defaults to libuv since 2.4 and ignores USE_LIBUV; 1.13 has no
    # such argument, so it is passed only when USE_LIBUV=0 asks for it.
    extra = {"use_libuv": False} if os.environ.get("USE_LIBUV") == "0" else {}
    store = TCPStore(host, int(port), num_processes, process_id == 0,
                     timedelta(seconds=initialization_timeout), **extra)
    store.set(f"process/{process_id}", "up")
    store.wait([f"process/{i}" for i in range(num_processes)])
    _state = _State()
    _state.store, _state.process_id, _state.num_processes = store, process_id, num_processes
    _state.local_device_ids = list(local_device_ids or [])
    _state.barriers = 0
    print("JAX_STANDIN " + json.dumps({
        "coordinator": coordinator_address, "num_processes": num_processes,
        "process_id": process_id, "local_device_ids": _state.local_device_ids,
        "source": src, "cuda_visible_devices": visible,
        "node": os.environ.get("SLURMD_NODENAME")}, sort_keys=True), flush=True)


def shutdown():
    pass

# SPDX-License-Identifier: GPL-2.0-or-later
"""torchrun, the real one of PyTorch 2.x, with one default changed.

Why a shim: Debian 13 builds PyTorch 2.6 without libuv, while TCPStore has
defaulted to its libuv backend since PyTorch 2.4. A plain env:// rendezvous
honours USE_LIBUV=0, but three TCPStores that torchrun makes ignore it and
ask for libuv, so real torchrun dies ("use_libuv was requested but PyTorch
was build without libuv support"):
  - the agent's store of the static rendezvous (static_tcp_rendezvous.py),
    of the c10d rendezvous backend (c10d_rendezvous_backend.py) and the
    store the dynamic (c10d) rendezvous shares with workers
    (dynamic_rendezvous.py, _create_tcp_store_server);
  - each worker's client of that agent store (torch/distributed/rendezvous.py,
    _create_c10d_store when TORCHELASTIC_USE_AGENT_STORE=True).
The shim makes those TCPStores default use_libuv to USE_LIBUV (off when
unset), then runs torch.distributed.run.main() exactly as the torchrun entry
point does. Workers are started through this file too (`--worker SCRIPT`),
which applies the same default in the worker and then runs SCRIPT as
__main__. Nothing else changes: every flag still comes from the command line
or PET_* variables. Where PyTorch has libuv, USE_LIBUV=1 restores it.
"""
import os
import runpy
import sys


def _libuv_default(store_class):
    def tcp_store(*args, **kwargs):
        kwargs.setdefault("use_libuv", os.environ.get("USE_LIBUV", "0") == "1")
        return store_class(*args, **kwargs)

    return tcp_store


def _worker(argv):
    """argv: [-m] SCRIPT-OR-MODULE ARGS... as torchrun passes to python -u."""
    import torch.distributed  # noqa: F401 (loads the module below)

    rendezvous = sys.modules["torch.distributed.rendezvous"]
    rendezvous.TCPStore = _libuv_default(rendezvous.TCPStore)
    if argv[0] == "-m":
        sys.argv = [argv[1]] + argv[2:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")


class _DistWithDefault:
    """torch.distributed as one module sees it, TCPStore with the default."""

    def __init__(self, dist):
        self._dist = dist
        self.TCPStore = _libuv_default(dist.TCPStore)

    def __getattr__(self, name):
        return getattr(self._dist, name)


def _agent():
    import torch.distributed as dist
    import torch.distributed.run as run
    from torch.distributed.elastic.rendezvous import c10d_rendezvous_backend
    from torch.distributed.elastic.rendezvous import dynamic_rendezvous
    from torch.distributed.elastic.rendezvous import static_tcp_rendezvous

    static_tcp_rendezvous.TCPStore = _libuv_default(static_tcp_rendezvous.TCPStore)
    c10d_rendezvous_backend.TCPStore = _libuv_default(c10d_rendezvous_backend.TCPStore)
    dynamic_rendezvous.dist = _DistWithDefault(dist)
    config_from_args = run.config_from_args

    def through_shim(args):
        config, cmd, cmd_args = config_from_args(args)
        # python -u [-m] SCRIPT ... becomes python -u THIS --worker [-m] SCRIPT ...
        # (--no-python and --run-path start no python of ours: unchanged).
        if isinstance(cmd, str) and cmd_args[:1] == ["-u"]:
            cmd_args = ["-u", os.path.abspath(__file__), "--worker"] + cmd_args[1:]
        return config, cmd, cmd_args

    run.config_from_args = through_shim
    sys.argv[0] = "torchrun"
    return run.main()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        _worker(sys.argv[2:])
    else:
        sys.exit(_agent())

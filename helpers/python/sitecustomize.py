# SPDX-License-Identifier: GPL-2.0-or-later
# spank-rdzv: put on PYTHONPATH by the plugin only under --rdzv-debug=hang
# (or debug=hang in plugstack.conf), --rdzv-collective-timeout, and for
# torchrun's task under --rdzv=torchrun; see rdzv-hang(1), rdzv(8).
#
# Registers Python's faulthandler on RDZV_HANG_SIGNAL, writing every thread's
# stack into this process's own file of the step's directory (RDZV_HANG_DIR,
# the user's, made by the plugin), so that rdzv-hang can ask each rank where
# it is without stopping it: faulthandler writes from its C signal handler,
# whatever the main thread is blocked in. Then runs the sitecustomize this
# file shadows (Debian's, an image's, a user's), as Python would have.
# Costs one open file per Python process of the step; nothing when unarmed.
# faulthandler names the main thread last; a process of more than 100
# threads may have it left out (faulthandler prints at most 100).
#
# Also:
# - RDZV_COLLECTIVE_TIMEOUT=SECONDS (--rdzv-collective-timeout): becomes
#   torch.distributed's default timeout (torch.distributed.constants'
#   default_pg_timeout, and default_pg_nccl_timeout where it exists, set as
#   that module is first imported, before distributed_c10d binds them:
#   PyTorch 1.13 to 2.14 read no environment variable for it). A timeout
#   the program passes itself is left alone.
# - RDZV_HANG_ASK (srun's, in an armed step): when the program ends on an
#   error raised in torch.distributed (a collective's timeout, or the
#   connection a timed-out peer closed), the process asks srun to run rdzv-hang on the step
#   and waits (at most RDZV_HANG_WAIT seconds, default 60) until srun has
#   its answer, so that the ranks it waited for are still there to be asked;
#   meanwhile rdzv-hang's signal gets the stack the timeout unwound. And
#   the moment a collective raises a communication failure, before the
#   program's own handlers run, it tells srun so ("FAIL"), once: a step
#   whose ranks then block in their cleanup is stopped after its grace.


def _rdzv_after_import(fullname, after):
    # Runs after(module) as the module fullname is first imported, before
    # whatever imports it reads its names (a finder first in sys.meta_path,
    # removed once it has found the module). Nothing when it is imported
    # already: the caller's to handle.
    import sys

    class _Finder(object):
        def find_spec(self, name, path, target=None):
            if name != fullname:
                return None
            import importlib.machinery

            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                after(module)

            spec.loader.exec_module = exec_module
            return spec

    if fullname not in sys.modules:
        sys.meta_path.insert(0, _Finder())


def _rdzv_timeout():
    import os

    v = os.environ.get("RDZV_COLLECTIVE_TIMEOUT", "")
    if not v.isdigit() or not 0 < int(v) <= 7 * 24 * 3600:
        return
    import datetime

    t = datetime.timedelta(seconds=int(v))

    def set_default(module):
        for attr in ("default_pg_timeout", "default_pg_nccl_timeout"):
            if isinstance(getattr(module, attr, None), datetime.timedelta):
                setattr(module, attr, t)

    _rdzv_after_import("torch.distributed.constants", set_default)

# - RDZV_FORWARD_SIGNALS=USR1,USR2 (the plugin's, for torchrun's agent
#   under --rdzv=torchrun): Slurm's warning signals (--signal=USR1@120,
#   scancel --signal) reach the step's tasks, i.e. torchrun, and not its
#   2.x workers (each in its own session), and torchrun handles only
#   TERM/INT/HUP/QUIT: USR1 would end it. The agent takes the variable out
#   of its environment (its workers do not inherit it) and, for each signal
#   named whose handler is still the default, forwards it to every child
#   outside its own process group: one Slurm cannot reach. Children in its
#   group (PyTorch 1.13's workers) got it from Slurm's proctrack/pgid
#   already; under proctrack/cgroup see doc/modes.md.


def _rdzv_forward():
    import os

    v = os.environ.pop("RDZV_FORWARD_SIGNALS", "")
    if not v or v == "none":
        return
    import signal

    me = os.getpid()

    def forward(signum, frame):
        if os.getpid() != me:  # a forked child of torchrun's: not the agent
            return
        grp = os.getpgrp()
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % d) as f:
                    st = f.read()
                fields = st[st.rindex(")") + 2:].split()
                ppid, pgrp = int(fields[1]), int(fields[2])
                if ppid == me and pgrp != grp:
                    os.kill(int(d), signum)
            except (OSError, ValueError, IndexError):
                pass

    for name in v.split(","):
        sig = getattr(signal, "SIG" + name.strip().upper(), None)
        if isinstance(sig, int) and signal.getsignal(sig) == signal.SIG_DFL:
            signal.signal(sig, forward)


def _rdzv_arm():
    import os

    d = os.environ.get("RDZV_HANG_DIR")
    if not d or not os.path.isabs(d):
        return
    try:
        import atexit
        import faulthandler
        import signal

        sig = int(os.environ.get("RDZV_HANG_SIGNAL", "41"))
        path = os.path.join(d, "%d.stack" % os.getpid())
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        f = os.fdopen(fd, "w")
        # What faulthandler.unregister() puts back: ignored, never the
        # default action (which ends a process) while a collector may still
        # send the signal.
        signal.signal(sig, signal.SIG_IGN)
        faulthandler.register(sig, file=f, all_threads=True, chain=False)
        pid = os.getpid()

        def done():
            if os.getpid() != pid:  # a forked child exiting normally
                return
            try:
                # Ignored from here on, not back to its default action
                # (which ends a process): a collector that saw the handler
                # a moment ago may still send it. The step's directory
                # stays: another process of the task may arm there later.
                faulthandler.unregister(sig)
                signal.signal(sig, signal.SIG_IGN)
                os.unlink(path)
            except (OSError, ValueError):
                pass

        atexit.register(done)
        globals()["_rdzv_hang_file"] = f
        _rdzv_on_timeout(f.fileno(), sig)
    except Exception:  # never break the user's program
        pass


def _rdzv_on_timeout(fd, sig):
    import os
    import sys

    ask = os.environ.get("RDZV_HANG_ASK", "").split(":")
    host = os.environ.get("SLURM_SRUN_COMM_HOST", "")
    if len(ask) != 3 or not ask[1].isdigit() or not host:
        return
    js, port, nonce = ask[0], int(ask[1]), ask[2]
    prev = sys.excepthook
    me = os.getpid()

    def in_collective(v, tb):
        # A collective (or the store) that failed: its own timeout, or a
        # peer's that closed the connection first (gloo closes its pairs as
        # it gives up, and the other waiting ranks then see "Connection
        # closed by peer" before their own timeout).
        if not isinstance(v, (RuntimeError, TimeoutError, ConnectionError)):
            return False
        while tb is not None:
            if "/torch/distributed/" in tb.tb_frame.f_code.co_filename.replace(os.sep, "/"):
                return True
            tb = tb.tb_next
        return False

    def hook(t, v, tb):
        try:
            import threading

            # Not a forked child (it would ask with its parent's rank and
            # write into its parent's file), and only the main thread can
            # take the signal handler.
            if (os.getpid() == me and threading.current_thread() is threading.main_thread()
                    and in_collective(v, tb)):
                wait_for_srun(v, tb)
        except Exception:
            pass
        prev(t, v, tb)

    def wait_for_srun(v, tb):
        import signal
        import socket
        import threading
        import time
        import traceback

        # What faulthandler would have written had the collective not
        # returned: the frames the exception unwound, innermost first.
        text = "Current thread 0x%016x (most recent call first):\n" % threading.get_ident()
        for fr in reversed(traceback.extract_tb(tb)):
            text += '  File "%s", line %d in %s\n' % (fr.filename, fr.lineno or 0, fr.name)
        data = (text + "\n").encode("utf-8", "replace")

        def answer(signum, frame):
            try:
                os.write(fd, data)
            except OSError:
                pass

        import faulthandler

        faulthandler.unregister(sig)
        signal.signal(sig, answer)
        rank = os.environ.get("RANK", os.environ.get("SLURM_PROCID", "0"))
        node = os.environ.get("SLURMD_NODENAME", socket.gethostname().split(".")[0])
        what = (str(v).splitlines() or [""])[0][:200]
        msg = ("RDZVH1 ASK %s %s %s %s\n%s: %s" % (js, nonce, rank, node, type(v).__name__, what)).encode(
            "ascii", "replace")
        done = ("RDZVH1 DONE %s %s" % (js, nonce)).encode()
        wait = os.environ.get("RDZV_HANG_WAIT", "60")
        end = time.monotonic() + (int(wait) if wait.isdigit() else 60)
        ai = socket.getaddrinfo(host, port, 0, socket.SOCK_DGRAM)[0]
        s = socket.socket(ai[0], socket.SOCK_DGRAM)
        try:
            while time.monotonic() < end:
                s.sendto(msg, ai[4])
                s.settimeout(max(0.1, min(5.0, end - time.monotonic())))
                try:
                    while time.monotonic() < end:
                        got = s.recv(256)
                        if got == done:
                            return
                except socket.timeout:
                    continue
        finally:
            s.close()

    sys.excepthook = hook
    _rdzv_on_collective(js, port, nonce, host, me)


# The communication failures a torch.distributed call raises: its own
# timeout, a peer gone (gloo's "Connection closed by peer", a reset
# connection), not a call made wrongly (a group not initialised, a bad
# argument: NCCL raises those as DistBackendError too, so only the network
# and store errors count by their type).
_RDZV_COMM = ("timed out", "timeout", "closed by peer", "connection reset", "connection refused",
              "broken pipe")
_RDZV_CALLS = ("all_reduce", "all_reduce_coalesced", "all_gather", "all_gather_coalesced",
               "all_gather_into_tensor", "_all_gather_base", "all_gather_object", "all_to_all",
               "all_to_all_single", "barrier", "monitored_barrier", "broadcast",
               "broadcast_object_list", "gather", "gather_object", "reduce", "reduce_scatter",
               "reduce_scatter_tensor", "_reduce_scatter_base", "scatter", "scatter_object_list",
               "send", "recv", "send_object_list", "recv_object_list", "batch_isend_irecv")


def _rdzv_on_collective(js, port, nonce, host, me):
    # RDZV_HANG_ASK (an armed step): the moment one of torch.distributed's
    # collectives raises a communication failure, before the program's own
    # except and finally blocks run (a barrier or destroy_process_group
    # there may never return), the process tells srun, once, and waits for
    # nothing: srun then gives the step its grace (--rdzv-collective-grace)
    # and names the ranks that never said so. Each call is wrapped as
    # torch.distributed.distributed_c10d is first imported, before
    # torch.distributed copies its names; failures seen elsewhere (DDP's
    # bucketed all-reduce) are reported by the excepthook, if ever.
    import os
    import sys

    told = []

    def tell(v):
        if told or os.getpid() != me:
            return
        told.append(1)
        try:
            import socket

            rank = os.environ.get("RANK", os.environ.get("SLURM_PROCID", "0"))
            node = os.environ.get("SLURMD_NODENAME", socket.gethostname().split(".")[0])
            what = (str(v).splitlines() or [""])[0][:200]
            world = os.environ.get("WORLD_SIZE", "")
            if not world.isdigit():
                try:
                    import torch.distributed as dist

                    world = str(dist.get_world_size())
                except Exception:
                    world = "0"  # not known
            msg = ("RDZVH1 FAIL %s %s %s %s %s\n%s: %s" % (js, nonce, rank, node, world, type(v).__name__,
                                                          what)).encode("ascii", "replace")
            ai = socket.getaddrinfo(host, port, 0, socket.SOCK_DGRAM)[0]
            s = socket.socket(ai[0], socket.SOCK_DGRAM)
            try:
                s.sendto(msg, ai[4])
                s.sendto(msg, ai[4])  # a datagram lost costs the step its end
            finally:
                s.close()
        except Exception:
            pass

    def comm_failure(v):
        if not isinstance(v, (RuntimeError, TimeoutError, ConnectionError)):
            return False
        if type(v).__name__ in ("DistNetworkError", "DistStoreError") or isinstance(
                v, (TimeoutError, ConnectionError)):
            return True
        text = str(v).lower()
        return any(w in text for w in _RDZV_COMM)

    def wrap(f):
        import functools

        @functools.wraps(f)
        def _rdzv_collective(*a, **k):
            try:
                return f(*a, **k)
            except Exception as v:
                try:
                    if comm_failure(v):
                        tell(v)
                except Exception:
                    pass
                raise

        _rdzv_collective._rdzv_wrapped = True
        return _rdzv_collective

    def wrap_module(module):
        for name in _RDZV_CALLS:
            f = getattr(module, name, None)
            if callable(f) and not getattr(f, "_rdzv_wrapped", False):
                setattr(module, name, wrap(f))

    name = "torch.distributed.distributed_c10d"
    if name in sys.modules:  # imported already: its copies in torch.distributed too
        mod = sys.modules[name]
        old = dict((n, getattr(mod, n, None)) for n in _RDZV_CALLS)
        wrap_module(mod)
        td = sys.modules.get("torch.distributed")
        for n, f in old.items():
            if td is not None and f is not None and getattr(td, n, None) is f:
                setattr(td, n, getattr(mod, n))
        return

    def wrap_new(module):
        try:
            wrap_module(module)
        except Exception:
            pass

    _rdzv_after_import(name, wrap_new)


def _rdzv_chain():
    import importlib.machinery
    import importlib.util
    import os
    import sys

    if getattr(sys, "_rdzv_chained", False):  # never twice, whatever the path spelling
        return
    sys._rdzv_chained = True
    me = os.path.realpath(__file__)
    path = [p for p in sys.path if os.path.realpath(p or ".") != os.path.dirname(me)]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None or (spec.origin and os.path.realpath(spec.origin) == me):
        return
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)


for _f in (_rdzv_forward, _rdzv_timeout):
    try:
        _f()
    except Exception:
        pass
_rdzv_arm()
try:
    _rdzv_chain()
except Exception as e:  # what Python's site.py does with a failing one
    import sys

    print("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s"
          % (type(e).__name__, e), file=sys.stderr)

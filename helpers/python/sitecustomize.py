# spank-rdzv: put on PYTHONPATH by the plugin only under --rdzv-debug=hang
# (or debug=hang in plugstack.conf); see rdzv-hang(1).
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
    except Exception:  # never break the user's program
        pass


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


_rdzv_arm()
try:
    _rdzv_chain()
except Exception as e:  # what Python's site.py does with a failing one
    import sys

    print("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s"
          % (type(e).__name__, e), file=sys.stderr)

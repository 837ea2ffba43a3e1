# SPDX-License-Identifier: GPL-2.0-or-later
"""multihost_utils stand-in over the coordination store."""
import json
import time
import time

from .. import distributed


class _Sum(list):
    def sum(self):
        return float(sum(self))


def process_allgather(values):
    s = distributed.state()
    s.barriers += 1
    key = f"allgather/{s.barriers}"
    s.store.set(f"{key}/{s.process_id}", json.dumps(list(values)))
    out = _Sum()
    for i in range(s.num_processes):
        s.store.wait([f"{key}/{i}"])
        out.extend(json.loads(s.store.get(f"{key}/{i}")))
    return out


def sync_global_devices(name):
    s = distributed.state()
    s.barriers += 1
    key = f"sync/{s.barriers}/{name}"
    s.store.add(key, 1)
    while int(s.store.add(key, 0)) < s.num_processes:
        time.sleep(0.05)
    # Process 0 hosts the store: it leaves last, after everyone stopped using it.
    s.store.add(key + "/out", 1)
    while s.process_id == 0 and int(s.store.add(key + "/out", 0)) < s.num_processes:
        time.sleep(0.05)

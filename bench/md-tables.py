# SPDX-License-Identifier: GPL-2.0-or-later
"""Markdown tables for doc/performance.md from a benchmark's results.csv.

  md-tables.py RESULTS.csv

Prints one table per section (launch, ttfc, scale, task_init, user_init,
topology and its tagged variants) with the numbers as measured, so that the
document is updated by pasting, never by retyping.
"""
import csv
import sys
from collections import OrderedDict


def extra_of(row):
    out = {}
    for kv in (row.get("extra") or "").split(";"):
        if "=" in kv:
            k, v = kv.split("=", 1)
            out[k] = v
    return out


def fmt(v, nd=2):
    x = float(v)
    return "{:,.{}f}".format(x, nd)


def table(header, rows):
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print()


def main(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    by = OrderedDict()
    for r in rows:
        by.setdefault(r["section"], []).append(r)

    launch = by.get("launch", [])
    if launch:
        print("### launch (%s)\n" % launch[0]["unit"])
        table(["config", "n", "median", "min", "max", "ratio", "paired", "Δ median"],
              [[r["config"], r["reps"], fmt(r["median"], 1), fmt(r["min"], 1), fmt(r["max"], 1),
                fmt(r["ratio"], 3), fmt(extra_of(r).get("paired_ratio", "nan"), 3),
                "%+.1f" % float(extra_of(r).get("delta", "nan"))] for r in launch])
    layout = by.get("layout", [])
    if layout:
        print("### layout look-up in srun (%s)\n" % layout[0]["unit"])
        table(["step", "n", "median", "min", "max"],
              [[r["case"], r["reps"], fmt(r["median"], 3), fmt(r["min"], 3), fmt(r["max"], 3)]
               for r in layout])
    ttfc = by.get("ttfc", [])
    for metric in OrderedDict((extra_of(r)["metric"], 1) for r in ttfc):
        sel = [r for r in ttfc if extra_of(r)["metric"] == metric]
        print("### ttfc %s (%s)\n" % (metric, sel[0]["unit"]))
        table(["config", "n", "median", "min", "max", "ratio", "paired"],
              [[r["config"], r["reps"], fmt(r["median"]), fmt(r["min"]), fmt(r["max"]),
                fmt(r["ratio"], 3), fmt(extra_of(r).get("paired_ratio", "nan"), 3)]
               for r in sel])
    scale = by.get("scale", [])
    if scale:
        print("### scale (µs)\n")
        table(["input", "nodes", "tasks", "input bytes", "median", "min", "max", "× 1k nodes",
               "+rss KiB"],
              [[r["case"], "{:,}".format(int(r["config"].split("=")[1])),
                "{:,}".format(int(extra_of(r)["tasks"])),
                "{:,}".format(int(extra_of(r)["input_bytes"])), fmt(r["median"]), fmt(r["min"]),
                fmt(r["max"]), fmt(r["ratio"], 1),
                extra_of(r)["rss_growth_kib"]
                + (" (*)" if int(extra_of(r)["nodelist_bytes"]) >= 8192 else "")]
               for r in scale])
    for section in ("task_init", "user_init"):
        sel = by.get(section, [])
        if sel:
            print("### %s (µs)\n" % section)
            table(["config", "median", "min", "max"],
                  [[r["config"], fmt(r["median"]), fmt(r["min"]), fmt(r["max"])] for r in sel])
    topo = by.get("topology", [])
    tags = OrderedDict()
    for r in topo:
        what, _, tag = r["config"].partition("/")
        tags.setdefault(tag, OrderedDict()).setdefault(r["case"], {})[what] = r
    for tag, machines in tags.items():
        print("### topology%s (µs, medians)\n" % (" " + tag if tag else ""))
        cols = ["load-cold", "load-new-process", "load-repeat", "load-cached", "compute", "per-task"]
        out = []
        for name, what in machines.items():
            ex = extra_of(next(iter(what.values())))
            out.append([name, ex["kib"], ex["gpus"], ex["nics"]]
                       + [fmt(what[c]["median"], 2 if c == "per-task" else 0) if c in what
                          else "" for c in cols])
        table(["machine", "KiB", "GPUs", "NICs", "cold", "new_proc", "repeat", "cached", "compute",
               "per_task"], out)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: md-tables.py RESULTS.csv")
    sys.exit(main(sys.argv[1]))

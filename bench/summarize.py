# SPDX-License-Identifier: GPL-2.0-or-later
"""Summarise the benchmark's raw samples (bench/run-bench.sh).

  summarize.py RAW.csv RESULTS.csv

RAW.csv rows: section,case,config,round,metric,value,unit (one sample each).
For every (section, case, metric) it prints a table with the median, min and
max of each config, the ratio of medians to the section's baseline config
(launch: "none", the plugin not loaded; ttfc: "shell-glue"), the median of
the per-round ratios (each sample over the baseline's sample of the same
round: the rounds interleave the configs, so this pairs runs taken under
the same load), the difference of medians, and
appends the same rows to RESULTS.csv (the columns bench-logic and
bench-topo write: section,case,config,reps,median,min,max,unit,ratio,extra).
Failed runs (metric "failed") are counted and reported, never averaged.
"""
import csv
import statistics
import sys
from collections import OrderedDict

BASELINE = {"launch": "none", "ttfc": "shell-glue", "fail": "rdzv-torch"}
ORDER = ["none", "none2", "off", "torch", "profile", "bind", "full",
         "shell-glue", "rdzv-torch", "rdzv-torchrun", "rdzv-torch-sigkill"]
TITLE = {
    "launch": "Launch overhead: wall time of one step (srun to exit), plugin configurations "
              "interleaved",
    "ttfc": "Time to first collective: srun start to the last rank's first all-reduce done",
    "layout": "srun's one look-up per step: the step's layout from slurmctld, "
              "timed inside srun",
    "fail": "A failed rank: time from its failure to srun's exit (without the "
            "plugin's kill-on-bad-exit the others wait for PyTorch's 30-minute timeout)",
}


def main(raw_path, out_path):
    groups = OrderedDict()
    failed = OrderedDict()
    with open(raw_path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["section"], row["case"], row["metric"])
            if row["metric"] == "failed":
                k = (row["section"], row["case"], row["config"])
                failed[k] = failed.get(k, 0) + 1
                continue
            groups.setdefault(key, OrderedDict()).setdefault(row["config"], []).append(
                (float(row["value"]), row["unit"], row["round"]))
    write_header = True
    try:
        with open(out_path) as f:
            write_header = f.read(1) == ""
    except OSError:
        pass
    with open(out_path, "a", newline="") as f:
        w = csv.writer(f)
        if write_header:
            w.writerow(["section", "case", "config", "reps", "median", "min", "max", "unit",
                        "ratio", "extra"])
        last_section = None
        for (section, case, metric), configs in groups.items():
            if section != last_section:
                print("\n== %s ==" % TITLE.get(section, section))
                last_section = section
            base_name = BASELINE.get(section)
            base = None
            base_by_round = {}
            if base_name in configs:
                base = statistics.median(v for v, _, _ in configs[base_name])
                base_by_round = {r: v for v, _, r in configs[base_name]}
            unit = next(iter(configs.values()))[0][1]
            print("%s, %s (%s):" % (case, metric, unit))
            print("  %-16s %4s %10s %10s %10s %8s %8s %10s" % (
                "config", "n", "median", "min", "max", "ratio", "paired", "delta"))
            names = sorted(configs, key=lambda c: ORDER.index(c) if c in ORDER else len(ORDER))
            for config in names:
                samples = configs[config]
                vals = [v for v, _, _ in samples]
                med = statistics.median(vals)
                ratio = med / base if base else None
                pairs = [v / base_by_round[r] for v, _, r in samples
                         if base_by_round.get(r)]
                paired = statistics.median(pairs) if pairs else None
                delta = med - base if base is not None else None
                print("  %-16s %4d %10.3f %10.3f %10.3f %8s %8s %10s" % (
                    config, len(vals), med, min(vals), max(vals),
                    "%.3f" % ratio if ratio is not None else "",
                    "%.3f" % paired if paired is not None else "",
                    "%+.3f" % delta if delta is not None else ""))
                extra = "metric=%s;baseline=%s" % (metric, base_name or "")
                if paired is not None:
                    extra += ";paired_ratio=%.4f" % paired
                if delta is not None:
                    extra += ";delta=%.4f" % delta
                nfail = failed.get((section, case, config), 0)
                if nfail:
                    extra += ";failed=%d" % nfail
                w.writerow([section, case, config, len(vals), "%.4f" % med, "%.4f" % min(vals),
                            "%.4f" % max(vals), unit,
                            "%.4f" % ratio if ratio is not None else "", extra])
    for (section, case, config), n in failed.items():
        print("FAILED: %s %s %s: %d run(s) failed (not in the medians)" % (section, case,
                                                                            config, n))
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: summarize.py RAW.csv RESULTS.csv")
    sys.exit(main(sys.argv[1], sys.argv[2]))

"""Summarise the benchmark's raw samples (bench/run-bench.sh).

  summarize.py RAW.csv RESULTS.csv

RAW.csv rows: section,case,config,round,metric,value,unit (one sample each).
For every (section, case, metric) it prints a table with the median, min and
max of each config and the ratio of medians to the section's baseline
config (launch: "none", the plugin not loaded; ttfc: "shell-glue"), and
appends the same rows to RESULTS.csv (the columns bench-logic and
bench-topo write: section,case,config,reps,median,min,max,unit,ratio,extra).
Failed runs (metric "failed") are counted and reported, never averaged.
"""
import csv
import statistics
import sys
from collections import OrderedDict

BASELINE = {"launch": "none", "ttfc": "shell-glue"}
TITLE = {
    "launch": "Launch overhead: wall time of one step (srun to exit), plugin configurations "
              "interleaved",
    "ttfc": "Time to first collective: srun start to the last rank's first all-reduce done",
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
                (float(row["value"]), row["unit"]))
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
            if base_name in configs:
                base = statistics.median(v for v, _ in configs[base_name])
            unit = next(iter(configs.values()))[0][1]
            print("%s, %s (%s):" % (case, metric, unit))
            print("  %-22s %5s %10s %10s %10s %8s" % ("config", "n", "median", "min", "max",
                                                      "ratio"))
            for config, samples in configs.items():
                vals = [v for v, _ in samples]
                med = statistics.median(vals)
                ratio = med / base if base else None
                print("  %-22s %5d %10.3f %10.3f %10.3f %8s" % (
                    config, len(vals), med, min(vals), max(vals),
                    "%.3f" % ratio if ratio is not None else ""))
                extra = "metric=%s;baseline=%s" % (metric, base_name or "")
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

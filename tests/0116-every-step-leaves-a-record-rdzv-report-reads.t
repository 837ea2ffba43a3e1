#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What a step got is kept after the job is gone: with plugstack
# record_dir=DIR, each node of a step with a mode writes, as root, one JSON
# record (DIR/JOB.STEP.NODE.json, 0640) with the step's facts, each task's
# variables with their sources, its CPUs and its exit; rdzv-report reads a
# step's records back in words. Checked on real steps: torch (4 real
# PyTorch ranks that all-reduce), torchrun and megatron modes; each
# variable the record says a task got is the value that task saw (its own
# environment, dumped by the task); a failed step names the rank that
# failed first; a step srun refused says so; a record_dir open to others
# gets nothing and the step still runs.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
work=$(mktemp -d /tmp/rdzv-0116.XXXXXX) || exit 1
chmod 755 "$work"
rd=$work/records
mkdir -m 0755 "$rd"
e2e_start RDZV_PLUGSTACK_ARGS="record_dir=$rd"
trap 'e2e_stop; rm -rf "$work"' EXIT
cd "$work" || exit 1
report="$top_builddir/helpers/rdzv-report"

# step_of OUT: the job.step a task printed as STEP=J.S.
step_of() { printf '%s\n' "$1" | sed -n 's/^STEP=//p' | head -n 1; }

# vars_match JS: every "RANK NAME=VALUE" of rdzv-report --vars is what task
# RANK saw (env.RANK, NUL-separated, dumped by the task); "(unset)": absent.
vars_match() {
	local js=$1 bad=0 n=0 rank kv name val have
	while IFS= read -r line; do
		rank=${line%% *} kv=${line#* } name=${kv%%=*} val=${kv#*=}
		n=$((n + 1))
		have=$(tr '\0' '\n' <"$work/env.$rank" 2>/dev/null | grep -m1 "^$name=" | cut -d= -f2-)
		if [ "$val" = "(unset)" ]; then
			tr '\0' '\n' <"$work/env.$rank" | grep -q "^$name=" && { bad=$((bad + 1)); diag "rank $rank: $name is set, the record says unset"; }
		elif [ "$have" != "$val" ]; then
			bad=$((bad + 1))
			diag "rank $rank: $name='$have' in the task, '$val' in the record"
		fi
	done < <("$report" --dir "$rd" --vars "$js")
	echo "$n $bad"
}

dumper='echo "STEP=$SLURM_JOB_ID.$SLURM_STEP_ID"; env -0 > '"$work"'/env.$SLURM_PROCID'

# 1. torch: 2 nodes x 2 real PyTorch ranks that meet and all-reduce.
rm -f "$work"/env.*
run_to 120 srun -N2 --ntasks-per-node=2 --rdzv=torch sh -c "$dumper; exec $PY $top_srcdir/tests/e2e/demo_rank.py"
is "$rc" 0 "torch: the step ran (4 ranks all-reduced)"
js=$(step_of "$out")
is "$(ls "$rd" | grep -c "^$js\.n[0-9]*\.json$")" 2 "torch: one record per node of step $js"
f=$(ls "$rd"/"$js".*.json 2>/dev/null | head -n 1)
is "$(stat -c '%a %U' "$f" 2>/dev/null)" "640 root" "... each a file of root's, mode 640"
run_to 30 "$report" --dir "$rd" "$js"
is "$rc" 0 "rdzv-report $js reads them"
like "$out" "step $js: mode torch, world size 4 on 2 node\\(s\\), rank 0 on n[0-9]+ \\(MASTER_ADDR n[0-9]+, port [0-9]+" \
	"... the mode, world size, rank 0's node and port"
like "$out" "outcome: every rank recorded exited 0 \\(4 of 4\\)" "... every rank's exit"
ver=$(sed -n 's/^PACKAGE_VERSION = //p' "$top_builddir/Makefile")
like "$out" "spank-rdzv $ver on the nodes, $ver in srun; Slurm $SLURM_VERSION" "... the versions on both sides (this release, $ver), and Slurm's"
like "$out" "RANK=[0-3]  \\[rdzv, enforce: set\\]" "... each variable with where it came from"
like "$out" "n[0-9] rank [0-3] \\(local [01]\\), cpus [0-9]" "... each task's CPUs"
printf '%s\n' "$out" | head -n 4 | sed 's/^/# /'
read -r n bad < <(vars_match "$js")
ok "$([ "${n:-0}" -ge 40 ] && [ "$bad" = 0 ] && echo 0 || echo 1)" \
	"torch: each of the record's $n variables is what its task saw ($bad differ)"
run_to 30 "$report" --dir "$rd" --json "$js"
ok "$(printf '%s' "$out" | $PY -c 'import json,sys; r=json.load(sys.stdin); sys.exit(0 if len(r)==2 and all(x["rdzv_record"]==1 for x in r) else 1)' && echo 0 || echo 1)" \
	"rdzv-report --json: the two records, valid JSON"
# The real records against the stability promise (doc/stability.md's
# record fields; tests/unit/test-stability checks every field the code can
# write, this checks what a real step wrote).
printf '%s' "$out" >"$work/records.json"
is "$($PY - "$work/records.json" "$top_srcdir/doc/stability.md" <<'EOF'
import json, re, sys
recs = json.load(open(sys.argv[1]))
table = open(sys.argv[2]).read().split("## Record fields", 1)[1].split("\n## ", 1)[0]
documented = set(re.findall(r"^\| `([^`]+)`", table, re.M))
seen = set()
def walk(v, path):
    if isinstance(v, dict):
        for k, x in v.items():
            q = path + "." + k if path else k
            seen.add(q)
            walk(x, q)
    elif isinstance(v, list):
        for x in v:
            walk(x, path + "[]")
for r in recs:
    walk(r, "")
print(" ".join(sorted(seen - documented)) or "none")
EOF
)" none "every field of the real records is in doc/stability.md"

# 2. torchrun: one launcher per node.
rm -f "$work"/env.*
run_to 60 srun -N2 --ntasks-per-node=1 --rdzv=torchrun sh -c "$dumper"
js=$(step_of "$out")
run_to 30 "$report" --dir "$rd" "$js"
like "$out" "step $js: mode torchrun, world size 2 on 2 node" "torchrun: its record (step $js)"
read -r n bad < <(vars_match "$js")
ok "$([ "${n:-0}" -ge 10 ] && [ "$bad" = 0 ] && echo 0 || echo 1)" \
	"torchrun: each of the record's $n variables is what its task saw ($bad differ)"

# 3. megatron: TP=2 on 2 nodes x 2 tasks.
rm -f "$work"/env.*
run_to 60 srun -N2 --ntasks-per-node=2 --rdzv=megatron sh -c "$dumper" x --tensor-model-parallel-size 2
js=$(step_of "$out")
run_to 30 "$report" --dir "$rd" "$js"
like "$out" "step $js: mode megatron, world size 4" "megatron: its record (step $js)"
like "$out" "CUDA_DEVICE_MAX_CONNECTIONS=1  \\[" "... with Megatron's own variable"
read -r n bad < <(vars_match "$js")
ok "$([ "${n:-0}" -ge 40 ] && [ "$bad" = 0 ] && echo 0 || echo 1)" \
	"megatron: each of the record's $n variables is what its task saw ($bad differ)"

# 4. A failed step: rank 3 exits 3 first; the others are stopped.
run_to 60 srun -N2 --ntasks-per-node=2 --rdzv=torch sh -c \
	'echo "STEP=$SLURM_JOB_ID.$SLURM_STEP_ID"; [ "$SLURM_PROCID" = 3 ] && exit 3; sleep 30'
js=$(step_of "$out")
run_to 30 "$report" --dir "$rd" "$js"
like "$out" "outcome: rank 3 on n[0-9]+ failed first: exit code 3" "a failed step: the rank that failed first, and how"
printf '%s\n' "$out" | grep -A3 'outcome:' | sed 's/^/# /'

# 5. A step srun refused after creating it (inside an allocation).
run_to 90 salloc -N2 --ntasks-per-node=2 sh -c 'srun --rdzv=torchrun true; echo "JOB=$SLURM_JOB_ID"'
j=$(printf '%s\n' "$out" | sed -n 's/^JOB=//p')
run_to 30 "$report" --dir "$rd" "$j"
like "$out" "refused by srun before any task ran" "a refused step's record says srun refused it"

# 6. Bad input: no record, a malformed id, a record_dir open to others.
run_to 30 "$report" --dir "$rd" 999999
ok "$([ "$rc" = 1 ] && echo 0 || echo 1)" "rdzv-report of a job without records: exit 1 (got $rc)"
like "$out" "no record of 999999 in $rd" "... saying so"
run_to 30 "$report" --dir "$rd" 12.x
is "$rc" 2 "rdzv-report 12.x: usage error"
chmod 0777 "$rd"
before=$(ls "$rd" | wc -l)
run_to 60 srun -N1 -n1 --rdzv=torch true
is "$rc" 0 "record_dir open to others: the step still runs"
is "$(ls "$rd" | wc -l)" "$before" "... and no record is written there"
chmod 0755 "$rd"
done_testing

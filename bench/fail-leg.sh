#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/fail-leg.sh OUTDIR: run-bench.sh's fail part on the cluster of
# RDZV_SLURM (host, 24.11, 26.05: tests/lib/e2e.sh picks its Slurm, ports,
# lock and torchrun), for the version legs, where run-bench.sh's own cluster
# (the host's) is not the one to measure:
#
#   bash tests/versions/in-root.sh ROOT env top_builddir=BUILD \
#       bash bench/fail-leg.sh OUTDIR          (RDZV_SLURM=24.11 or 26.05)
#
# The same three cases and rows as run-bench.sh (OUTDIR/raw.csv, then
# summarize.py): rank 3 of 2 nodes x 2 exits 1 before init (--rdzv=torch),
# is SIGKILLed after init (--rdzv=torch), a torchrun worker exits 1
# (--rdzv=torchrun, real torchrun). BENCH_FAIL_REPS rounds (default 10),
# each in a random order (BENCH_SEED). Never run by make check.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/.." && pwd)}
: "${top_builddir:?set top_builddir to a build of this leg}"
export top_srcdir top_builddir
out_dir=${1:?usage: $0 OUTDIR}
mkdir -p "$out_dir" && out_dir=$(cd "$out_dir" && pwd)
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
e2e_start
app=$top_srcdir/tests/e2e/fail_rank.py raw=$out_dir/raw.csv stamp=$out_dir/fail-stamp
echo "section,case,config,round,metric,value,unit" > "$raw"
usec() { local t=${1/./}; echo $((10#$t)); }

fail_run() {
	local c=$1 r=$2 t0 t1 rc
	rm -f "$stamp"
	t0=$EPOCHREALTIME
	case $c in
	rdzv-torch) timeout -k 5 240 srun -J rdzv-bench-fail -N2 -n4 --rdzv=torch $PY "$app" exit1-before-init 3 "$stamp" ;;
	rdzv-torch-sigkill) timeout -k 5 240 srun -J rdzv-bench-fail -N2 -n4 --rdzv=torch $PY "$app" kill-after-init 3 "$stamp" ;;
	rdzv-torchrun) timeout -k 5 240 srun -J rdzv-bench-fail -N2 --ntasks-per-node=1 --gpus-per-node=2 \
		--rdzv=torchrun $TORCHRUN "$app" exit1-before-init 3 "$stamp" ;;
	esac > "$out_dir/fail-$c-$r.out" 2>&1
	rc=$?
	t1=$EPOCHREALTIME
	if [ "$rc" = 124 ] || { [ "$rc" = 137 ] && [ "$(usec "$t1")" -ge $(($(usec "$t0") + 239000000)) ]; } \
		|| [ ! -s "$stamp" ]; then
		echo "fail,2x2-rank-3,$c,$r,failed,$rc,rc" >> "$raw"
		diag "fail $c round $r: FAILED (srun exit $rc)"
		scancel -n rdzv-bench-fail 2>/dev/null
		return
	fi
	awk -v a="$(cat "$stamp")" -v b="$t1" -v c="$c" -v r="$r" \
		'BEGIN { printf "fail,2x2-rank-3,%s,%d,failure-to-srun-exit,%.3f,s\n", c, r, b - a }' >> "$raw"
}

RANDOM=${BENCH_SEED:-8}
configs=(rdzv-torch rdzv-torch-sigkill rdzv-torchrun)
diag "fail: Slurm $SLURM_VERSION, PyTorch $TORCH_VERSION, ${BENCH_FAIL_REPS:-10} rounds"
for ((r = 1; r <= ${BENCH_FAIL_REPS:-10}; r++)); do
	order=("${configs[@]}")
	for ((i = ${#order[@]} - 1; i > 0; i--)); do
		k=$((RANDOM % (i + 1))) tmp=${order[i]}
		order[i]=${order[k]} order[k]=$tmp
	done
	for c in "${order[@]}"; do fail_run "$c" "$r"; done
done
e2e_stop
python3 "$here/summarize.py" "$raw" "$out_dir/results.csv"

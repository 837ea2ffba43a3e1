# SPDX-License-Identifier: GPL-2.0-or-later
# hang.sh: source after e2e.sh (tests/0105, 0106, 0111: rdzv-hang and the
# collective timeout). The test sets $tmp (a directory the ranks can write),
# $prog (the ranks' program, tests/e2e/hang_rank.py or a copy) and $hang
# (rdzv-hang).
#
#   line_of TEXT           the number of $prog's first line holding TEXT
#   node_of NAME RANK      the node rank RANK of step NAME ran on (from the
#                          file each rank writes, $tmp/NAME/rank-RANK)
#   launch NAME SRUN-ARGS...  srun -N2 SRUN-ARGS in the background until its
#                          4 ranks wrote their files; sets $srun_pid and $js
#                          (JOB.STEP); 1 when they never did
#   end_step               cancels the launched step's job and waits for srun
#   ask                    rdzv-hang on $js from outside the job (no
#                          SLURM_JOB_ID): $got, $hang_rc, $took (seconds)

line_of() { grep -n "$1" "$prog" | head -n 1 | cut -d: -f1; }
node_of() { awk '{print $2}' "$tmp/$1/rank-$2"; }

launch() {
	local name=$1 i
	shift
	rm -rf "$tmp/$name" && mkdir -p "$tmp/$name" && chmod 777 "$tmp/$name"
	timeout -k 5 $((300 * ${E2E_TIMEOUT_SCALE:-2})) srun -N2 "$@" >"$tmp/$name.out" 2>&1 &
	srun_pid=$!
	js=
	for i in $(seq 1 $((600 * ${E2E_TIMEOUT_SCALE:-2}))); do
		[ "$(ls "$tmp/$name"/rank-* 2>/dev/null | wc -l)" = 4 ] && break
		kill -0 "$srun_pid" 2>/dev/null || break
		sleep 0.2
	done
	[ "$(ls "$tmp/$name"/rank-* 2>/dev/null | wc -l)" = 4 ] || { diag "$(tail -n 20 "$tmp/$name.out")"; return 1; }
	js=$(awk '{print $3}' "$tmp/$name/rank-0")
	# The ranks are past their file; give the waiting ones a moment to
	# be inside all_reduce's wait.
	sleep 1
}

end_step() {
	scancel "${js%.*}" 2>/dev/null
	wait "$srun_pid" 2>/dev/null
	srun_pid=
}

ask() {
	local t0
	t0=$(date +%s.%N)
	got=$(env -u SLURM_JOB_ID "$hang" "$js" 2>&1)
	hang_rc=$?
	took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	printf '%s\n' "$got" | sed 's/^/# /'
}

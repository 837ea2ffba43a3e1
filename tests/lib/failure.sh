# SPDX-License-Identifier: GPL-2.0-or-later
# failure.sh: source after e2e.sh (tests/0032-0037).
#
#   step SECS CMD...   run_to with a job name of this test's own (-J is added
#                      after srun/sbatch/salloc when CMD starts with one): on a
#                      timeout the jobs of that name are cancelled by id, so a
#                      hang cannot hold the nodes for the next test
#   since STAMP        seconds from the time in STAMP (fail_rank.py writes it
#                      when it fails) to now, e.g. "0.84"; "none" without one
#   (within SECS VALUE comes from tests/lib/steps.sh, through e2e.sh)
#   rdzv_lines         the plugin's failure lines of $out
#   leftover TOKEN     processes whose command line holds TOKEN (read only)
FAIL_APP=$top_srcdir/tests/e2e/fail_rank.py
fail_job=rdzv-fail-$$-${RANDOM}
fail_n=0

cancel_own_jobs() {
	local ids
	ids=$(squeue -h -n "$fail_job" -o %A 2>/dev/null | tr '\n' ' ')
	[ -n "${ids// /}" ] && { diag "cancelling jobs $ids ($fail_job)"; scancel $ids 2>/dev/null; }
	return 0
}

step() {
	local secs=$1 cmd=$2
	shift 2
	case $cmd in
	srun | sbatch | salloc) run_to "$secs" "$cmd" -J "$fail_job" "$@" ;;
	*) run_to "$secs" "$cmd" "$@" ;;
	esac
	[ "$rc" = 124 ] || [ "$rc" = 137 ] && cancel_own_jobs
	t_end=$EPOCHREALTIME
	return 0
}

new_stamp() {
	fail_n=$((fail_n + 1))
	stamp=$PWD/failed.$fail_n
	rm -f "$stamp"
}

since() {
	[ -s "$1" ] || { echo none; return; }
	awk -v a="$(cat "$1")" -v b="${t_end:-$EPOCHREALTIME}" 'BEGIN { printf "%.2f", b - a }'
}

rdzv_lines() { printf '%s\n' "$out" | grep -E '^rdzv: (node )?rank [0-9]+ \(node ' ; }

leftover() { pgrep -f -- "$1" 2>/dev/null | grep -v "^$$\$" | tr '\n' ' '; }

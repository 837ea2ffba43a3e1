# SPDX-License-Identifier: GPL-2.0-or-later
# steps.sh: what the end-to-end tests read from a step, written once.
# e2e.sh sources it, so every end-to-end test has these. A test that needs
# another meaning defines its own after sourcing e2e.sh, under a name that
# says how it differs (a definition of the same name replaces these).
#
#   within SECS VALUE        0 when VALUE is a number below SECS
#   run_step CMD...          run_to 60 CMD...; the output of a step that did
#                            not exit 0 goes to the log (all a CI run leaves)
#   task_line NODE TASK      the first line of $out that starts "NODE TASK "
#                            (a task's report line: node, local id, KEY=value ...)
#   field NODE TASK KEY      KEY's value in that line
#   report_field JSON-KEY    the set of that key's values (a.b for a nested
#                            one, JSON-encoded, sorted) over the RDZV_REPORT
#                            lines of $out (check_reports.py's reports)
#   megatron_refused NAME REGEX SRUN-ARGS...
#                            srun --rdzv=megatron SRUN-ARGS exits non-zero
#                            before launch (the test's $marker file, which
#                            its command makes, is never made), saying REGEX
#   megatron_runs NAME NTASKS SRUN-ARGS...
#                            srun --rdzv=megatron SRUN-ARGS exits 0, its
#                            NTASKS ranks meet and all-reduce, and the
#                            Megatron stand-in finds every parallel group in
#                            one Slurm block (MEGATRON_STANDIN_GROUPS_BY=block)
#   uniq_of TEXT             TEXT's distinct lines, sorted, on one line, the
#                            plugin's own (rdzv: ...) left out
#   not0 RC                  ok's status for "RC is not 0"

within() {
	awk -v v="$2" -v m="$1" 'BEGIN { exit !(v ~ /^[0-9.]+$/ && v + 0 < m + 0) }'
}

run_step() { run_to 60 "$@"; [ "$rc" = 0 ] || diag "exit $rc: $(printf '%s' "$out" | head -c 2000)"; }

task_line() { printf '%s\n' "$out" | grep "^$1 $2 " | head -n 1; }
field() { task_line "$1" "$2" | tr ' ' '\n' | sed -n "s/^$3=//p"; }

report_field() {
	printf '%s\n' "$out" | grep RDZV_REPORT | python3 -c '
import json, sys
vals = set()
for l in sys.stdin:
    r = json.loads(l.split("RDZV_REPORT ", 1)[1])
    v = r
    for k in sys.argv[1].split("."):
        v = v.get(k) if isinstance(v, dict) else None
    vals.add(json.dumps(v))
print(" ".join(sorted(vals)))' "$1"
}

megatron_refused() {
	local name=$1 re=$2
	shift 2
	rm -f "$marker"
	run_to 60 srun --rdzv=megatron "$@"
	ok "$([ "$rc" != 0 ] && [ ! -e "$marker" ]; echo $?)" "$name: refused before launch (srun exit $rc)"
	like "$out" "$re" "$name: the message says why"
}

megatron_runs() {
	local name=$1 n=$2
	shift 2
	run_to 120 srun --rdzv=megatron "$@"
	is "$rc" 0 "$name: the step exits 0"
	verdict=$(printf '%s\n' "$out" | $PY "$top_srcdir/tests/e2e/check_reports.py" "$n")
	is "$?" 0 "$name: $n ranks meet and all-reduce ($verdict)"
	is "$(report_field tp_groups_split)" "[]" "$name: every parallel group sits in one Slurm block (the stand-in's check)"
	[ "$rc" = 0 ] || diag "$(printf '%s\n' "$out" | grep -v RDZV_REPORT | tail -n 8)"
}

uniq_of() { printf '%s\n' "$1" | grep -v '^rdzv:' | sort -u | tr '\n' ' '; }
not0() { [ "$1" != 0 ] && echo 0 || echo 1; }

# records_whole DIR: the step records a test's steps left in DIR (plugstack
# record_dir=DIR): each step has one record per node of the step, and
# rdzv-report reads it. Two TAP lines; the steps are counted, not listed.
records_whole() {
	local dir=$1 js steps=0 bad=0 rep
	for js in $(ls "$dir" 2>/dev/null | sed -n 's/^\([0-9]*\.[0-9]*\)\..*\.json$/\1/p' | sort -u); do
		steps=$((steps + 1))
		if ! rep=$("$top_builddir/helpers/rdzv-report" --dir "$dir" "$js" 2>&1); then
			bad=$((bad + 1)); diag "rdzv-report $js: $(printf '%s' "$rep" | head -c 500)"
		elif ! printf '%s\n' "$rep" | grep -Eq "records from ([0-9]+) of \\1 node"; then
			bad=$((bad + 1)); diag "step $js: $(printf '%s\n' "$rep" | grep 'records from')"
		fi
	done
	ok "$([ "$steps" -gt 0 ] && echo 0 || echo 1)" "the test's steps with a mode left records ($steps steps)"
	is "$bad" 0 "... each step's from every one of its nodes, read back by rdzv-report"
}

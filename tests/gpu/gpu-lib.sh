# SPDX-License-Identifier: GPL-2.0-or-later
# gpu-lib.sh: what the checks against a real GPU library share (sourced by
# fabric-gpu.sh and amd-gpu.sh, with their arguments): the rdzv-preflight of
# BUILDDIR ($1; default ./_build, else .) in $bin, TAP test points, and the
# run of one of rdzv-preflight's GPU tables.
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
b=${1:-}
[ -n "$b" ] || for d in "$src/_build" "$src"; do [ -x "$d/helpers/rdzv-preflight" ] && b=$d && break; done
bin=${b:+$b/helpers/rdzv-preflight}
n=0 failed=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }

# Skips the whole check when rdzv-preflight is not built.
need_preflight() {
	if [ -z "$bin" ] || [ ! -x "$bin" ]; then echo "1..0 # SKIP rdzv-preflight not built (give BUILDDIR)"; exit 0; fi
}

# run_preflight OPTION WHAT: rdzv-preflight OPTION's output into $out (shown
# as comments) and its status into $rc; test points: no crash, and WHAT
# (the library loaded).
run_preflight() {
	out=$("$bin" "$1" 2>&1); rc=$?
	printf '%s\n' "$out" | sed 's/^/# /'
	ok "$([ "$rc" -le 1 ] && echo 0 || echo 1)" "rdzv-preflight $1 exits normally (rc $rc, not a crash)"
	ok "$rc" "$2"
}

# one_line_per_gpu PATTERN TOOL NGPU: as many lines of $out match PATTERN
# as TOOL lists GPUs.
one_line_per_gpu() {
	local lines
	lines=$(printf '%s\n' "$out" | grep -c "$1")
	ok "$([ "$lines" -eq "$3" ] && echo 0 || echo 1)" "one line per GPU ($lines lines, $2 lists $3)"
}

# The plan, last; the status: every test point passed.
done_testing() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
}

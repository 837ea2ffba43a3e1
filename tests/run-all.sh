#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run-all.sh: the whole test suite, as the README's second command and CI run
# it: installs what is missing, builds from a clean build directory with
# warnings as errors, runs `make check` (unit, topology, end-to-end under a
# real local Slurm cluster), the hardening suite (sanitizer build, bounded
# fuzzing, the plugin under valgrind, static analysis), and `make distcheck`.
# Ends with one line "N passed, N failed, N skipped", every inner test
# counted (make check's, the hardening stages' and distcheck's own make
# check), each skip a skip, never a pass; the reason of every skip is
# listed above that line. Under CI=true a tool that tests/install-deps.sh
# installs fails when missing (tests/lib/tap.sh), it does not skip.
#
#   RDZV_BUILD_DIR   build directory (default _build-all, recreated)
#   RDZV_FAST=1      skip hardening and distcheck (a developer's quick loop)
#   RDZV_SUITE_LOCK  the lock file (tests/lib/suite-lock.sh; default
#                    /run/rdzv-run-all.lock as root)
#   RDZV_SUITE_LOCK_ONLY=1  take the lock, say so, hold it until standard
#                    input ends, and exit 0: nothing else runs (tests/0190)
#
# One run at a time on a machine: a second run started beside a running one
# exits at once with status 75, naming the first (pid, start time,
# directory); the first goes on. A lock whose run died never blocks.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
. "$top/tests/lib/suite-lock.sh"
suite_lock $$ || exit 75
if [ "${RDZV_SUITE_LOCK_ONLY:-0}" = 1 ]; then
	echo "run-all.sh: pid $$ holds $(suite_lock_path); nothing else runs (RDZV_SUITE_LOCK_ONLY=1) until standard input ends"
	cat >/dev/null
	exit 0
fi
bash tests/install-deps.sh || exit 1
export RDZV_TOPOLOGIES=${RDZV_TOPOLOGIES:-$top/tests/topo/fixtures}
build=${RDZV_BUILD_DIR:-$top/_build-all}
jobs=$(nproc 2>/dev/null || echo 2)
status=0

step() { printf '\n=== %s\n' "$*"; }
pass=0 fail=0 skip=0
skips=$(mktemp "${TMPDIR:-/tmp}/rdzv-skips.XXXXXX") || exit 1
trap 'rm -f "$skips"' EXIT
# add_counts PASSED FAILED SKIPPED: add a leg's totals.
add_counts() { pass=$((pass + $1)); fail=$((fail + $2)); skip=$((skip + $3)); }
# add_skip WHERE REASON: one line of the skip list printed at the end.
add_skip() { printf '%s: %s\n' "$1" "$2" >>"$skips"; }
# check_leg LEG LOG [SUITELOG]: add a make check log's totals (automake's
# "# PASS: N" summary) and its skips with the reason each test gave (from
# SUITELOG, the build's test-suite.log, when there: make -j interleaves the
# lines of LOG); returns 1 when LOG has no summary (the leg did not test).
check_leg() {
	local p f k from=$2
	grep -q '^# TOTAL:' "$2" || return 1
	read -r p f k < <(awk '/^# PASS:/{p=$3} /^# FAIL:|^# ERROR:|^# XPASS:/{f+=$3} /^# SKIP:/{k=$3} END{print p+0, f+0, k+0}' "$2")
	add_counts "$p" "$f" "$k"
	[ -n "${3:-}" ] && [ -f "$3" ] && from=$3
	awk -v leg="$1" -f "$top/tests/lib/skip-reasons.awk" "$from" >>"$skips"
	return 0
}

step "bootstrap and configure ($build)"
autoreconf -fi >/dev/null 2>&1 || { autoreconf -fi; exit 1; }
rm -rf "$build" && mkdir -p "$build" && cd "$build" || exit 1
"$top/configure" --enable-werror -q || exit 1

step "build"
make -j"$jobs" >build.log 2>&1 || { tail -n 40 build.log; exit 1; }

# The version legs (below) start now, in the background: their clusters are
# their own, and their end-to-end tests mostly wait on Slurm, so they overlap
# with this build's make check, hardening and distcheck (CI's 90 minutes).
versions_pid=
if [ "${RDZV_FAST:-0}" != 1 ] && [ "${RDZV_VERSIONS:-}" != none ]; then
	bash "$top/tests/versions/run-versions.sh" >"$build/versions.log" 2>&1 &
	versions_pid=$!
fi

step "make check"
make -j"$jobs" check >check.log 2>&1 || status=1
grep -E '^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR):' check.log | grep -v -E '^(PASS|SKIP): .* [0-9]+ ' | head -n 200
grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' check.log
[ $status = 0 ] || { echo "--- test-suite.log"; tail -n 150 test-suite.log; }
check_leg "make check" check.log "$build/test-suite.log" || { add_counts 0 1 0; status=1; }

if [ "${RDZV_FAST:-0}" != 1 ]; then
	step "hardening: sanitizers, fuzzing, valgrind, static analysis"
	if [ -x "$top/tests/hardening.sh" ]; then
		if bash "$top/tests/hardening.sh" >hardening.log 2>&1; then h=0; else h=1; status=1; fi
		grep -v -E '^# (tally|skipped:) ' hardening.log | tail -n 40
		# Each stage's inner totals ("# tally P F S STAGE") and skips.
		read -r hp hf hs < <(awk '/^# tally /{p+=$3; f+=$4; s+=$5} END{print p+0, f+0, s+0}' hardening.log)
		add_counts "$hp" "$hf" "$hs"
		sed -n 's/^# skipped: //p' hardening.log >>"$skips"
		[ $h = 0 ] || [ "$hf" -gt 0 ] || add_counts 0 1 0
	fi
	step "make distcheck"
	# Its own make check runs with RDZV_SKIP_E2E=1: the end-to-end tests
	# skip there (the main build's make check ran them), and count as skips.
	if make -j"$jobs" distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror RDZV_SKIP_E2E=1 >distcheck.log 2>&1; then
		d=0; grep -E 'archives ready|\.tar\.gz' distcheck.log | tail -n 3
	else
		d=1; status=1; tail -n 60 distcheck.log
	fi
	grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR):' distcheck.log | tr -s ' ' | paste -sd' ' | sed 's/^/distcheck make check: /'
	before=$fail
	check_leg "distcheck" distcheck.log || add_counts 0 1 0
	[ $d = 0 ] || [ "$fail" -gt "$before" ] || add_counts 0 1 0
fi

# --- Other legs: each adds its totals with add_counts PASSED FAILED SKIPPED,
# one add_skip WHERE REASON per skip, and sets status=1 when it fails. ---

# ---- version legs (issues 13, 20): the same tests under Slurm 24.11 + PyTorch
# 2.6 (Debian trixie root) and Slurm 26.05 + PyTorch 2.14 + Apptainer (Debian
# sid root); RDZV_VERSIONS=none skips.
if [ -n "$versions_pid" ]; then
	step "version legs: Slurm 24.11 + PyTorch 2.6, Slurm 26.05 + PyTorch 2.14 (started after the build)"
	wait "$versions_pid" || status=1
	grep -E '^versions: |^  (FAIL|ERROR|SKIP):|^  leg |^(FAIL|ERROR):' versions.log
	read -r vp vf vs < <(sed -nE 's/^versions: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/p' versions.log)
	add_counts "${vp:-0}" "${vf:-1}" "${vs:-0}"
	for v in 24.11 26.05; do
		[ -f "$top/_build-$v/test-suite.log" ] \
			&& awk -v leg="Slurm $v" -f "$top/tests/lib/skip-reasons.awk" "$top/_build-$v/test-suite.log" >>"$skips"
	done
fi
# ---- end of version legs

echo
listed=$(wc -l <"$skips")
[ "$listed" -ge "$skip" ] || add_skip "(logs)" "$((skip - listed)) more skipped result(s) whose reason line the logs do not show whole"
if [ -s "$skips" ]; then
	echo "skipped, with the reason each test gave:"
	sed 's/^/  /' "$skips"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] || status=1
exit $status

#!/bin/bash
# run-all.sh: the whole test suite, as the README's second command and CI run
# it: installs what is missing, builds from a clean build directory with
# warnings as errors, runs `make check` (unit, topology, end-to-end under a
# real local Slurm cluster), the hardening suite (sanitizer build, bounded
# fuzzing, the plugin under valgrind, static analysis), and `make distcheck`.
# Ends with one line "N passed, N failed, N skipped".
#
#   RDZV_BUILD_DIR   build directory (default _build-all, recreated)
#   RDZV_FAST=1      skip hardening and distcheck (a developer's quick loop)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
bash tests/install-deps.sh || exit 1
export RDZV_TOPOLOGIES=${RDZV_TOPOLOGIES:-$(cd "$top/../shared/topologies" 2>/dev/null && pwd)}
build=${RDZV_BUILD_DIR:-$top/_build-all}
jobs=$(nproc 2>/dev/null || echo 2)
status=0

step() { printf '\n=== %s\n' "$*"; }

step "bootstrap and configure ($build)"
autoreconf -fi >/dev/null 2>&1 || { autoreconf -fi; exit 1; }
rm -rf "$build" && mkdir -p "$build" && cd "$build" || exit 1
"$top/configure" --enable-werror -q || exit 1

step "build"
make -j"$jobs" >build.log 2>&1 || { tail -n 40 build.log; exit 1; }

step "make check"
make -j"$jobs" check >check.log 2>&1 || status=1
grep -E '^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR):' check.log | grep -v -E '^(PASS|SKIP): .* [0-9]+ ' | head -n 200
grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' check.log
[ $status = 0 ] || { echo "--- test-suite.log"; tail -n 150 test-suite.log; }
read -r pass fail skip < <(awk '/^# PASS:/{p=$3} /^# FAIL:/{f+=$3} /^# ERROR:/{f+=$3} /^# XPASS:/{f+=$3} /^# SKIP:/{s=$3} END{print p+0, f+0, s+0}' check.log)

if [ "${RDZV_FAST:-0}" != 1 ]; then
	step "hardening: sanitizers, fuzzing, valgrind, static analysis"
	if [ -x "$top/tests/hardening.sh" ]; then
		if bash "$top/tests/hardening.sh" >hardening.log 2>&1; then h=0; else h=1; status=1; fi
		tail -n 40 hardening.log
		hp=$(grep -c '^ok ' hardening.log); hf=$(grep -c '^not ok ' hardening.log)
		pass=$((pass + hp)); fail=$((fail + hf))
		[ $h = 0 ] || [ "$hf" -gt 0 ] || fail=$((fail + 1))
	fi
	step "make distcheck"
	if make -j"$jobs" distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror RDZV_SKIP_E2E=1 >distcheck.log 2>&1; then
		pass=$((pass + 1)); grep -E 'archives ready|\.tar\.gz' distcheck.log | tail -n 3
	else
		fail=$((fail + 1)); status=1; tail -n 60 distcheck.log
	fi
fi

# ---- version legs (issue 13): the same tests under Slurm 24.11 + PyTorch 2.6
# (Debian 13 root) and Slurm 26.05 (built from source); RDZV_VERSIONS=none skips.
if [ "${RDZV_FAST:-0}" != 1 ] && [ "${RDZV_VERSIONS:-}" != none ]; then
	step "version legs: Slurm 24.11 + PyTorch 2.6, Slurm 26.05"
	bash "$top/tests/versions/run-versions.sh" >versions.log 2>&1 || status=1
	grep -E '^versions: |^  (FAIL|ERROR|SKIP):|^  leg ' versions.log
	read -r vp vf vs < <(sed -nE 's/^versions: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/p' versions.log)
	pass=$((pass + ${vp:-0})); fail=$((fail + ${vf:-1})); skip=$((skip + ${vs:-0}))
fi
# ---- end of version legs

echo
echo "$pass passed, $fail failed, $skip skipped"
exit $status

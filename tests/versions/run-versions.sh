#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run-versions.sh: the version legs of the test suite. Each leg builds
# spank-rdzv for one Slurm and runs all of make check on a cluster of that
# Slurm (tests/versions/run-leg.sh); what a leg's Slurm or PyTorch cannot run
# is skipped with its reason by the test itself, never counted as passed.
#   24.11  Slurm 24.11 + PyTorch 2.6 + real torchrun, in a Debian 13 root
#   26.05  Slurm 26.05 + PyTorch 2.14 + real torchrun + Apptainer, in a
#          Debian sid root (both roots: make-chroot.sh, cached)
# (The host leg, Slurm 22.05 + PyTorch 1.13, is tests/run-all.sh's own make check.)
# Prints each preparation's and each leg's time, each leg's totals, and ends
# with "versions: N passed, N failed, N skipped (S s)". Exit 1 if any failed.
#
#   RDZV_VERSIONS   legs to run, space separated (default "24.11 26.05")
#   RDZV_VERSIONS_TESTS  test files for every leg (default: all of make check)
set -u
here=$(cd "$(dirname "$0")" && pwd)
legs=${RDZV_VERSIONS:-24.11 26.05}
t_all=$(date +%s)
pass=0 fail=0 skip=0

timed() { # timed WHAT CMD...: run CMD, print its time; stdout of CMD in $got
	local what=$1 t0 rc
	shift
	t0=$(date +%s)
	got=$("$@")
	rc=$?
	printf 'versions: %s: %s s%s\n' "$what" "$(($(date +%s) - t0))" "$([ $rc = 0 ] || echo ", FAILED ($rc)")"
	return $rc
}

# One leg: its preparation, then run-leg.sh; prints the leg's report and ends
# with "versions: leg LEG: P passed, F failed, S skipped (T s)".
run_one() {
	local leg=$1 prep t0 log rc line p f s
	case $leg in
	24.11) prep="make-chroot.sh trixie" ;;
	26.05) prep="make-chroot.sh sid" ;;
	*) echo "versions: unknown leg $leg"; echo "versions: leg $leg: 0 passed, 1 failed, 0 skipped (0 s)"; return ;;
	esac
	# Preparation first, timed on its own (cached: seconds when done before).
	if ! timed "$prep" bash "$here/${prep%% *}" ${prep#* }; then
		echo "versions: leg $leg not run: $prep failed"
		echo "versions: leg $leg: 0 passed, 1 failed, 0 skipped (0 s)"
		return
	fi
	echo "versions: leg $leg uses $got"
	t0=$(date +%s)
	log=$(mktemp)
	bash "$here/run-leg.sh" "$leg" ${RDZV_VERSIONS_TESTS:-} >"$log" 2>&1
	rc=$?
	sed "s/^/  /" "$log"
	line=$(grep -E "^leg $leg: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped" "$log" | tail -n 1)
	rm -f "$log"
	if [ -z "$line" ]; then
		echo "versions: leg $leg ended without totals (status $rc)"
		echo "versions: leg $leg: 0 passed, 1 failed, 0 skipped ($(($(date +%s) - t0)) s)"
		return
	fi
	read -r p f s < <(echo "$line" | sed -E 's/^leg [^:]*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/')
	[ "$rc" = 0 ] || [ "$f" -gt 0 ] || f=1
	echo "versions: leg $leg: $p passed, $f failed, $s skipped ($(($(date +%s) - t0)) s)"
}

# The legs run at once (RDZV_VERSIONS_SERIAL=1: one after the other): each
# has its own cluster (ports, state directory, lock, first job id; see
# tests/lib/e2e.sh), and their end-to-end tests mostly wait on Slurm, so on
# 2 cores together they take little more than the longer one alone.
out=$(mktemp -d)
pids=
for leg in $legs; do
	if [ "${RDZV_VERSIONS_SERIAL:-0}" = 1 ]; then
		run_one "$leg" >"$out/$leg.log" 2>&1
	else
		run_one "$leg" >"$out/$leg.log" 2>&1 &
		pids="$pids $!"
	fi
done
[ -n "$pids" ] && wait $pids
for leg in $legs; do
	cat "$out/$leg.log"
	read -r p f s < <(sed -nE "s/^versions: leg $leg: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/p" "$out/$leg.log" | tail -n 1)
	[ -n "${p:-}" ] || { p=0 f=1 s=0; echo "versions: leg $leg left no totals"; }
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
done
rm -rf "$out"
echo "versions: $pass passed, $fail failed, $skip skipped ($(($(date +%s) - t_all)) s)"
[ "$fail" = 0 ]

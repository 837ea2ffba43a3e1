#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run-leg.sh LEG [TEST...]: build spank-rdzv for one Slurm and run tests on a
# cluster of that Slurm. The same test files run under every leg; only
# RDZV_SLURM (read by tests/lib/e2e.sh) and the build directory differ.
#
#   LEG    host   the host's Slurm (Debian 12: 22.05), PyTorch 1.13
#          24.11  Debian 13 (trixie) root (make-chroot.sh trixie, entered by
#                 in-root.sh): Slurm 24.11, PyTorch 2.6, real torchrun; the
#                 plugin is built inside with gcc 14 against its libslurm-dev
#          26.05  Debian sid root (make-chroot.sh sid): Slurm 26.05, PyTorch
#                 2.14, real torchrun, Apptainer; built inside with gcc 16
#   TEST   test files as make check names them (tests/0022-....t); none:
#          all of make check
#
# Build directory: _build-LEG beside the sources (host: _build), configured
# once with --enable-werror, then only `make`. Ends with make check's status;
# prints "leg LEG: N passed, N failed, N skipped (S s)".
#   RDZV_LEG_BUILD   build directory instead of _build-LEG
set -u
[ $# -ge 1 ] || { echo "usage: $0 host|24.11|26.05 [TEST...]" >&2; exit 2; }
leg=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -gt 2 ] || jobs=2
start=$(date +%s)

say() { printf 'run-leg %s: %s\n' "$leg" "$*"; }

# The generated build system, made here by the host's autotools whenever an
# input is newer: make inside the Debian 13 root would otherwise regenerate it
# with that root's automake, another version, in the shared source tree.
# Legs started at once take turns (a lock beside the sources).
bootstrap() {
	exec 7>"$top/.rdzv-bootstrap.lock"
	flock 7
	if [ ! -x "$top/configure" ] || [ ! -f "$top/Makefile.in" ] \
		|| [ -n "$(find "$top/configure.ac" "$top/Makefile.am" "$top/mk" "$top/m4" -newer "$top/Makefile.in" 2>/dev/null | head -n 1)" ]; then
		(cd "$top" && autoreconf -fi >/dev/null 2>&1) || { (cd "$top" && autoreconf -fi); say "autoreconf failed"; exit 1; }
	fi
	exec 7>&-
}

# build_and_check BUILD [CONFIGURE-ARGS...]: configure once, make, make check.
build_and_check() {
	local build=$1 rc
	shift
	mkdir -p "$build" && cd "$build" || return 1
	if [ ! -f Makefile ]; then
		"$top/configure" -q --enable-werror "$@" >configure.log 2>&1 \
			|| { tail -n 30 configure.log; say "configure failed ($build/configure.log)"; return 1; }
	fi
	make -j"$jobs" >build.log 2>&1 || { tail -n 40 build.log; say "build failed ($build/build.log)"; return 1; }
	say "built with $(${CC:-gcc} --version | head -n 1), Slurm $(sed -n 's/^SLURM_MAJOR = //p' Makefile)"
	rm -f check.log
	if [ -n "$leg_tests" ]; then
		make -j"$jobs" check TESTS="$leg_tests" >check.log 2>&1
	else
		make -j"$jobs" check >check.log 2>&1
	fi
	rc=$?
	grep -E '^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR):' check.log | grep -v -E '^(PASS|SKIP): .* [0-9]+ '
	[ $rc = 0 ] || { echo "--- $build/test-suite.log (tail)"; tail -n 80 test-suite.log 2>/dev/null; }
	return $rc
}

totals() { # totals BUILD RC -> the leg's line
	local p=0 f=0 s=0
	if [ -f "$1/check.log" ]; then
		read -r p f s < <(awk '/^# PASS:/{p=$3} /^# FAIL:/{f+=$3} /^# ERROR:/{f+=$3} /^# XPASS:/{f+=$3} /^# SKIP:/{s=$3} END{print p+0, f+0, s+0}' "$1/check.log")
	fi
	[ "$2" = 0 ] || [ "$f" -gt 0 ] || f=$((f + 1))
	echo "leg $leg: $p passed, $f failed, $s skipped ($(($(date +%s) - start)) s)"
}

leg_tests="$*"
case $leg in
host)
	build=${RDZV_LEG_BUILD:-$top/_build}
	bootstrap
	(build_and_check "$build"); rc=$?
	totals "$build" $rc
	;;
24.11|26.05)
	build=${RDZV_LEG_BUILD:-$top/_build-$leg}
	if [ "${RDZV_IN_ROOT:-0}" = 1 ]; then
		# Debian's PyTorch 2.6 (trixie) and 2.14 (sid) are built without
		# libuv, and TCPStore defaults to it since 2.4: every env://
		# rendezvous there needs USE_LIBUV=0 (tests that run PyTorch
		# outside Slurm too).
		export USE_LIBUV=0
		say "inside $(cat /etc/debian_version 2>/dev/null | sed 's/^/Debian /'), Slurm $(slurmd -V 2>/dev/null), torch $(python3 -c 'import importlib.metadata as m; print(m.version("torch"))' 2>/dev/null)"
		(build_and_check "$build"); rc=$?
		totals "$build" $rc
		exit $rc
	fi
	case $leg in 24.11) suite=trixie ;; 26.05) suite=sid ;; esac
	say "Debian $suite root: making or waiting for tests/versions/make-chroot.sh $suite (cached)"
	root=$(bash "$here/make-chroot.sh" "$suite") || { echo "leg $leg: 0 passed, 1 failed, 0 skipped (Debian $suite root failed)"; exit 1; }
	bootstrap
	export RDZV_IN_ROOT=1 RDZV_SLURM=$leg
	RDZV_PASS_ENV="RDZV_IN_ROOT RDZV_LEG_BUILD RDZV_TOPOLOGIES E2E_TIMEOUT V VERBOSE" \
		bash "$here/in-root.sh" "$root" bash "$here/run-leg.sh" "$leg" "$@"
	exit $?
	;;
*)
	echo "run-leg.sh: unknown leg $leg (host, 24.11 or 26.05)" >&2
	exit 2
	;;
esac
exit $rc

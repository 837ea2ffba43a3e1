#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# hardening.sh: the hardening checks below in one command, for CI.
#
#   tests/hardening.sh [BUILDDIR]
#
#   1. sanitizer build: configure --enable-sanitizers --enable-werror in its
#      own directory, build, and `make check` there (unit tests, helpers'
#      tests and the harness tests under ASan+UBSan; end-to-end tests skip,
#      slurmstepd cannot load an ASan plugin)
#   2. every fuzz target (tests/fuzz/fuzz-*.c) with libFuzzer for a bounded
#      time, after replaying its corpus and regressions
#   3. rdzv.so's hooks through the harness under valgrind, in the plain
#      build BUILDDIR (default: $top_builddir, else the current directory
#      when it is a build of this tree, else _build; configured and built
#      here when missing)
#   4. static analysis (cppcheck, privilege rules)
#
# Prints TAP (one test per stage, details as comments) and exits non-zero
# when any stage fails. Budget: about 6 minutes on 2 cores.
#
# Each stage also prints its inner totals and the reason of each inner skip,
# which tests/run-all.sh adds to its own count (a skip is a skip, never a
# pass):
#   # tally PASSED FAILED SKIPPED STAGE
#   # skipped: STAGE: WHERE: REASON
# Under CI (CI=true) a tool that tests/install-deps.sh installs (clang and its
# libFuzzer runtime, valgrind, cppcheck) fails its stage when missing.
#
# Environment:
#   RDZV_FUZZ_SECONDS   per fuzz target (default here 20; run-fuzzers.sh's own default is 30)
#   RDZV_SAN_BUILDDIR   the sanitizer build directory (default: _build-hardening-san)
#   RDZV_JOBS           make -j (default 2)
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
# The plain build: the argument, else $top_builddir, else the current
# directory when it is a configured build of this tree (tests/run-all.sh
# calls this script from its build directory), else _build.
plain=${1:-${top_builddir:-}}
if [ -z "$plain" ]; then
	d=$(sed -n 's/^abs_top_srcdir = //p' ./Makefile 2>/dev/null)
	if [ -n "$d" ] && [ "$(cd "$d" 2>/dev/null && pwd -P)" = "$(cd "$srcdir" && pwd -P)" ]; then
		plain=$(pwd)
	else
		plain=$srcdir/_build
	fi
fi
san=${RDZV_SAN_BUILDDIR:-$srcdir/_build-hardening-san}
jobs=${RDZV_JOBS:-2}
: "${RDZV_FUZZ_SECONDS:=20}"
export RDZV_FUZZ_SECONDS
logs=$(mktemp -d "${TMPDIR:-/tmp}/rdzv-hardening.XXXXXX") || exit 2
failed=0
n=0
start=$(date +%s)

stage() { # stage STATUS NAME [LOG]
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=1
		[ -n "${3:-}" ] && [ -f "$3" ] && tail -n 40 "$3" | sed 's/^/#   /'
	fi
}
elapsed() { echo "$(($(date +%s) - start)) s"; }
tally() { echo "# tally $2 $3 $4 $1"; } # tally STAGE PASSED FAILED SKIPPED
skipped() { echo "# skipped: $1: $2: $3"; } # skipped STAGE WHERE REASON
# make_check_tally STAGE LOG SUITELOG: the totals of a make check log
# (automake's "# PASS: N" summary) and the reason of each skip (from the
# build's test-suite.log: make -j interleaves the lines of LOG).
make_check_tally() {
	if grep -q '^# TOTAL:' "$2" 2>/dev/null; then
		awk -v st="$1" '
			/^# PASS:/ { p = $3 } /^# FAIL:|^# ERROR:|^# XPASS:/ { f += $3 } /^# SKIP:/ { k = $3 }
			END { printf "# tally %d %d %d %s\n", p, f, k, st }' "$2"
		from=$2
		[ -f "$3" ] && from=$3
		awk -v leg="$1" -f "$srcdir/tests/lib/skip-reasons.awk" "$from" | sed 's/^/# skipped: /'
	else
		tally "$1" 0 1 0
	fi
}
# tap_tally STAGE LOG...: the same for plain TAP output (ok, ok # SKIP,
# 1..0 # SKIP, not ok, not ok # TODO = a known issue, counted as a skip).
tap_tally() {
	st=$1
	shift
	awk -v st="$st" '
		/^1\.\.0 # SKIP/ { k++; sub(/^1\.\.0 # SKIP */, ""); printf "# skipped: %s: %s: %s\n", st, FILENAME, $0; next }
		/^ok .*# SKIP/ { k++; r = $0; sub(/^.*# SKIP */, "", r); printf "# skipped: %s: %s: %s\n", st, FILENAME, r; next }
		/^not ok .*# TODO/ { k++; r = $0; sub(/^.*# TODO */, "", r); printf "# skipped: %s: %s: known issue (TODO): %s\n", st, FILENAME, r; next }
		/^ok / { p++ } /^not ok / { f++ }
		END { printf "# tally %d %d %d %s\n", p, f, k, st }' "$@" | sed "s|$logs/||"
}
ci() { [ "${CI:-}" = true ]; }
summary() { # the TAP results of a make check log directory, as comments
	find "$1" -name '*.trs' 2>/dev/null | while read -r f; do
		r=$(sed -n 's/^:global-test-result: //p' "$f")
		[ "$r" = PASS ] || echo "#   $r ${f#"$1"/}"
	done
}
configure_in() { # configure_in DIR ARGS...
	d=$1
	shift
	[ -f "$srcdir/configure" ] || (cd "$srcdir" && autoreconf -fi) >"$logs/autoreconf.log" 2>&1 || return 1
	mkdir -p "$d" && (cd "$d" && "$srcdir/configure" -q "$@")
}

echo "1..4"
echo "# source $srcdir, plain build $plain, sanitizer build $san, ${RDZV_FUZZ_SECONDS}s per fuzz target"

# 1. Sanitizer build + make check.
rc=0
if [ ! -f "$san/Makefile" ]; then
	configure_in "$san" --enable-sanitizers --enable-werror >"$logs/san-configure.log" 2>&1 || rc=1
fi
if [ "$rc" -eq 0 ]; then
	make -C "$san" -j"$jobs" >"$logs/san-build.log" 2>&1 || rc=1
	[ "$rc" -eq 0 ] || cp "$logs/san-build.log" "$logs/san.log"
fi
if [ "$rc" -eq 0 ]; then
	make -C "$san" -j"$jobs" check >"$logs/san.log" 2>&1 || rc=1
fi
counts=$(grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR|XFAIL|XPASS):' "$logs/san.log" 2>/dev/null | tr -s ' ' | tr '\n' ' ')
stage "$rc" "sanitizer build (ASan+UBSan, -Werror) and make check: ${counts:-no test summary} [$(elapsed)]" "$logs/san.log"
[ "$rc" -eq 0 ] || summary "$san"
make_check_tally "sanitizer make check" "$logs/san.log" "$san/test-suite.log"

# 2. Fuzzing (config.h and lib sources from the sanitizer build when it exists).
fz=$san
[ -f "$fz/Makefile" ] || fz=$plain
RDZV_BUILDDIR=$fz RDZV_FUZZ_SUMMARY=$logs/fuzz.tsv RDZV_FUZZ_WORKDIR=$logs/fuzz \
	sh "$srcdir/tests/fuzz/run-fuzzers.sh" >"$logs/fuzz.log" 2>&1
rc=$?
if grep -q '^1\.\.0 # SKIP' "$logs/fuzz.log"; then
	why=$(sed -n 's/^1\.\.0 # SKIP //p' "$logs/fuzz.log")
	if ci; then
		stage 1 "fuzzing: CI=true: $why (tests/install-deps.sh installs clang libclang-rt-14-dev)"
		tally fuzzing 0 1 0
	else
		n=$((n + 1))
		echo "ok $n # SKIP fuzzing: $why"
		tally fuzzing 0 0 1
		skipped fuzzing run-fuzzers.sh "$why"
	fi
else
	targets=$(grep -c '^ok ' "$logs/fuzz.log")
	total=$(grep -cE '^(not )?ok ' "$logs/fuzz.log")
	stage "$rc" "fuzzing: $targets of $total targets clean after ${RDZV_FUZZ_SECONDS}s each [$(elapsed)]"
	grep -E '^(not )?ok ' "$logs/fuzz.log" | sed 's/^/#   /'
	[ "$rc" -eq 0 ] || grep -vE '^(not )?ok |^1\.\.' "$logs/fuzz.log" | head -40 | sed 's/^/#   /'
	if [ "$total" -eq 0 ]; then
		tally fuzzing 0 1 0
	else
		tap_tally fuzzing "$logs/fuzz.log"
		[ "$rc" -eq 0 ] || [ "$((total - targets))" -gt 0 ] || tally fuzzing 0 1 0
	fi
fi

# 3. The plugin under valgrind, in the plain build.
rc=0
if [ ! -f "$plain/Makefile" ]; then
	configure_in "$plain" --enable-werror >"$logs/plain-configure.log" 2>&1 || rc=1
fi
if [ "$rc" -eq 0 ] && grep -q "^SAN_CFLAGS = ..*" "$plain/Makefile"; then
	echo "# $plain is a sanitizer build: valgrind needs a plain one" >"$logs/vg.log"
	rc=1
fi
if [ "$rc" -eq 0 ]; then
	make -C "$plain" -j"$jobs" spank/rdzv.la tests/harness/rdzv-harness >"$logs/vg.log" 2>&1 || rc=1
	[ "$rc" -eq 0 ] || echo "# cannot build spank/rdzv.la and the harness in $plain" >>"$logs/vg.log"
fi
# The test scripts directly (as make check would, with its environment),
# so that an unrelated check program that does not build yet cannot hide
# this stage's result.
vgtests="0071-plugin-hooks-run-clean-under-valgrind 0072-oversized-repeated-and-malformed-input-is-refused-safely 0073-topology-path-is-not-steered-by-the-user"
pass=0
fail=0
todo=0
skips=0
if [ "$rc" -eq 0 ]; then
	for t in $vgtests; do
		# make check of this very build ran the test after rdzv.so and the
		# harness were last built (tests/run-all.sh: just before): its
		# results are these, not run a second time.
		if [ -f "$plain/tests/$t.trs" ] && [ -f "$plain/tests/$t.log" ] \
			&& [ "$plain/tests/$t.trs" -nt "$plain/spank/.libs/rdzv.so" ] \
			&& [ "$plain/tests/$t.trs" -nt "$plain/tests/harness/rdzv-harness" ] \
			&& grep -q 'under valgrind (parent and every task)' "$plain/tests/$t.log" 2>/dev/null; then
			cp "$plain/tests/$t.log" "$logs/$t.log"
			grep -q '^:test-result: FAIL\|^:test-result: ERROR' "$plain/tests/$t.trs" && rc=1
			echo "# $t: make check's run in $plain reused" >>"$logs/vg.log"
		else
			top_srcdir=$srcdir top_builddir=$plain RDZV_SANITIZE=no RDZV_HAVE_CUDA=no \
				bash "$srcdir/tests/$t.t" >"$logs/$t.log" 2>&1 || rc=1
		fi
		pass=$((pass + $(grep '^ok ' "$logs/$t.log" | grep -vc '# SKIP')))
		skips=$((skips + $(grep -cE '^ok .*# SKIP|^1\.\.0 # SKIP' "$logs/$t.log")))
		fail=$((fail + $(grep '^not ok ' "$logs/$t.log" | grep -vc '# TODO')))
		todo=$((todo + $(grep '^not ok ' "$logs/$t.log" | grep -c '# TODO')))
		grep '^not ok ' "$logs/$t.log" | grep -v '# TODO' | sed "s/^/#   $t: /" >>"$logs/vg.log"
	done
	[ "$fail" -eq 0 ] || rc=1
fi
command -v valgrind >/dev/null 2>&1 && how="under valgrind" || how="(valgrind not installed: memory checks skipped)"
stage "$rc" "rdzv.so hooks via the harness $how: $pass passed, $fail failed, $skips skipped, $todo known issues (TODO) [$(elapsed)]" "$logs/vg.log"
for t in $vgtests; do
	grep '^not ok .*# TODO' "$logs/$t.log" 2>/dev/null | sed "s/^/#   known: /"
done
if [ -f "$logs/${vgtests%% *}.log" ]; then
	(cd "$logs" && tap_tally "harness (valgrind)" $(for t in $vgtests; do echo "$t.log"; done))
	[ "$rc" -eq 0 ] || [ "$fail" -gt 0 ] || tally "harness (valgrind)" 0 1 0
else
	tally "harness (valgrind)" 0 1 0
fi

# 4. Static analysis.
top_srcdir=$srcdir top_builddir=$plain sh "$srcdir/tests/static-analysis.sh" >"$logs/static.log" 2>&1
rc=$?
stage "$rc" "static analysis: $(grep -E '^(not )?ok' "$logs/static.log" | sed 's/^[a-z ]*[0-9]* \(- \)\{0,1\}//' | tr '\n' ';') [$(elapsed)]" "$logs/static.log"
(cd "$logs" && tap_tally "static analysis" static.log)
[ "$rc" -eq 0 ] || grep -q '^not ok' "$logs/static.log" || tally "static analysis" 0 1 0

if [ "$failed" -eq 0 ]; then
	echo "# total $(elapsed)"
	rm -rf "$logs"
else
	echo "# total $(elapsed); logs in $logs"
fi
exit "$failed"

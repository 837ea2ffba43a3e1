#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# run-fuzzers.sh: build every tests/fuzz/fuzz-*.c as a libFuzzer target
# (clang -fsanitize=fuzzer,address,undefined) against the logic library's
# sources, replay its seed corpus and regressions, then fuzz it for a bounded
# time. Prints TAP: one test per target.
#
#   tests/fuzz/run-fuzzers.sh [TARGET...]        # CI: 30 s per target
#   RDZV_FUZZ_SECONDS=3600 tests/fuzz/run-fuzzers.sh fuzz-hostlist   # long run
#   RDZV_FUZZ_MERGE=1 tests/fuzz/run-fuzzers.sh  # fold new coverage into the
#                                                # seed corpora (then commit)
#
# Environment:
#   RDZV_FUZZ_SECONDS  fuzzing time per target (default 30; 0 = replay only)
#   RDZV_FUZZ_WORKDIR  where binaries, working corpora and artifacts go
#                      (default: a fresh temporary directory, removed at exit
#                      unless something failed)
#   RDZV_BUILDDIR      a configured build directory: its config.h and hwloc
#                      flags are used (default: $top_builddir, else a
#                      minimal config.h and pkg-config hwloc)
#   CLANG              the compiler (default: clang-14, else clang)
#
# A crash, leak, timeout or out-of-memory found while fuzzing is copied into
# tests/fuzz/regressions/TARGET/ in the source tree: fix the bug, commit the
# file, and tests/0070-fuzz-inputs-replay-clean.t replays it in every build.
# The summary line of each target carries its execution count.
set -u

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${RDZV_BUILDDIR:-${top_builddir:-}}
seconds=${RDZV_FUZZ_SECONDS:-30}
fuzzdir=$srcdir/tests/fuzz

case $seconds in
''|*[!0-9]*) echo "run-fuzzers: RDZV_FUZZ_SECONDS=$seconds is not a number of seconds" >&2; exit 2 ;;
esac

if [ -z "${CLANG:-}" ]; then
	for c in clang-14 clang; do
		if command -v "$c" >/dev/null 2>&1; then CLANG=$c; break; fi
	done
fi
if [ -z "${CLANG:-}" ]; then
	echo "1..0 # SKIP no clang (libFuzzer needs clang -fsanitize=fuzzer)"
	exit 0
fi

own_work=no
if [ -n "${RDZV_FUZZ_WORKDIR:-}" ]; then
	work=$RDZV_FUZZ_WORKDIR
	mkdir -p "$work" || exit 2
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/rdzv-fuzz.XXXXXX") || exit 2
	own_work=yes
fi
failed=0
cleanup() {
	if [ "$own_work" = yes ] && [ "$failed" -eq 0 ]; then rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Is libFuzzer there at all? (clang without its runtime links nothing.)
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
	>"$work/probe.c"
if ! "$CLANG" -fsanitize=fuzzer "$work/probe.c" -o "$work/probe" >"$work/probe.log" 2>&1; then
	echo "1..0 # SKIP $CLANG has no libFuzzer runtime (libclang-rt-dev): $(head -c 200 "$work/probe.log")"
	exit 0
fi

# config.h and hwloc flags: the build directory's when there is one.
mkdir -p "$work/include" "$work/obj" "$work/bin"
hwloc_cflags=
hwloc_libs=
if [ -n "$builddir" ] && [ -f "$builddir/config.h" ]; then
	cp "$builddir/config.h" "$work/include/config.h"
	if [ -f "$builddir/Makefile" ]; then
		hwloc_cflags=$(sed -n 's/^HWLOC_CFLAGS = //p' "$builddir/Makefile")
		hwloc_libs=$(sed -n 's/^HWLOC_LIBS = //p' "$builddir/Makefile")
	fi
else
	printf '/* minimal config.h for the fuzz build (no configured build dir) */\n#define PACKAGE_VERSION "fuzz"\n#define PACKAGE_STRING "spank-rdzv fuzz"\n' \
		>"$work/include/config.h"
fi
if [ -z "$hwloc_libs" ]; then
	hwloc_cflags=$(pkg-config --cflags hwloc 2>/dev/null)
	hwloc_libs=$(pkg-config --libs hwloc 2>/dev/null || echo -lhwloc)
fi

san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
incs="-I$srcdir/helpers/preflight"
for d in "$srcdir"/lib/*/; do incs="$incs -I${d%/}"; done
cflags="-g -O1 $san -I$work/include $incs $hwloc_cflags"

# The library's sources: those the configured build links into librdzv
# (so a half-written file nobody lists yet cannot break fuzzing), else all
# of lib/*/*.c and the preflight protocol.
libsrcs=
if [ -n "$builddir" ] && [ -f "$builddir/Makefile" ]; then
	printf 'rdzv-print-lib-sources:\n\t@echo $(lib_librdzv_la_SOURCES) $(helpers_preflight_libpreflight_la_SOURCES)\n' >"$work/print.mk"
	for f in $(cd "$builddir" && make -s -f Makefile -f "$work/print.mk" rdzv-print-lib-sources 2>/dev/null | tail -1); do
		case $f in *.c) libsrcs="$libsrcs $srcdir/$f" ;; esac
	done
fi
[ -n "$libsrcs" ] || libsrcs=$(ls "$srcdir"/lib/*/*.c "$srcdir"/helpers/preflight/boot_*.c "$srcdir"/helpers/preflight/busbw.c)

# The library once, instrumented for coverage but without libFuzzer's main.
objs=
for c in $libsrcs; do
	o=$work/obj/$(basename "$c" .c).o
	# shellcheck disable=SC2086
	if ! "$CLANG" $cflags -fsanitize=fuzzer-no-link -c "$c" -o "$o" 2>"$work/obj/build.log"; then
		echo "Bail out! cannot compile $c for fuzzing:"
		sed 's/^/# /' "$work/obj/build.log" | head -30
		failed=1
		exit 1
	fi
	objs="$objs $o"
done

if [ $# -gt 0 ]; then
	targets=$*
else
	targets=
	for f in "$fuzzdir"/fuzz-*.c; do
		[ -f "$f" ] && targets="$targets $(basename "$f" .c)"
	done
fi
set -- $targets
echo "1..$#"

n=0
: >"$work/summary"
for t in "$@"; do
	n=$((n + 1))
	t=${t%.c}
	src=$fuzzdir/$t.c
	bin=$work/bin/$t
	log=$work/$t.log
	if [ ! -f "$src" ]; then
		echo "not ok $n - $t: no $src"
		failed=1
		continue
	fi
	# shellcheck disable=SC2086
	if ! "$CLANG" $cflags -fsanitize=fuzzer "$src" $objs $hwloc_libs -ldl -o "$bin" >"$log" 2>&1; then
		echo "not ok $n - $t builds"
		sed 's/^/# /' "$log" | head -30
		failed=1
		continue
	fi
	seeds=
	for d in "$fuzzdir/corpus/${t#fuzz-}" "$fuzzdir/regressions/${t#fuzz-}"; do
		[ -d "$d" ] && seeds="$seeds $d"
	done
	rm -rf "$work/artifacts/$t"
	mkdir -p "$work/corpus/$t" "$work/artifacts/$t"

	# Replay: every seed and every recorded regression, once. A kept input
	# may be slow by design (fuzz-domain's long-names input: 4 million node
	# names, about 3 s unsanitized, past 10 s under ASan on a loaded
	# machine): the replay asks for no crash and no broken invariant, with
	# a generous per-input limit; speed is make bench's to measure.
	nseeds=0
	if [ -n "$seeds" ]; then
		nseeds=$(find $seeds -type f ! -name '.*' | wc -l)
		# shellcheck disable=SC2086
		if ! "$bin" -runs=0 -timeout=120 -rss_limit_mb=2048 -artifact_prefix="$work/artifacts/$t/replay-" $seeds >"$log" 2>&1; then
			echo "not ok $n - $t: replaying the corpus and regressions crashes"
			grep -E 'ERROR|SUMMARY|invariant|Test unit written|^ +#[0-9]' "$log" | head -25 | sed 's/^/# /'
			failed=1
			continue
		fi
	fi
	if [ "$seconds" -eq 0 ]; then
		echo "ok $n - $t: $nseeds inputs replayed (no fuzzing: RDZV_FUZZ_SECONDS=0)"
		printf '%s\t%s\t%s\n' "$t" 0 "$nseeds" >>"$work/summary"
		continue
	fi

	# Fuzz: new inputs go to the working corpus, never into the tree. It
	# starts from the corpus, not the regressions (replayed above, some
	# slow by design, which the 10 s limit for new inputs would report).
	fuzz_seeds=
	[ -d "$fuzzdir/corpus/${t#fuzz-}" ] && fuzz_seeds="$fuzzdir/corpus/${t#fuzz-}"
	# shellcheck disable=SC2086
	"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
		-print_final_stats=1 -artifact_prefix="$work/artifacts/$t/" \
		"$work/corpus/$t" $fuzz_seeds >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	[ -n "$execs" ] || execs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -1)
	[ -n "$execs" ] || execs=0
	found=$(find "$work/artifacts/$t" -type f | head -20)
	if [ "$rc" -ne 0 ] || [ -n "$found" ]; then
		mkdir -p "$fuzzdir/regressions/${t#fuzz-}"
		for a in $found; do
			cp "$a" "$fuzzdir/regressions/${t#fuzz-}/"
		done
		echo "not ok $n - $t: $execs executions in ${seconds}s, found $(echo "$found" | wc -w) failing input(s) (rc $rc), copied to tests/fuzz/regressions/${t#fuzz-}/"
		grep -E 'ERROR|SUMMARY|invariant|^ +#[0-9]' "$log" | head -25 | sed 's/^/# /'
		printf '%s\t%s\t%s\tFAIL\n' "$t" "$execs" "$nseeds" >>"$work/summary"
		failed=1
		continue
	fi
	cov=$(grep -E '^#[0-9]+.*(DONE|INITED)' "$log" | tail -1 | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	if [ "${RDZV_FUZZ_MERGE:-0}" = 1 ]; then
		"$bin" -merge=1 -max_len=4096 "$fuzzdir/corpus/${t#fuzz-}" "$work/corpus/$t" >>"$log" 2>&1
	fi
	echo "ok $n - $t: $execs executions in ${seconds}s, $nseeds seed/regression inputs replayed, coverage ${cov:-?} edges, no crash"
	printf '%s\t%s\t%s\n' "$t" "$execs" "$nseeds" >>"$work/summary"
done

if [ -n "${RDZV_FUZZ_SUMMARY:-}" ]; then
	cp "$work/summary" "$RDZV_FUZZ_SUMMARY"
fi
if [ "$failed" -ne 0 ]; then
	echo "# logs, binaries and artifacts kept in $work"
	exit 1
fi
exit 0

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# preflight-gpu.sh: the GPU half of rdzv-preflight's tests, for a machine
# with NVIDIA GPUs, CUDA and NCCL (CI has none). Run from the source tree:
#
#   tests/gpu/preflight-gpu.sh            # results on stdout and in $OUT/
#
# 1. builds rdzv-preflight with CUDA/NCCL: through configure when Slurm's
#    headers and hwloc are there, else by compiling the helper's sources
#    directly (without hwloc the binding-promise check against PCI order is
#    skipped: a stub reports no topology);
# 2. runs a one-GPU communicator and the all-reduce sweep (RANK=0,
#    WORLD_SIZE=1), then, with G > 1 GPUs, G ranks on this node (one GPU
#    each) so that busbw is not 0 and the duplicate-GPU check has something
#    to check; and a forced failure: two ranks bound to one GPU;
# 3. runs nccl-tests' all_reduce_perf on the same sizes when it is found
#    ($NCCL_TESTS_DIR, PATH) or can be built from $NCCL_TESTS_SRC, and
#    prints both bandwidths at the largest size side by side.
# Prints TAP; writes every log and a summary (summary.txt) to $OUT (default
# ./preflight-gpu-out). Exits 0 when every test point passed.
#
# Environment: CUDA_HOME (default /usr/local/cuda), NCCL_HOME (default:
# CUDA_HOME), MAX_BYTES (default 1G), ITERS (default 20), NCCL_TESTS_DIR,
# NCCL_TESTS_SRC, CC (default cc), JOBS (default 8), PREFLIGHT_DIRECT=1
# (skip configure, compile directly).
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
nccl=${NCCL_HOME:-$cuda}
out=${OUT:-$PWD/preflight-gpu-out}
maxb=${MAX_BYTES:-1G}
iters=${ITERS:-20}
jobs=${JOBS:-8}
cc=${CC:-cc}
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/preflight-gpu.XXXXXX")
trap 'rm -rf "$work"' EXIT
n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
note() { echo "# $*"; echo "$*" >>"$out/summary.txt"; }
: >"$out/summary.txt"

ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ "$ngpu" -lt 1 ]; then
	echo "1..0 # SKIP no GPU (nvidia-smi -L lists none)"
	exit 0
fi
note "host $(hostname), $ngpu GPU(s): $(nvidia-smi --query-gpu=name,pci.bus_id --format=csv,noheader | tr '\n' ';')"
note "driver/CUDA: $(nvidia-smi | sed -n 's/.*Driver Version: \([0-9.]*\).*CUDA Version: \([0-9.]*\).*/driver \1, CUDA \2/p')"

# ---- 1. build
bin=
if [ "${PREFLIGHT_DIRECT:-0}" = 1 ]; then
	: # asked for the direct build
elif [ -f "$src/configure" ] || (cd "$src" && autoreconf -fi >"$out/autoreconf.log" 2>&1); then
	mkdir -p "$work/build"
	if (cd "$work/build" && "$src/configure" -q --with-cuda="$cuda" >"$out/configure.log" 2>&1 &&
	    make -j"$jobs" helpers/rdzv-preflight >"$out/make.log" 2>&1); then
		bin=$work/build/helpers/rdzv-preflight
		note "built with configure --with-cuda=$cuda"
	fi
fi
if [ -z "$bin" ]; then
	# No Slurm headers or no hwloc here: compile the helper directly.
	mkdir -p "$work/direct"
	printf '#define PACKAGE_VERSION "gpu-test"\n#define HAVE_CUDA_NCCL 1\n' >"$work/direct/config.h"
	srcs="$src/helpers/preflight/checks.c $src/helpers/preflight/gpu.c $src/helpers/preflight/main.c
	      $src/helpers/preflight/report.c $src/helpers/preflight/ring.c $src/helpers/preflight/summary.c
	      $src/helpers/preflight/boot_frame.c $src/helpers/preflight/boot_net.c $src/helpers/preflight/boot_server.c $src/helpers/preflight/busbw.c $src/lib/common/util.c $src/lib/step/hostlist.c $src/lib/step/layout.c
	      $src/lib/bind/hcalist.c"
	libs=
	if pkg-config --exists hwloc 2>/dev/null; then
		srcs="$srcs $src/lib/bind/topo.c $src/lib/bind/bindtable.c"
		libs=$(pkg-config --libs hwloc)
		note "direct build with hwloc"
	else
		cat >"$work/direct/nohwloc.c" <<'C'
#define _GNU_SOURCE
#include "config.h"
#include "topo.h"
#include "util.h"
#include <sched.h>
#include <stdio.h>
#include <string.h>
/* No hwloc on this machine: no topology (the PCI-order promise check is
 * skipped) and the affinity list straight from the kernel. */
int rdzv_topo_load(const char *xml, struct rdzv_topo **out, char *err, size_t errlen)
{ (void)xml; *out = NULL; return rdzv_err(err, errlen, "built without hwloc"); }
void rdzv_topo_destroy(struct rdzv_topo *t) { (void)t; }
int rdzv_topo_format_gpu(const struct rdzv_topo *t, size_t i, char *buf, size_t len)
{ (void)t; (void)i; (void)buf; (void)len; return -1; }
int rdzv_affinity_cpulist(char *buf, size_t len, char *err, size_t errlen)
{
	cpu_set_t s; size_t off = 0; int c, first = -1;
	if (sched_getaffinity(0, sizeof(s), &s) < 0) return rdzv_err(err, errlen, "sched_getaffinity");
	buf[0] = '\0';
	for (c = 0; c <= CPU_SETSIZE; c++) {
		int in = c < CPU_SETSIZE && CPU_ISSET(c, &s);
		if (in && first < 0) first = c;
		if (!in && first >= 0) {
			off += (size_t)snprintf(buf + off, len - off, first == c - 1 ? "%s%d" : "%s%d-%d",
			                        off ? "," : "", first, c - 1);
			first = -1;
			if (off >= len) return -1;
		}
	}
	return 0;
}
C
		srcs="$srcs $work/direct/nohwloc.c"
		note "direct build without hwloc (PCI-order promise check skipped)"
	fi
	libincs=; for d in "$src"/lib/*/; do libincs="$libincs -I${d%/}"; done
	# shellcheck disable=SC2086
	if $cc -std=gnu11 -O2 -g -Wall -Wno-format-truncation -I"$work/direct" $libincs -I"$src/helpers/preflight" \
		-I"$cuda/include" -I"$nccl/include" $srcs -o "$work/direct/rdzv-preflight" \
		-L"$nccl/lib" -L"$cuda/lib64" -Wl,-rpath,"$nccl/lib" -Wl,-rpath,"$cuda/lib64" \
		-lnccl -lcudart $libs -lm >"$out/cc.log" 2>&1; then
		bin=$work/direct/rdzv-preflight
	fi
fi
ok $([ -n "$bin" ] && echo 0 || echo 1) "rdzv-preflight builds with CUDA/NCCL (logs in $out)"
[ -n "$bin" ] || { echo "1..$n"; exit 1; }
note "$("$bin" --version)"
cp "$bin" "$out/" 2>/dev/null

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo $((29500 + RANDOM % 2000)); }
# ranks TAG G [ARGS...]: G ranks on this node, rank i with LOCAL_RANK i and
# all GPUs visible (so rank i uses GPU i, the binding's rule).
ranks() {
	local tag=$1 g=$2 i port pids=() st=0
	shift 2
	port=$(free_port)
	for i in $(seq 0 $((g - 1))); do
		RANK=$i WORLD_SIZE=$g LOCAL_RANK=$i LOCAL_WORLD_SIZE=$g MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
			CUDA_DEVICE_ORDER=PCI_BUS_ID timeout -k 5 600 "$bin" "$@" >"$out/$tag.$i.out" 2>"$out/$tag.$i.err" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || st=$?; done
	return $st
}
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@" 2>/dev/null; }

# ---- 2. one GPU, then all of them
ranks one 1 --gpu --json --max-bytes="$maxb" --iters="$iters" --timeout=120
st=$?
ok "$st" "one rank, one GPU: a communicator and the sweep pass (exit $st)"
cat "$out/one.0.err" >&2
if [ -s "$out/one.0.out" ]; then
	note "1 GPU: $(field "$out/one.0.out" 'd["ranks"][0]["gpu"]["busid"] + " " + d["ranks"][0]["gpu"]["name"]')"
	note "1 GPU sweep (bytes time_us algbw busbw):"
	field "$out/one.0.out" '"\n".join("%d %.1f %.2f %.2f" % (s["bytes"], s["time_us"], s["algbw_gbps"], s["busbw_gbps"]) for s in d["ranks"][0]["nccl"]["sizes"])' | tee -a "$out/summary.txt" | sed 's/^/#   /'
	ok $([ "$(field "$out/one.0.out" 'len(d["ranks"][0]["nccl"]["sizes"]) > 0 and all(s["checked"] for s in d["ranks"][0]["nccl"]["sizes"])')" = True ] && echo 0 || echo 1) \
		"every size's result was checked"
fi
ranks onetext 1 --gpu --max-bytes="$maxb" --iters="$iters" --timeout=120
cat "$out/onetext.0.out"

if [ "$ngpu" -gt 1 ]; then
	ranks all "$ngpu" --gpu --json --max-bytes="$maxb" --iters="$iters" --timeout=120
	st=$?
	ok "$st" "$ngpu ranks on $ngpu GPUs: communicator, sweep, distinct GPUs (exit $st)"
	[ -s "$out/all.0.out" ] && {
		note "$ngpu GPUs: largest size $(field "$out/all.0.out" '"%d bytes: algbw %.2f busbw %.2f GB/s" % ((lambda s: (s["bytes"], s["algbw_gbps"], s["busbw_gbps"]))(d["ranks"][0]["nccl"]["sizes"][-1]))')"
		note "intra-node busbw: $(field "$out/all.0.out" 'd["ranks"][0]["nccl"]["node_busbw_gbps"]')"
	}
	ranks alltext "$ngpu" --gpu --max-bytes="$maxb" --iters="$iters" --timeout=120
	cat "$out/alltext.0.out"
	# Forced failure: every rank isolated to GPU 0 (a broken binding).
	port=$(free_port)
	for i in 0 1; do
		RANK=$i WORLD_SIZE=2 LOCAL_RANK=$i LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
			CUDA_VISIBLE_DEVICES=0 timeout -k 5 300 "$bin" --timeout=60 >"$out/dup.$i.out" 2>&1 &
	done
	wait
	grep -q "duplicate GPU on .*: ranks 0 and 1 both use" "$out/dup.0.out"
	ok $? "two ranks bound to one GPU: 'duplicate GPU' names the ranks and the GPU"
else
	note "one GPU only: the multi-GPU run and the duplicate-GPU failure need two"
fi

# ---- 3. nccl-tests
perf=
for d in "${NCCL_TESTS_DIR:-}" "${NCCL_TESTS_DIR:-}/build"; do
	[ -n "$d" ] && [ -x "$d/all_reduce_perf" ] && perf=$d/all_reduce_perf && break
done
[ -z "$perf" ] && perf=$(command -v all_reduce_perf 2>/dev/null)
if [ -z "$perf" ] && [ -n "${NCCL_TESTS_SRC:-}" ] && [ -d "$NCCL_TESTS_SRC" ]; then
	cp -r "$NCCL_TESTS_SRC" "$work/nccl-tests"
	if make -C "$work/nccl-tests" -j"$jobs" CUDA_HOME="$cuda" NCCL_HOME="$nccl" >"$out/nccl-tests-build.log" 2>&1; then
		perf=$work/nccl-tests/build/all_reduce_perf
	fi
fi
if [ -n "$perf" ]; then
	"$perf" -b 8 -e "$maxb" -f 4 -g "$ngpu" -n "$iters" -w 5 >"$out/all_reduce_perf.log" 2>&1
	ok $? "nccl-tests all_reduce_perf -g $ngpu runs"
	theirs=$(awk '$1 ~ /^[0-9]+$/ && NF >= 8 { line = $0 } END { print line }' "$out/all_reduce_perf.log")
	note "all_reduce_perf largest size (size count type redop root time algbw busbw ...): $theirs"
	mine=$(field "$out/$([ "$ngpu" -gt 1 ] && echo all || echo one).0.out" '"%d %.2f %.2f" % ((lambda s: (s["bytes"], s["algbw_gbps"], s["busbw_gbps"]))(d["ranks"][0]["nccl"]["sizes"][-1]))')
	note "rdzv-preflight largest size (bytes algbw busbw): $mine"
	# Same definitions, same sizes: the figures should agree within noise
	# (out-of-place columns 6-8 of all_reduce_perf).
	python3 - "$theirs" "$mine" <<'PY' | tee -a "$out/summary.txt"
import sys
t = sys.argv[1].split(); m = sys.argv[2].split()
if len(t) >= 8 and len(m) == 3:
    ta, tb, ma, mb = float(t[6]), float(t[7]), float(m[1]), float(m[2])
    print("# algbw: nccl-tests %.2f, rdzv-preflight %.2f (ratio %.2f); busbw: %.2f vs %.2f"
          % (ta, ma, ma / ta if ta else 0, tb, mb))
PY
else
	note "nccl-tests all_reduce_perf not found (set NCCL_TESTS_DIR or NCCL_TESTS_SRC): no comparison"
fi
echo "1..$n"
[ "$failed" -eq 0 ]

#!/bin/bash
# fabric-gpu.sh: the NVLink fabric reader (lib/gpu/fabric.c) against the
# real NVML, for a machine with NVIDIA GPUs (CI has none). Run from the
# source tree after a build:
#
#   tests/gpu/fabric-gpu.sh [BUILDDIR]     # default: ./_build, else .
#
# Runs `rdzv-preflight --fabric` and asserts that it does not crash, that
# NVML loaded, and that it prints exactly one line per GPU nvidia-smi lists,
# each either a fabric answer (cluster/clique/state/health) or "not
# supported". On a GPU without a multi-node NVLink fabric (H100, H200) NVML
# says not supported (or state not started): that is the expected answer.
# Prints TAP; the lines NVML gave are printed as comments.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
b=${1:-}
[ -n "$b" ] || for d in "$src/_build" "$src"; do [ -x "$d/helpers/rdzv-preflight" ] && b=$d && break; done
bin=${b:+$b/helpers/rdzv-preflight}
n=0 failed=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }

ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ "$ngpu" -lt 1 ]; then echo "1..0 # SKIP no GPU (nvidia-smi -L lists none)"; exit 0; fi
if [ -z "$bin" ] || [ ! -x "$bin" ]; then echo "1..0 # SKIP rdzv-preflight not built (give BUILDDIR)"; exit 0; fi

out=$("$bin" --fabric 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
ok "$([ "$rc" -le 1 ] && echo 0 || echo 1)" "rdzv-preflight --fabric exits normally (rc $rc, not a crash)"
ok "$rc" "NVML loaded and answered"
lines=$(printf '%s\n' "$out" | grep -c '^GPU [0-9]* (')
ok "$([ "$lines" -eq "$ngpu" ] && echo 0 || echo 1)" "one line per GPU ($lines lines, nvidia-smi lists $ngpu)"
bad=$(printf '%s\n' "$out" | grep '^GPU [0-9]* (' | grep -Evc ': (cluster [0-9a-f-]{36}, clique [0-9]+, state (not supported|not started|in progress|completed)|not supported \(no NVLink fabric\)|not accessible to this process|fabric info unreadable)')
ok "$([ "$bad" -eq 0 ] && echo 0 || echo 1)" "every line is a fabric answer or 'not supported' ($bad other)"
ok "$(printf '%s\n' "$out" | grep -q '^node: ' && echo 0 || echo 1)" "the node's domain and verdict line is printed"
bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1)
ok "$(printf '%s\n' "$out" | grep -qi "($bus)" && echo 0 || echo 1)" "GPU 0 is named by the PCI bus id nvidia-smi gives ($bus)"
echo "1..$n"
[ "$failed" -eq 0 ]

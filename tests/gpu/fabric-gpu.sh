#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
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
. "$(dirname "$0")/gpu-lib.sh"

ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ "$ngpu" -lt 1 ]; then echo "1..0 # SKIP no GPU (nvidia-smi -L lists none)"; exit 0; fi
need_preflight

run_preflight --fabric "NVML loaded and answered"
one_line_per_gpu '^GPU [0-9]* (' nvidia-smi "$ngpu"
bad=$(printf '%s\n' "$out" | grep '^GPU [0-9]* (' | grep -Evc ': (cluster [0-9a-f-]{36}, clique [0-9]+, state (not supported|not started|in progress|completed)|not supported \(no NVLink fabric\)|not accessible to this process|fabric info unreadable)')
ok "$([ "$bad" -eq 0 ] && echo 0 || echo 1)" "every line is a fabric answer or 'not supported' ($bad other)"
ok "$(printf '%s\n' "$out" | grep -q '^node: ' && echo 0 || echo 1)" "the node's domain and verdict line is printed"
bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1)
ok "$(printf '%s\n' "$out" | grep -qi "($bus)" && echo 0 || echo 1)" "GPU 0 is named by the PCI bus id nvidia-smi gives ($bus)"
done_testing

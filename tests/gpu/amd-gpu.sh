#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# amd-gpu.sh: the ROCm SMI reader (lib/gpu/rsmi.c) against the real ROCm
# SMI, for a machine with AMD GPUs (CI has none). Run from the source tree
# after a build:
#
#   tests/gpu/amd-gpu.sh [BUILDDIR]     # default: ./_build, else .
#
# Runs `rdzv-preflight --xgmi` and asserts that it does not crash, that ROCm
# SMI loaded, that it prints one line per GPU `rocm-smi --showbus` (else
# `amd-smi list`) lists, with the same PCI bus id for each index, that the
# xGMI health agrees with `rocm-smi --showxgmierr`, and that the node's hive
# verdict agrees with the kernel's xgmi_hive_info in sysfs. Prints TAP; what
# each tool said is printed as comments.
set -u
. "$(dirname "$0")/gpu-lib.sh"
lower() { tr 'A-F' 'a-f'; }

# Index and bus id of every GPU, "N 0000:c1:00.0" per line, from rocm-smi or amd-smi.
if command -v rocm-smi >/dev/null 2>&1; then
	tool=rocm-smi
	ref=$(rocm-smi --showbus 2>/dev/null | sed -n 's/^GPU\[\([0-9]*\)\].*PCI Bus: *\([0-9A-Fa-f:.]*\).*/\1 \2/p' | lower)
elif command -v amd-smi >/dev/null 2>&1; then
	tool=amd-smi
	ref=$(amd-smi list 2>/dev/null | awk '/^GPU: *[0-9]+/ { g = $2 } /BDF:/ && g != "" { print g, $2; g = "" }' | lower)
else
	echo "1..0 # SKIP neither rocm-smi nor amd-smi is installed"; exit 0
fi
ngpu=$(printf '%s\n' "$ref" | grep -c '^[0-9]')
if [ "$ngpu" -lt 1 ]; then echo "1..0 # SKIP no AMD GPU ($tool lists none)"; exit 0; fi
need_preflight
printf '%s\n' "$ref" | sed "s/^/# $tool: GPU /"

run_preflight --xgmi "ROCm SMI loaded and listed the GPUs"
one_line_per_gpu '^GPU [0-9]* ' "$tool" "$ngpu"
bad=$(printf '%s\n' "$out" | grep '^GPU [0-9]* ' | grep -Evc '(no xGMI hive|xGMI hive 0x[0-9a-f]+), (xGMI ok|xGMI error|xGMI multiple errors|xGMI health not reported)$')
ok "$([ "$bad" -eq 0 ] && echo 0 || echo 1)" "every line names a hive (or none) and the xGMI health ($bad other)"

# The same bus id for each index.
mism=0
while read -r idx bus; do
	[ -n "$idx" ] || continue
	printf '%s\n' "$out" | grep -q "^GPU $idx ($bus)" || { echo "# GPU $idx: $tool says $bus"; mism=$((mism + 1)); }
done <<< "$ref"
ok "$mism" "each GPU's bus id is the one $tool gives ($mism differ)"

# xGMI health against rocm-smi --showxgmierr, where rocm-smi is there.
if [ "$tool" = rocm-smi ]; then
	err=$(rocm-smi --showxgmierr 2>/dev/null | grep '^GPU\[')
	printf '%s\n' "$err" | sed 's/^/# rocm-smi --showxgmierr: /'
	mism=0
	while read -r line; do
		idx=$(printf '%s\n' "$line" | sed -n 's/^GPU\[\([0-9]*\)\].*/\1/p')
		[ -n "$idx" ] || continue
		case "$line" in
		*[Mm]ultiple*) want="xGMI multiple errors" ;;
		*[Ss]ingle*|*"rror detected"*) want="xGMI error" ;;
		*[Nn]o\ error*) want="xGMI ok" ;;
		*) continue ;; # a form this script does not know: not compared
		esac
		printf '%s\n' "$out" | grep "^GPU $idx " | grep -q "$want\$" || { echo "# GPU $idx: rocm-smi says '$want'"; mism=$((mism + 1)); }
	done <<< "$err"
	ok "$mism" "the xGMI health agrees with rocm-smi --showxgmierr ($mism differ)"
fi

# The node's hive verdict against the kernel's xgmi_hive_info.
ids=$(while read -r idx bus; do
	f=/sys/bus/pci/devices/$bus/xgmi_hive_info/xgmi_hive_id
	[ -r "$f" ] && cat "$f" || echo none
done <<< "$ref" | sort -u)
printf '%s\n' "$ids" | sed 's/^/# sysfs xgmi_hive_id: /'
node=$(printf '%s\n' "$out" | grep '^node: ')
if [ "$ids" = none ]; then
	ok "$(printf '%s\n' "$node" | grep -q 'no xGMI hive' && echo 0 || echo 1)" "no GPU in an xGMI hive (sysfs): the node says no hive"
elif [ "$(printf '%s\n' "$ids" | wc -l)" -eq 1 ]; then
	ok "$(printf '%s\n' "$node" | grep -q '^node: xGMI hive 0x' && echo 0 || echo 1)" "every GPU in one xGMI hive (sysfs): the node names one hive"
else
	ok "$(printf '%s\n' "$node" | grep -q 'not in one xGMI hive' && echo 0 || echo 1)" "GPUs in several hives (sysfs): the node says so"
fi
done_testing

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --rdzv=megatron sets CUDA_DEVICE_MAX_CONNECTIONS=1 only when the step's
# command line shows tensor or context parallelism > 1 (and no FSDP), and
# --rdzv-verbose says why it did or did not.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
rec=$(mktemp -d /tmp/rdzv-rec.XXXXXX)
e2e_start RDZV_PLUGSTACK_ARGS="record_dir=$rec"
trap 'e2e_stop; rm -rf "$rec"' EXIT
cd "$(mktemp -d)" || exit 1
show='echo "CDMC=${CUDA_DEVICE_MAX_CONNECTIONS-unset}"'

run_to 60 srun -N1 -n2 --rdzv=megatron --rdzv-verbose bash -c "$show" x --tensor-model-parallel-size 2
is "$rc" 0 "TP 2 on the command line: srun exits 0"
is "$(grep -c '^CDMC=1$' <<< "$out")" 2 "CUDA_DEVICE_MAX_CONNECTIONS=1 in both tasks"
like "$out" "CUDA_DEVICE_MAX_CONNECTIONS=1: the command line gives --tensor-model-parallel-size 2" "verbose says why"

run_to 60 srun -N1 -n2 --rdzv=megatron --rdzv-verbose bash -c "$show" x --context-parallel-size 2
is "$(grep -c '^CDMC=1$' <<< "$out")" 2 "CP 2 on the command line: set"

run_to 60 srun -N1 -n2 --rdzv=megatron --rdzv-verbose bash -c "$show"
is "$rc" 0 "a wrapper without visible flags: srun exits 0"
is "$(grep -c '^CDMC=unset$' <<< "$out")" 2 "not set when the command line shows no TP/CP (FSDP may be hidden)"
like "$out" "CUDA_DEVICE_MAX_CONNECTIONS not set: the command line shows no tensor or context parallelism" "verbose says why not"

run_to 60 srun -N1 -n2 --rdzv=megatron --rdzv-verbose bash -c "$show" x --tensor-model-parallel-size 2 --use-torch-fsdp2
is "$(grep -c '^CDMC=unset$' <<< "$out")" 2 "not set with FSDP even with TP 2"
like "$out" "not set: the command line asks for FSDP \(--use-torch-fsdp2\)" "verbose names the FSDP flag"
records_whole "$rec"
done_testing

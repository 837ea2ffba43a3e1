#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rdzv-preflight without Slurm: ranks started by hand on 127.0.0.1 with the
# variables a launcher would set (two "nodes" told apart by SLURMD_NODENAME)
# meet through rank 0's bootstrap, run the TCP ring all-reduce, and rank 0
# alone prints one summary; strangers on the port do not disturb them.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/preflight-local.sh"

# Four ranks on two nodes, CPU path.
port=$(free_port)
for r in 0 1 2 3; do launch $r $r 4 $((r % 2)) 2 node$((r / 2)) -- --cpu --timeout=20; done
wait_rc 0 1 2 3
is "$rc" "0 0 0 0" "four ranks on two nodes: every rank exits 0"
o=$(out_of 0)
like "$o" "PASS  rendezvous  4/4 ranks on 2 nodes met at 127.0.0.1:$port" "rank 0: all ranks met"
like "$o" "PASS  ring +TCP ring all-reduce of 256 KiB over 4 ranks: correct on every rank" \
	"rank 0: the ring all-reduce was checked on every rank"
like "$o" "SKIP  gpu +not checked: --cpu given" "rank 0: --cpu skips the GPU check and says so"
like "$o" "node1 +2,3 " "rank 0: the node table lists node1 with ranks 2,3"
like "$o" "rdzv-preflight: PASS: every check passed" "rank 0: the verdict line"
is "$(cat "$work/out.1" "$work/err.1" "$work/out.3" "$work/err.3")" "" \
	"the other ranks print nothing when all passed"

# One rank alone.
port=$(free_port)
launch solo 0 1 0 1 n1 -- --cpu --timeout=10
wait_rc solo
is "$rc" 0 "a world of one passes"
like "$(out_of solo)" "one rank: the all-reduce of 256 KiB is a copy, checked" "and says what it checked"

# --json: one document on rank 0's stdout.
port=$(free_port)
for r in 0 1 2; do launch j$r $r 3 $r 3 n1 -- --cpu --json --timeout=20; done
wait_rc j0 j1 j2
is "$rc" "0 0 0" "--json: every rank exits 0"
json=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
# links only warns, and loopback timings on a busy machine vary: not compared
print(d["ok"], d["world_size"], len(d["ranks"]),
      ",".join(c["name"] + ":" + c["status"] for c in d["checks"] if c["name"] != "links"),
      all(r["ring"]["ok"] for r in d["ranks"]), d["ranks"][2]["local_rank"])
' "$work/out.j0" 2>&1)
is "$json" "True 3 3 rendezvous:PASS,binding:PASS,nccl-env:PASS,ring:PASS,gpu:SKIP True 2" \
	"--json: the document parses and carries checks and per-rank results"

# Strangers on the rendezvous port: garbage, a wrong protocol version, a
# silent connection. The ranks still meet; rank 0 counts the refusals.
port=$(free_port)
launch s0 0 3 0 3 n1 -- --cpu --timeout=20 --verbose
python3 - "$port" "$work/strangers-in" <<'PY' &
import socket, struct, sys, time
port = int(sys.argv[1])
def conn():
    # rank 0 may be slow to listen on a loaded machine or under ASan
    for _ in range(600):
        try:
            return socket.create_connection(("127.0.0.1", port))
        except OSError:
            time.sleep(0.05)
    raise SystemExit("rank 0 never listened")
a = conn(); a.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
b = conn(); b.sendall(struct.pack(">IHHIII", 0x525a5046, 99, 1, 1, 0, 0))
c = conn()
open(sys.argv[2], "w").close()
time.sleep(6)
PY
stranger=$!
# The other ranks start once the strangers are in, so rank 0 is still
# waiting for them (and refusing strangers) however slow this machine is.
for i in $(seq 1 300); do
	[ -e "$work/strangers-in" ] && break
	kill -0 "$stranger" 2>/dev/null || break
	sleep 0.1
done
launch s1 1 3 1 3 n1 -- --cpu --timeout=20 --verbose
launch s2 2 3 2 3 n1 -- --cpu --timeout=20 --verbose
wait_rc s0 s1 s2
wait "$stranger"
is "$rc" "0 0 0" "strangers on the port: every rank still passes"
like "$(out_of s0)" "rank 0 refused [2-9] stranger connections" "rank 0 reports the refused strangers"
like "$(out_of s0)" "rank 2: n1 local 2/3 cpus" "--verbose: rank 0 prints every rank's details"
like "$(out_of s1)" "rdzv-preflight: rank 1 on n1: PASS" "--verbose: other ranks print one line"

# A variable that differs between ranks is a warning, not a failure.
port=$(free_port)
launch v0 0 2 0 1 n1 NCCL_DEBUG=WARN -- --cpu --timeout=20
launch v1 1 2 0 1 n2 NCCL_DEBUG=WARN NCCL_ALGO=Tree NCCL_SOCKET_IFNAME=nosuch0 -- --cpu --timeout=20
wait_rc v0 v1
is "$rc" "0 0" "an NCCL variable set on one rank only does not fail the run"
o=$(out_of v0)
like "$o" "WARN  nccl-env" "it is a warning"
like "$o" "NCCL_ALGO differs: rank 0 has \(unset\), rank 1 \(n2\) has Tree" "naming the variable, rank and node"
like "$o" "WARN  binding" "NCCL_SOCKET_IFNAME naming no interface warns when NCCL does not run"
like "$o" "rank 1 \(n2\): NCCL_SOCKET_IFNAME=nosuch0 matches no interface" "and names it"

# Without --cpu: the GPU path when every rank has a GPU, else a clear note.
port=$(free_port)
launch g 0 1 0 1 n1 -- --timeout=30
wait_rc g
o=$(out_of g)
if [ "${RDZV_HAVE_CUDA:-no}" = yes ]; then
	if [ -e /dev/nvidiactl ]; then
		is "$rc" 0 "with a GPU: one rank passes the NCCL path"
		like "$o" "PASS  gpu +NCCL all-reduce" "and reports the sweep"
	else
		is "$rc" 0 "CUDA build, no GPU: falls back to the CPU path and passes"
		like "$o" "SKIP  gpu +not checked, CPU path only: no rank has a usable GPU \(rank 0: no GPU: cudaGetDeviceCount: " \
			"and says why, with CUDA's error"
		port=$(free_port)
		launch gg 0 1 0 1 n1 -- --gpu --timeout=10
		wait_rc gg
		is "$rc" 1 "--gpu without a GPU fails"
		like "$(out_of gg)" "FAIL  gpu +--gpu given: no rank has a usable GPU" "and says so"
	fi
else
	is "$rc" 0 "built without CUDA: the CPU path passes"
	like "$o" "built without CUDA/NCCL" "and the summary says how it was built"
fi
done_testing

# SPDX-License-Identifier: GPL-2.0-or-later
# preflight-local.sh: source from a test of rdzv-preflight without Slurm
# (after tap.sh). Starts ranks by hand on 127.0.0.1 with the variables a
# launcher would set; each rank's output lands in $work/out.TAG, err.TAG.
#   port=$(free_port); launch TAG RANK WORLD LOCAL_RANK LOCAL_WORLD NODE ...; wait_rc TAG...
bin=$top_builddir/helpers/rdzv-preflight
[ -x "$bin" ] || skip_all "helpers/rdzv-preflight not built"
command -v python3 >/dev/null || skip_all "python3 needed to pick a free port"
work=$(mktemp -d /tmp/rdzv-pf.XXXXXX)
trap 'for p in $(jobs -p); do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT

# A free port below the kernel's ephemeral range, so that no outgoing
# connection of another program can take it before rank 0 binds it.
free_port() {
	python3 -c '
import random, socket
lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
while True:
    p = random.randrange(max(1024, lo - 12000), lo)
    s = socket.socket()
    try:
        s.bind(("", p)); print(p); break
    except OSError:
        pass
    finally:
        s.close()'
}
# launch TAG RANK WORLD LOCAL_RANK LOCAL_WORLD NODE [VAR=value...] [-- ARGS...]
launch() {
	local tag=$1 r=$2 w=$3 lr=$4 lw=$5 node=$6 vars=()
	shift 6
	while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
	[ "${1:-}" = -- ] && shift
	env -i PATH="$PATH" RANK="$r" WORLD_SIZE="$w" LOCAL_RANK="$lr" LOCAL_WORLD_SIZE="$lw" \
		SLURMD_NODENAME="$node" MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" "${vars[@]}" \
		timeout -k 2 90 "$bin" --ring-bytes=256K "$@" >"$work/out.$tag" 2>"$work/err.$tag" &
	eval "pid_$tag=$!"
}
# wait_rc TAG...: the exit statuses of those ranks, space-separated, in $rc
wait_rc() {
	local t p st
	rc=
	for t in "$@"; do
		eval "p=\$pid_$t"
		wait "$p"
		st=$?
		rc="${rc:+$rc }$st"
	done
	# What each rank printed goes to the log when one of them failed.
	if [ -n "$(printf '%s' "$rc" | tr -d '0 ')" ]; then
		for t in "$@"; do
			sed "s/^/#   $t: /" "$work/out.$t" "$work/err.$t" | head -n 40
		done
	fi
}
out_of() { cat "$work/out.$1" "$work/err.$1"; }

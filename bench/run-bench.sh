#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run-bench.sh: the benchmarks of doc/performance.md, in one command.
#
#   make bench                      (from a build directory), or
#   top_srcdir=SRC top_builddir=BUILD bench/run-bench.sh [OUTDIR]
#
# Parts (BENCH_PARTS, default "logic topo domains handover record xid liveness launch layout ttfc fail"):
#   logic   bench/bench-logic: one task's environment for steps of 1k-100k
#           nodes (1M tasks) from worst-case inputs, time and peak memory;
#           task_init's per-task work and user_init's per-node work
#   topo    bench/bench-topo: load + binding table for every real topology
#           ($RDZV_TOPOLOGIES, default $top_srcdir/tests/topo/fixtures),
#           cold, new process, repeated; per-task row cost; again with
#           hwloc's libxml2/gl/opencl plugins blacklisted
#   domains bench/bench-domain: nvlink_domain=block's work for
#           steps of 1 to 3000 NVL72 racks: srun's domain map and Megatron
#           group check, a node's parse and place
#   handover bench/bench-handover: srun's node order and NVLink domain map
#           for a step and one node's reading of them, on GB200
#           (18-tray racks, 4 tasks a node) and H100 (blocks of 32, 8 tasks
#           a node) steps of 1k-64k nodes with fragmented node lists (16 of
#           18 trays, 80% of a pool, every other node), random rank order
#           and 63-byte block names; inputs from bench/gen-handover.py
#           (BENCH_HANDOVER_SIZES, default "1024 4096 16384 32768 65536";
#           BENCH_HANDOVER_REPS, default 5)
#   record  bench/bench-record: the step record's cost for one node per
#           step (record_dir=): 4, 8, 72 and 128 tasks' parts sent, checked,
#           the record built and written (goal: under 5 ms)
#   xid     bench/bench-xid: the look at a 16 MiB kernel log in /dev/kmsg's
#           format, as the health gate and a failing step's node make it
#   liveness bench/bench-liveness: srun's check after a failure, every node
#           asked (PING) and every answer taken, for steps of 1k-32k nodes
#           (BENCH_LIVENESS_SIZES, default "1024 4096 16384 32768"; the
#           nodes are loopback sockets in child processes) (goal: under 1 s)
#   launch  the same step (3 nodes x 4 tasks running `true`) under the local
#           Slurm cluster (tests/cluster/cluster.sh), with rdzv.so not
#           loaded (twice: an A/A control) / loaded with mode=off / mode=torch / torch + an NCCL
#           profile / torch + binding from a real topology / all three;
#           configurations interleaved, a random order each round, one
#           allocation, one srun per sample
#   layout  the one look-up per step that srun makes: the step's
#           layout from slurmctld (slurm_job_step_layout_get), timed inside
#           srun and printed under --rdzv-verbose; BENCH_REPS steps of 3 x 4
#           and of 3 x 1
#   fail    time from a rank's failure to srun's exit: rank 3 of
#           2 nodes x 2 exits 1 before init (--rdzv=torch), is SIGKILLed after
#           init (--rdzv=torch), a torchrun worker exits 1 (--rdzv=torchrun);
#           BENCH_FAIL_REPS rounds (default 10)
#   ttfc    time from srun to every rank's first all-reduce done (PyTorch
#           gloo, /usr/bin/python3): --rdzv=torch one task per rank,
#           --rdzv=torchrun one torchrun per node, and today's shell glue
# Knobs: BENCH_REPS (launch rounds, default 40), BENCH_TTFC_REPS (default
# 5), BENCH_BATCHES (batches of the C benchmarks, default 7), BENCH_SEED
# (the rounds' random orders, default 8).
# Output: the tables on stdout (also OUTDIR/bench.log), every sample in
# OUTDIR/raw.csv, every summary row in OUTDIR/results.csv, the same as
# Markdown tables in OUTDIR/tables.md, the machine in OUTDIR/machine.txt. OUTDIR defaults to $top_builddir/bench-results.
# The cluster parts need root and Slurm and take the cluster lock that the
# end-to-end tests take (/tmp/rdzv-cluster.lock); without them they are
# skipped with the reason printed. Never run by `make check`.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/_build}
export top_srcdir top_builddir
PY=/usr/bin/python3
STATPY=$(command -v python3 || echo $PY)
cluster=$top_srcdir/tests/cluster/cluster.sh
shim=$top_srcdir/tests/e2e/torchrun-shim.py
app=$here/first-collective.py
topologies=${RDZV_TOPOLOGIES:-$top_srcdir/tests/topo/fixtures}
# The binding configuration's node: 4 A100 + 4 ConnectX-6 (JUWELS Booster),
# the 4 GPUs each node of the local cluster fakes, and NICs that the
# h100-ndr profile's NCCL_IB_HCA list names.
bind_xml=$topologies/psmgmt__tests__hwloc__topo.jwb0004.xml
bind_profile=h100-ndr
parts=${BENCH_PARTS:-logic topo domains handover record xid liveness launch layout ttfc fail}
reps=${BENCH_REPS:-40}
ttfc_reps=${BENCH_TTFC_REPS:-5}
export RDZV_CLUSTER_DIR=${RDZV_CLUSTER_DIR:-/tmp/rdzv-cluster}

say() { printf '%s\n' "$*"; }
has_part() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
usec() { local t=${1/./}; echo $((10#$t)); } # $EPOCHREALTIME -> microseconds

# ---- inside the allocation (salloc runs this script again) ----

# plugstack.conf for a configuration, written the same way for all (the
# format of tests/cluster/cluster.sh plugstack); "none" leaves the file
# empty: Slurm then loads no plugin at all. Each new step reads it.
set_config() {
	local args=
	case $1 in
	off) args="mode=off" ;;
	torch) args="mode=torch" ;;
	profile) args="mode=torch profiles=$profdir profile=$bind_profile" ;;
	bind) args="mode=torch topology=$bind_xml bind=auto" ;;
	full) args="mode=torch topology=$bind_xml bind=auto profiles=$profdir profile=$bind_profile" ;;
	hang) args="mode=torch debug=hang hang_python=$top_srcdir/helpers/python" ;;
	esac
	if [ "$1" = none ] || [ "$1" = none2 ]; then
		printf '' > "$RDZV_CLUSTER_DIR/plugstack.conf"
	else
		printf 'required %s %s\n' "${RDZV_PLUGIN:-$top_builddir/spank/.libs/rdzv.so}" "$args" \
			> "$RDZV_CLUSTER_DIR/plugstack.conf"
	fi
}

step() { srun -N3 -n12 --ntasks-per-node=4 --gres=gpu:4 "$@"; }

# One step per configuration showing that it does what it says, before
# anything is timed: no variables without the plugin or with mode=off,
# RANK with torch, binding and profile variables with full.
verify_launch() {
	local c out want bad=0
	for c in "${launch_configs[@]}"; do
		set_config "$c"
		out=$(step bash -c 'echo "task $SLURM_PROCID RANK=${RANK-unset} CUDA_DEVICE_ORDER=${CUDA_DEVICE_ORDER-unset} NCCL_IB_HCA=${NCCL_IB_HCA-unset} UCX_NET_DEVICES=${UCX_NET_DEVICES-unset} NCCL_DEBUG=${NCCL_DEBUG-unset} HANG=${RDZV_HANG_DIR:+set}"' 2>"$out_dir/verify-$c.err" | sort -k2n)
		printf '%s\n' "$out" > "$out_dir/verify-$c.out"
		case $c in
		none | none2 | off) want=$(printf '%s\n' "$out" | grep -c 'RANK=unset CUDA_DEVICE_ORDER=unset NCCL_IB_HCA=unset') ;;
		torch) want=$(printf '%s\n' "$out" | grep -c 'RANK=[0-9]* CUDA_DEVICE_ORDER=unset NCCL_IB_HCA=unset.* HANG=$') ;;
		hang) want=$(printf '%s\n' "$out" | grep -c 'RANK=[0-9]* CUDA_DEVICE_ORDER=unset NCCL_IB_HCA=unset.* HANG=set$') ;;
		profile) want=$(printf '%s\n' "$out" | grep -c 'RANK=[0-9]* CUDA_DEVICE_ORDER=unset NCCL_IB_HCA==mlx5_.* UCX_NET_DEVICES=unset') ;;
		bind) want=$(printf '%s\n' "$out" | grep -c 'RANK=[0-9]* CUDA_DEVICE_ORDER=PCI_BUS_ID NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1 UCX_NET_DEVICES=mlx5_[0-3]:1 ') ;;
		full) want=$(printf '%s\n' "$out" | grep -c 'RANK=[0-9]* CUDA_DEVICE_ORDER=PCI_BUS_ID NCCL_IB_HCA==mlx5_.* UCX_NET_DEVICES=mlx5_[0-3]:1 ') ;;
		esac
		say "verify $c: $want of 12 tasks as expected ($(printf '%s\n' "$out" | sed -n 's/^task 5 //p'))"
		[ "$want" = 12 ] || { bad=1; sed 's/^/  /' "$out_dir/verify-$c.err" | head -n 5; }
	done
	return $bad
}

# none: rdzv.so not loaded; none2: the same again, an A/A control whose
# ratio to none shows the noise floor of this run; off: loaded, mode=off;
# torch: mode=torch; profile, bind: torch plus one of the two; full: torch +
# binding + profile; hang: torch + debug=hang (armed, each task
# makes its step directory and gets three variables; torch is the same
# with it off, the default).
launch_configs=(none none2 off torch profile bind full hang)

# A new random order of "$@" in $order each round (seeded: BENCH_SEED), so
# that no configuration always runs first, or always after the same one.
shuffle() {
	local i k tmp
	order=("$@")
	for ((i = ${#order[@]} - 1; i > 0; i--)); do
		k=$((RANDOM % (i + 1)))
		tmp=${order[i]} order[i]=${order[k]} order[k]=$tmp
	done
}

inside_launch() {
	local r c t0 t1 rc order
	RANDOM=${BENCH_SEED:-8}
	say "launch: job $SLURM_JOB_ID on $SLURM_JOB_NODELIST; $reps rounds + 1 warm-up, each in a random order"
	verify_launch || { say "launch: a configuration does not do what it should: not timed"; return 1; }
	for ((r = 0; r <= reps; r++)); do
		shuffle "${launch_configs[@]}"
		for c in "${order[@]}"; do
			set_config "$c"
			# Let the previous step's teardown on the nodes finish, the
			# same pause before every sample.
			sleep 0.3
			t0=$EPOCHREALTIME
			step true >/dev/null 2>>"$out_dir/launch.err"
			rc=$?
			t1=$EPOCHREALTIME
			[ "$r" = 0 ] && continue # warm-up round
			if [ "$rc" = 0 ]; then
				d=$(($(usec "$t1") - $(usec "$t0")))
				printf "launch,3x4-true,%s,%d,step-wall,%d.%03d,ms\n" "$c" "$r" $((d / 1000)) $((d % 1000)) >> "$raw"
			else
				echo "launch,3x4-true,$c,$r,failed,$rc,rc" >> "$raw"
			fi
		done
	done
}

# One time-to-first-collective run of configuration $1, round $2.
ttfc_run() {
	local c=$1 r=$2 t0 t1 rc out n port
	port=$((29400 + r % 90))
	case $c in
	shell-glue) set_config none ;;
	*) set_config off ;;
	esac
	sleep 1 # the previous run's processes gone, the same pause for every sample
	t0=$EPOCHREALTIME
	case $c in
	rdzv-torch)
		out=$(timeout -k 5 240 srun -N3 -n6 --ntasks-per-node=2 --rdzv=torch $PY "$app" 2>>"$out_dir/ttfc.err") ;;
	rdzv-torchrun)
		out=$(timeout -k 5 240 srun -N3 -n3 --ntasks-per-node=1 --gpus-per-node=2 --rdzv=torchrun $PY "$shim" "$app" 2>>"$out_dir/ttfc.err") ;;
	shell-glue)
		# What job scripts do today without the plugin.
		out=$(timeout -k 5 240 srun -N3 -n6 --ntasks-per-node=2 bash -c "export MASTER_ADDR=\$(scontrol show hostnames \"\$SLURM_JOB_NODELIST\" | head -n 1) MASTER_PORT=$port RANK=\$SLURM_PROCID WORLD_SIZE=\$SLURM_NTASKS LOCAL_RANK=\$SLURM_LOCALID; exec $PY $app" 2>>"$out_dir/ttfc.err") ;;
	esac
	rc=$?
	t1=$EPOCHREALTIME
	printf 'start=%s end=%s rc=%s\n%s\n' "$t0" "$t1" "$rc" "$out" > "$out_dir/ttfc-$c-$r.out"
	n=$(printf '%s\n' "$out" | grep -c '^BENCH_FC .* ok=1$')
	if [ "$rc" != 0 ] || [ "$n" != 6 ]; then
		echo "ttfc,3x2-ranks,$c,$r,failed,$rc,rc" >> "$raw"
		say "ttfc $c round $r: FAILED (srun exit $rc, $n of 6 ranks reported)"
		return
	fi
	printf '%s\n' "$out" | awk -v t0="${t0}" -v t1="${t1}" -v c="$c" -v r="$r" '
		/^BENCH_FC / {
			for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			if (v["import"] > imp) imp = v["import"]
			if (v["init"] > ini) ini = v["init"]
			if (v["allreduce"] > ar) ar = v["allreduce"]
		}
		END {
			printf "ttfc,3x2-ranks,%s,%d,first-collective,%.3f,s\n", c, r, ar - t0
			printf "ttfc,3x2-ranks,%s,%d,last-import-done,%.3f,s\n", c, r, imp - t0
			printf "ttfc,3x2-ranks,%s,%d,last-init-done,%.3f,s\n", c, r, ini - t0
			printf "ttfc,3x2-ranks,%s,%d,srun-exit,%.3f,s\n", c, r, t1 - t0
		}' >> "$raw"
}

fail_run() {
	local c=$1 r=$2 t0 t1 rc stamp=$out_dir/fail-stamp app=$top_srcdir/tests/e2e/fail_rank.py
	rm -f "$stamp"
	t0=$EPOCHREALTIME
	case $c in
	rdzv-torch)
		timeout -k 5 240 srun -N2 -n4 --rdzv=torch $PY "$app" exit1-before-init 3 "$stamp" ;;
	rdzv-torch-sigkill)
		timeout -k 5 240 srun -N2 -n4 --rdzv=torch $PY "$app" kill-after-init 3 "$stamp" ;;
	rdzv-torchrun)
		timeout -k 5 240 srun -N2 -n2 --ntasks-per-node=1 --gpus-per-node=2 --rdzv=torchrun \
			$PY "$shim" "$app" exit1-before-init 3 "$stamp" ;;
	esac > "$out_dir/fail-$c-$r.out" 2>&1
	rc=$?
	t1=$EPOCHREALTIME
	# 137 is also srun's own status when a task was SIGKILLed (the torchrun
	# watcher kills a PyTorch 1.x agent): a timeout only near the limit.
	if [ "$rc" = 124 ] || { [ "$rc" = 137 ] && [ "$(usec "$t1")" -ge $(($(usec "$t0") + 239000000)) ]; } \
		|| [ ! -s "$stamp" ]; then
		echo "fail,2x2-rank-3,$c,$r,failed,$rc,rc" >> "$raw"
		say "fail $c round $r: FAILED (srun exit $rc)"
		return
	fi
	awk -v a="$(cat "$stamp")" -v b="$t1" -v c="$c" -v r="$r" \
		'BEGIN { printf "fail,2x2-rank-3,%s,%d,failure-to-srun-exit,%.3f,s\n", c, r, b - a }' >> "$raw"
}

inside_fail() {
	local r c order configs=(rdzv-torch rdzv-torch-sigkill rdzv-torchrun)
	$PY -c 'import torch.distributed' 2>/dev/null || { say "fail: skipped: $PY has no torch"; return 0; }
	RANDOM=${BENCH_SEED:-8}
	set_config off
	say "fail: ${BENCH_FAIL_REPS:-10} rounds, each in a random order, 4 ranks on 2 nodes, rank 3 fails"
	for ((r = 1; r <= ${BENCH_FAIL_REPS:-10}; r++)); do
		shuffle "${configs[@]}"
		for c in "${order[@]}"; do
			fail_run "$c" "$r"
		done
	done
}

inside_ttfc() {
	local r c order configs=(rdzv-torch rdzv-torchrun shell-glue)
	$PY -c 'import torch.distributed' 2>/dev/null || { say "ttfc: skipped: $PY has no torch"; return 0; }
	RANDOM=${BENCH_SEED:-8}
	say "ttfc: $ttfc_reps rounds + 1 warm-up, each in a random order, 6 ranks on 3 nodes"
	for ((r = 0; r <= ttfc_reps; r++)); do
		shuffle "${configs[@]}"
		for c in "${order[@]}"; do
			if [ "$r" = 0 ]; then
				ttfc_run "$c" 0 >/dev/null
				sed -i '/^ttfc,[^,]*,[^,]*,0,/d' "$raw" # warm-up: page cache, imports
			else
				ttfc_run "$c" "$r"
			fi
		done
	done
}

# srun's own measure of its one layout look-up per step.
inside_layout() {
	local r shape us
	set_config torch
	say "layout: $reps steps per shape, srun's look-up of the step layout"
	for ((r = 1; r <= reps; r++)); do
		for shape in 3x4 3x1; do
			if [ "$shape" = 3x4 ]; then
				us=$(step --rdzv-verbose true 2>&1 >/dev/null | sed -n 's/.*layout from slurmctld in \([0-9]*\) us.*/\1/p')
			else
				us=$(srun -N3 -n3 --rdzv-verbose true 2>&1 >/dev/null | sed -n 's/.*layout from slurmctld in \([0-9]*\) us.*/\1/p')
			fi
			if [ -n "$us" ]; then
				printf "layout,%s-true,torch,%d,lookup,%d.%03d,ms\n" "$shape" "$r" $((us / 1000)) $((us % 1000)) >> "$raw"
			else
				echo "layout,$shape-true,torch,$r,failed,1,rc" >> "$raw"
			fi
		done
	done
}

if [ "${1:-}" = __inside__ ]; then
	out_dir=$2 raw=$2/raw.csv profdir=$3
	shift 3
	rv=0
	for p in "$@"; do
		case $p in
		launch) inside_launch || rv=1 ;;
		layout) inside_layout || rv=1 ;;
		ttfc) inside_ttfc || rv=1 ;;
		fail) inside_fail || rv=1 ;;
		esac
	done
	exit $rv
fi

# ---- the driver ----

out_dir=${1:-$top_builddir/bench-results}
mkdir -p "$out_dir" || exit 1
out_dir=$(cd "$out_dir" && pwd)
raw=$out_dir/raw.csv
results=$out_dir/results.csv
rm -f "$raw" "$results" "$out_dir"/*.err "$out_dir"/verify-* "$out_dir"/ttfc-*.out "$out_dir"/fail-*
echo "section,case,config,round,metric,value,unit" > "$raw"
exec > >(tee "$out_dir/bench.log") 2>&1

describe_machine() {
	local cpu mem hw torch slurm
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
	hw=$(pkg-config --modversion hwloc 2>/dev/null)
	torch=$($PY -c 'import torch; print(torch.__version__)' 2>/dev/null || echo none)
	slurm=$(slurmd -V 2>/dev/null || echo none)
	say "date:      $(date -u '+%Y-%m-%d %H:%M UTC')"
	say "commit:    $(git -C "$top_srcdir" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$top_srcdir" diff --quiet HEAD -- lib spank bench 2>/dev/null || echo ' (+ local changes)')"
	say "cpus:      $(nproc) online ($(getconf _NPROCESSORS_CONF) configured): $cpu"
	say "memory:    $mem"
	say "kernel:    $(uname -sr)"
	say "os:        $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
	say "slurm:     $slurm"
	say "hwloc:     ${hw:-unknown} (built against), $(hwloc-info --version 2>/dev/null || echo 'no hwloc-info')"
	say "torch:     $torch ($($PY --version 2>&1))"
	say "compiler:  $(${CC:-cc} --version 2>/dev/null | head -n 1)"
	say "load:      $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at start"
}

say "spank-rdzv benchmarks ($parts); results in $out_dir"
describe_machine | tee "$out_dir/machine.txt"
start=$EPOCHREALTIME
rv=0

# The profile directory the plugin accepts: root-owned and not writable by
# group or others, it and every directory above it (lib/profile/profile_dir.c).
# In the build directory when that holds there, else under /run.
secure_path() {
	local d=$1 mode
	while :; do
		mode=$(stat -c '%u %a' "$d" 2>/dev/null) || return 1
		set -- $mode
		[ "$1" = 0 ] && [ $((8#$2 & 8#022)) = 0 ] || return 1
		[ "$d" = / ] && return 0
		d=$(dirname "$d")
	done
}
profdir=$top_builddir/bench/profiles
secure_path "$top_builddir" || profdir=/run/rdzv-bench-profiles
rm -rf "$profdir"
mkdir -p "$profdir" && chmod 755 "$profdir"
cp "$top_srcdir"/etc/profiles/*.profile "$profdir"/ 2>/dev/null && chmod 644 "$profdir"/*.profile
[ -f "$profdir/$bind_profile.profile" ] || say "note: no etc/profiles/$bind_profile.profile: profile parts skipped"

if has_part logic; then
	node=localhost
	getent hosts n1 >/dev/null 2>&1 && node=n1
	"$top_builddir/bench/bench-logic" scale --csv "$results" || rv=1
	args=(--node "$node")
	[ -f "$bind_xml" ] && args+=(--topology "$bind_xml")
	[ -f "$profdir/$bind_profile.profile" ] && args+=(--profiles "$profdir" --profile "$bind_profile")
	"$top_builddir/bench/bench-logic" task --csv "$results" "${args[@]}" || rv=1
fi

if has_part topo; then
	if ls "$topologies"/*.xml >/dev/null 2>&1; then
		"$top_builddir/bench/bench-topo" --csv "$results" "$topologies"/*.xml || rv=1
		# The same without hwloc's libxml2 plugin (hwloc then reads XML with
		# its own minimal parser) nor the gl/opencl plugins: what loading
		# libxml2, ICU and libstdc++ into every slurmstepd costs.
		HWLOC_PLUGINS_BLACKLIST=hwloc_xml_libxml,hwloc_gl,hwloc_opencl \
			"$top_builddir/bench/bench-topo" --tag no-libxml --csv "$results" "$topologies"/*.xml || rv=1
	else
		say "topo: skipped: no topologies in $topologies (set RDZV_TOPOLOGIES)"
	fi
fi

if has_part domains; then
	"$top_builddir/bench/bench-domain" --csv "$results" || rv=1
fi

if has_part record; then
	"$top_builddir/bench/bench-record" --csv "$results" || rv=1
fi

if has_part xid; then
	"$top_builddir/bench/bench-xid" --csv "$results" || rv=1
fi

if has_part liveness; then
	"$top_builddir/bench/bench-liveness" --csv "$results" ${BENCH_LIVENESS_SIZES:-1024 4096 16384 32768} || rv=1
fi

if has_part handover; then
	hdir=$out_dir/handover
	say ""
	"$top_builddir/bench/bench-handover" --header
	for n in ${BENCH_HANDOVER_SIZES:-1024 4096 16384 32768 65536}; do
		for c in gb200:trays16 gb200:pool80 gb200:alt h100:pool80 h100:alt; do
			d=$hdir/${c/:/-}-$n
			$PY "$here/gen-handover.py" "${c%%:*}" "${c#*:}" "$n" "$d" || { rv=1; continue; }
			"$top_builddir/bench/bench-handover" --case "${c/:/ }" \
				--reps "${BENCH_HANDOVER_REPS:-5}" "$d/nodes" "$d/topo" "$d/layout" || rv=1
			rm -rf "$d"
		done
	done
fi

cluster_parts=
has_part launch && cluster_parts+=" launch"
has_part layout && cluster_parts+=" layout"
has_part ttfc && cluster_parts+=" ttfc"
has_part fail && cluster_parts+=" fail"
why=
if [ -n "$cluster_parts" ]; then
	[ "$(id -u)" = 0 ] || why="needs root (slurmd, mknod)"
	command -v slurmctld >/dev/null && command -v srun >/dev/null || why=${why:-"Slurm not installed"}
	[ -f "$top_builddir/spank/.libs/rdzv.so" ] || why=${why:-"rdzv.so not built"}
	[ -f "$cluster" ] || why=${why:-"no tests/cluster/cluster.sh"}
	[ -f "$bind_xml" ] && [ -f "$profdir/$bind_profile.profile" ] || why=${why:-"no $bind_xml or $bind_profile profile"}
fi
if [ -n "$cluster_parts" ] && [ -n "$why" ]; then
	say "launch/ttfc: skipped: $why"
elif [ -n "$cluster_parts" ]; then
	say ""
	say "cluster: waiting for /tmp/rdzv-cluster.lock (end-to-end tests hold it while they run)"
	exec 9>/tmp/rdzv-cluster.lock
	if ! flock -w 900 9; then
		say "cluster: lock not obtained in 900 s: launch/ttfc skipped"
		rv=1
	else
		trap 'bash "$cluster" stop >/dev/null 2>&1' EXIT
		if ! RDZV_PLUGSTACK_ARGS=mode=off bash "$cluster" start > "$out_dir/cluster-start.log" 2>&1; then
			say "cluster: did not start: $(tail -n 5 "$out_dir/cluster-start.log" | tr '\n' ' ')"
			rv=1
		else
			. "$RDZV_CLUSTER_DIR/env.sh"
			# One allocation, every sample a step inside it (steps are what the
			# plugin runs in; the allocation's own cost is not the plugin's).
			salloc -N3 --ntasks-per-node=4 --gres=gpu:4 -t 60 -J rdzv-bench \
				bash "$0" __inside__ "$out_dir" "$profdir" $cluster_parts || rv=1
		fi
		bash "$cluster" stop >/dev/null 2>&1
		trap - EXIT
	fi
	exec 9>&-
fi

if [ "$(wc -l < "$raw")" -gt 1 ]; then
	$STATPY "$here/summarize.py" "$raw" "$results" || rv=1
fi
[ -s "$results" ] && $STATPY "$here/md-tables.py" "$results" > "$out_dir/tables.md"
say ""
say "total: $(( ($(usec "$EPOCHREALTIME") - $(usec "$start")) / 1000000 )) s; load $(cut -d' ' -f1-3 /proc/loadavg) at end"
say "CSV: $results (summaries), $raw (samples); Markdown: $out_dir/tables.md"
exit $rv

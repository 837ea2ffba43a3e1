#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Binding follows each GPU's identity, not its position: on fixture trees
# (tests/topo/identity/NAME/: a fake /proc/driver/nvidia, sysfs, /dev and a
# gres.conf) whose device minors are permuted against PCI bus-id order and
# whose gres.conf lists the devices out of order, every task gets the NICs
# and cores of the GPU that Slurm's number really names. Expected answers:
# tests/topo/identity/NAME.out, written by derive.py (Python xml.etree over
# the XML and the fixture files, no spank-rdzv code); this test also checks
# that derive.py still gives them, so a golden cannot drift from its
# derivation. Cases: tests/topo/identity/cases.
. "$top_srcdir/tests/lib/tap.sh"

dir=${RDZV_TOPOLOGIES:-$top_srcdir/tests/topo/fixtures}
[ -d "$dir" ] || { echo "Bail out! no topology fixtures at $dir: they belong to the repository (tests/topo/fixtures)"; exit 1; }
PYTHON=$(command -v python3) || skip_all "no python3 for derive.py"
helper=$top_builddir/helpers/rdzv-topo
fix=$top_srcdir/tests/topo/identity
# "task K: BUSID NICS CPUS" from rdzv-topo's rows (and --task-visible lines).
rows() { sed -n 's/^\(task [0-9]*\)\( visible [^:]*\| cgroup\)\{0,1\}: gpu [0-9]* \([0-9a-f:.]*\)[ ,].*UCX_NET_DEVICES[= ]\([^ ,]*\(,[^ ,]\{1,\}\)*\)[ ,].*cpus \([0-9,-]*\).*/\1: \3 \4 \6/p'; }

while read -r name xml minors order; do
	case $name in ''|'#'*) continue ;; esac
	x=$dir/$xml
	[ -f "$x" ] || { ok 0 "$name # SKIP no $xml"; continue; }
	golden=$fix/$name.out
	want=$(grep -v '^#' "$golden")
	derived=$("$PYTHON" "$fix/derive.py" expect "$x" "$fix/$name")
	is "$derived" "$(tail -n +7 "$golden")" "$name: derive.py still gives the golden from the XML and the fixture tree"

	out=$("$helper" --input "$x" --identity --root "$fix/$name" --gres-conf "$fix/$name/etc/slurm/gres.conf" --node node1 2>&1)
	like "$out" "^identity: gres.conf $fix/$name/etc/slurm/gres.conf" "$name: identity established through gres.conf (not by position)"
	is "$(printf '%s\n' "$out" | rows)" "$want" "$name: each task's GPU, NICs and cores follow Slurm's number through minor and bus id"
	# Every GPU says how its identity was read, and it is the golden's chain.
	while read -r _ _ k _ f _ _ m _ b; do
		like "$out" "^gpu [0-9]* $b: slurm $k file $f minor $m busid $b source (name|device)\+proc\+sysfs" \
			"$name: GPU $b is Slurm's $k through $f, minor $m (source printed)"
	done < <(grep '^# slurm ' "$golden")

	# Position alone would bind some task elsewhere: the fixture matters.
	pos=$("$helper" --input "$x" | rows)
	[ "$pos" != "$want" ]; ok $? "$name: the positional rule gives other answers on this node (the permutation is real)"

	# A task Slurm narrowed (--gpus-per-task, --gpu-bind=map_gpu:K): task 0
	# with its own CUDA_VISIBLE_DEVICES=K gets GPU K's row, for the last K.
	last=$(grep -c '^task ' "$golden"); last=$((last - 1))
	lastrow=$(grep "^task $last: " "$golden" | sed 's/^task [0-9]*: //')
	got=$("$helper" --input "$x" --identity --root "$fix/$name" --gres-conf "$fix/$name/etc/slurm/gres.conf" --node node1 --task-visible "0=$last" | rows | grep '^task 0 *:' | sed 's/^task 0: //' | tail -n 1)
	is "$got" "$lastrow" "$name: task 0 narrowed to Slurm's GPU $last gets that GPU's NICs and cores"

	# Slurm 22.05 numbers a task's list from 0 under ConstrainDevices; its
	# devices cgroup (v1) names the minor: the fixture's allows Slurm's GPU 3.
	row3=$(grep "^task 3: " "$golden" | sed 's/^task [0-9]*: //')
	got=$("$helper" --input "$x" --identity --root "$fix/$name" --gres-conf "$fix/$name/etc/slurm/gres.conf" --node node1 --task-cgroup 0 | rows | grep '^task 0: ' | tail -n 1 | sed 's/^task 0: //')
	is "$got" "$row3" "$name: a task whose devices cgroup allows only Slurm's GPU 3 gets that GPU's row"

	# A UUID list (Slurm 25.11+ env_uuid): the GPU whose /proc entry has it.
	b=$(grep '^# slurm 1 ' "$golden" | sed 's/.* -> //')
	uuid=$(sed -n 's/^GPU UUID:[[:space:]]*//p' "$fix/$name/proc/driver/nvidia/gpus/$b/information")
	got=$("$helper" --input "$x" --identity --root "$fix/$name" --gres-conf "$fix/$name/etc/slurm/gres.conf" --node node1 --gpus none --visible "$uuid" --tasks 1 | rows | sed 's/^task 0: //')
	like "$got" "^$b " "$name: CUDA_VISIBLE_DEVICES=$uuid binds to $b, the GPU /proc gives that UUID"
	got=$("$helper" --input "$x" --identity --root "$fix/$name" --gres-conf "$fix/$name/etc/slurm/gres.conf" --node node1 --task-visible "0=GPU-ffffffff-0000-0000-0000-000000000000" 2>&1)
	like "$got" "task 0 visible GPU-f*-0000-0000-0000-0*: skipped: .*not one of the step's GPUs" "$name: an unknown UUID skips that task's binding, with the reason"

	# A link that cannot be read: the positional rule, and why.
	got=$("$helper" --input "$x" --identity --root "$fix/$name/no-such-root" --node node1 2>&1)
	like "$got" "^identity: by position: .*no-such-root/proc/driver/nvidia/gpus: No such file" "$name: no /proc/driver/nvidia: positional, and the reason is printed"
	is "$(printf '%s\n' "$got" | rows)" "$pos" "$name: ... with the positional table"
	got=$("$helper" --input "$x" --identity --root "$fix/$name" --gres-conf "$fix/$name/etc/slurm/gres.conf" --node node9 2>&1)
	like "$got" "^identity: by position: gres.conf .*: no Name=gpu File= for node node9" "$name: a node gres.conf does not list: positional, and why"
done < "$fix/cases"

# AutoDetect=nvml: Slurm's order is NVML's (PCI bus-id order), said so.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$fix/jwb0004/." "$tmp/"
printf 'AutoDetect=nvml\nName=gpu Type=a100\n' > "$tmp/etc/slurm/gres.conf"
got=$("$helper" --input "$dir/psmgmt__tests__hwloc__topo.jwb0004.xml" --identity --root "$tmp" --gres-conf "$tmp/etc/slurm/gres.conf" --node node1 2>&1)
like "$got" "AutoDetect=nvml: Slurm numbers GPUs in NVML's order, which is PCI bus-id order" "AutoDetect=nvml: PCI order, and why"
like "$got" "gpu 0 0000:03:00.0: slurm 0 minor 3 busid 0000:03:00.0 source nvml-order" "AutoDetect=nvml: each GPU still shows its minor from /proc"
# A File that is no NVIDIA device: positional, named.
printf 'Name=gpu File=/dev/dri/card[0-3]\n' > "$tmp/etc/slurm/gres.conf"
got=$("$helper" --input "$dir/psmgmt__tests__hwloc__topo.jwb0004.xml" --identity --root "$tmp" --gres-conf "$tmp/etc/slurm/gres.conf" --node node1 2>&1)
like "$got" "by position: GPU 0: File=/dev/dri/card0 is not an NVIDIA device" "a non-NVIDIA File: positional, the file named"
# sysfs contradicting /proc: positional, named.
printf 'Name=gpu File=/dev/nvidia[0-3]\n' > "$tmp/etc/slurm/gres.conf"
echo 0x1002 > "$tmp/sys/bus/pci/devices/0000:84:00.0/vendor"
got=$("$helper" --input "$dir/psmgmt__tests__hwloc__topo.jwb0004.xml" --identity --root "$tmp" --gres-conf "$tmp/etc/slurm/gres.conf" --node node1 2>&1)
like "$got" "by position: GPU 0: sysfs says 0000:84:00.0 is not an NVIDIA device" "sysfs contradicting /proc: positional, named"
# MIG: gres.conf MultipleFiles= lines name each instance by its parent's
# /dev/nvidiaN; instances get their parent GPU's NICs and share its cores.
g4=$fix/jwb0004.out
slurm_of_minor() { sed -n "s|^# slurm \([0-9]*\) -> /dev/nvidia$1 .*|\1|p" "$g4"; }
bus_of_minor() { sed -n "s|^# slurm [0-9]* -> /dev/nvidia$1 -> minor $1 -> ||p" "$g4"; }
nic_of_minor() { sed -n "s/^task $(slurm_of_minor "$1"): [^ ]* \([^ ]*\) .*/\1/p" "$g4"; }
printf '%s\n' "Name=gpu MultipleFiles=/dev/nvidia3,/dev/nvidia-caps/nvidia-cap21,/dev/nvidia-caps/nvidia-cap22" \
	"Name=gpu MultipleFiles=/dev/nvidia3,/dev/nvidia-caps/nvidia-cap30,/dev/nvidia-caps/nvidia-cap31" \
	"Name=gpu File=/dev/nvidia1" > "$tmp/etc/slurm/gres.conf"
echo 0x10de > "$tmp/sys/bus/pci/devices/0000:84:00.0/vendor"
got=$("$helper" --input "$dir/psmgmt__tests__hwloc__topo.jwb0004.xml" --identity --root "$tmp" --gres-conf "$tmp/etc/slurm/gres.conf" --node node1 \
	--gpus 0,1,2 --visible MIG-aaaa,MIG-bbbb,MIG-cccc --tasks 3 --task-visible 1=MIG-bbbb \
	--task-visible "0=MIG-$(sed -n 's/^GPU UUID:[[:space:]]*//p' "$tmp/proc/driver/nvidia/gpus/$(bus_of_minor 3)/information")/1/0" 2>&1)
r=$(printf '%s\n' "$got" | rows)
is "$(printf '%s\n' "$r" | grep -c "^task [01]: $(bus_of_minor 3) $(nic_of_minor 3) ")" 4 \
	"MIG: both instances of minor 3 ($(bus_of_minor 3)) get its NIC $(nic_of_minor 3), in the table and by their own lists (MIG UUID, legacy MIG-GPU-UUID/gi/ci)"
is "$(printf '%s\n' "$r" | grep "^task 2: " | cut -d' ' -f3-4)" "$(bus_of_minor 1) $(nic_of_minor 1)" "MIG: the whole GPU after them is Slurm's GPU 2, minor 1"
c0=$(printf '%s\n' "$r" | sed -n 's/^task 0: [^ ]* [^ ]* //p' | head -n 1)
c1=$(printf '%s\n' "$r" | sed -n 's/^task 1: [^ ]* [^ ]* //p' | head -n 1)
[ -n "$c0" ] && [ "$c0" != "$c1" ]; ok $? "MIG: the two instances split their GPU's cores ($c0 / $c1)"
done_testing

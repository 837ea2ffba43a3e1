#!/bin/bash
# Inside a container (rdzv.so after pyxis, enroot's PyTorch hook installed)
# the step's rendezvous is still the plugin's: rank 0's node on a layout
# where the hook's guess (the step's first node) is wrong, the step's port
# and not the hook's job-id port (two steps of one job get two ports), and
# each replaced value is named in one warning. A value the image declares
# is not a user's export: a site profile's default replaces it; a value
# the user exported still wins, as outside a container, even though pyxis
# put the image's value over it.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/containers/lib.sh"
ctr_enter
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
pdir=/run/rdzv-ctr-profiles.$$
mkdir -p "$pdir" && chmod 755 "$pdir" || skip_all "cannot create $pdir"
printf 'description Site default\ndefault NCCL_SOCKET_IFNAME=lo\n' > "$pdir/site.profile"
chmod 644 "$pdir/site.profile"
ctr_start
trap 'rm -rf "$pdir"; ctr_cleanup' EXIT
check="$PY $top_srcdir/tests/e2e/check_reports.py"
ctr_hook on
ctr_plugstack pyxis-first profiles=$pdir profile=site
cd "$(mktemp -d)" || exit 1

# 3+2+1 with rank 0 on the LAST node: the hook would say n1.
printf 'n3\nn1\nn1\nn1\nn2\nn2\n' > hosts
SLURM_HOSTFILE=$PWD/hosts ctr_srun 240 -n6 --distribution=arbitrary --rdzv=torch $PY "$RANK_PY"
is "$rc" 0 "arbitrary layout, rank 0 on n3, in the image with the hook: srun exits 0"
verdict=$(printf '%s\n' "$out" | $check 6 --master n3 --per-node n1=3,n2=2,n3=1)
is "$?" 0 "arbitrary: ranks meet at n3, where rank 0 runs ($verdict)"
diag "rank 0 saw: $(ctr_rank0 RANK WORLD_SIZE MASTER_ADDR MASTER_PORT OMP_NUM_THREADS NCCL_SOCKET_IFNAME SLURMD_NODENAME)"
job=$(ctr_rank0 SLURM_JOB_ID | cut -d= -f2)
port=$(ctr_rank0 MASTER_PORT | cut -d= -f2)
like "$out" "rdzv: warning: inside the container, 3 variables .* replaced: MASTER_ADDR=n1 -> n3 \\(rdzv\\); MASTER_PORT=$((job % 4536 + 61000)) -> $port \\(rdzv\\); NCCL_SOCKET_IFNAME=eth0 -> lo \\(profile site\\)" \
	"arbitrary: one warning names the hook's MASTER_ADDR=n1 and job-id MASTER_PORT and the image's NCCL_SOCKET_IFNAME, replaced"
is "$(printf '%s\n' "$out" | grep -c 'rdzv: warning: inside the container')" 1 "the warning is printed once per step (rank 0)"
is "$(ctr_rank0 NCCL_SOCKET_IFNAME)" "NCCL_SOCKET_IFNAME=lo" "the image's NCCL_SOCKET_IFNAME=eth0 is not a user's export: the site profile's default replaces it"
is "$(ctr_rank0 OMP_NUM_THREADS)" "OMP_NUM_THREADS=1" "what the hook sets and rdzv does not (OMP_NUM_THREADS) is left alone"
[ "$rc" = 0 ] || diag "$(printf '%s' "$out" | head -c 3000)"

# The user's exports win as outside: pyxis had put the image's and the
# hook's values over them.
MASTER_PORT=29888 NCCL_SOCKET_IFNAME=ib9 ctr_srun 240 -N1 -n2 --rdzv=torch $PY "$RANK_PY"
is "$rc" 0 "user's MASTER_PORT=29888 and NCCL_SOCKET_IFNAME=ib9 exported: srun exits 0"
is "$(ctr_rank0 MASTER_PORT)" "MASTER_PORT=29888" "the user's MASTER_PORT wins over the hook's, as outside a container"
is "$(ctr_rank0 NCCL_SOCKET_IFNAME)" "NCCL_SOCKET_IFNAME=ib9" "the user's NCCL_SOCKET_IFNAME wins over the image's and the profile default"

# --rdzv-port is the plugin's, exactly.
ctr_srun 240 -N2 --ntasks-per-node=1 --rdzv=torch --rdzv-port=29777 $PY "$RANK_PY"
is "$(ctr_rank0 MASTER_PORT)" "MASTER_PORT=29777" "--rdzv-port=29777 reaches the container over the hook's port"

# Two steps of one job at once: the hook gives both the job-id port, the
# plugin gives each step its own.
out=$(timeout 300 salloc -N3 bash -c "
	for s in 1 2; do
		srun --container-image=$IMAGE --container-mounts=$top_srcdir/tests:$top_srcdir/tests:ro \
			-N3 --ntasks-per-node=1 --rdzv=torch $PY $RANK_PY > step\$s.out 2>&1 &
	done
	wait; cat step1.out step2.out" 2>&1)
ports=$(printf '%s\n' "$out" | sed -n 's/.*"MASTER_PORT": "\([0-9]*\)".*/\1/p' | sort -u | tr '\n' ' ')
is "$(printf '%s\n' "$out" | grep -c '"allreduce": 6.0')" 6 "two concurrent container steps of one job: all 6 ranks met"
is "$(echo $ports | wc -w)" 2 "two concurrent container steps of one job: two distinct ports ($ports)"
done_testing

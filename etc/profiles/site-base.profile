# site-base: what every GPU job on this cluster should get. Other profiles
# build on it with "include site-base". Make it the site default in
# plugstack.conf:  profiles=/etc/slurm/rdzv-profiles profile=site-base
description Site defaults for every GPU partition (RoCE fabric, 2 rails)

# Production jobs should not carry debug switches left in old scripts:
# NCCL documents these as "not for production" (they stop NCCL from
# choosing paths itself and can hang or slow a job). Removing them from
# every task is the point of "unset"; choose the "debug" profile to
# experiment.
unset NCCL_P2P_DISABLE
unset NCCL_SHM_DISABLE
unset NCCL_ALGO
unset NCCL_PROTO

# Bootstrap and socket traffic on the management network, never on
# docker or loopback interfaces. A user may still pick another interface.
default NCCL_SOCKET_IFNAME=^docker,lo

# Only the fabric NICs carry NCCL traffic; storage (mlx5_4) and the
# management NIC are excluded. Enforced: a user's own NCCL_IB_HCA is
# replaced (and --rdzv-verbose says so), and rdzv's NIC binding picks
# inside this list. Write the exact names with '=' so that mlx5_1 does not
# also match mlx5_10..mlx5_19 (NCCL matches prefixes otherwise).
enforce NCCL_IB_HCA==mlx5_0:1,mlx5_1:1

# roce-seed: the settings users used to copy into every job script, kept as
# a profile so that they are written once - with a note on when each one is
# right. Read them before making this a default.
description The old job-script settings (RoCE, GID 3, 16 MiB buffers, INFO logs)

# GID index 3 is the RoCE v2 / IPv4 entry on many Mellanox setups, and
# pinning it helped fabrics where NCCL's own choice picked a link-local or
# RoCE v1 GID. It is a property of each host's GID table (show_gids), not
# of the cluster: on hosts where index 3 is something else it breaks
# connections, and since NCCL 2.21 NCCL selects a RoCE v2 GID by itself
# (NCCL_IB_ADDR_FAMILY/NCCL_IB_ROCE_VERSION_NUM steer it). Keep it only
# where show_gids agrees on every node; InfiniBand ignores it.
default NCCL_IB_GID_INDEX=3

# The two fabric rails of the old scripts. Without a list NCCL uses every
# active port, storage NICs included. '=' makes the names exact (mlx5_1
# would otherwise also match mlx5_10..). A default here; when site-base is
# the site default, its enforced list wins anyway.
default NCCL_IB_HCA==mlx5_0:1,mlx5_1:1

# 16 MiB buffers (NCCL's default is 4 MiB) helped large all-reduces on one
# old fabric. NCCL lists NCCL_BUFFSIZE under "Debugging": it multiplies GPU
# memory per channel and peer, and newer NCCL tunes this itself. The
# checker warns about it on purpose. A default, so a user can still export
# a smaller value.
default NCCL_BUFFSIZE=16777216

# IB/RoCE enabled (0 is already NCCL's default). Listed under "Debugging"
# too: setting it to 1 forces TCP sockets, which is a workaround, never a
# policy. Keeping the 0 only protects against jobs that inherited a 1.
enforce NCCL_IB_DISABLE=0

# INFO prints NCCL's topology and ring/tree choices for every rank: what
# you want while bringing a fabric up, noise (and some slowdown at scale)
# in production. WARN is the usual production level. A default, so users
# can turn it down.
default NCCL_DEBUG=INFO

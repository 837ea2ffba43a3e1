# gb200-mnnvl: racks whose GPUs reach each other over NVLink across nodes
# (multi-node NVLink, MNNVL: GB200 NVL72, GH200 NVL32). Make it the default
# of their partition:  partition_profile=gb200:gb200-mnnvl
# Needs an IMEX channel per job (Slurm's switch/nvidia_imex, or a prolog)
# and the fabric manager's registration of every GPU: doc/profiles.md,
# "Multi-node NVLink (MNNVL)".
description GB200 NVL72: multi-node NVLink, every node checked before launch
include site-base

# Before any task starts, every node of the step must have an IMEX channel
# and every GPU a completed, healthy fabric registration in one NVLink
# domain; else the step fails naming the node and the reason. Tasks get
# NVIDIA_IMEX_CHANNELS (the channels found) for containers.
require mnnvl

# NCCL's MNNVL transport: 1 uses it (2, NCCL's default, decides by itself
# and falls back to the network without a word). A default: a user may
# export 0 to compare with the network. NCCL lists it under "Debugging",
# so the checker warns; here it is the point of the partition.
default NCCL_MNNVL_ENABLE=1

# MNNVL exchanges memory through CUDA's cuMem API: a job that inherited
# NCCL_CUMEM_ENABLE=0 (an old workaround) would lose NVLink across nodes.
enforce NCCL_CUMEM_ENABLE=1

export top_srcdir=/work/wt top_builddir=/work/wt/_build-26.05 RDZV_CLUSTER_DIR=/tmp/rdzv-dev26 RDZV_CTLD_PORT=19517 RDZV_SLURMD_PORT_BASE=19560 RDZV_NET_ID=5 RDZV_FIRST_JOB_ID=700000
bash /work/wt/tests/0102-rank-0-is-wherever-slurm-puts-it.t

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/failure/: how failures travel and are judged: a failed rank's report,
 * liveness, the collective grace, hang dumps, a GPU fault's verdict. Uses
 * lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* hang.h: where each rank of a hung step is, and which ranks are not where
 * the others are (rdzv-hang(1)).
 *
 * Under --rdzv-debug=hang every Python process of the step registers
 * faulthandler on RDZV_HANG_SIGNAL (python/sitecustomize.py, armed by the
 * plugin in task_init), writing into its own file of the step's directory.
 * rdzv-hang runs one collector per node in the job (srun --overlap), which
 * signals the step's ranks and reads what faulthandler wrote; this unit
 * reads those dumps and forms the verdict. Pure text in, text out: the
 * collector, the verdict and the tests call it alike, and fuzz-hang feeds
 * it arbitrary bytes.
 *
 * A dump (faulthandler's all-threads format, every CPython 3.x):
 *
 *   Thread 0x00007f2a5dfff6c0 (most recent call first):
 *     File "/usr/lib/python3/dist-packages/torch/...", line 12 in wait
 *
 *   Current thread 0x00007f2a6a1ab740 (most recent call first):
 *     File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 1536 in all_reduce
 *     File "/home/u/train.py", line 12 in main
 *     File "/home/u/train.py", line 20 in <module>
 *
 * The main thread is the last block: CPython lists threads newest first,
 * and the main thread is the oldest. */
#ifndef RDZV_HANG_H
#define RDZV_HANG_H

#include <stddef.h>
#include <stdint.h>

/* The signal rdzv-hang sends: a real-time signal (SIGRTMIN+7 with glibc),
 * used by no framework we know of (Lightning and submitit take SIGUSR1 and
 * SIGUSR2, Slurm's --signal defaults to SIGUSR1... ), and only ever sent to
 * a process whose status shows it caught (SigCgt): its default action
 * would end the process. */
#define RDZV_HANG_SIGNAL 41

/* The largest dump read per process: 64 frames of 4 KiB paths fit. */
#define RDZV_HANG_DUMP_MAX (256 * 1024)

struct rdzv_hang_where {
	char coll[40];   /* the torch.distributed call the main thread is in, "" */
	char file[256];  /* innermost frame of the user's program */
	uint32_t line;
	char func[80];
	int frames;      /* frames of the main thread; 0: nothing parsed */
};

/* The main thread's place in one faulthandler dump. Frames in the Python
 * library, PyTorch and site-packages are passed over for the user's frame
 * (when every frame is one of those, the innermost is taken). Returns 0, or
 * -1 when the text holds no thread block. Never reads past len. */
int rdzv_hang_parse(const char *dump, size_t len, struct rdzv_hang_where *w);

/* "all_reduce at train.py:12 in main" (coll empty: "train.py:12 in main");
 * the file's last component only. */
void rdzv_hang_where_text(const struct rdzv_hang_where *w, char *out, size_t len);

struct rdzv_hang_rank {
	uint32_t rank;
	char node[64];
	int have;      /* 0: no dump came (the process is not armed or gone) */
	struct rdzv_hang_where w;
};

/* The verdict line for n ranks: which ranks are not where most are.
 *   "rdzv-hang: rank 2 (n2) is not where the other 3 ranks are (all_reduce
 *    at train.py:12 in main): rank 2 at train.py:10 in main"
 *   "rdzv-hang: all 4 ranks are at all_reduce at train.py:12 in main ..."
 * Returns the number of ranks named (0 when all agree or nothing came;
 * with two places holding as many ranks, no verdict: every rank that
 * answered, listed with its place), or -1 when out is too small. */
int rdzv_hang_verdict(const struct rdzv_hang_rank *r, size_t n, char *out, size_t len);

/* One collector record: "@rank R node N pid P\n" DUMP "@end\n". Parses the
 * header line; returns 0 or -1. */
int rdzv_hang_record_header(const char *line, size_t len, uint32_t *rank, char *node,
                            size_t nodelen, long *pid);

/* Is bit sig set in a /proc/PID/status "SigCgt:\t..." hex mask? text is the
 * whole status file. Returns 1, 0, or -1 when there is no SigCgt line. */
int rdzv_hang_sigcgt(const char *status, size_t len, int sig);

/* ---- The end of a hang names the culprit ----
 *
 * srun, in an armed step, listens on a datagram socket and exports
 *   RDZV_HANG_ASK=JOB.STEP:PORT:NONCE   (channel.h)
 * to the tasks. A rank whose collective times out (sitecustomize.py's
 * excepthook) sends, to SLURM_SRUN_COMM_HOST:PORT,
 *   "RDZVH1 ASK JOB.STEP NONCE RANK NODE\nWHAT"
 * (WHAT: the exception's first line) and waits before it exits; srun runs
 * rdzv-hang on the step once, keeps its verdict for the failure line, and
 * answers every rank that asked with
 *   "RDZVH1 DONE JOB.STEP NONCE".
 * A rank whose torch.distributed call raised also says so at once, before
 * its program's own handlers run (a finally block may never end):
 *   "RDZVH1 FAIL JOB.STEP NONCE RANK NODE WORLD\nWHAT"
 * and waits for nothing: srun counts it for the step's grace (grace.h). */
#define RDZV_HANG_ASK_VAR "RDZV_HANG_ASK"
#define RDZV_HANG_WHAT_MAX 256
#define RDZV_HANG_DGRAM_MAX 1024

struct rdzv_hang_ask {
	uint32_t job_id, step_id, rank;
	uint64_t nonce;
	int notice;    /* FAIL: told, not asking (no answer awaited) */
	uint32_t world; /* FAIL: the rank's world size, 0 not known (and for an ASK) */
	char node[64];
	char what[RDZV_HANG_WHAT_MAX]; /* printable ASCII, maybe cut */
};

/* Strict: every field present and in range; a node of host-name
 * characters; WHAT's bytes outside printable ASCII become spaces and a
 * longer one is cut. 0 or -1. Never reads past n. */
int rdzv_hang_ask_decode(const char *buf, size_t n, struct rdzv_hang_ask *a);
int rdzv_hang_done_format(uint32_t job, uint32_t step, uint64_t nonce, char *buf, size_t len);

#endif

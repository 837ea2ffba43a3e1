/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-hang: faulthandler dumps to "where is each rank", and the verdict
 * (lib/failure/hang.c). The dumps are faulthandler's own format: the first
 * was written by CPython 3.11's faulthandler here (a thread, then the main
 * thread); the torch ones follow the frames PyTorch 1.13 and 2.x put
 * between a user's all_reduce and the blocking call (distributed_c10d.py,
 * and 2.x's c10d_logger wrapper). The end-to-end test 0105 reads real
 * ranks. */
#include "config.h"
#include "hang.h"
#include "channel.h"
#include "tap.h"

#include <string.h>

static const char own[] =
	"Thread 0x00007f109dfeb6c0 (most recent call first):\n"
	"  File \"/tmp/fh.py\", line 5 in worker\n"
	"  File \"/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py\", line 982 in run\n"
	"  File \"/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py\", line 1045 in _bootstrap_inner\n"
	"  File \"/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py\", line 1002 in _bootstrap\n"
	"\n"
	"Current thread 0x00007f109ee32b80 (most recent call first):\n"
	"  File \"/tmp/fh.py\", line 8 in all_reduce\n"
	"  File \"/tmp/fh.py\", line 10 in main\n"
	"  File \"/tmp/fh.py\", line 11 in <module>\n";

/* PyTorch 2.x: the main thread is in all_reduce through c10d_logger's
 * wrapper; a signal-receiving thread came first ("Current thread" is the
 * one that ran the handler, not always the main one). */
static const char torch2[] =
	"Current thread 0x00007f2a5dfff6c0 (most recent call first):\n"
	"  File \"/usr/lib/python3/dist-packages/torch/utils/data/_utils/worker.py\", line 12 in loop\n"
	"\n"
	"Thread 0x00007f2a6a1ab740 (most recent call first):\n"
	"  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line 2806 in all_reduce\n"
	"  File \"/usr/lib/python3/dist-packages/torch/distributed/c10d_logger.py\", line 81 in wrapper\n"
	"  File \"/home/u/train.py\", line 12 in step\n"
	"  File \"/home/u/train.py\", line 30 in main\n"
	"  File \"/home/u/train.py\", line 40 in <module>\n";

static const char sleeping[] =
	"Current thread 0x00007f2a6a1ab740 (most recent call first):\n"
	"  File \"/home/u/train.py\", line 10 in step\n"
	"  File \"/home/u/train.py\", line 30 in main\n"
	"  File \"/home/u/train.py\", line 40 in <module>\n";

/* torchrun's agent: every frame is PyTorch's. */
static const char agent[] =
	"Current thread 0x00007f2a6a1ab740 (most recent call first):\n"
	"  File \"/usr/lib/python3/dist-packages/torch/distributed/elastic/agent/server/api.py\", line 850 in _invoke_run\n"
	"  File \"/usr/lib/python3/dist-packages/torch/distributed/run.py\", line 755 in main\n"
	"  File \"/usr/bin/torchrun\", line 33 in <module>\n";

static void test_parse(void)
{
	struct rdzv_hang_where w;
	char t[512];

	is_int(rdzv_hang_parse(own, strlen(own), &w), 0, "CPython's own dump parses");
	is_int(w.frames, 3, "the main thread (the last block) has 3 frames");
	is_str(w.file, "/tmp/fh.py", "innermost user frame: its file");
	is_int(w.line, 8, "... its line");
	is_str(w.func, "all_reduce", "... its function");
	is_str(w.coll, "", "a user's function named all_reduce is not torch.distributed's");

	is_int(rdzv_hang_parse(torch2, strlen(torch2), &w), 0, "a PyTorch 2 dump parses");
	is_str(w.coll, "all_reduce", "the collective through c10d_logger's wrapper");
	rdzv_hang_where_text(&w, t, sizeof(t));
	is_str(t, "all_reduce at train.py:12 in step", "where: the call and the user's frame");

	is_int(rdzv_hang_parse(sleeping, strlen(sleeping), &w), 0, "a rank outside any collective");
	rdzv_hang_where_text(&w, t, sizeof(t));
	is_str(t, "train.py:10 in step", "where: the user's frame only");

	is_int(rdzv_hang_parse(agent, strlen(agent), &w), 0, "torchrun's agent");
	is_str(w.file, "/usr/bin/torchrun", "the innermost frame not in a library");

	is_int(rdzv_hang_parse("", 0, &w), -1, "empty: no thread");
	is_int(rdzv_hang_parse("garbage\nmore\n", 13, &w), -1, "no thread block");
	is_int(rdzv_hang_parse("Thread 0x1 (most recent call first):\n", 37, &w), -1,
	       "a thread without frames");
	{
		static const char cut[] = "Current thread 0x1 (most recent call first):\n"
		                          "  File \"/a/b.py\", line 7 in f\n"
		                          "  ...\n";

		is_int(rdzv_hang_parse(cut, strlen(cut), &w), 0, "a stack cut with '  ...'");
		is_int(w.line, 7, "... its frame read");
	}
	{
		static const char unk[] = "Current thread 0x1 (most recent call first):\n"
		                          "  File \"/a/x\", line 5 in g\".py\", line ?\?? in f\n";

		is_int(rdzv_hang_parse(unk, strlen(unk), &w), 0, "an unknown line (?\?\?), a quote in the path");
		is_str(w.file, "/a/x\", line 5 in g\".py", "the last '\", line ' ends the path");
		is_int(w.line, 0, "unknown line is 0");
	}
	/* Never past len: the second block is out of range. */
	{
		size_t cut = (size_t)(strstr(torch2, "in loop\n") + 8 - torch2);

		is_int(rdzv_hang_parse(torch2, cut, &w), 0, "a dump cut short parses what is in range");
		is_str(w.func, "loop", "... the only block in range");
		is_int(rdzv_hang_parse(torch2, cut - 3, &w), 0, "a frame line cut short still parses");
	}
}

static void rank(struct rdzv_hang_rank *r, uint32_t n, const char *node, const char *dump)
{
	memset(r, 0, sizeof(*r));
	r->rank = n;
	snprintf(r->node, sizeof(r->node), "%s", node);
	r->have = dump && rdzv_hang_parse(dump, strlen(dump), &r->w) == 0;
}

static void test_verdict(void)
{
	struct rdzv_hang_rank r[5];
	char out[1024];

	rank(&r[0], 0, "n1", torch2);
	rank(&r[1], 1, "n1", torch2);
	rank(&r[2], 2, "n2", sleeping);
	rank(&r[3], 3, "n2", torch2);
	is_int(rdzv_hang_verdict(r, 4, out, sizeof(out)), 1, "one rank named");
	is_str(out, "rdzv-hang: rank 2 (n2) is not where the other 3 ranks are (all_reduce at "
	       "train.py:12 in step): rank 2 at train.py:10 in step", "the sleeping rank named");

	rank(&r[2], 2, "n2", torch2);
	is_int(rdzv_hang_verdict(r, 4, out, sizeof(out)), 0, "all agree: none named");
	is_str(out, "rdzv-hang: all 4 ranks that answered are at all_reduce at train.py:12 in step",
	       "all at one place");

	rank(&r[3], 3, "n2", NULL);
	is_int(rdzv_hang_verdict(r, 4, out, sizeof(out)), 0, "a missing rank is not a place");
	ok(strstr(out, "no dump from rank 3 (n2)") != NULL, "the missing rank is named: %s", out);

	rank(&r[0], 0, "n1", torch2);
	rank(&r[1], 1, "n1", sleeping);
	rank(&r[2], 2, "n2", torch2);
	rank(&r[3], 3, "n2", sleeping);
	is_int(rdzv_hang_verdict(r, 4, out, sizeof(out)), 4, "two against two: no majority, all 4 listed");
	ok(strncmp(out, "rdzv-hang: no place holds most ranks:", 37) == 0, "said so: %s", out);

	rank(&r[0], 0, "n1", NULL);
	rank(&r[1], 1, "n1", NULL);
	is_int(rdzv_hang_verdict(r, 2, out, sizeof(out)), 0, "nothing answered");
	ok(strstr(out, "no rank of the step answered") != NULL, "said so");

	rank(&r[0], 0, "n1", torch2);
	rank(&r[1], 1, "n1", sleeping);
	rank(&r[2], 2, "n2", sleeping);
	rank(&r[3], 3, "n2", torch2);
	rank(&r[4], 4, "n3", torch2);
	is_int(rdzv_hang_verdict(r, 5, out, sizeof(out)), 2, "two of five named");
	ok(strstr(out, "ranks 1 (n1), 2 (n2) are not where the other 3 ranks are") != NULL, "%s", out);
	is_int(rdzv_hang_verdict(r, 5, out, 40), -1, "too small a buffer is an error");

	rank(&r[0], 0, "n1", torch2);
	rank(&r[1], 1, "n1", sleeping);
	rank(&r[2], 2, "n2", torch2);
	rank(&r[3], 3, "n2", agent);
	is_int(rdzv_hang_verdict(r, 4, out, sizeof(out)), 2, "2-1-1: the two elsewhere named");
	ok(strstr(out, "ranks 1 (n1), 3 (n2) are not where the other 2 ranks are") != NULL, "%s", out);
}

static void test_header_and_sigcgt(void)
{
	uint32_t r;
	char node[64];
	long pid;
	static const char status[] = "Name:\tpython3\nSigBlk:\t0000000000000000\n"
	                             "SigIgn:\t0000000001001000\nSigCgt:\t0000010100004a02\n";

	is_int(rdzv_hang_record_header("@rank 12 node n3 pid 4321", 25, &r, node, sizeof(node), &pid),
	       0, "a record header");
	ok(r == 12 && strcmp(node, "n3") == 0 && pid == 4321, "its fields");
	is_int(rdzv_hang_record_header("@rank x node n3 pid 1", 21, &r, node, sizeof(node), &pid), -1,
	       "a rank that is no number");
	is_int(rdzv_hang_record_header("@rank 1 node  pid 1", 19, &r, node, sizeof(node), &pid), -1,
	       "an empty node");
	is_int(rdzv_hang_record_header("@rank 1 node n1 pid 0", 21, &r, node, sizeof(node), &pid), -1,
	       "pid 0");
	is_int(rdzv_hang_record_header("@rank 99999999999 node n1 pid 1", 31, &r, node, sizeof(node),
	                               &pid), -1, "a rank past 32 bits");
	/* 0x0000010100004a02: bit 41-1=40 set (0x100_0000_0000), bit 9 (SIGUSR1) set, bit 12 (SIGPIPE) clear. */
	is_int(rdzv_hang_sigcgt(status, strlen(status), 41), 1, "signal 41 caught");
	is_int(rdzv_hang_sigcgt(status, strlen(status), 10), 1, "SIGUSR1 caught");
	is_int(rdzv_hang_sigcgt(status, strlen(status), 13), 0, "SIGPIPE not caught");
	is_int(rdzv_hang_sigcgt("Name:\tx\n", 8, 41), -1, "no SigCgt line");
	is_int(rdzv_hang_sigcgt("SigCgt:\tzz\n", 11, 41), -1, "a mask that is not hex");
	is_int(rdzv_hang_sigcgt(status, strlen(status), 65), -1, "signal out of range");
}

/* The ask of a rank whose collective timed out, and srun's answer. */
static void test_ask(void)
{
	struct rdzv_hang_ask a;
	char buf[128], big[RDZV_HANG_DGRAM_MAX];
	const char *m = "RDZVH1 ASK 12.3 00000000deadbeef 7 n2\nRuntimeError: Timed out\x01waiting";

	struct rdzv_channel_addr ask = { 12, 3, 40000, 0xdeadbeefULL };

	/* RDZV_HANG_ASK is the step channel's variable (channel.h), which
	 * sitecustomize.py reads. */
	is_int(rdzv_channel_var_format(&ask, buf, sizeof(buf)), 0, "RDZV_HANG_ASK formats");
	is_str(buf, "12.3:40000:00000000deadbeef", "... JOB.STEP:PORT:NONCE, the nonce in 16 hex digits");
	ask.nonce = 1;
	is_int(rdzv_channel_var_format(&ask, buf, 10), -1, "... refused, not cut, in a short buffer");
	is_int(rdzv_hang_done_format(12, 3, 0xdeadbeefULL, buf, sizeof(buf)), 0, "the answer formats");
	is_str(buf, "RDZVH1 DONE 12.3 00000000deadbeef", "... RDZVH1 DONE JOB.STEP NONCE (what sitecustomize.py waits for)");
	is_int(rdzv_hang_ask_decode(m, strlen(m), &a), 0, "an ask decodes");
	ok(a.job_id == 12 && a.step_id == 3 && a.nonce == 0xdeadbeefULL && a.rank == 7, "... job, step, nonce, rank");
	is_str(a.node, "n2", "... the node");
	is_str(a.what, "RuntimeError: Timed out waiting", "... what timed out, a control byte made a space");
	is_int(rdzv_hang_ask_decode("RDZVH1 ASK 1.0 ab 0 n1", 22, &a), 0, "without WHAT");
	is_str(a.what, "", "... WHAT empty");
	is_int(rdzv_hang_ask_decode(m, 20, &a), -1, "cut short: refused");
	is_int(rdzv_hang_ask_decode("RDZVH1 ASK 1.0 AB 0 n1", 22, &a), -1, "an upper-case nonce (srun writes lower case)");
	is_int(rdzv_hang_ask_decode("RDZVH1 ASK 1.0 00000000000000001 0 n1", 37, &a), -1, "a nonce of 17 digits");
	is_int(rdzv_hang_ask_decode("RDZVH1 ASK 1.0 ab 0 n/1", 23, &a), -1, "a node with a slash");
	is_int(rdzv_hang_ask_decode("RDZVH1 ASK 1.0 ab 0  n1", 23, &a), -1, "two spaces");
	is_int(rdzv_hang_ask_decode("RDZVH1 ASK 4294967296.0 ab 0 n1", 31, &a), -1, "a job id past 32 bits");
	is_int(rdzv_hang_ask_decode("RDZVH1 ASK 1.0 ab -1 n1", 23, &a), -1, "a negative rank");
	is_int(rdzv_hang_ask_decode("RDZVH1 DONE 1.0 ab", 18, &a), -1, "an answer is not an ask");
	is_int(rdzv_hang_ask_decode("RDZVH1 ASK 1.0 ab 0 n1 x", 24, &a), -1, "a sixth field");
	memset(big, 'x', sizeof(big));
	memcpy(big, "RDZVH1 ASK 1.0 ab 0 n1\n", 23);
	is_int(rdzv_hang_ask_decode(big, sizeof(big), &a), 0, "a WHAT of 1000 bytes");
	is_int((int)strlen(a.what), RDZV_HANG_WHAT_MAX - 1, "... cut to fit");
}

int main(void)
{
	test_parse();
	test_verdict();
	test_header_and_sigcgt();
	test_ask();
	return done_testing();
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-master: the node of rank 0 for every distribution, and what
 * MASTER_ADDR becomes. Invalid input first. */
#include "config.h"
#include "master.h"
#include "tap.h"

#include <netdb.h>
#include <string.h>
#include <sys/socket.h>

static char err[512];

static void first_refused(const char *text, const char *want, const char *name)
{
	char host[64] = "untouched";
	int rc;

	err[0] = '\0';
	rc = rdzv_hostfile_first(text, host, sizeof(host), err, sizeof(err));
	if (!ok(rc == -1 && strstr(err, want), "%s", name))
		diag("rc %d host '%s' err '%s', want '%s'", rc, host, err, want);
}

static void test_invalid(void)
{
	char host[64], small[4], big[3000];

	err[0] = '\0';
	is_int(rdzv_master_host("n[1-4]", "arbitrary", NULL, host, sizeof(host), err, sizeof(err)),
	       -1, "arbitrary distribution without the hostfile is an error");
	ok(strstr(err, "SLURM_HOSTFILE") && strstr(err, "arbitrary"),
	   "the reason names the distribution and SLURM_HOSTFILE");
	is_int(rdzv_master_host(NULL, "block", NULL, host, sizeof(host), err, sizeof(err)), -1,
	       "no step node list is an error");
	ok(strstr(err, "SLURM_STEP_NODELIST") != NULL, "the reason names SLURM_STEP_NODELIST");
	is_int(rdzv_master_host("", "cyclic", NULL, host, sizeof(host), err, sizeof(err)), -1,
	       "an empty step node list is an error");
	is_int(rdzv_master_host("n[1-", "block", NULL, host, sizeof(host), err, sizeof(err)), -1,
	       "a malformed step node list is an error");
	is_int(rdzv_master_host("node[1000-1001]", "block", NULL, small, sizeof(small), err,
	                        sizeof(err)), -1, "a master name longer than the buffer is an error");

	first_refused(NULL, "names no host", "a NULL hostfile names no host");
	first_refused("", "names no host", "an empty hostfile names no host");
	first_refused("# only a comment\n\n   \n\t# another\n", "names no host",
	              "a hostfile of comments and blank lines names no host");
	first_refused("*4\n", "names no host", "a line of only a repeat count names no host");
	first_refused("n[1-\n", "not closed", "a malformed first line is an error");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	first_refused(big, "longer than", "a first host name longer than the buffer is an error");

	err[0] = '\0';
	is_int(rdzv_master_addr("no-such-host.invalid", RDZV_ADDR_NAME, host, sizeof(host), err,
	                        sizeof(err)), -1, "an unresolvable master name is an error");
	ok(strstr(err, "no-such-host.invalid") && strstr(err, "does not resolve"),
	   "the reason names the host and says it does not resolve");
	is_int(rdzv_master_addr("no-such-host.invalid", RDZV_ADDR_IP, host, sizeof(host), err,
	                        sizeof(err)), -1, "an unresolvable master name is an error in ip form");
	is_int(rdzv_master_addr(NULL, RDZV_ADDR_NAME, host, sizeof(host), err, sizeof(err)), -1,
	       "no master name is an error");
	is_int(rdzv_master_addr("", RDZV_ADDR_NAME, host, sizeof(host), err, sizeof(err)), -1,
	       "an empty master name is an error");
	/* Numeric masters: what fits does not depend on this machine's resolver
	 * (localhost gives ::1 first on Debian 13 and unstable, which fits in 4
	 * bytes, and 127.0.0.1 first on Debian 12, which does not). */
	err[0] = '\0';
	ok(rdzv_master_addr("127.0.0.1", RDZV_ADDR_NAME, small, sizeof(small), err, sizeof(err)) == -1
	   && strstr(err, "too long"), "a name longer than the output buffer is an error (%s)", err);
	err[0] = '\0';
	ok(rdzv_master_addr("127.0.0.1", RDZV_ADDR_IP, small, sizeof(small), err, sizeof(err)) == -1
	   && strstr(err, "cannot format"),
	   "an address longer than the output buffer is an error (%s)", err);
	err[0] = '\0';
	ok(rdzv_master_addr("fd00::1", RDZV_ADDR_IP, small, sizeof(small), err, sizeof(err)) == -1
	   && strstr(err, "cannot format"),
	   "an IPv6 address longer than the output buffer is an error (%s)", err);
	{
		char nine[9] = "", ten[10] = "";

		/* The limits are the buffer's: no byte short, no byte over. */
		is_int(rdzv_master_addr("127.0.0.1", RDZV_ADDR_IP, nine, sizeof(nine), err, sizeof(err)),
		       -1, "127.0.0.1 does not fit in 9 bytes");
		ok(rdzv_master_addr("127.0.0.1", RDZV_ADDR_IP, ten, sizeof(ten), err, sizeof(err)) == 0
		   && strcmp(ten, "127.0.0.1") == 0, "127.0.0.1 fits in 10 bytes (%s)", ten);
		ok(rdzv_master_addr("::1", RDZV_ADDR_IP, small, sizeof(small), err, sizeof(err)) == 0
		   && strcmp(small, "::1") == 0, "::1 fits in 4 bytes");
		is_int(rdzv_master_addr("127.0.0.1", RDZV_ADDR_NAME, nine, sizeof(nine), err,
		                        sizeof(err)), -1, "the name 127.0.0.1 does not fit in 9 bytes");
		ok(rdzv_master_addr("127.0.0.1", RDZV_ADDR_NAME, ten, sizeof(ten), err, sizeof(err)) == 0
		   && strcmp(ten, "127.0.0.1") == 0, "the name 127.0.0.1 fits in 10 bytes");
	}
}

static void test_master_host(void)
{
	const char *dists[] = { NULL, "", "block", "cyclic", "plane=4", "block:cyclic",
	                        "cyclic:block:fcyclic", "plane", "block,Pack" };
	const char *hostfile = "# rank layout\n\n  n7*2 # two tasks\nn3\nn1\n";
	char host[64];
	size_t i;
	int good = 1;

	for (i = 0; i < sizeof(dists) / sizeof(dists[0]); i++) {
		host[0] = '\0';
		if (rdzv_master_host("n[3-4],n1", dists[i], hostfile, host, sizeof(host), err,
		                     sizeof(err)) < 0 || strcmp(host, "n3") != 0) {
			diag("distribution '%s': '%s' %s", dists[i] ? dists[i] : "(null)", host, err);
			good = 0;
		}
	}
	ok(good, "block, cyclic, plane and their forms take the step list's first host, "
	         "never the hostfile");
	ok(rdzv_master_host("gpu[08-11]", "cyclic", NULL, host, sizeof(host), err, sizeof(err)) == 0
	   && strcmp(host, "gpu08") == 0, "the first host keeps its zero padding");
	ok(rdzv_master_host("r[1-2]n[3-4]", "block", NULL, host, sizeof(host), err, sizeof(err)) == 0
	   && strcmp(host, "r1n3") == 0, "the first host of several groups is taken");
	ok(rdzv_master_host("n[1-4]", "arbitrary", hostfile, host, sizeof(host), err,
	                    sizeof(err)) == 0 && strcmp(host, "n7") == 0,
	   "arbitrary takes the hostfile's first host, skipping comments, blanks and '*N'");
	ok(rdzv_master_host("n[1-4]", "arbitrary:cyclic", "n2\nn1\n", host, sizeof(host), err,
	                    sizeof(err)) == 0 && strcmp(host, "n2") == 0,
	   "arbitrary with a second level still reads the hostfile");
}

struct first {
	const char *text, *host, *name;
};

static const struct first firsts[] = {
	{ "n5\nn1\n", "n5", "the first line's host is taken" },
	{ "n5", "n5", "a file without a final newline works" },
	{ "\n\n\nn5\n", "n5", "blank lines are skipped" },
	{ "#n1\n  # n2\nn5\n", "n5", "comment lines are skipped" },
	{ "n5 # the master\n", "n5", "a trailing comment is cut" },
	{ "n5#x\n", "n5", "a comment right after the host is cut" },
	{ "   n5   \n", "n5", "white space around the host is cut" },
	{ "\tn5\t\n", "n5", "tabs around the host are cut" },
	{ "n5*8\nn6*8\n", "n5", "a repeat count is cut" },
	{ "n5 * 8\n", "n5", "a repeat count after spaces is cut" },
	{ "n[08-11]\n", "n08", "a host list expression on the first line gives its first host" },
	{ "n[2-3]*2\n", "n2", "a host list expression with a repeat count gives its first host" },
	{ "n9,n1,n2\n", "n9", "a comma list on the first line gives its first host" },
	{ "r[1-2]n[3-4]\n", "r1n3", "several bracket groups give their first host" },
	{ NULL, NULL, NULL },
};

static void test_hostfile(void)
{
	char host[64], line[4096];
	size_t i, used;

	for (i = 0; firsts[i].text; i++) {
		host[0] = '\0';
		err[0] = '\0';
		if (!ok(rdzv_hostfile_first(firsts[i].text, host, sizeof(host), err, sizeof(err)) == 0
		        && strcmp(host, firsts[i].host) == 0, "%s", firsts[i].name))
			diag("got '%s' err '%s', want '%s'", host, err, firsts[i].host);
	}
	/* A long first line (a whole rank layout written on one line) is fine:
	 * only its first host matters. */
	used = (size_t)snprintf(line, sizeof(line), "n7");
	while (used + 4 < sizeof(line) - 1)
		used += (size_t)snprintf(line + used, sizeof(line) - used, ",n%zu", used % 10);
	ok(rdzv_hostfile_first(line, host, sizeof(host), err, sizeof(err)) == 0
	   && strcmp(host, "n7") == 0, "a first line of %zu bytes gives its first host", used);
	{
		char longline[4096];

		memset(longline, ' ', sizeof(longline));
		memcpy(longline, "# ", 2);
		memcpy(longline + sizeof(longline) - 5, "\nn4\n", 5);
		ok(rdzv_hostfile_first(longline, host, sizeof(host), err, sizeof(err)) == 0
		   && strcmp(host, "n4") == 0, "a comment line of 4 kB is skipped");
		if (strcmp(host, "n4") != 0)
			diag("got '%s' err '%s'", host, err);
	}
}

/* The first answer of this machine's resolver for name, numeric, or "" when
 * it does not resolve. Which address comes first is the resolver's choice
 * (localhost: 127.0.0.1 on Debian 12, ::1 on Debian 13 and unstable): the
 * tests compare with it rather than assuming either. last: the last one. */
static void answers(const char *name, char *first, char *last, size_t len)
{
	struct addrinfo hints, *res = NULL, *ai;

	first[0] = last[0] = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(name, NULL, &hints, &res) != 0)
		return;
	for (ai = res; ai; ai = ai->ai_next)
		if (getnameinfo(ai->ai_addr, ai->ai_addrlen, ai == res ? first : last,
		                (socklen_t)len, NULL, 0, NI_NUMERICHOST) != 0)
			(ai == res ? first : last)[0] = '\0';
	if (!last[0])
		snprintf(last, len, "%s", first);
	freeaddrinfo(res);
}

static void test_addr(void)
{
	char out[128], first[64], last[64];

	/* Numeric masters: the same answer on every machine. */
	ok(rdzv_master_addr("127.0.0.1", RDZV_ADDR_IP, out, sizeof(out), err, sizeof(err)) == 0
	   && strcmp(out, "127.0.0.1") == 0, "an IPv4 address stays itself in ip form");
	ok(rdzv_master_addr("127.0.0.1", RDZV_ADDR_NAME, out, sizeof(out), err, sizeof(err)) == 0
	   && strcmp(out, "127.0.0.1") == 0, "an address is kept as written in name form");
	ok(rdzv_master_addr("127.1", RDZV_ADDR_IP, out, sizeof(out), err, sizeof(err)) == 0
	   && strcmp(out, "127.0.0.1") == 0, "the ip form is the resolved address: 127.1 gives %s",
	   out);
	ok(rdzv_master_addr("127.1", RDZV_ADDR_NAME, out, sizeof(out), err, sizeof(err)) == 0
	   && strcmp(out, "127.1") == 0, "the name form gives the master as written (%s)", out);
	ok(rdzv_master_addr("fd00::1", RDZV_ADDR_IP, out, sizeof(out), err, sizeof(err)) == 0
	   && strcmp(out, "fd00::1") == 0, "an IPv6 address stays itself in ip form");
	ok(rdzv_master_addr("0:0:0:0:0:0:0:1", RDZV_ADDR_IP, out, sizeof(out), err, sizeof(err)) == 0
	   && strcmp(out, "::1") == 0, "an IPv6 address is written short in ip form (%s)", out);

	/* A name: localhost, whichever of its addresses this machine's
	 * resolver gives first. */
	answers("localhost", first, last, sizeof(first));
	if (!first[0]) {
		skip("localhost does not resolve here");
		skip("localhost does not resolve here");
		return;
	}
	diag("localhost resolves to %s first here", first);
	ok(rdzv_master_addr("localhost", RDZV_ADDR_NAME, out, sizeof(out), err, sizeof(err)) == 0
	   && strcmp(out, "localhost") == 0, "the name form gives the name as Slurm knows it");
	out[0] = '\0';
	ok(rdzv_master_addr("localhost", RDZV_ADDR_IP, out, sizeof(out), err, sizeof(err)) == 0
	   && strcmp(out, first) == 0 && (strncmp(out, "127.", 4) == 0 || strcmp(out, "::1") == 0),
	   "the ip form gives localhost's first address, a loopback one (%s, want %s)", out, first);
}

static void test_plan(void)
{
	struct rdzv_plan p, q;
	char buf[512];
	static const char *bad[] = {
		"", "1.2:29500:derived", "1:29500:derived:n1", "x.2:29500:derived:n1",
		"1.2:80:derived:n1", "1.2:65536:derived:n1", "1.2:29500:guessed:n1",
		"1.2:29500:derived:n1;rm", "1.2:29500:derived:n 1",
		"4294967296.0:29500:derived:n1", "1.2:29500:option:n1:extra", NULL,
	};
	size_t i;
	int refused = 1;

	for (i = 0; bad[i]; i++) {
		err[0] = '\0';
		if (rdzv_plan_parse(bad[i], &p, err, sizeof(err)) != -1
		    || !strstr(err, RDZV_STEP_PLAN_VAR)) {
			diag("accepted or unnamed: '%s' (%s)", bad[i], err);
			refused = 0;
		}
	}
	ok(refused, "malformed step plans are refused, naming %s", RDZV_STEP_PLAN_VAR);
	is_int(rdzv_plan_parse(NULL, &p, err, sizeof(err)), -1, "a NULL plan is refused");
	memset(&p, 0, sizeof(p));
	p.job_id = 4000001;
	p.step_id = 7;
	p.port = 31234;
	snprintf(p.host, sizeof(p.host), "gpu-a17.rack_3");
	ok(rdzv_plan_format(&p, buf, sizeof(buf)) == 0
	   && strcmp(buf, "4000001.7:31234:derived:gpu-a17.rack_3") == 0, "a plan formats (%s)", buf);
	ok(rdzv_plan_parse(buf, &q, err, sizeof(err)) == 0 && q.job_id == 4000001 && q.step_id == 7
	   && q.port == 31234 && !q.port_from_option && strcmp(q.host, p.host) == 0,
	   "and parses back to the same plan");
	p.port_from_option = 1;
	ok(rdzv_plan_format(&p, buf, sizeof(buf)) == 0
	   && rdzv_plan_parse(buf, &q, err, sizeof(err)) == 0 && q.port_from_option,
	   "a --rdzv-port plan says so");
	is_int(rdzv_plan_format(&p, buf, 10), -1, "a plan that does not fit is refused");
	ok(rdzv_plan_parse("5.0:30000:derived:", &q, err, sizeof(err)) == 0 && q.host[0] == '\0'
	   && q.port == 30000, "a plan without a host (block, cyclic, plane: the nodes read it) parses");
}

static void nodelist_case(const char *what, int rc_want, const char *want, int file_want,
                          char **argv)
{
	char out[256];
	int argc = 0, is_file = -1, rc;

	while (argv[argc])
		argc++;
	out[0] = '\0';
	rc = rdzv_srun_arg_nodelist(argc, argv, out, sizeof(out), &is_file, err, sizeof(err));
	ok(rc == rc_want && (rc != 1 || (strcmp(out, want) == 0 && is_file == file_want)),
	   "srun %s: %s", what, rc_want == 1 ? want : rc_want == 0 ? "no layout option" : "refused");
	if (rc != rc_want)
		diag("rc %d out '%s' err '%s'", rc, out, err);
}

#define ARGV(...) ((char *[]){ __VA_ARGS__, NULL })

static void test_srun_args(void)
{
	char a[][48] = { "srun", "-m", "arbitrary", "-w", "n3,n1,n2", "-n3", "python", "x.py",
	                 "-wn9", "--nodelist=n[3,1-2]", "--nodelist", "n2,n1", "-lw", "n5",
	                 "-F", "/tmp/h", "--nodefile=./h", "-w", "-J", "name", "--", "--nodel=n7",
	                 "--rdzv", "torch", "-N2", "-wn4", "--label", "hosts/x" };

	nodelist_case("-w n3,n1,n2", 1, "n3,n1,n2", 0, ARGV(a[0], a[1], a[2], a[3], a[4], a[5], a[6]));
	nodelist_case("-wn9", 1, "n9", 0, ARGV(a[0], a[8], a[6]));
	nodelist_case("--nodelist=n[3,1-2]", 1, "n[3,1-2]", 0, ARGV(a[0], a[9], a[6]));
	nodelist_case("--nodelist n2,n1", 1, "n2,n1", 0, ARGV(a[0], a[10], a[11], a[6]));
	nodelist_case("-lw n5 (a flag cluster)", 1, "n5", 0, ARGV(a[0], a[12], a[13], a[6]));
	nodelist_case("-F /tmp/h", 1, "/tmp/h", 1, ARGV(a[0], a[14], a[15], a[6]));
	nodelist_case("--nodefile=./h", 1, "./h", 1, ARGV(a[0], a[16], a[6]));
	nodelist_case("-w hosts/x (a path is a file)", 1, "hosts/x", 1, ARGV(a[0], a[3], a[27], a[6]));
	nodelist_case("--nodel=n7 (an abbreviation)", 1, "n7", 0, ARGV(a[0], a[21], a[6]));
	nodelist_case("the last -w wins", 1, "n4", 0, ARGV(a[0], a[3], a[4], a[25], a[6]));
	nodelist_case("-w after the program is the program's", 0, "", 0,
	              ARGV(a[0], a[1], a[2], a[6], a[7], a[3], a[4]));
	nodelist_case("-w after -- is the program's", 0, "", 0, ARGV(a[0], a[20], a[3], a[4]));
	nodelist_case("-J's value is not an option", 0, "", 0, ARGV(a[0], a[18], a[17], a[6]));
	nodelist_case("--rdzv's value is skipped", 1, "n4", 0,
	              ARGV(a[0], a[22], a[23], a[24], a[26], a[25], a[6]));
	nodelist_case("-w without a value", -1, "", 0, ARGV(a[0], a[3]));
	nodelist_case("--nodelist without a value", -1, "", 0, ARGV(a[0], a[10]));
}

static void test_user_addr(void)
{
	char host[64];
	uint16_t port = 0;

	is_int(rdzv_hostport_split("n1", host, sizeof(host), &port, err, sizeof(err)), -1,
	       "HOST:PORT without a port is refused");
	is_int(rdzv_hostport_split("n1:80", host, sizeof(host), &port, err, sizeof(err)), -1,
	       "a port below 1024 is refused");
	is_int(rdzv_hostport_split(":29500", host, sizeof(host), &port, err, sizeof(err)), -1,
	       "an empty host is refused");
	is_int(rdzv_hostport_split("fd00::1:29500", host, sizeof(host), &port, err, sizeof(err)), -1,
	       "an unbracketed IPv6 address is refused");
	is_int(rdzv_hostport_split("[fd00::1:29500", host, sizeof(host), &port, err, sizeof(err)), -1,
	       "an unclosed bracket is refused");
	ok(rdzv_hostport_split("n1:29500", host, sizeof(host), &port, err, sizeof(err)) == 0
	   && strcmp(host, "n1") == 0 && port == 29500, "n1:29500 splits");
	ok(rdzv_hostport_split("[fd00::1]:29501", host, sizeof(host), &port, err, sizeof(err)) == 0
	   && strcmp(host, "fd00::1") == 0 && port == 29501, "[fd00::1]:29501 splits");

	err[0] = '\0';
	ok(rdzv_master_check_user("MASTER_ADDR", "rdzv-no-such-host.invalid", "127.0.0.1", err,
	                          sizeof(err)) == -1 && strstr(err, "MASTER_ADDR=rdzv-no-such-host")
	   && strstr(err, "does not resolve"), "an exported MASTER_ADDR that does not resolve is "
	   "refused, naming the variable (%s)", err);
	is_int(rdzv_master_check_user("MASTER_ADDR", "", "127.0.0.1", err, sizeof(err)), -1,
	       "an empty exported MASTER_ADDR is refused");
	ok(rdzv_master_check_user("MASTER_ADDR", "127.0.0.1", "127.0.0.1", err, sizeof(err)) == 0,
	   "an exported MASTER_ADDR equal to rank 0's node passes");
	/* Another spelling of the same address: compared as addresses. */
	err[0] = '\0';
	ok(rdzv_master_check_user("MASTER_ADDR", "127.0.0.1", "127.1", err, sizeof(err)) == 0,
	   "an exported address of rank 0's node passes (127.1 = 127.0.0.1) %s", err);
	err[0] = '\0';
	ok(rdzv_master_check_user("MASTER_ADDR", "0:0:0:0:0:0:0:1", "::1", err, sizeof(err)) == 0,
	   "... and an IPv6 one (::1 = 0:0:0:0:0:0:0:1) %s", err);
	err[0] = '\0';
	ok(rdzv_master_check_user("PET_MASTER_ADDR", "127.0.0.2", "127.0.0.1", err, sizeof(err))
	   == -1 && strstr(err, "PET_MASTER_ADDR=127.0.0.2") && strstr(err, "node of rank 0"),
	   "an exported address of another node is refused: ranks would wait for nobody (%s)", err);

	/* Rank 0's node by name: each of localhost's addresses is its own,
	 * in whichever order this machine's resolver gives them. */
	{
		char first[64], last[64];

		answers("localhost", first, last, sizeof(first));
		if (!first[0]) {
			skip("localhost does not resolve here");
			skip("localhost does not resolve here");
			return;
		}
		err[0] = '\0';
		ok(rdzv_master_check_user("MASTER_ADDR", first, "localhost", err, sizeof(err)) == 0,
		   "an exported address of rank 0's node passes (localhost's first, %s) %s", first,
		   err);
		err[0] = '\0';
		ok(rdzv_master_check_user("MASTER_ADDR", last, "localhost", err, sizeof(err)) == 0,
		   "... and its last (%s) %s", last, err);
	}
}

int main(void)
{
	test_invalid();
	test_master_host();
	test_hostfile();
	test_addr();
	test_plan();
	test_srun_args();
	test_user_addr();
	return done_testing();
}

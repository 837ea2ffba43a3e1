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
	is_int(rdzv_master_addr("localhost", RDZV_ADDR_NAME, small, sizeof(small), err, sizeof(err)),
	       -1, "a name longer than the output buffer is an error");
	is_int(rdzv_master_addr("localhost", RDZV_ADDR_IP, small, sizeof(small), err, sizeof(err)),
	       -1, "an address longer than the output buffer is an error");
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

static void test_addr(void)
{
	char out[128];
	struct addrinfo hints, *res = NULL;
	int have_localhost;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	have_localhost = getaddrinfo("localhost", NULL, &hints, &res) == 0;
	if (res)
		freeaddrinfo(res);
	if (!have_localhost) {
		diag("localhost does not resolve here: skipping the resolving checks");
		return;
	}
	ok(rdzv_master_addr("localhost", RDZV_ADDR_NAME, out, sizeof(out), err, sizeof(err)) == 0
	   && strcmp(out, "localhost") == 0, "the name form gives the name as Slurm knows it");
	ok(rdzv_master_addr("localhost", RDZV_ADDR_IP, out, sizeof(out), err, sizeof(err)) == 0
	   && (strcmp(out, "127.0.0.1") == 0 || strcmp(out, "::1") == 0),
	   "the ip form gives localhost's address (%s)", out);
	ok(rdzv_master_addr("127.0.0.1", RDZV_ADDR_IP, out, sizeof(out), err, sizeof(err)) == 0
	   && strcmp(out, "127.0.0.1") == 0, "an IPv4 address stays itself in ip form");
	ok(rdzv_master_addr("127.0.0.1", RDZV_ADDR_NAME, out, sizeof(out), err, sizeof(err)) == 0
	   && strcmp(out, "127.0.0.1") == 0, "an address is kept as written in name form");
}

int main(void)
{
	test_invalid();
	test_master_host();
	test_hostfile();
	test_addr();
	return done_testing();
}

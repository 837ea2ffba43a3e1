/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-profile-ncclenv: real NCCL (2.28+) loads libnccl-env-rdzv.so and
 * keeps an enforced entry although the program re-exported the variable.
 * No GPU needed: ncclGetUniqueId reads NCCL_SOCKET_IFNAME through the
 * environment plugin to pick the bootstrap interface. The program sets
 * NCCL_SOCKET_IFNAME to an interface that does not exist (NCCL alone then
 * fails); the policy enforces loopback, so NCCL succeeds on lo. */
#include "config.h"
#include "profile_policy.h"
#include "tap.h"

#include <unistd.h>

/* nccl.h (and the CUDA headers it pulls in) trips -Wundef and
 * -Wstrict-prototypes; they are not ours to fix. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

static int log_has(const char *path, const char *what)
{
	char line[1024];
	FILE *f = fopen(path, "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	fclose(f);
	return found;
}

int main(void)
{
	const char *top = getenv("top_builddir"), *san = getenv("RDZV_SANITIZE");
	char plugin[4096], logf[4096];
	ncclUniqueId id;
	ncclResult_t r;
	int v = 0;

	if (san && strcmp(san, "yes") == 0)
		skip_all("sanitizer build: libnccl is not instrumented");
	snprintf(plugin, sizeof(plugin), "%s/nccl/.libs/libnccl-env-rdzv.so", top ? top : ".");
	if (access(plugin, R_OK) != 0)
		skip_all("libnccl-env-rdzv.so not built");
	if (ncclGetVersion(&v) != ncclSuccess || v < 22800)
		skip_all("NCCL older than 2.28 has no environment plugins");
	snprintf(logf, sizeof(logf), "%s/tests/unit/ncclenv.%d.log", top ? top : ".", (int)getpid());
	/* what rdzv.so leaves in the task: the policy and the plugin */
	setenv(RDZV_POLICY_VAR, "NCCL_SOCKET_IFNAME==lo\x1eNCCL_COMM_ID", 1);
	setenv("NCCL_ENV_PLUGIN", plugin, 1);
	setenv("NCCL_SOCKET_IFNAME", "=lo", 1);
	setenv("NCCL_DEBUG", "INFO", 1);
	setenv("NCCL_DEBUG_SUBSYS", "INIT,ENV", 1);
	setenv("NCCL_DEBUG_FILE", logf, 1);
	/* what the user's program does after launch */
	setenv("NCCL_SOCKET_IFNAME", "=rdzv-no-such-if0", 1);
	setenv("NCCL_COMM_ID", "192.0.2.1:1", 1);

	r = ncclGetUniqueId(&id);
	ok(r == ncclSuccess, "NCCL finds its bootstrap interface: the enforced =lo beat the "
	   "program's re-export (%s)", ncclGetErrorString(r));
	ok(log_has(logf, "Using rdzv"), "NCCL loaded the rdzv environment plugin");
	ok(log_has(logf, "NCCL_SOCKET_IFNAME set by environment to =lo"),
	   "NCCL saw the enforced value");
	ok(!log_has(logf, "rdzv-no-such-if0"), "NCCL never saw the program's value");
	ok(!log_has(logf, "192.0.2.1"), "an unset variable stayed absent for NCCL");
	unlink(logf);
	return done_testing();
}

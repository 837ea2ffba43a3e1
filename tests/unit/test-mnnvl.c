/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-mnnvl: what "require mnnvl" checks on a node (an IMEX channel in a
 * fake /dev tree, the NVML double's fabric answers), the profile directive
 * (file:line errors, includes, the default's requirement that a user
 * cannot escape) and nvml_library='s %n. Broken cases first. The channel
 * devices are made with mknod, which needs root: without it those cases
 * are skipped, never passed. */
#include "config.h"
#include "mnnvl.h"
#include "profile.h"
#include "tap.h"
#include "fs-fixtures.h"
#include "util.h" /* rdzv_path_node */

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define UUID_A "3f2a0c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"
#define HEALTHY "gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 completed 0 0x1aa 1\n" \
                "gpu GPU-2 00000000:2B:00.0 3 " UUID_A " 7 completed 0 0x1aa 1\n"

static char root[256], devdir[400], data[300], lib[600];
static int can_mknod;

static void channel(unsigned n)
{
	char p[500];

	snprintf(p, sizeof(p), "%s/channel%u", devdir, n);
	if (mknod(p, S_IFCHR | 0666, makedev(234, n)) < 0 && errno != EEXIST)
		can_mknod = 0;
}

static void clear_dev(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s/dev'", root);
	if (system(cmd) != 0)
		printf("# could not clear %s/dev\n", root);
}

static void test_channels(void)
{
	char list[256], err[1024], p[500];

	clear_dev();
	ok(rdzv_imex_channels(root, list, sizeof(list), err, sizeof(err)) < 0
	   && strstr(err, "no IMEX channel: ") && strstr(err, "/dev/nvidia-caps-imex-channels does "
	                                                     "not exist"),
	   "no channel directory: named (%s)", err);
	snprintf(p, sizeof(p), "%s/dev", root);
	mkdir(p, 0755);
	mkdir(devdir, 0755);
	ok(rdzv_imex_channels(root, list, sizeof(list), err, sizeof(err)) < 0
	   && strstr(err, "has no channelN character device"), "empty directory: named (%s)", err);
	snprintf(p, sizeof(p), "%s/channel0", devdir);
	write_file(p, "");
	ok(rdzv_imex_channels(root, list, sizeof(list), err, sizeof(err)) < 0
	   && strstr(err, "channel0 is a regular file"),
	   "a regular file named channel0 is not a channel, and is named (%s)", err);
	unlink(p);
	ok(rdzv_imex_channels(NULL, list, sizeof(list), err, sizeof(err)) != 0,
	   "the real /dev is looked at without a root (any answer, no crash)");

	can_mknod = 1;
	channel(12);
	channel(0);
	channel(3);
	if (!can_mknod) {
		ok(1, "# SKIP mknod needs root: channel devices not made");
		return;
	}
	ok(rdzv_imex_channels(root, list, sizeof(list), err, sizeof(err)) == 3
	   && strcmp(list, "0,3,12") == 0, "channels listed in order: %s", list);
}

static void test_check(void)
{
	struct rdzv_mnnvl_result res;
	char err[1024], p[500];

	clear_dev();
	write_file(data, HEALTHY);
	ok(rdzv_mnnvl_check(root, lib, &res, err, sizeof(err)) < 0
	   && strstr(err, "no IMEX channel") && strstr(err, "does not exist"),
	   "healthy GPUs without a channel directory: not ready (%s)", err);
	snprintf(p, sizeof(p), "%s/dev", root);
	mkdir(p, 0755);
	mkdir(devdir, 0755);
	ok(rdzv_mnnvl_check(root, lib, &res, err, sizeof(err)) < 0
	   && strstr(err, "has no channelN character device"),
	   "an empty channel directory: not ready (%s)", err);
	can_mknod = 1;
	channel(0);
	if (!can_mknod) {
		ok(1, "# SKIP mknod needs root: the cases with a channel are not run");
		return;
	}
	ok(rdzv_mnnvl_check(root, lib, &res, err, sizeof(err)) == 0, "healthy node: ready %s", err);
	is_str(res.channels, "0", "NVIDIA_IMEX_CHANNELS is the channel found");
	is_str(res.domain, UUID_A ".7", "the node's domain is reported, in the one form of a node's domain");
	is_int(res.ngpus, 2, "both GPUs checked");

	write_file(data, "gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 completed 0 0x1aa 1\n"
	                 "gpu GPU-2 00000000:2B:00.0 3 " UUID_A " 7 in-progress 0 0x1aa 1\n");
	ok(rdzv_mnnvl_check(root, lib, &res, err, sizeof(err)) < 0
	   && strstr(err, "GPU 1 (00000000:2B:00.0): fabric state in progress, not completed"),
	   "state in progress: not ready, GPU named (%s)", err);
	write_file(data, "gpu GPU-1 00000000:1B:00.0 2 " UUID_A " 7 completed 0 0x1a9\n");
	ok(rdzv_mnnvl_check(root, lib, &res, err, sizeof(err)) < 0
	   && strstr(err, "GPU 0 (00000000:1B:00.0): fabric health: degraded bandwidth"),
	   "health degraded: not ready, GPU and fault named (%s)", err);
	write_file(data, "gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 completed 0 0x1aa 1\n"
	                 "gpu GPU-2 00000000:2B:00.0 3 " UUID_A " 8 completed 0 0x1aa 1\n");
	ok(rdzv_mnnvl_check(root, lib, &res, err, sizeof(err)) < 0
	   && strstr(err, "clique 7") && strstr(err, "clique 8"),
	   "two cliques on one node: not ready, both named (%s)", err);
	ok(rdzv_mnnvl_check(root, "/nonexistent/libnvidia-ml.so.1", &res, err, sizeof(err)) < 0
	   && strstr(err, "no NVML"), "no NVML: not ready, said (%s)", err);
}

/* ---- the profile directive ---- */

struct mem_file {
	const char *name, *text;
};

static int mem_read(const void *ctx, const char *name, char **text, size_t *len, char *where,
                    size_t wherelen, char *err, size_t errlen)
{
	const struct mem_file *f;

	for (f = ctx; f->name; f++)
		if (strcmp(f->name, name) == 0) {
			snprintf(where, wherelen, "%s.profile", name);
			*text = strdup(f->text);
			*len = strlen(f->text);
			return *text ? 0 : -1;
		}
	snprintf(err, errlen, "%s.profile: no such profile", name);
	return -1;
}

static int parse(const char *text, char *err, size_t errlen)
{
	struct rdzv_profile_doc *doc = NULL;
	int r;

	err[0] = '\0';
	r = rdzv_profile_parse(text, strlen(text), "t.profile", &doc, NULL, err, errlen);
	rdzv_profile_doc_destroy(doc);
	return r;
}

static void test_directive(void)
{
	static const struct mem_file files[] = {
		{ "mnnvl", "description GB200\nenforce NCCL_MNNVL_ENABLE=1\nrequire mnnvl\n" },
		{ "child", "include mnnvl\ndefault NCCL_DEBUG=WARN\n" },
		{ "plain", "default NCCL_DEBUG=INFO\n" },
		{ NULL, NULL },
	};
	struct rdzv_profile_source src = { mem_read, files };
	struct rdzv_profile_pick pick;
	struct rdzv_profile_needs needs;
	struct rdzv_envset *set;
	struct rdzv_profile *p = NULL;
	char err[1024];

	ok(parse("default NCCL_DEBUG=WARN\nrequire nvlink\n", err, sizeof(err)) < 0
	   && strcmp(err, "t.profile:2: unknown requirement 'nvlink' (expected: mnnvl)") == 0,
	   "an unknown requirement: file:line (%s)", err);
	ok(parse("require\n", err, sizeof(err)) < 0
	   && strstr(err, "t.profile:1: expected 'require mnnvl'"), "require without a word (%s)", err);
	ok(parse("require mnnvl now\n", err, sizeof(err)) < 0
	   && strstr(err, "t.profile:1: expected 'require mnnvl'"), "require with two words (%s)", err);
	ok(parse("require mnnvl\n\nrequire mnnvl\n", err, sizeof(err)) < 0
	   && strcmp(err, "t.profile:3: require mnnvl already on line 1") == 0,
	   "require twice: both lines named (%s)", err);
	ok(parse("required mnnvl\n", err, sizeof(err)) < 0 && strstr(err, "known, require, multinode)"),
	   "a misspelt directive lists require among the valid ones (%s)", err);
	ok(parse("require mnnvl\nenforce NCCL_MNNVL_ENABLE=1\n", err, sizeof(err)) == 0,
	   "require mnnvl parses %s", err);

	ok(rdzv_profile_load(&src, "child", &p, NULL, err, sizeof(err)) == 0 && p->require_mnnvl
	   && strcmp(p->require_mnnvl_where, "mnnvl.profile:3") == 0,
	   "an include's requirement holds in the including profile, where named");
	rdzv_profile_destroy(p);

	set = rdzv_envset_create();
	ok(set && rdzv_profile_pick(NULL, NULL, "mnnvl", NULL, &pick, err, sizeof(err)) == 0
	   && rdzv_profile_resolve_needs(&pick, &src, set, &needs, NULL, err, sizeof(err)) == 0
	   && needs.mnnvl && strcmp(needs.mnnvl_where, "mnnvl.profile:3 (profile mnnvl)") == 0,
	   "the site default's requirement applies (%s)", needs.mnnvl_where);
	rdzv_envset_destroy(set);
	set = rdzv_envset_create();
	ok(set && rdzv_profile_pick("plain", NULL, "mnnvl", NULL, &pick, err, sizeof(err)) == 0
	   && rdzv_profile_resolve_needs(&pick, &src, set, &needs, NULL, err, sizeof(err)) == 0
	   && needs.mnnvl, "another profile chosen: the default's requirement still applies");
	rdzv_envset_destroy(set);
	set = rdzv_envset_create();
	ok(set && rdzv_profile_pick("none", NULL, "mnnvl", NULL, &pick, err, sizeof(err)) == 0
	   && rdzv_profile_resolve_needs(&pick, &src, set, &needs, NULL, err, sizeof(err)) == 0
	   && needs.mnnvl, "--nccl-profile=none: the default's requirement still applies");
	rdzv_envset_destroy(set);
	set = rdzv_envset_create();
	ok(set && rdzv_profile_pick("child", NULL, "plain", NULL, &pick, err, sizeof(err)) == 0
	   && rdzv_profile_resolve_needs(&pick, &src, set, &needs, NULL, err, sizeof(err)) == 0
	   && needs.mnnvl && strstr(needs.mnnvl_where, "(profile child)"),
	   "a user's chosen profile may ask for it");
	rdzv_envset_destroy(set);
	set = rdzv_envset_create();
	ok(set && rdzv_profile_pick(NULL, NULL, "plain", NULL, &pick, err, sizeof(err)) == 0
	   && rdzv_profile_resolve_needs(&pick, &src, set, &needs, NULL, err, sizeof(err)) == 0
	   && !needs.mnnvl, "a profile without require: nothing required");
	rdzv_envset_destroy(set);
}

static void test_path_node(void)
{
	char out[64], err[256];

	ok(rdzv_path_node("/x/%n/libnvidia-ml.so.1", "n2", out, sizeof(out), err, sizeof(err)) == 0
	   && strcmp(out, "/x/n2/libnvidia-ml.so.1") == 0, "%%n is the node name: %s", out);
	ok(rdzv_path_node("/x/100%%/lib", "n2", out, sizeof(out), err, sizeof(err)) == 0
	   && strcmp(out, "/x/100%/lib") == 0, "%%%% is a '%%'");
	ok(rdzv_path_node("/x/%n/lib", "../etc", out, sizeof(out), err, sizeof(err)) < 0
	   && strstr(err, "cannot stand for %n"), "a node name with '/' is refused (%s)", err);
	ok(rdzv_path_node("/x/%n/lib", "", out, sizeof(out), err, sizeof(err)) < 0,
	   "no node name for %%n: refused (%s)", err);
	ok(rdzv_path_node("/x/%s/lib", "n1", out, sizeof(out), err, sizeof(err)) < 0,
	   "a stray %% is refused (%s)", err);
	ok(rdzv_path_node("/a/very/long/path/that/does/not/fit/in/sixty/four/bytes/at/all/%n", "n1", out,
	                  sizeof(out), err, sizeof(err)) < 0, "too long: refused (%s)", err);
}

int main(void)
{
	const char *d = getenv("RDZV_NVML_DOUBLE_DIR");
	char cwd[256];

	if (!d || !*d)
		d = "tests/nvml-double/.libs";
	if (d[0] == '/')
		snprintf(lib, sizeof(lib), "%s/libnvml-double.so", d);
	else if (getcwd(cwd, sizeof(cwd)))
		snprintf(lib, sizeof(lib), "%s/%s/libnvml-double.so", cwd, d);
	if (access(lib, R_OK) != 0)
		skip_all("the NVML double is not built (make check builds it)");
	temp_dir(root, sizeof(root), "test-mnnvl");
	snprintf(devdir, sizeof(devdir), "%s/dev/nvidia-caps-imex-channels", root);
	snprintf(data, sizeof(data), "%s/nvml.txt", root);
	setenv("RDZV_NVML_DOUBLE", data, 1);
	test_channels();
	test_check();
	test_directive();
	test_path_node();
	clear_dev();
	unlink(data);
	rmdir(root);
	return done_testing();
}

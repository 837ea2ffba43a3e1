/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-profile-dir: profiles are read from the admin's directory only, and
 * refused (with the reason) when anyone else could have written them.
 * Works in a scratch directory under /run when it may (root: every ancestor
 * is root's and not writable by others), else under $top_builddir (not /tmp:
 * a directory under a world-writable one is rightly refused), owned by
 * whoever runs the test, which is passed as the trusted owner. */
#include "config.h"
#include "profile.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[PATH_MAX], outside[PATH_MAX + 16];

static void put(const char *base, const char *name, const char *text, mode_t mode)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", base, name);
	unlink(path);
	if (!(f = fopen(path, "w"))) {
		diag("cannot write %s: %s", path, strerror(errno));
		return;
	}
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

static void link_to(const char *target, const char *name)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	if (symlink(target, path) < 0)
		diag("symlink %s: %s", path, strerror(errno));
}

static int try_read(struct rdzv_profile_dir *d, const char *name, char *err, size_t errlen)
{
	char *text = NULL, where[PATH_MAX];
	size_t len;
	int r;

	err[0] = '\0';
	r = rdzv_profile_dir_read(d, name, &text, &len, where, sizeof(where),
	                          err, errlen);
	free(text);
	return r;
}

static void rm_rf(const char *path)
{
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	if (system(cmd) != 0)
		diag("cleanup of %s failed", path);
}

int main(void)
{
	const char *top = getenv("top_builddir");
	struct rdzv_profile_dir d;
	char err[1024], big[RDZV_PROFILE_FILE_MAX + 2], **names = NULL, path[PATH_MAX + 64];
	uid_t me = getuid();
	int n, i;

	snprintf(dir, sizeof(dir), "/run/rdzv-profile-dir.%d", (int)getpid());
	if (mkdir(dir, 0755) < 0) {
		snprintf(dir, sizeof(dir), "%s/tests/unit/profile-dir.%d", top ? top : ".",
		         (int)getpid());
		if (mkdir(dir, 0755) < 0)
			skip_all("cannot create a scratch directory under /run or top_builddir");
	}
	snprintf(outside, sizeof(outside), "%s.outside", dir);
	if (mkdir(outside, 0755) < 0)
		skip_all("cannot create a scratch directory beside the profile directory");
	chmod(dir, 0755);
	chmod(outside, 0755);
	if (rdzv_profile_dir_open(&d, dir, me, err, sizeof(err)) < 0) {
		rm_rf(dir);
		rm_rf(outside);
		/* e.g. a build tree under a group-writable home directory */
		printf("1..0 # SKIP the build tree is not a trusted path: %s\n", err);
		return 0;
	}

	/* the directory */
	ok(rdzv_profile_dir_open(&d, "relative/dir", me, err, sizeof(err)) < 0
	   && strstr(err, "not an absolute path"), "a relative directory is refused (%s)", err);
	ok(rdzv_profile_dir_open(&d, "/nonexistent/rdzv", me, err, sizeof(err)) < 0,
	   "a missing directory is refused (%s)", err);
	ok(rdzv_profile_dir_open(&d, "/tmp", me, err, sizeof(err)) < 0 && strstr(err, "others"),
	   "a world-writable directory is refused (%s)", err);
	chmod(dir, 0775);
	ok(rdzv_profile_dir_open(&d, dir, me, err, sizeof(err)) < 0 && strstr(err, "group"),
	   "a group-writable directory is refused (%s)", err);
	chmod(dir, 0755);
	snprintf(path, sizeof(path), "%s/sub", dir);
	mkdir(path, 0755);
	chmod(dir, 0777);
	ok(rdzv_profile_dir_open(&d, path, me, err, sizeof(err)) < 0 && strstr(err, "directory"),
	   "a directory under a world-writable one is refused (%s)", err);
	chmod(dir, 0755);
	rmdir(path);
	put(dir, "plain-file", "", 0644);
	snprintf(path, sizeof(path), "%s/plain-file", dir);
	ok(rdzv_profile_dir_open(&d, path, me, err, sizeof(err)) < 0 && strstr(err, "not a directory"),
	   "a file as directory is refused (%s)", err);
	if (me == 0) {
		if (chown(dir, 1, 1) < 0)
			diag("chown: %s", strerror(errno));
		ok(rdzv_profile_dir_open(&d, dir, 0, err, sizeof(err)) < 0 && strstr(err, "uid 1"),
		   "a directory owned by another user is refused (%s)", err);
		if (chown(dir, 0, 0) < 0)
			diag("chown: %s", strerror(errno));
	}
	ok(rdzv_profile_dir_open(&d, dir, me, err, sizeof(err)) == 0, "the scratch directory opens");

	/* files */
	put(dir, "good.profile", "description good\ndefault NCCL_IB_GID_INDEX=3\n", 0644);
	put(dir, "gw.profile", "default A=1\n", 0664);
	put(dir, "ow.profile", "default A=1\n", 0646);
	put(outside, "evil.profile", "enforce NCCL_IB_HCA=evil\n", 0644);
	link_to("good.profile", "alias.profile");
	snprintf(path, sizeof(path), "%s/evil.profile", outside);
	link_to(path, "escape.profile");
	snprintf(path, sizeof(path), "../%s/good.profile", strrchr(dir, '/') + 1);
	link_to(path, "roundabout.profile");
	link_to("nowhere.profile", "dangling.profile");
	snprintf(path, sizeof(path), "%s/dir.profile", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/fifo.profile", dir);
	mkfifo(path, 0644);
	memset(big, '#', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	put(dir, "big.profile", big, 0644);
	put(dir, ".hidden.profile", "default A=1\n", 0644);
	put(dir, "README", "not a profile\n", 0644);
	put(dir, "good.profile~", "backup\n", 0644);
	put(dir, "bad name.profile", "x\n", 0644);

	i = try_read(&d, "good", err, sizeof(err));
	ok(i == 0, "a root-owned 0644 profile is read%s%s", err[0] ? ": " : "", err);
	ok(try_read(&d, "gw", err, sizeof(err)) < 0 && strstr(err, "writable by its group"),
	   "a group-writable profile is refused (%s)", err);
	ok(try_read(&d, "ow", err, sizeof(err)) < 0 && strstr(err, "writable by others"),
	   "a world-writable profile is refused (%s)", err);
	i = try_read(&d, "alias", err, sizeof(err));
	ok(i == 0, "a symlink to a profile in the same directory is followed%s%s",
	   err[0] ? ": " : "", err);
	i = try_read(&d, "roundabout", err, sizeof(err));
	ok(i == 0, "a symlink that leaves and comes back is judged by where it lands%s%s",
	   err[0] ? ": " : "", err);
	ok(try_read(&d, "escape", err, sizeof(err)) < 0 && strstr(err, "leaves the profiles directory"),
	   "a symlink out of the directory is refused (%s)", err);
	ok(try_read(&d, "dangling", err, sizeof(err)) < 0 && strstr(err, "does not resolve"),
	   "a dangling symlink is refused (%s)", err);
	ok(try_read(&d, "dir", err, sizeof(err)) < 0 && strstr(err, "not a regular file"),
	   "a directory named NAME.profile is refused (%s)", err);
	ok(try_read(&d, "fifo", err, sizeof(err)) < 0 && strstr(err, "not a regular file"),
	   "a FIFO is refused without blocking (%s)", err);
	ok(try_read(&d, "big", err, sizeof(err)) < 0 && strstr(err, "larger than"),
	   "an oversized profile is refused (%s)", err);
	ok(try_read(&d, "../x", err, sizeof(err)) < 0 && strstr(err, "'/'"),
	   "a traversal name is refused before any open (%s)", err);
	ok(try_read(&d, ".hidden", err, sizeof(err)) < 0 && strstr(err, "starts with '.'"),
	   "a hidden file is refused (%s)", err);
	ok(try_read(&d, "missing", err, sizeof(err)) < 0 && strstr(err, "no such profile"),
	   "a missing profile (%s)", err);
	if (me == 0) {
		snprintf(path, sizeof(path), "%s/good.profile", dir);
		if (chown(path, 1, 1) < 0)
			diag("chown: %s", strerror(errno));
		ok(try_read(&d, "good", err, sizeof(err)) < 0 && strstr(err, "owned by uid 1"),
		   "a profile owned by another user is refused (%s)", err);
		if (chown(path, 0, 0) < 0)
			diag("chown: %s", strerror(errno));
	}

	n = rdzv_profile_dir_names(&d, &names, err, sizeof(err));
	{
		char all[1024] = "";

		for (i = 0; i < n; i++) {
			strncat(all, names[i], sizeof(all) - strlen(all) - 2);
			strncat(all, " ", sizeof(all) - strlen(all) - 1);
		}
		is_str(all, "alias big dangling dir escape fifo good gw ow roundabout ",
		       "the listing has NAME.profile names only, sorted (no hidden, backup, README)");
	}
	rdzv_profile_names_free(names, n);

	/* through the loader: errors name the file */
	{
		struct rdzv_profile_source src = { rdzv_profile_dir_read, &d };
		struct rdzv_profile *p = NULL;

		put(dir, "inc.profile", "include escape\n", 0644);
		ok(rdzv_profile_load(&src, "inc", &p, NULL, err, sizeof(err)) < 0 && !p
		   && strstr(err, "leaves the profiles directory") && strstr(err, "inc.profile:1"),
		   "an include through an escaping symlink is refused, naming the line (%s)", err);
		put(dir, "syntax.profile", "description x\n\nbogus line\n", 0644);
		ok(rdzv_profile_load(&src, "syntax", &p, NULL, err, sizeof(err)) < 0
		   && strstr(err, "/syntax.profile:3: unknown directive"),
		   "a malformed profile is named by path:line (%s)", err);
		ok(rdzv_profile_load(&src, "good", &p, NULL, err, sizeof(err)) == 0 && p
		   && p->n == 1, "a good profile loads from the directory");
		rdzv_profile_destroy(p);
	}

	rm_rf(dir);
	rm_rf(outside);
	return done_testing();
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/profile/: site NCCL profiles: the files, their variables, which one
 * applies. Uses lib/common/. */
/* profile_dir.c: the names a profile may have, and reading profiles from
 * the admin's directory, and only from there. srun and slurmstepd's user_init read these files as the job's
 * user, so an attacker is any user who can write somewhere on the path;
 * every check below closes one way of substituting a file. */
#include "config.h"
#include "profile_dir.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- names: what a profile file may be called ---- */

int rdzv_profile_name_check(const char *name, char *err, size_t errlen)
{
	size_t i, len;

	if (!name || !*name)
		return rdzv_err(err, errlen, "empty profile name");
	len = strlen(name);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (!isalnum(c) && c != '_' && c != '-' && c != '.' && c != '+')
			break;
	}
	if (i < len) {
		unsigned char c = (unsigned char)name[i];

		if (c < 0x20 || c >= 0x7f)
			return rdzv_err(err, errlen, "profile name has a control or non-ASCII byte "
			                "(0x%02x at offset %zu)", c, i);
		if (c == '/')
			return rdzv_err(err, errlen, "profile name '%.64s' contains '/': profiles are "
			                "names, not paths", name);
		return rdzv_err(err, errlen, "profile name '%.64s' contains '%c' (allowed: letters, "
		                "digits, '_', '-', '.', '+')", name, c);
	}
	if (len > RDZV_PROFILE_NAME_MAX)
		return rdzv_err(err, errlen, "profile name '%.32s...' is longer than %d bytes", name,
		                RDZV_PROFILE_NAME_MAX);
	if (name[0] == '.')
		return rdzv_err(err, errlen, "profile name '%.64s' starts with '.' (hidden files "
		                "and '..' are not profiles)", name);
	if (name[0] == '-')
		return rdzv_err(err, errlen, "profile name '%.64s' starts with '-'", name);
	if (strcmp(name, "list") == 0 || strcmp(name, "none") == 0)
		return rdzv_err(err, errlen, "'%s' is a reserved word, not a profile name", name);
	return 0;
}

/* Owned by the trusted owner or root, not writable by group or others. */
static int stat_trusted(const struct stat *st, uid_t owner, const char *what, const char *path,
                        char *err, size_t errlen)
{
	if (st->st_uid != owner && st->st_uid != 0)
		return rdzv_err(err, errlen, "%s %s is owned by uid %u, not root: refused", what,
		                path, (unsigned)st->st_uid);
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return rdzv_err(err, errlen, "%s %s is writable by %s: refused", what, path,
		                (st->st_mode & S_IWOTH) ? "others" : "its group");
	return 0;
}

int rdzv_profile_dir_open(struct rdzv_profile_dir *d, const char *path, uid_t owner,
                          char *err, size_t errlen)
{
	char real[PATH_MAX], part[PATH_MAX];
	struct stat st;
	size_t i, len;

	memset(d, 0, sizeof(*d));
	if (!path || path[0] != '/')
		return rdzv_err(err, errlen, "profiles directory '%.64s' is not an absolute path",
		                path ? path : "");
	if (!realpath(path, real))
		return rdzv_err(err, errlen, "profiles directory %s: %s", path, strerror(errno));
	if (stat(real, &st) < 0)
		return rdzv_err(err, errlen, "profiles directory %s: %s", real, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return rdzv_err(err, errlen, "profiles directory %s is not a directory", real);
	if (stat_trusted(&st, owner, "profiles directory", real, err, errlen) < 0)
		return -1;
	/* Each directory above, like sshd's StrictModes: whoever can rename
	 * an ancestor can swap the whole tree. */
	len = strlen(real);
	for (i = 1; i < len; i++) {
		if (real[i] != '/')
			continue;
		memcpy(part, real, i);
		part[i] = '\0';
		if (stat(part, &st) < 0)
			return rdzv_err(err, errlen, "%s: %s", part, strerror(errno));
		if (stat_trusted(&st, owner, "directory", part, err, errlen) < 0)
			return -1;
	}
	if (stat("/", &st) == 0 && stat_trusted(&st, owner, "directory", "/", err, errlen) < 0)
		return -1;
	if (rdzv_strlcpy(d->path, real, sizeof(d->path)) < 0)
		return rdzv_err(err, errlen, "profiles directory path too long");
	d->owner = owner;
	return 0;
}

/* The file inside the directory that path designates, following one
 * symlink level by realpath: returns an O_NOFOLLOW descriptor of a file
 * whose canonical path is DIR/something, or -1. */
static int open_inside(const struct rdzv_profile_dir *d, const char *path, char *err,
                       size_t errlen)
{
	char real[PATH_MAX];
	size_t dl = strlen(d->path);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd >= 0)
		return fd;
	if (errno == ENOENT)
		return rdzv_err(err, errlen, "%s: no such profile", path);
	if (errno == EACCES)
		return rdzv_err(err, errlen, "%s: permission denied (profiles are read as the job's "
		                "user: make them readable by all, e.g. mode 0644)", path);
	if (errno != ELOOP)
		return rdzv_err(err, errlen, "%s: %s", path, strerror(errno));
	/* A symlink: allowed only when it stays inside the directory (an alias
	 * such as default.profile -> site-base.profile). */
	if (!realpath(path, real))
		return rdzv_err(err, errlen, "%s: symlink does not resolve: %s", path,
		                strerror(errno));
	if (strncmp(real, d->path, dl) != 0 || real[dl] != '/' || strchr(real + dl + 1, '/'))
		return rdzv_err(err, errlen, "%s: symlink to %s leaves the profiles directory: "
		                "refused", path, real);
	fd = open(real, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return rdzv_err(err, errlen, "%s (-> %s): %s", path, real, strerror(errno));
	return fd;
}

int rdzv_profile_dir_read(const void *dir, const char *name, char **text, size_t *len,
                          char *where, size_t wherelen, char *err, size_t errlen)
{
	const struct rdzv_profile_dir *d = dir;
	char path[PATH_MAX], why[256];
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	int fd = -1, rv = -1;

	*text = NULL;
	*len = 0;
	if (rdzv_profile_name_check(name, why, sizeof(why)) < 0)
		return rdzv_err(err, errlen, "%s", why);
	if (snprintf(path, sizeof(path), "%s/%s%s", d->path, name, RDZV_PROFILE_SUFFIX)
	    >= (int)sizeof(path))
		return rdzv_err(err, errlen, "profile path too long");
	if (where && wherelen)
		snprintf(where, wherelen, "%s", path);
	if ((fd = open_inside(d, path, err, errlen)) < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		rdzv_err(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		rdzv_err(err, errlen, "%s is not a regular file: refused", path);
		goto fail;
	}
	if (stat_trusted(&st, d->owner, "profile", path, err, errlen) < 0)
		goto fail;
	if (st.st_size > RDZV_PROFILE_FILE_MAX) {
		rdzv_err(err, errlen, "%s is larger than %d bytes: refused", path,
		         RDZV_PROFILE_FILE_MAX);
		goto fail;
	}
	if (!(buf = malloc(RDZV_PROFILE_FILE_MAX + 2))) {
		rdzv_err(err, errlen, "out of memory");
		goto fail;
	}
	/* Read to EOF with a cap: the size may change under us. */
	for (;;) {
		ssize_t n = read(fd, buf + got, RDZV_PROFILE_FILE_MAX + 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rdzv_err(err, errlen, "%s: %s", path, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		got += (size_t)n;
		if (got > RDZV_PROFILE_FILE_MAX) {
			rdzv_err(err, errlen, "%s is larger than %d bytes: refused", path,
			         RDZV_PROFILE_FILE_MAX);
			goto fail;
		}
	}
	buf[got] = '\0';
	*text = buf;
	*len = got;
	buf = NULL;
	rv = 0;
fail:
	free(buf);
	if (fd >= 0)
		close(fd);
	return rv;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void rdzv_profile_names_free(char **names, int n)
{
	int i;

	if (!names)
		return;
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int rdzv_profile_dir_names(const struct rdzv_profile_dir *d, char ***names, char *err,
                           size_t errlen)
{
	const size_t sl = sizeof(RDZV_PROFILE_SUFFIX) - 1;
	DIR *dir;
	struct dirent *de;
	char **v = NULL;
	int n = 0, cap = 0;

	*names = NULL;
	if (!(dir = opendir(d->path)))
		return rdzv_err(err, errlen, "profiles directory %s: %s", d->path, strerror(errno));
	while ((de = readdir(dir))) {
		size_t l = strlen(de->d_name);
		char name[RDZV_PROFILE_NAME_MAX + 1];

		if (l <= sl || strcmp(de->d_name + l - sl, RDZV_PROFILE_SUFFIX) != 0
		    || l - sl > RDZV_PROFILE_NAME_MAX)
			continue;
		memcpy(name, de->d_name, l - sl);
		name[l - sl] = '\0';
		if (rdzv_profile_name_check(name, NULL, 0) < 0)
			continue;
		if (n == cap) {
			int nc = cap ? cap * 2 : 16;
			char **nv = realloc(v, (size_t)nc * sizeof(*nv));

			if (!nv)
				goto oom;
			v = nv;
			cap = nc;
		}
		if (!(v[n] = strdup(name)))
			goto oom;
		n++;
	}
	closedir(dir);
	if (n > 1)
		qsort(v, (size_t)n, sizeof(*v), cmp_str);
	*names = v;
	return n;
oom:
	closedir(dir);
	rdzv_profile_names_free(v, n);
	return rdzv_err(err, errlen, "out of memory");
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/gpu/: the GPU vendors' libraries (NVML, ROCm SMI, opened at run time),
 * the NVLink fabric, the kernel's GPU fault lines (Xid). Uses lib/common/. */
/* mnnvl.c: the node's readiness for multi-node NVLink (see mnnvl.h). */
#define _GNU_SOURCE 1 /* O_DIRECTORY, O_NOFOLLOW, fdopendir */
#include "config.h"
#include "mnnvl.h"
#include "fabric.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHANNEL_MAX 1048575u /* a minor number */

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/* "channelN" with N a decimal minor number: 1, else 0. */
static int channel_number(const char *name, unsigned *n)
{
	uint64_t v;

	if (strncmp(name, "channel", 7) != 0 || !name[7]
	    || rdzv_parse_u64(name + 7, 0, CHANNEL_MAX, &v) < 0)
		return 0;
	*n = (unsigned)v;
	return 1;
}

int rdzv_imex_channels(const char *root, char *list, size_t len, char *err, size_t errlen)
{
	char path[4096], other[160] = "";
	unsigned *nums = NULL;
	size_t n = 0, cap = 0, off = 0, i;
	struct dirent *de;
	DIR *dir = NULL;
	int fd, rv = -1;

	if (len)
		list[0] = '\0';
	if (snprintf(path, sizeof(path), "%s%s", root && strcmp(root, "/") != 0 ? root : "",
	             RDZV_IMEX_DIR) >= (int)sizeof(path))
		return rdzv_err(err, errlen, "IMEX channel path under '%.64s...' too long", root);
	/* The root is the admin's (plugstack.conf); the last component is
	 * not followed if it is a link. */
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return rdzv_err(err, errlen, "no IMEX channel: %s %s (IMEX channels are made per job "
		                "by Slurm's switch/nvidia_imex or by a prolog)", path,
		                errno == ENOENT ? "does not exist"
		                : errno == ENOTDIR || errno == ELOOP ? "is not a directory"
		                : strerror(errno));
	if (!(dir = fdopendir(fd))) {
		rdzv_err(err, errlen, "no IMEX channel: cannot read %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	while ((de = readdir(dir))) {
		struct stat st;
		unsigned c;

		if (de->d_name[0] == '.')
			continue;
		if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (!channel_number(de->d_name, &c) || !S_ISCHR(st.st_mode)) {
			if (!other[0])
				snprintf(other, sizeof(other), "%.64s is %s", de->d_name,
				         S_ISREG(st.st_mode) ? "a regular file"
				         : S_ISLNK(st.st_mode) ? "a symbolic link"
				         : S_ISDIR(st.st_mode) ? "a directory"
				         : S_ISCHR(st.st_mode) ? "not named channelN" : "not a device");
			continue;
		}
		/* Only channels the job's user can open (this hook runs with the
		 * user's effective ids): another job's channel is not ours to hand
		 * on. */
		if (faccessat(dirfd(dir), de->d_name, R_OK | W_OK, AT_EACCESS) != 0) {
			if (!other[0])
				snprintf(other, sizeof(other), "%.64s is not open to the job's user",
				         de->d_name);
			continue;
		}
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			unsigned *nv = realloc(nums, ncap * sizeof(*nv));

			if (!nv) {
				rdzv_err(err, errlen, "out of memory listing %s", path);
				goto fail;
			}
			nums = nv;
			cap = ncap;
		}
		nums[n++] = c;
	}
	if (n == 0) {
		rdzv_err(err, errlen, "no IMEX channel: %s has no channelN character device%s%s "
		         "(IMEX channels are made per job by Slurm's switch/nvidia_imex or by a "
		         "prolog)", path, other[0] ? ": " : "", other);
		goto fail;
	}
	qsort(nums, n, sizeof(*nums), cmp_uint);
	/* Listed one by one, never "all" (which would widen what a container
	 * sees to channels this job was not given); at most RDZV_IMEX_LIST_MAX. */
	if (n > RDZV_IMEX_LIST_MAX) {
		rdzv_err(err, errlen, "%s holds %zu channels open to the job's user, more than the "
		         "%u one job is given", path, n, RDZV_IMEX_LIST_MAX);
		goto fail;
	}
	for (i = 0; i < n && off < len; i++) {
		int k = snprintf(list + off, len - off, "%s%u", i ? "," : "", nums[i]);

		if (k < 0 || (size_t)k >= len - off) {
			rdzv_err(err, errlen, "IMEX channel list longer than %zu bytes", len);
			goto fail;
		}
		off += (size_t)k;
	}
	rv = (int)(n > 1000000 ? 1000000 : n);
fail:
	free(nums);
	closedir(dir);
	return rv;
}

int rdzv_mnnvl_check_once(const char *root, struct rdzv_fabric_once *o, const char *library,
                          struct rdzv_mnnvl_result *res, char *err, size_t errlen)
{
	const struct rdzv_fabric *f;
	unsigned i;
	int n;

	memset(res, 0, sizeof(*res));
	if ((n = rdzv_imex_channels(root, res->channels, sizeof(res->channels), err, errlen)) < 0)
		return -1;
	res->nchannels = n;
	if (!(f = rdzv_fabric_read_once(o, library, err, errlen)))
		return -1;
	if (rdzv_fabric_mnnvl_ready(f, err, errlen) < 0)
		return -1;
	for (i = 0; i < f->n; i++)
		res->ngpus += !f->gpu[i].skipped;
	(void)rdzv_fabric_domain_name(f, res->domain, sizeof(res->domain), err, errlen);
	return 0;
}

int rdzv_mnnvl_check(const char *root, const char *library, struct rdzv_mnnvl_result *res,
                     char *err, size_t errlen)
{
	struct rdzv_fabric_once o;
	int rv;

	memset(&o, 0, sizeof(o));
	rv = rdzv_mnnvl_check_once(root, &o, library, res, err, errlen);
	rdzv_fabric_once_free(&o);
	return rv;
}

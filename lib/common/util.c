/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/common/: what every folder uses: strings, numbers and errors, a
 * variable's precedence (envset), JSON. Uses no other folder. */
#include "config.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int rdzv_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

void rdzv_print_version(const char *prog)
{
	printf("%s (" PACKAGE_NAME ") " PACKAGE_VERSION "\n"
	       "License GPL-2.0-or-later: GNU GPL version 2 or later "
	       "<https://gnu.org/licenses/gpl.html>.\n"
	       "This is free software: you are free to change and redistribute it.\n"
	       "There is NO WARRANTY, to the extent permitted by law.\n", prog);
}

int rdzv_parse_u64n(const char *s, size_t n, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!s || n == 0 || n > 20)
		return -1;
	for (i = 0; i < n; i++) {
		unsigned d;

		if (s[i] < '0' || s[i] > '9')
			return -1;
		d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int rdzv_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (!s)
		return -1;
	return rdzv_parse_u64n(s, strlen(s), min, max, out);
}

uint64_t rdzv_fnv1a64(uint64_t h, const void *s, size_t n)
{
	const unsigned char *p = s;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

int rdzv_read_u32(const char **p, uint32_t max, uint32_t *v)
{
	uint64_t x;
	size_t n = strspn(*p, "0123456789");

	if (rdzv_parse_u64n(*p, n, 0, max, &x) < 0)
		return -1;
	*v = (uint32_t)x;
	*p += n;
	return 0;
}

int rdzv_read_range(const char **p, uint32_t max, uint32_t *a, uint32_t *b)
{
	if (rdzv_read_u32(p, max, a) < 0)
		return -1;
	*b = *a;
	if (**p != '-')
		return 0;
	(*p)++;
	return rdzv_read_u32(p, max, b) < 0 || *b <= *a ? -1 : 0;
}

int rdzv_path_wants_node(const char *tmpl)
{
	const char *p;

	for (p = tmpl; p && *p; p++) {
		if (p[0] == '%' && p[1] == 'n')
			return 1;
		if (p[0] == '%' && p[1] == '%')
			p++;
	}
	return 0;
}

int rdzv_path_node(const char *tmpl, const char *node, char *out, size_t len, char *err,
                   size_t errlen)
{
	size_t used = 0;
	const char *p;

	for (p = tmpl; *p; p++) {
		const char *add;
		char one[2] = { *p, '\0' };
		size_t al;

		if (p[0] == '%' && p[1] == 'n') {
			if (!node || !*node)
				return rdzv_err(err, errlen, "%s: no node name for %%n", tmpl);
			if (strchr(node, '/') || strcmp(node, "..") == 0 || strcmp(node, ".") == 0)
				return rdzv_err(err, errlen, "node name '%.64s' cannot stand for %%n in a "
				                "path", node);
			add = node;
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			add = "%";
			p++;
		} else if (p[0] == '%') {
			return rdzv_err(err, errlen, "%.200s: '%%' must be followed by n or %%", tmpl);
		} else {
			add = one;
		}
		al = strlen(add);
		if (used + al >= len)
			return rdzv_err(err, errlen, "%.64s...: path longer than %zu bytes", tmpl, len - 1);
		memcpy(out + used, add, al);
		used += al;
	}
	if (len)
		out[used] = '\0';
	return 0;
}

int rdzv_strlcpy(char *dst, const char *src, size_t dstlen)
{
	size_t n = strlen(src);

	if (n >= dstlen) {
		if (dstlen)
			dst[0] = '\0';
		return -1;
	}
	memcpy(dst, src, n + 1);
	return 0;
}

char *rdzv_read_head(const char *path, size_t max)
{
	FILE *f = fopen(path, "re");
	char *buf;
	size_t n;

	if (!f)
		return NULL;
	if (!(buf = malloc(max + 1))) {
		fclose(f);
		return NULL;
	}
	n = fread(buf, 1, max, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

const char *rdzv_envp_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);

	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

char *rdzv_text_printable(char *dst, size_t len, const char *src)
{
	size_t i;

	if (len == 0)
		return dst;
	for (i = 0; src && src[i] && i + 1 < len; i++)
		dst[i] = (unsigned char)src[i] < 0x20 || src[i] == 0x7f ? '?' : src[i];
	dst[i] = '\0';
	return dst;
}

int rdzv_host_name_ok(const char *s, size_t n)
{
	size_t i;

	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		      || c == '-' || c == '_' || c == '.'))
			return 0;
	}
	return 1;
}

long rdzv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void rdzv_realtime_in(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

size_t rdzv_put_u32(char *out, uint32_t v)
{
	char tmp[10];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

int rdzv_private_dir(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return rdzv_err(err, errlen, "cannot create %s: %s", path, strerror(errno));
	if (lstat(path, &st) < 0)
		return rdzv_err(err, errlen, "%s: %s", path, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return rdzv_err(err, errlen, "%s is a symbolic link", path);
	if (!S_ISDIR(st.st_mode))
		return rdzv_err(err, errlen, "%s is not a directory", path);
	if (st.st_uid != geteuid())
		return rdzv_err(err, errlen, "%s belongs to uid %lu, not to uid %lu", path,
		                (unsigned long)st.st_uid, (unsigned long)geteuid());
	if (st.st_mode & 077)
		return rdzv_err(err, errlen, "%s is open to others (mode %03o)", path,
		                (unsigned)(st.st_mode & 0777));
	return 0;
}

int rdzv_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
	/* PIDFD_NONBLOCK is 5.10+; the fd is only signalled through, and
	 * close-on-exec is what pidfd_open gives every pidfd. */
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

int rdzv_pidfd_signal(int pidfd, int sig)
{
#ifdef SYS_pidfd_send_signal
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
#else
	(void)pidfd;
	(void)sig;
	errno = ENOSYS;
	return -1;
#endif
}

ssize_t rdzv_read_small(const char *path, char *buf, size_t cap)
{
	int fd;
	ssize_t n, got = 0;

	if (cap == 0 || (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return -1;
	while ((size_t)got < cap - 1 && (n = read(fd, buf + got, cap - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return got;
}

int rdzv_stepd_node(char *buf, size_t len)
{
	/* slurmstepd's own environment, not the job's (spank_getenv): it sets
	 * SLURMD_NODENAME to slurmd's conf->node_name (slurmd -N included)
	 * when it reads slurmd's configuration, before any plugin is loaded
	 * (src/slurmd/slurmstepd/slurmstepd.c, 22.05 to 26.05). */
	const char *v = getenv("SLURMD_NODENAME"); /* rdzv: slurmstepd's own */

	buf[0] = '\0';
	if (!v || !rdzv_host_name_ok(v, strlen(v)) || rdzv_strlcpy(buf, v, len) < 0) {
		buf[0] = '\0';
		return -1;
	}
	return 0;
}

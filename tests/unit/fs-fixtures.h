/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fs-fixtures.h: the files the unit tests make for the code under test
 * to read (header only, after tap.h): a private temporary directory, a
 * file with a text, a directory with its parents, a PCI function in a fake
 * sysfs, and where a library double was built. A fixture that cannot be
 * made ends the test ("Bail out!"). */
#ifndef RDZV_FS_FIXTURES_H
#define RDZV_FS_FIXTURES_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* A fresh directory $TMPDIR/NAME.XXXXXX (else under /tmp) into buf. */
static inline void temp_dir(char *buf, size_t len, const char *name)
{
	const char *t = getenv("TMPDIR");

	snprintf(buf, len, "%s/%s.XXXXXX", t ? t : "/tmp", name);
	if (!mkdtemp(buf)) {
		printf("Bail out! mkdtemp\n");
		exit(1);
	}
}

/* FILE of a double into buf: in $VAR, else in DIR of the build tree (where
 * make check runs the tests), made absolute, as the readers take only an
 * absolute library path. */
static inline void double_path(char *buf, size_t len, const char *var, const char *dir,
                               const char *file)
{
	const char *d = getenv(var);
	char cwd[256];

	if (!d || !*d)
		d = dir;
	if (d[0] == '/')
		snprintf(buf, len, "%s/%s", d, file);
	else if (!getcwd(cwd, sizeof(cwd)))
		skip_all("no working directory");
	else
		snprintf(buf, len, "%s/%s/%s", cwd, d, file);
}

static inline void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		printf("Bail out! cannot write %s\n", path);
		exit(1);
	}
}

static inline void mkdirs(const char *path)
{
	char p[700], *s;

	snprintf(p, sizeof(p), "%s", path);
	for (s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0700);
			*s = '/';
		}
	if (mkdir(p, 0700) < 0 && errno != EEXIST) {
		printf("Bail out! mkdir %s\n", p);
		exit(1);
	}
}

/* ROOT/bus/pci/devices/BDF with its vendor and class files, as sysfs has
 * them ("0x1002\n", "0x038000\n"). */
static inline void pci_dev(const char *root, const char *bdf, const char *vendor,
                           const char *cls)
{
	char p[700];

	snprintf(p, sizeof(p), "%s/bus/pci/devices/%s", root, bdf);
	mkdirs(p);
	snprintf(p, sizeof(p), "%s/bus/pci/devices/%s/vendor", root, bdf);
	write_file(p, vendor);
	snprintf(p, sizeof(p), "%s/bus/pci/devices/%s/class", root, bdf);
	write_file(p, cls);
}

#endif

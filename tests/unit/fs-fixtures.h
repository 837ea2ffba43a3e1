/* fs-fixtures.h: the files the unit tests make for the code under test
 * to read (header only): a file with a text, a directory with its
 * parents, and a PCI function in a fake sysfs. A fixture that cannot be
 * made ends the test ("Bail out!"). */
#ifndef RDZV_FS_FIXTURES_H
#define RDZV_FS_FIXTURES_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

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

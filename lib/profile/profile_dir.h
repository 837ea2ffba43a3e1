/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/profile/: site NCCL profiles: the files, their variables, which one
 * applies. Uses lib/common/. */
/* profile_dir.h: the names a profile may have, and the admin's directory
 * the profiles are read from (profile_dir.c), and only from there. */
#ifndef RDZV_PROFILE_DIR_H
#define RDZV_PROFILE_DIR_H

#include <stddef.h>
#include <sys/types.h>

#define RDZV_PROFILE_NAME_MAX 63       /* bytes in a profile name */
#define RDZV_PROFILE_FILE_MAX 65536    /* bytes in one profile file */
#define RDZV_PROFILE_SUFFIX ".profile"

/* ---- names ---- */

/* A profile name as users and files spell it: 1-63 bytes of letters,
 * digits, '_', '-', '.', '+', not starting with '.' or '-', and not one of
 * the reserved words "list" and "none". Returns 0, or -1 with the reason
 * (the name is quoted only when printable). */
int rdzv_profile_name_check(const char *name, char *err, size_t errlen);

/* ---- the admin's directory ---- */

/* The admin's directory. Opened once; every file is read through it. */
struct rdzv_profile_dir {
	char path[1024];   /* canonical (realpath) */
	uid_t owner;       /* who must own the directory and files: root (0) */
};

/* Canonicalise path and check the directory and each directory above it:
 * owned by owner or root, not writable by group or others (a sticky
 * directory like /tmp is not enough: anyone could replace our entry).
 * Returns 0, or -1 with the reason. */
int rdzv_profile_dir_open(struct rdzv_profile_dir *d, const char *path, uid_t owner,
                          char *err, size_t errlen);

/* Read DIR/NAME.profile safely: NAME checked, the file opened with
 * O_NOFOLLOW; a symlink is followed only when its target resolves inside
 * DIR; the file must be a regular file owned by owner (or root), not
 * writable by group or others, and at most RDZV_PROFILE_FILE_MAX bytes.
 * Signature of rdzv_profile_source.read with ctx = the dir. */
int rdzv_profile_dir_read(const void *dir, const char *name, char **text, size_t *len,
                          char *where, size_t wherelen, char *err, size_t errlen);

/* The profile names in the directory (files NAME.profile with a valid
 * NAME), sorted. Returns the count (>= 0) with *names malloc'd (free with
 * rdzv_profile_names_free), or -1 with the reason. */
int rdzv_profile_dir_names(const struct rdzv_profile_dir *d, char ***names, char *err,
                           size_t errlen);
void rdzv_profile_names_free(char **names, int n);

#endif

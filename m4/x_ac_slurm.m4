# SPDX-License-Identifier: GPL-2.0-or-later
# X_AC_SLURM: find Slurm's spank.h (Debian ships no slurm.pc), learn the
# Slurm major the plugin is built for, and where plugins are installed.
AC_DEFUN([X_AC_SLURM], [
  AC_ARG_WITH([slurm],
    [AS_HELP_STRING([--with-slurm=PATH], [Slurm install prefix (headers in PATH/include)])],
    [SLURM_CPPFLAGS="-I$withval/include"], [SLURM_CPPFLAGS=""])
  save_CPPFLAGS="$CPPFLAGS"
  CPPFLAGS="$CPPFLAGS $SLURM_CPPFLAGS"
  AC_CHECK_HEADER([slurm/spank.h], [],
    [AC_MSG_ERROR([slurm/spank.h not found: install Slurm's development headers (Debian: libslurm-dev) or pass --with-slurm=PATH])])
  AC_CHECK_DECLS([spank_prepend_task_argv, slurm_spank_init_failure_mode], [], [],
    [[#include <slurm/spank.h>]])
  AC_MSG_CHECKING([Slurm major release])
  # From spank.h's own directory: 22.05+ spank.h includes slurm_version.h;
  # older majors define SLURM_VERSION_NUMBER in slurm.h only (20.11 has no
  # slurm_version.h, and another Slurm's would be found in its place).
  AC_COMPUTE_INT([slurm_vnum], [SLURM_VERSION_NUMBER], [[#include <slurm/spank.h>
#ifndef SLURM_VERSION_NUMBER
#include <slurm/slurm.h>
#endif]],
    [AC_MSG_ERROR([cannot read SLURM_VERSION_NUMBER])])
  SLURM_MAJOR=`printf '%d.%02d' $((slurm_vnum >> 16)) $(((slurm_vnum >> 8) & 255))`
  AC_MSG_RESULT([$SLURM_MAJOR])
  # Supported: 22.05 to 26.05 (compiled against each Debian libslurm-dev,
  # run on 22.05, 24.11 and 26.05). Older is refused; newer only warned
  # about: SPANK's API has been stable across majors, but it is untested.
  slurm_mm=$(( (slurm_vnum >> 16) * 100 + ((slurm_vnum >> 8) & 255) ))
  AS_IF([test -n "$SLURM_CPPFLAGS"], [slurm_where="$with_slurm/include"], [slurm_where="the system include path"])
  AS_IF([test "$slurm_mm" -lt 2205],
    [AC_MSG_ERROR([Slurm $SLURM_MAJOR (headers in $slurm_where) is not supported: spank-rdzv supports Slurm 22.05 to 26.05; install a newer libslurm-dev or pass --with-slurm=PATH of a supported Slurm])])
  AS_IF([test "$slurm_mm" -gt 2605],
    [AC_MSG_WARN([Slurm $SLURM_MAJOR is newer than the tested range, Slurm 22.05 to 26.05: building anyway; run the test suite against it before deploying])])
  CPPFLAGS="$save_CPPFLAGS"
  AC_ARG_WITH([slurm-plugindir],
    [AS_HELP_STRING([--with-slurm-plugindir=DIR], [where rdzv.so goes (default: LIBDIR/slurm)])],
    [SLURM_PLUGINDIR="$withval"], [SLURM_PLUGINDIR='${libdir}/slurm'])
  AC_SUBST([SLURM_CPPFLAGS])
  AC_SUBST([SLURM_MAJOR])
  AC_SUBST([SLURM_PLUGINDIR])
])

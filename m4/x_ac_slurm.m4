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
  AC_COMPUTE_INT([slurm_vnum], [SLURM_VERSION_NUMBER], [[#include <slurm/slurm_version.h>]],
    [AC_MSG_ERROR([cannot read SLURM_VERSION_NUMBER])])
  SLURM_MAJOR=`printf '%d.%02d' $((slurm_vnum >> 16)) $(((slurm_vnum >> 8) & 255))`
  AC_MSG_RESULT([$SLURM_MAJOR])
  CPPFLAGS="$save_CPPFLAGS"
  AC_ARG_WITH([slurm-plugindir],
    [AS_HELP_STRING([--with-slurm-plugindir=DIR], [where rdzv.so goes (default: LIBDIR/slurm)])],
    [SLURM_PLUGINDIR="$withval"], [SLURM_PLUGINDIR='${libdir}/slurm'])
  AC_SUBST([SLURM_CPPFLAGS])
  AC_SUBST([SLURM_MAJOR])
  AC_SUBST([SLURM_PLUGINDIR])
])

# SPDX-License-Identifier: GPL-2.0-or-later
# X_AC_HWLOC: hwloc >= 2 through pkg-config (required: binding is core).
AC_DEFUN([X_AC_HWLOC], [
  PKG_CHECK_MODULES([HWLOC], [hwloc >= 2.0], [],
    [AC_MSG_ERROR([hwloc >= 2.0 not found (Debian: libhwloc-dev)])])
  HWLOC_VERSION=`$PKG_CONFIG --modversion hwloc`
  AC_SUBST([HWLOC_VERSION])
])

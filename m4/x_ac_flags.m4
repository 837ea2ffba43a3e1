# SPDX-License-Identifier: GPL-2.0-or-later
# X_AC_FLAGS: warnings (always), hardening (always), -Werror and sanitizers (switches).
AC_DEFUN([X_AC_FLAGS], [
  AC_ARG_ENABLE([werror],
    [AS_HELP_STRING([--enable-werror], [treat warnings as errors (CI turns this on)])],
    [], [enable_werror=no])
  AC_ARG_ENABLE([sanitizers],
    [AS_HELP_STRING([--enable-sanitizers], [build with AddressSanitizer and UndefinedBehaviorSanitizer])],
    [], [enable_sanitizers=no])
  WARN_CFLAGS="-Wall -Wextra -Wshadow -Wformat=2 -Wpointer-arith -Wstrict-prototypes -Wmissing-prototypes -Wcast-qual -Wwrite-strings -Wundef -Wvla -Wno-unused-parameter"
  AS_IF([test "x$enable_werror" = xyes], [WARN_CFLAGS="$WARN_CFLAGS -Werror"])
  HARDEN_CFLAGS="-fstack-protector-strong -fno-strict-overflow"
  SAN_CFLAGS=""
  SAN_LDFLAGS=""
  AS_IF([test "x$enable_sanitizers" = xyes], [
    SAN_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
    SAN_LDFLAGS="-fsanitize=address,undefined"
  ])
  AC_SUBST([WARN_CFLAGS])
  AC_SUBST([HARDEN_CFLAGS])
  AC_SUBST([SAN_CFLAGS])
  AC_SUBST([SAN_LDFLAGS])
  AC_SUBST([enable_sanitizers])
  AM_CONDITIONAL([SANITIZE], [test "x$enable_sanitizers" = xyes])
])

# SPDX-License-Identifier: GPL-2.0-or-later
# X_AC_CUDA: optional CUDA runtime + NCCL for the GPU path of the helpers.
# --with-cuda=PATH (default: /usr/local/cuda when present); --without-cuda turns it off.
AC_DEFUN([X_AC_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=PATH@:>@], [CUDA runtime and NCCL for helpers (default: /usr/local/cuda if present)])],
    [], [with_cuda=check])
  x_ac_have_cuda=no
  AS_IF([test "x$with_cuda" != xno], [
    AS_IF([test "x$with_cuda" = xcheck || test "x$with_cuda" = xyes], [cuda_dir=/usr/local/cuda], [cuda_dir="$with_cuda"])
    save_CPPFLAGS="$CPPFLAGS"; save_LIBS="$LIBS"; save_LDFLAGS="$LDFLAGS"
    CPPFLAGS="$CPPFLAGS -I$cuda_dir/include"
    LDFLAGS="$LDFLAGS -L$cuda_dir/lib64"
    AC_CHECK_HEADERS([cuda_runtime_api.h nccl.h], [x_ac_have_cuda=yes], [x_ac_have_cuda=no; break])
    AS_IF([test "x$x_ac_have_cuda" = xyes],
      [AC_CHECK_LIB([cudart], [cudaGetDeviceCount], [], [x_ac_have_cuda=no])])
    AS_IF([test "x$x_ac_have_cuda" = xyes],
      [AC_CHECK_LIB([nccl], [ncclGetVersion], [], [x_ac_have_cuda=no])])
    CPPFLAGS="$save_CPPFLAGS"; LIBS="$save_LIBS"; LDFLAGS="$save_LDFLAGS"
    AS_IF([test "x$with_cuda" != xcheck && test "x$x_ac_have_cuda" = xno],
      [AC_MSG_ERROR([--with-cuda given but CUDA runtime/NCCL not found under $cuda_dir])])
    AS_IF([test "x$x_ac_have_cuda" = xyes], [
      CUDA_CPPFLAGS="-I$cuda_dir/include"
      CUDA_LIBS="-L$cuda_dir/lib64 -Wl,-rpath,$cuda_dir/lib64 -lnccl -lcudart"
      AC_DEFINE([HAVE_CUDA_NCCL], [1], [CUDA runtime and NCCL available])
    ])
  ])
  AC_SUBST([CUDA_CPPFLAGS])
  AC_SUBST([CUDA_LIBS])
  AC_SUBST([x_ac_have_cuda])
  AM_CONDITIONAL([HAVE_CUDA_NCCL], [test "x$x_ac_have_cuda" = xyes])
])

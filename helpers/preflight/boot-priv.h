/* SPDX-License-Identifier: GPL-2.0-or-later */
/* boot-priv.h: what the bootstrap's socket layer (boot_net.c) lends its
 * server (boot_server.c). Not part of the protocol's interface. */
#ifndef RDZV_BOOT_PRIV_H
#define RDZV_BOOT_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Milliseconds to poll() before DEADLINE (monotonic ms), at most 1000; 0
 * when it has passed. */
int rdzv_boot_wait_ms(int64_t deadline);
/* Sleeps MS milliseconds, resuming after signals. */
void rdzv_boot_sleep_ms(long ms);
/* Writes SA's numeric address into IP (IPLEN bytes) and its port into
 * *PORT; "?" and 0 for an unknown family. */
void rdzv_boot_fmt_addr(const struct sockaddr *sa, char *ip, size_t iplen, uint16_t *port);
/* Small frames go out at once (TCP_NODELAY); failure is harmless. */
void rdzv_boot_tune(int fd);

#endif

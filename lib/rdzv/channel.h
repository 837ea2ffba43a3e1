/* channel.h: the datagram socket srun opens per step for its nodes (a
 * failed rank's report, a rank's hang ask, a node's NVLink domain) and the
 * random nonce that marks the step's datagrams. */
#ifndef RDZV_CHANNEL_H
#define RDZV_CHANNEL_H

#include <stdint.h>

/* A datagram socket on any address (IPv6 and IPv4, else IPv4), a port of
 * the kernel's. Returns the socket (non-blocking, close-on-exec) and *port,
 * or -1. */
int rdzv_dgram_listen(uint16_t *port);

/* A random nonce for a step's datagrams (/dev/urandom, else pid and time). */
uint64_t rdzv_make_nonce(void);

#endif

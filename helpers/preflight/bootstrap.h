/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bootstrap.h: the preflight's rendezvous. Rank 0 hosts a small TCP service
 * at MASTER_ADDR:MASTER_PORT (the place PyTorch's TCPStore would be); every
 * other rank connects to it, says hello, and then the ranks exchange blobs
 * by all-gather: each rank sends one blob per phase, rank 0 answers every
 * rank with all of them.
 *
 * Wire format: every message is a frame, a 20-byte header in network byte
 * order followed by `len` payload bytes:
 *   magic u32 ("RZPF") | version u16 | type u16 | rank u32 | seq u32 | len u32
 * A header with a wrong magic, version or type, or a length above the
 * reader's limit, is refused before any payload is read or allocated, so a
 * stranger (a port scanner, an HTTP probe, a leftover rank of another step)
 * costs one small buffer and is closed without disturbing the ranks.
 *
 * The server is single-threaded and polls every connection, so a stranger
 * that connects and stays silent never blocks anyone. Failures that prove
 * the rendezvous itself is wrong (a duplicate rank, a rank that disagrees
 * on WORLD_SIZE, a rank that leaves) end the all-gather at once with the
 * rank and host named; a stranger is only noted. */
#ifndef RDZV_BOOTSTRAP_H
#define RDZV_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#define RDZV_BOOT_MAGIC 0x525a5046u /* "RZPF" */
#define RDZV_BOOT_VERSION 1
#define RDZV_BOOT_HDR_LEN 20
#define RDZV_BOOT_MAX_LEN (16u << 20) /* largest payload a reader accepts */
#define RDZV_BOOT_MAX_WORLD (1u << 20)
#define RDZV_BOOT_HOST_MAX 256     /* host name in a hello, with its NUL */
#define RDZV_BOOT_SESSION_MAX 128  /* session token in a hello, with its NUL */
#define RDZV_BOOT_ADDR_MAX 64      /* numeric peer address "a.b.c.d:port" */

enum rdzv_boot_type {
	RDZV_BOOT_HELLO = 1, /* rank -> 0: struct rdzv_boot_hello */
	RDZV_BOOT_WELCOME,   /* 0 -> rank: accepted, empty payload */
	RDZV_BOOT_REJECT,    /* 0 -> peer: reason text, then closed */
	RDZV_BOOT_GATHER,    /* rank -> 0: the rank's blob for phase seq */
	RDZV_BOOT_ALL,       /* 0 -> rank: every rank's blob for phase seq */
	RDZV_BOOT_ABORT,     /* 0 -> rank: reason text; the run failed */
	RDZV_BOOT_LINK,      /* rank -> successor: opens a ring link, empty */
	RDZV_BOOT_TYPE_END
};

struct rdzv_boot_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t rank; /* sender's rank (0 for rank 0's messages) */
	uint32_t seq;  /* all-gather phase, 0 otherwise */
	uint32_t len;  /* payload bytes */
};

/* Header <-> bytes. unpack checks magic, version, type and len <= maxlen and
 * returns 0, or -1 with the bad field and its value in err. */
void rdzv_boot_hdr_pack(const struct rdzv_boot_hdr *h, unsigned char out[RDZV_BOOT_HDR_LEN]);
int rdzv_boot_hdr_unpack(const unsigned char in[RDZV_BOOT_HDR_LEN], uint32_t maxlen,
                         struct rdzv_boot_hdr *h, char *err, size_t errlen);

/* Incremental frame reader: bytes arrive in any chunking. */
struct rdzv_boot_rx {
	unsigned char hbuf[RDZV_BOOT_HDR_LEN];
	size_t hhave;
	struct rdzv_boot_hdr hdr;
	unsigned char *payload; /* hdr.len bytes (+1 NUL) once the header is valid */
	size_t phave;
	uint32_t maxlen;
};

void rdzv_boot_rx_init(struct rdzv_boot_rx *rx, uint32_t maxlen);
/* Free the payload and start over (accepts a zeroed rx). */
void rdzv_boot_rx_reset(struct rdzv_boot_rx *rx);
/* Consume up to n bytes (*used says how many). Returns 1 when a whole frame
 * is ready in rx->hdr and rx->payload (NUL-terminated for convenience; the
 * caller may keep the payload by setting rx->payload to NULL, then must
 * call rdzv_boot_rx_reset before feeding more), 0 when more bytes are
 * needed, -1 on a malformed header (reason in err). */
int rdzv_boot_rx_feed(struct rdzv_boot_rx *rx, const void *buf, size_t n, size_t *used,
                      char *err, size_t errlen);

/* HELLO payload:
 *   world u32 | link_port u16 | host_len u8 | session_len u8 | host | session
 * host and session are printable ASCII without NUL. */
struct rdzv_boot_hello {
	uint32_t world;
	uint16_t link_port; /* the rank's ring listener, 0 if none */
	char host[RDZV_BOOT_HOST_MAX];
	char session[RDZV_BOOT_SESSION_MAX]; /* e.g. "jobid.stepid"; may be "" */
};

/* Writes at most outlen bytes; returns the payload length, or -1 when a
 * field is too long or not printable. */
long rdzv_boot_hello_pack(const struct rdzv_boot_hello *h, unsigned char *out, size_t outlen,
                          char *err, size_t errlen);
int rdzv_boot_hello_unpack(const unsigned char *p, size_t n, struct rdzv_boot_hello *h,
                           char *err, size_t errlen);

/* ALL payload: count u32 | count x (len u32 | bytes). pack allocates *out
 * (free it); unpack points ptr[i]/len[i] into p without copying and checks
 * that count == want and every length stays inside the payload. */
int rdzv_boot_all_pack(const unsigned char *const *blob, const uint32_t *len, uint32_t count,
                       unsigned char **out, size_t *outlen, char *err, size_t errlen);
int rdzv_boot_all_unpack(const unsigned char *p, size_t n, uint32_t want,
                         const unsigned char **ptr, uint32_t *len, char *err, size_t errlen);

/* Milliseconds on the monotonic clock; deadlines below are in these units. */
int64_t rdzv_boot_now_ms(void);

/* A listening TCP socket on all addresses (IPv6 dual-stack when the kernel
 * has it, else IPv4), SO_REUSEADDR, close-on-exec, non-blocking. port 0
 * picks a free port; *bound receives the port. Returns the fd or -1. */
int rdzv_boot_listen(uint16_t port, uint16_t *bound, char *err, size_t errlen);

/* Connect to host:port, retrying refused/unreachable/timed-out attempts
 * until deadline (a rank may start before rank 0 listens). Returns a
 * non-blocking, close-on-exec fd (the frame functions below poll), or -1
 * with the last reason in err. */
int rdzv_boot_dial(const char *host, uint16_t port, int64_t deadline, char *err, size_t errlen);

/* Whole-frame I/O on a connected non-blocking fd, waiting at most until
 * deadline. recv returns 0 with
 * the frame in *h and a malloc'ed, NUL-terminated *payload (free it), or -1
 * (timeout, EOF, malformed header). */
int rdzv_boot_send_frame(int fd, uint16_t type, uint32_t rank, uint32_t seq, const void *payload,
                         uint32_t len, int64_t deadline, char *err, size_t errlen);
int rdzv_boot_recv_frame(int fd, int64_t deadline, struct rdzv_boot_hdr *h,
                         unsigned char **payload, char *err, size_t errlen);

/* Rank 0's side. */
struct rdzv_boot_server;

/* world ranks are expected; the server plays rank 0 itself. session must
 * match the ranks' hellos (strangers from other steps are refused).
 * Returns NULL with a reason (e.g. the port is taken) in err. */
struct rdzv_boot_server *rdzv_boot_server_create(uint16_t port, uint32_t world,
                                                 const char *session, const char *host,
                                                 uint16_t link_port, char *err, size_t errlen);
void rdzv_boot_server_destroy(struct rdzv_boot_server *s); /* accepts NULL */
uint16_t rdzv_boot_server_port(const struct rdzv_boot_server *s);

/* All-gather phase seq (1, 2, ...; each phase once, in order): wait until
 * every rank has said hello and sent its blob for seq, then send every rank
 * the ALL frame. *all (free it) receives the same ALL payload. Returns 0, or
 * -1 with the missing or misbehaving ranks named in err (the caller then
 * calls rdzv_boot_server_abort). */
int rdzv_boot_server_allgather(struct rdzv_boot_server *s, uint32_t seq, const void *mine,
                               uint32_t len, int64_t deadline, unsigned char **all,
                               size_t *alllen, char *err, size_t errlen);

/* Tell every connected rank the run failed (best effort, bounded by a
 * short deadline) and close their connections; then, until linger_until or
 * until every rank has heard, refuse late ranks with the reason, so that
 * they end now instead of at their own timeout. reason must stay valid
 * during the call. */
void rdzv_boot_server_abort(struct rdzv_boot_server *s, const char *reason, int64_t linger_until);

/* What the server knows about rank r once it said hello: its hello, and the
 * numeric address its connection came from (the address other ranks can
 * reach it at). NULL before the hello (and for r >= world). Rank 0's entry
 * is the server's own hello with an empty address. */
const struct rdzv_boot_hello *rdzv_boot_server_hello(const struct rdzv_boot_server *s, uint32_t r);
const char *rdzv_boot_server_peer_addr(const struct rdzv_boot_server *s, uint32_t r);
/* Ranks that have said hello so far (rank 0 included). */
uint32_t rdzv_boot_server_joined(const struct rdzv_boot_server *s);

/* Connections refused so far (strangers, wrong session...), and the last
 * few reasons, newest last (i < rdzv_boot_server_nnotes). */
unsigned rdzv_boot_server_rejected(const struct rdzv_boot_server *s);
unsigned rdzv_boot_server_nnotes(const struct rdzv_boot_server *s);
const char *rdzv_boot_server_note(const struct rdzv_boot_server *s, unsigned i);

/* Another rank's side. */
struct rdzv_boot_client;

/* Dial host:port until deadline, say hello as rank, wait for the welcome.
 * Returns NULL with the reason in err: unreachable (host, port and the last
 * error), refused by rank 0 (its reason), or no answer in time. */
struct rdzv_boot_client *rdzv_boot_client_connect(const char *host, uint16_t port, uint32_t rank,
                                                  const struct rdzv_boot_hello *hello,
                                                  int64_t deadline, char *err, size_t errlen);
void rdzv_boot_client_destroy(struct rdzv_boot_client *c); /* accepts NULL */

/* Send this rank's blob for phase seq and wait for the ALL frame. Returns
 * 0 with *all (free it), or -1: rank 0 aborted (its reason in err, and
 * *aborted set to 1), or lost/timeout. */
int rdzv_boot_client_allgather(struct rdzv_boot_client *c, uint32_t seq, const void *mine,
                               uint32_t len, int64_t deadline, unsigned char **all,
                               size_t *alllen, int *aborted, char *err, size_t errlen);

#endif

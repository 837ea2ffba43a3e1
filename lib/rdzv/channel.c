/* channel.c: see channel.h. */
#include "config.h"
#include "channel.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* /dev/urandom, else pid and time. */
uint64_t rdzv_make_nonce(void)
{
	uint64_t n = 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
			n = 0;
		close(fd);
	}
	return n ? n : ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL);
}

/* A datagram socket on any address (IPv6 and IPv4, else IPv4), a port of the
 * kernel's: the nodes' reports here, rdzv-hang's asks in hang.c. Returns the
 * socket (non-blocking, close-on-exec) and *port, or -1. */
int rdzv_dgram_listen(uint16_t *port)
{
	struct sockaddr_in6 a6;
	struct sockaddr_in a4;
	struct sockaddr_storage got;
	socklen_t len = sizeof(got);
	int s, off = 0;

	memset(&a6, 0, sizeof(a6));
	a6.sin6_family = AF_INET6;
	a6.sin6_addr = in6addr_any;
	s = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s >= 0 && (setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) < 0
	               || bind(s, (struct sockaddr *)&a6, sizeof(a6)) < 0)) {
		close(s);
		s = -1;
	}
	if (s < 0) { /* no IPv6 on this host */
		memset(&a4, 0, sizeof(a4));
		a4.sin_family = AF_INET;
		a4.sin_addr.s_addr = htonl(INADDR_ANY);
		s = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (s >= 0 && bind(s, (struct sockaddr *)&a4, sizeof(a4)) < 0) {
			close(s);
			s = -1;
		}
	}
	if (s < 0 || getsockname(s, (struct sockaddr *)&got, &len) < 0) {
		if (s >= 0)
			close(s);
		return -1;
	}
	*port = got.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&got)->sin6_port)
	                                  : ntohs(((struct sockaddr_in *)&got)->sin_port);
	return s;
}

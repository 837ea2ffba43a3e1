# SPDX-License-Identifier: GPL-2.0-or-later
"""A bounded datagram flood at a node's liveness responder (tests/0122).

    udp_flood.py STOPFILE MAX_SECS MAX_COUNT ADDR:PORT...

Sends a PING-shaped datagram (a nonce no step has) to each ADDR:PORT in
turn, from one socket of its own, until STOPFILE exists, MAX_SECS have
passed or MAX_COUNT datagrams were sent, whichever comes first: it stops by
itself. Only the test cluster's addresses (198.18.0.0/15) or the loopback
are accepted. Prints how many datagrams it sent and for how long.
"""
import ipaddress
import os
import socket
import sys
import time


def main():
    stop, secs, count = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    targets = []
    for t in sys.argv[4:]:
        addr, port = t.rsplit(":", 1)
        ip = ipaddress.ip_address(addr)
        if not (ip.is_loopback or ip in ipaddress.ip_network("198.18.0.0/15")):
            sys.exit("udp_flood.py: %s is neither the loopback nor the test cluster's" % addr)
        targets.append((addr, int(port)))
    if not targets:
        sys.exit("udp_flood.py: no target")
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    msg = b"RDZVL1 PING 1.0 0123456789abcdef 1"
    sent, t0, n = 0, time.monotonic(), len(targets)
    while sent < count:
        if sent % 1000 == 0 and (os.path.exists(stop) or time.monotonic() - t0 >= secs):
            break
        try:
            s.sendto(msg, targets[sent % n])
        except OSError:
            pass  # an ICMP error of the last datagram: the flood goes on
        sent += 1
    print("flood: %d datagrams in %.1f s" % (sent, time.monotonic() - t0), flush=True)


if __name__ == "__main__":
    main()

// SPDX-License-Identifier: GPL-2.0
/*
 * udpflows - send one UDP datagram per flow, for the guest tests.
 *
 *	udpflows [-q] DST_ADDR DST_PORT FIRST_PORT NR_PORTS SRC_ADDR...
 *
 * For each SRC_ADDR (IPv4 or IPv6, the family of DST_ADDR) and each source
 * port FIRST_PORT .. FIRST_PORT + NR_PORTS - 1, bind a UDP socket to
 * SRC_ADDR:port and send one datagram to DST_ADDR:DST_PORT.  Replies are
 * neither expected nor read.  Every flow is one line "SRC_ADDR PORT" on
 * standard output (IPv6 addresses bare), in sending order, unless -q; a flow
 * that could not be sent is reported on standard error and makes the exit
 * status 1.
 *
 * One process sends thousands of flows where a shell loop around socat
 * would start thousands of processes, which under QEMU without KVM takes
 * minutes.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sockaddr.h"

static void print_usage(void)
{
	fprintf(stderr,
		"usage: udpflows [-q] DST_ADDR DST_PORT FIRST_PORT NR_PORTS SRC_ADDR...\n");
	exit(2);
}

/* Send one datagram from @src to @dst; 0 or an errno value. */
static int send_flow(int family, const union sockaddr_any *src,
		     socklen_t slen, const union sockaddr_any *dst,
		     socklen_t dlen)
{
	static const char payload[] = "udpflows\n";
	int one = 1;
	int fd, ret = 0;

	fd = socket(family, SOCK_DGRAM, 0);
	if (fd < 0)
		return errno;
	/* The address may still be tentative (IPv6 DAD) or not local yet. */
	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof(one));
	else
		setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, &src->sa, slen) ||
	    sendto(fd, payload, sizeof(payload) - 1, 0, &dst->sa, dlen) < 0)
		ret = errno;
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	union sockaddr_any dst, src;
	unsigned long dport, first, nr, p;
	int quiet = 0, failed = 0;
	socklen_t dlen, slen;
	int family, i, err;

	if (argc > 1 && !strcmp(argv[1], "-q")) {
		quiet = 1;
		argv++;
		argc--;
	}
	if (argc < 6)
		print_usage();

	family = strchr(argv[1], ':') ? AF_INET6 : AF_INET;
	dport = arg_number("udpflows", argv[2], 65535);
	first = arg_number("udpflows", argv[3], 65535);
	nr = arg_number("udpflows", argv[4], 65536);
	if (!first || first + nr > 65536) {
		fprintf(stderr, "udpflows: source ports out of range\n");
		return 2;
	}
	if (sockaddr_parse(argv[1], family, dport, &dst, &dlen)) {
		fprintf(stderr, "udpflows: bad destination '%s'\n", argv[1]);
		return 2;
	}

	for (i = 5; i < argc; i++) {
		for (p = first; p < first + nr; p++) {
			if (sockaddr_parse(argv[i], family, p, &src, &slen)) {
				fprintf(stderr, "udpflows: bad source '%s'\n",
					argv[i]);
				return 2;
			}
			err = send_flow(family, &src, slen, &dst, dlen);
			if (err) {
				fprintf(stderr, "udpflows: %s %lu: %s\n",
					argv[i], p, strerror(err));
				failed = 1;
				continue;
			}
			if (!quiet)
				printf("%s %lu\n", argv[i], p);
		}
	}
	if (fflush(stdout))
		failed = 1;
	return failed;
}

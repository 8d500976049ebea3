// SPDX-License-Identifier: GPL-2.0
/*
 * udpflows - send one UDP datagram per flow, for the guest tests.
 *
 *	udpflows [-q] DST_ADDR DST_PORT FIRST_PORT NR_PORTS SRC_ADDR...
 *	udpflows -l PORT IDLE_SECS
 *
 * For each SRC_ADDR (IPv4 or IPv6, the family of DST_ADDR) and each source
 * port FIRST_PORT .. FIRST_PORT + NR_PORTS - 1, bind a UDP socket to
 * SRC_ADDR:port and send one datagram to DST_ADDR:DST_PORT.  Replies are
 * neither expected nor read.  Every flow is one line "SRC_ADDR PORT" on
 * standard output (IPv6 addresses bare), in sending order, unless -q; a flow
 * that could not be sent is reported on standard error and makes the exit
 * status 1.
 *
 * With -l it receives instead: it binds [::]:PORT (IPv4 too, as mapped
 * addresses) and prints "SRC_ADDR SRC_PORT" (IPv4 as A.B.C.D) for every
 * datagram, flushed, until no datagram came for IDLE_SECS seconds; a real
 * server of the guest tests names the flows that reached it.
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
#include <sys/time.h>
#include <unistd.h>

#include "sockaddr.h"

static void print_usage(void)
{
	fprintf(stderr,
		"usage: udpflows [-q] DST_ADDR DST_PORT FIRST_PORT NR_PORTS SRC_ADDR...\n"
		"       udpflows -l PORT IDLE_SECS\n");
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

/* -l: print the source of every datagram to [::]:@port. */
static int listen_flows(unsigned long port, unsigned long idle)
{
	struct sockaddr_in6 a = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(port),
		.sin6_addr = IN6ADDR_ANY_INIT,
	};
	struct timeval tv = { .tv_sec = idle };
	char buf[2048], name[INET6_ADDRSTRLEN];
	union sockaddr_any from;
	socklen_t flen;
	int fd;

	fd = socket(AF_INET6, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		perror("udpflows -l");
		return 1;
	}
	for (;;) {
		flen = sizeof(from);
		if (recvfrom(fd, buf, sizeof(buf), 0, &from.sa, &flen) < 0) {
			if (errno == EINTR)
				continue;
			break;	/* EAGAIN: idle for IDLE_SECS */
		}
		if (IN6_IS_ADDR_V4MAPPED(&from.in6.sin6_addr))
			inet_ntop(AF_INET, &from.in6.sin6_addr.s6_addr[12],
				  name, sizeof(name));
		else
			inet_ntop(AF_INET6, &from.in6.sin6_addr, name,
				  sizeof(name));
		printf("%s %u\n", name, ntohs(from.in6.sin6_port));
		fflush(stdout);
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	union sockaddr_any dst, src;
	unsigned long dport, first, nr, p;
	int quiet = 0, failed = 0;
	socklen_t dlen, slen;
	int family, i, err;

	if (argc == 4 && !strcmp(argv[1], "-l"))
		return listen_flows(arg_number("udpflows", argv[2], 65535),
				    arg_number("udpflows", argv[3], 3600));
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

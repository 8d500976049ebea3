/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sockaddr.h - what the guest tests' C helpers (tcpfleet.c, udpflows.c,
 * connprobe.c) share: an IPv4 or IPv6 socket address from text, and a
 * bounded number from a command-line argument.
 */
#ifndef _GUEST_SOCKADDR_H
#define _GUEST_SOCKADDR_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

union sockaddr_any {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

/*
 * sockaddr_parse() - @s as an address of @family (AF_INET, AF_INET6, or
 * AF_UNSPEC: IPv6 if it has a ':') with @port, into @sa and *@len.
 * Return: 0, or -1 if @s is not such an address.
 */
static inline int sockaddr_parse(const char *s, int family, unsigned int port,
				 union sockaddr_any *sa, socklen_t *len)
{
	if (family == AF_UNSPEC)
		family = strchr(s, ':') ? AF_INET6 : AF_INET;
	memset(sa, 0, sizeof(*sa));
	if (family == AF_INET) {
		sa->in.sin_family = AF_INET;
		sa->in.sin_port = htons(port);
		*len = sizeof(sa->in);
		return inet_pton(AF_INET, s, &sa->in.sin_addr) == 1 ? 0 : -1;
	}
	sa->in6.sin6_family = AF_INET6;
	sa->in6.sin6_port = htons(port);
	*len = sizeof(sa->in6);
	return inet_pton(AF_INET6, s, &sa->in6.sin6_addr) == 1 ? 0 : -1;
}

/*
 * arg_number() - @s as a decimal number up to @max; anything else ends the
 * program @prog with a message and exit status 2.
 */
static inline unsigned long arg_number(const char *prog, const char *s,
				       unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max) {
		fprintf(stderr, "%s: bad number '%s'\n", prog, s);
		exit(2);
	}
	return v;
}

#endif /* _GUEST_SOCKADDR_H */

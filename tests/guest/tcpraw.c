// SPDX-License-Identifier: GPL-2.0
/*
 * tcpraw: send one TCP segment with the given flags from SRC:SPORT to
 * DST:DPORT through a raw socket, for guest tests that need a first packet
 * no socket would send: an ACK of a connection this host never saw open
 * (a connection taken over from another load balancer).
 *
 *	tcpraw SRC SPORT DST DPORT FLAGS
 *
 * SRC and DST are IPv4 addresses (SRC must be local), FLAGS a word of the
 * letters S (SYN), A (ACK), P (PSH), F (FIN), R (RST).  The segment
 * carries 8 bytes of payload unless it is a bare SYN.  Exit 0 when sent.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct seg {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t off, flags;
	uint16_t win, sum, urg;
	char data[8];
};

static uint32_t sum16(uint32_t s, const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += (uint32_t)b[i] << 8 | b[i + 1];
	if (len & 1)
		s += (uint32_t)b[len - 1] << 8;
	return s;
}

int main(int argc, char **argv)
{
	struct sockaddr_in src = { .sin_family = AF_INET };
	struct sockaddr_in dst = { .sin_family = AF_INET };
	struct seg sg;
	struct {
		uint32_t src, dst;
		uint8_t zero, proto;
		uint16_t len;
	} ph;
	const char *f;
	size_t len;
	uint32_t s;
	int fd;

	if (argc != 6 || inet_pton(AF_INET, argv[1], &src.sin_addr) != 1 ||
	    inet_pton(AF_INET, argv[3], &dst.sin_addr) != 1) {
		fputs("usage: tcpraw SRC SPORT DST DPORT FLAGS\n", stderr);
		return 2;
	}
	memset(&sg, 0, sizeof(sg));
	sg.sport = htons((uint16_t)atoi(argv[2]));
	sg.dport = htons((uint16_t)atoi(argv[4]));
	sg.seq = htonl(1000000);
	sg.off = 5 << 4;
	sg.win = htons(65535);
	for (f = argv[5]; *f; f++) {
		switch (*f) {
		case 'F': sg.flags |= 0x01; break;
		case 'S': sg.flags |= 0x02; break;
		case 'R': sg.flags |= 0x04; break;
		case 'P': sg.flags |= 0x08; break;
		case 'A': sg.flags |= 0x10; break;
		default:
			fprintf(stderr, "tcpraw: unknown flag %c\n", *f);
			return 2;
		}
	}
	if (sg.flags & 0x10)
		sg.ack = htonl(2000000);
	len = sg.flags == 0x02 ? 20 : sizeof(sg);
	memcpy(sg.data, "takeover", sizeof(sg.data));

	ph.src = src.sin_addr.s_addr;
	ph.dst = dst.sin_addr.s_addr;
	ph.zero = 0;
	ph.proto = IPPROTO_TCP;
	ph.len = htons((uint16_t)len);
	s = sum16(sum16(0, &ph, sizeof(ph)), &sg, len);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	sg.sum = htons((uint16_t)~s);

	fd = socket(AF_INET, SOCK_RAW, IPPROTO_TCP);
	if (fd < 0 || bind(fd, (struct sockaddr *)&src, sizeof(src)) ||
	    sendto(fd, &sg, len, 0, (struct sockaddr *)&dst,
		   sizeof(dst)) != (ssize_t)len) {
		perror("tcpraw");
		return 1;
	}
	close(fd);
	return 0;
}

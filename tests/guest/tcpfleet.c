// SPDX-License-Identifier: GPL-2.0
/*
 * tcpfleet - long-lived TCP connections for the load-balancer fleet tests.
 *
 *	tcpfleet [-s] server NAME PORT...
 *	tcpfleet [-s] client SRC_ADDR DST_ADDR
 *
 * With -s the connections are SCTP associations (one-to-one style sockets,
 * SOCK_STREAM with IPPROTO_SCTP), otherwise TCP; the rest is the same.
 *
 * The server listens on every PORT (any address, so a VIP on lo works for
 * direct routing) and answers every line it receives on a connection with
 * one line, its NAME.
 *
 * The client keeps many connections from SRC_ADDR to DST_ADDR in one
 * process and takes commands on standard input, one per line; each command
 * answers with one line on standard output (flushed):
 *
 *	open PORT N SECS	open N connections to DST_ADDR:PORT, spread
 *				over SECS seconds; each sends a line and
 *				notes which server answered (waiting up to
 *				60 seconds more)
 *	round SECS WAIT		send one line on every live connection, spread
 *				over SECS seconds, and wait up to WAIT more
 *				seconds for the answers
 *	list FILE		write one line per connection to FILE,
 *				"PORT LPORT FIRST LAST STATE ANSWERS OPENED",
 *				OPENED the CLOCK_BOOTTIME seconds (as in
 *				/proc/uptime) of its connect()
 *	close			close every connection and forget them
 *	quit
 *
 * The answer to every command but quit is "ok live L reset R wrong W
 * timeout T failed F" over all connections so far.  A connection is live
 * while every answer came from the server that answered first; it becomes
 * "reset" when the peer resets or closes it, "wrong" when another server
 * answers, "timeout" when an answer does not come in time, "failed" when
 * it could not be opened.  Once not live, it stays so and is not used.
 *
 * One process holds hundreds of connections, where a shell loop around
 * socat would need as many processes, which under QEMU without KVM is slow.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sockaddr.h"

#define NAME_MAX_LEN	32
#define MAX_CONNS	4096

enum conn_state { C_OPENING, C_IDLE, C_WAIT, C_RESET, C_WRONG, C_TIMEOUT,
		  C_FAILED };

static const char *const state_names[] = {
	"opening", "live", "live", "reset", "wrong", "timeout", "failed",
};

struct conn {
	int fd;
	enum conn_state state;
	unsigned int port, lport, answers;
	double send_at;		/* when to send the next line, or 0 */
	double opened;		/* CLOCK_BOOTTIME seconds of the connect() */
	char first[NAME_MAX_LEN], last[NAME_MAX_LEN];
	char buf[NAME_MAX_LEN];
	size_t len;
};

static struct conn conns[MAX_CONNS];
static unsigned int nconns;
static int epfd;
/* IPPROTO_TCP, or IPPROTO_SCTP with -s */
static int proto = IPPROTO_TCP;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Seconds on the clock of /proc/uptime, for the tests to compare with. */
static double boottime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void watch(int fd, unsigned int events, unsigned int id, int op)
{
	struct epoll_event ev = { .events = events, .data.u32 = id };

	if (epoll_ctl(epfd, op, fd, &ev))
		die("epoll_ctl");
}

/* ---- server ---- */

static int server(const char *name, int nports, char **ports)
{
	char reply[NAME_MAX_LEN + 1], buf[4096];
	struct epoll_event evs[64];
	int one = 1, nlisten = nports, i, n, fd;
	size_t rlen;

	if (strlen(name) >= NAME_MAX_LEN)
		return 2;
	rlen = snprintf(reply, sizeof(reply), "%s\n", name);
	epfd = epoll_create1(0);
	if (epfd < 0)
		die("epoll_create1");
	for (i = 0; i < nports; i++) {
		struct sockaddr_in6 a = {
			.sin6_family = AF_INET6,
			.sin6_port = htons(arg_number("tcpfleet", ports[i],
						      65535)),
			.sin6_addr = IN6ADDR_ANY_INIT,
		};

		fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, proto);
		if (fd < 0)
			die("socket");
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
		    listen(fd, 4096))
			die("bind/listen");
		/* data.u32 below nlisten: a listening socket, else an fd */
		watch(fd, EPOLLIN, i, EPOLL_CTL_ADD);
		conns[i].fd = fd;
	}
	for (;;) {
		n = epoll_wait(epfd, evs, 64, -1);
		if (n < 0 && errno != EINTR)
			die("epoll_wait");
		for (i = 0; i < n; i++) {
			unsigned int id = evs[i].data.u32;
			ssize_t got, j, lines = 0;

			if (id < (unsigned int)nlisten) {
				while ((fd = accept4(conns[id].fd, NULL, NULL,
						     SOCK_NONBLOCK)) >= 0)
					watch(fd, EPOLLIN, fd + nlisten,
					      EPOLL_CTL_ADD);
				continue;
			}
			fd = id - nlisten;
			got = read(fd, buf, sizeof(buf));
			if (got <= 0) {
				if (got < 0 && errno == EAGAIN)
					continue;
				close(fd);	/* also leaves the epoll set */
				continue;
			}
			for (j = 0; j < got; j++)
				lines += buf[j] == '\n';
			while (lines-- > 0)
				if (write(fd, reply, rlen) != (ssize_t)rlen)
					break;
		}
	}
}

/* ---- client ---- */

static void conn_end(struct conn *c, enum conn_state state)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->state = state;
	c->send_at = 0;
}

static void conn_send(struct conn *c)
{
	static const char line[] = "hello\n";

	c->send_at = 0;
	if (write(c->fd, line, sizeof(line) - 1) != sizeof(line) - 1) {
		conn_end(c, C_RESET);
		return;
	}
	c->state = C_WAIT;
}

static void conn_answer(struct conn *c)
{
	if (!c->first[0])
		memcpy(c->first, c->buf, sizeof(c->first));
	memcpy(c->last, c->buf, sizeof(c->last));
	c->answers++;
	if (strcmp(c->first, c->last))
		conn_end(c, C_WRONG);
	else
		c->state = C_IDLE;
}

static void conn_readable(struct conn *c)
{
	char buf[256];
	ssize_t got, i;

	got = read(c->fd, buf, sizeof(buf));
	if (got < 0 && errno == EAGAIN)
		return;
	if (got <= 0) {
		conn_end(c, C_RESET);
		return;
	}
	for (i = 0; i < got && c->fd >= 0; i++) {
		if (buf[i] != '\n') {
			if (c->len < sizeof(c->buf) - 1)
				c->buf[c->len++] = buf[i];
			continue;
		}
		c->buf[c->len] = 0;
		c->len = 0;
		if (c->state == C_WAIT)
			conn_answer(c);
	}
}

static void conn_writable(struct conn *c)
{
	union sockaddr_any a;
	socklen_t len = sizeof(a);
	int err = 0;

	getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
	if (err) {
		conn_end(c, C_FAILED);
		return;
	}
	watch(c->fd, EPOLLIN, c - conns, EPOLL_CTL_MOD);
	conn_send(c);
}

/*
 * Run until nothing is scheduled or waiting, or until @deadline; then, if
 * @final, what is still opening failed and what still waits timed out.
 */
static void run(double deadline, int final)
{
	struct epoll_event evs[64];
	unsigned int i;
	int n, ms;

	for (;;) {
		double t = now(), next = deadline;
		int busy = 0;

		for (i = 0; i < nconns; i++) {
			struct conn *c = &conns[i];

			if (c->send_at && c->state == C_IDLE) {
				if (c->send_at <= t)
					conn_send(c);
				else if (c->send_at < next)
					next = c->send_at;
			}
			if (c->state == C_WAIT || c->state == C_OPENING ||
			    (c->send_at && c->state == C_IDLE))
				busy = 1;
		}
		if (!busy)
			return;
		if (t >= deadline) {
			if (!final)
				return;
			break;
		}
		ms = (int)((next - t) * 1000) + 1;
		n = epoll_wait(epfd, evs, 64, ms);
		if (n < 0 && errno != EINTR)
			die("epoll_wait");
		for (i = 0; i < (unsigned int)(n > 0 ? n : 0); i++) {
			struct conn *c = &conns[evs[i].data.u32];

			if (c->fd < 0)
				continue;
			if (c->state == C_OPENING)
				conn_writable(c);
			else
				conn_readable(c);
		}
	}
	for (i = 0; i < nconns; i++) {
		if (conns[i].state == C_OPENING)
			conn_end(&conns[i], C_FAILED);
		else if (conns[i].state == C_WAIT)
			conn_end(&conns[i], C_TIMEOUT);
		conns[i].send_at = 0;
	}
}

static void open_conns(const union sockaddr_any *src, socklen_t slen,
		       const char *dst_s, unsigned int port, unsigned int n,
		       double secs)
{
	union sockaddr_any dst, local;
	socklen_t dlen, llen;
	double t0 = now(), wait;
	unsigned int i;

	if (sockaddr_parse(dst_s, AF_UNSPEC, port, &dst, &dlen))
		return;
	for (i = 0; i < n && nconns < MAX_CONNS; i++) {
		struct conn *c = &conns[nconns];
		double at = t0 + secs * i / n;

		/* Pace the opening like the rounds. */
		run(at, 0);
		wait = at - now();
		if (wait > 0)
			usleep(wait * 1e6);
		memset(c, 0, sizeof(*c));
		c->port = port;
		c->fd = socket(src->sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK,
			       proto);
		nconns++;
		if (c->fd < 0 || bind(c->fd, &src->sa, slen)) {
			conn_end(c, C_FAILED);
			continue;
		}
		llen = sizeof(local);
		getsockname(c->fd, &local.sa, &llen);
		c->lport = ntohs(local.sa.sa_family == AF_INET6 ?
				 local.in6.sin6_port : local.in.sin_port);
		c->opened = boottime();
		if (connect(c->fd, &dst.sa, dlen) && errno != EINPROGRESS) {
			conn_end(c, C_FAILED);
			continue;
		}
		c->state = C_OPENING;
		watch(c->fd, EPOLLOUT, c - conns, EPOLL_CTL_ADD);
	}
}

static void round_all(double secs, double wait)
{
	unsigned int i, live = 0, k = 0;
	double t0 = now();

	for (i = 0; i < nconns; i++)
		live += conns[i].state == C_IDLE;
	for (i = 0; i < nconns; i++)
		if (conns[i].state == C_IDLE)
			conns[i].send_at = t0 + secs * k++ / live;
	run(t0 + secs + wait, 1);
}

static void print_totals(void)
{
	unsigned int count[C_FAILED + 1] = { 0 }, i;

	for (i = 0; i < nconns; i++)
		count[conns[i].state]++;
	printf("ok live %u reset %u wrong %u timeout %u failed %u\n",
	       count[C_IDLE] + count[C_WAIT], count[C_RESET], count[C_WRONG],
	       count[C_TIMEOUT], count[C_FAILED] + count[C_OPENING]);
}

static int client(const char *src_s, const char *dst_s)
{
	union sockaddr_any src;
	char line[256], cmd[16], file[201];
	socklen_t slen;
	unsigned int i;

	if (sockaddr_parse(src_s, AF_UNSPEC, 0, &src, &slen)) {
		fprintf(stderr, "tcpfleet: bad address '%s'\n", src_s);
		return 2;
	}
	epfd = epoll_create1(0);
	if (epfd < 0)
		die("epoll_create1");
	while (fgets(line, sizeof(line), stdin)) {
		unsigned int a = 0;
		double x = 0, y = 0;

		cmd[0] = 0;
		if (sscanf(line, "%15s", cmd) != 1)
			continue;
		if (!strcmp(cmd, "quit"))
			break;
		if (!strcmp(cmd, "open") &&
		    sscanf(line, "%*s %u %lf %lf", &a, &x, &y) == 3 &&
		    a && a < 65536) {
			open_conns(&src, slen, dst_s, a, (unsigned int)x, y);
			run(now() + 60, 1);
			print_totals();
		} else if (!strcmp(cmd, "round") &&
			   sscanf(line, "%*s %lf %lf", &x, &y) == 2) {
			round_all(x, y);
			print_totals();
		} else if (!strcmp(cmd, "list") &&
			   sscanf(line, "%*s %200s", file) == 1) {
			FILE *f = fopen(file, "w");

			for (i = 0; f && i < nconns; i++) {
				struct conn *c = &conns[i];

				fprintf(f, "%u %u %s %s %s %u %.2f\n",
					c->port, c->lport,
					c->first[0] ? c->first : "-",
					c->last[0] ? c->last : "-",
					state_names[c->state], c->answers,
					c->opened);
			}
			if (!f || fclose(f))
				printf("error: cannot write %s\n", file);
			else
				print_totals();
		} else if (!strcmp(cmd, "close")) {
			print_totals();
			for (i = 0; i < nconns; i++)
				if (conns[i].fd >= 0)
					close(conns[i].fd);
			nconns = 0;
		} else {
			printf("error: %s", line);
		}
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 2 && !strcmp(argv[1], "-s")) {
		proto = IPPROTO_SCTP;
		argv++;
		argc--;
	}
	if (argc >= 4 && !strcmp(argv[1], "server"))
		return server(argv[2], argc - 3, argv + 3);
	if (argc == 4 && !strcmp(argv[1], "client"))
		return client(argv[2], argv[3]);
	fprintf(stderr, "usage: tcpfleet [-s] server NAME PORT...\n"
		"       tcpfleet [-s] client SRC_ADDR DST_ADDR  (commands on stdin)\n");
	return 2;
}

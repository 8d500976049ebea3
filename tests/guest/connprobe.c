// SPDX-License-Identifier: GPL-2.0
/*
 * connprobe - run a command, then at once open TCP connections, for the
 * guest tests: how many are refused right after a configuration change.
 *
 *	connprobe [-n NETNS_PATH] [-t MS] NR DST_ADDR DST_PORT -- CMD [ARG]...
 *
 * Creates NR non-blocking TCP sockets (IPv4 or IPv6, the family of
 * DST_ADDR) in the network namespace NETNS_PATH (a file such as
 * /run/netns/cl; default: this one), then, back in its own namespace, runs
 * CMD (fork, exec, wait) and, as soon as CMD exits with status 0, starts a
 * connect() to DST_ADDR:DST_PORT on every socket, with no other process
 * started in between.  Waits up to MS milliseconds (default 3000) for the
 * connections and prints one line
 *
 *	connected C refused R other O first_us F last_us L
 *
 * (O: timed out or any other error; F and L: microseconds from CMD's exit
 * to the return of the first and of the last connect() call).  Exit
 * status 0 if CMD succeeded, 1 otherwise.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sockaddr.h"

static void print_usage(void)
{
	fprintf(stderr,
		"usage: connprobe [-n NETNS_PATH] [-t MS] NR DST_ADDR DST_PORT -- CMD [ARG]...\n");
	exit(2);
}

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static int parse_dst(const char *addr, const char *port,
		     union sockaddr_any *dst, socklen_t *len)
{
	char *end;
	long p = strtol(port, &end, 10);

	if (*end || p < 1 || p > 65535)
		return -1;
	return sockaddr_parse(addr, AF_UNSPEC, p, dst, len);
}

/* Create @nr sockets of family @af in the namespace @nspath (or here). */
static int make_sockets(int *fds, int nr, int af, const char *nspath)
{
	int self = -1, ns = -1, i, ret = -1;

	if (nspath) {
		self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		ns = open(nspath, O_RDONLY | O_CLOEXEC);
		if (self < 0 || ns < 0 || setns(ns, CLONE_NEWNET)) {
			perror(nspath);
			goto out;
		}
	}
	for (i = 0; i < nr; i++) {
		fds[i] = socket(af, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
				0);
		if (fds[i] < 0) {
			perror("socket");
			goto out;
		}
	}
	ret = 0;
out:
	if (self >= 0 && setns(self, CLONE_NEWNET)) {
		perror("setns back");
		ret = -1;
	}
	if (self >= 0)
		close(self);
	if (ns >= 0)
		close(ns);
	return ret;
}

static int run_cmd(char **argv)
{
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (pid == 0) {
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror("waitpid");
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "connprobe: %s failed (status 0x%x)\n",
			argv[0], status);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int nr, i, opt, timeout_ms = 3000, left;
	int connected = 0, refused = 0, other = 0;
	const char *nspath = NULL;
	union sockaddr_any dst;
	struct pollfd *pfd;
	long long t0, tf = 0, t1, deadline;
	socklen_t len;
	int *fds;

	while ((opt = getopt(argc, argv, "+n:t:")) != -1) {
		switch (opt) {
		case 'n':
			nspath = optarg;
			break;
		case 't':
			timeout_ms = atoi(optarg);
			break;
		default:
			print_usage();
		}
	}
	if (argc - optind < 5 || strcmp(argv[optind + 3], "--"))
		print_usage();
	nr = atoi(argv[optind]);
	if (nr < 1 || nr > 10000 ||
	    parse_dst(argv[optind + 1], argv[optind + 2], &dst, &len))
		print_usage();
	fds = calloc(nr, sizeof(*fds));
	pfd = calloc(nr, sizeof(*pfd));
	if (!fds || !pfd) {
		perror("calloc");
		return 1;
	}
	if (make_sockets(fds, nr, dst.sa.sa_family, nspath))
		return 1;

	if (run_cmd(argv + optind + 4))
		return 1;
	t0 = now_us();
	left = 0;
	for (i = 0; i < nr; i++) {
		pfd[i].fd = -1;
		if (connect(fds[i], &dst.sa, len) == 0) {
			connected++;
		} else if (errno == EINPROGRESS) {
			pfd[i].fd = fds[i];
			pfd[i].events = POLLOUT;
			left++;
		} else if (errno == ECONNREFUSED) {
			refused++;
		} else {
			other++;
		}
		if (i == 0)
			tf = now_us();
	}
	t1 = now_us();

	deadline = t1 + timeout_ms * 1000LL;
	while (left > 0) {
		long long now = now_us();
		int n;

		if (now >= deadline)
			break;
		n = poll(pfd, nr, (int)((deadline - now + 999) / 1000));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("poll");
			break;
		}
		for (i = 0; i < nr; i++) {
			int err = 0;
			socklen_t elen = sizeof(err);

			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			getsockopt(pfd[i].fd, SOL_SOCKET, SO_ERROR, &err,
				   &elen);
			if (!err)
				connected++;
			else if (err == ECONNREFUSED)
				refused++;
			else
				other++;
			pfd[i].fd = -1;
			left--;
		}
	}
	other += left;
	printf("connected %d refused %d other %d first_us %lld last_us %lld\n",
	       connected, refused, other, tf - t0, t1 - t0);
	for (i = 0; i < nr; i++)
		close(fds[i]);
	return 0;
}

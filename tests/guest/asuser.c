// SPDX-License-Identifier: GPL-2.0
/*
 * asuser - run a command as an unprivileged user, for the guest tests.
 *
 *	asuser [-U | -C] UID CMD [ARG]...
 *
 * Drops every group and sets the real, effective and saved user and group
 * IDs to UID (no capabilities remain, unless UID is 0), then executes CMD.
 * With -C, it also empties the capability bounding set and every
 * capability set, so that even UID 0 executes CMD without a capability (an
 * ordinary container's root without CAP_NET_ADMIN).  With -U, it then
 * also creates a user namespace and a network namespace owned by it, maps
 * root in it to UID (as "unshare -Urn" does), and executes CMD as that
 * namespace's root.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0) {
		perror(path);
		return -1;
	}
	n = write(fd, text, strlen(text));
	if (n != (ssize_t)strlen(text)) {
		perror(path);
		close(fd);
		return -1;
	}
	return close(fd);
}

/* Empty the bounding set, then the effective, permitted and inheritable. */
static int drop_caps(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = { { 0 } };
	int cap;

	for (cap = 0; prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0; cap++)
		;
	if (errno != EINVAL || cap == 0) {
		perror("asuser: PR_CAPBSET_DROP");
		return -1;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) ||
	    syscall(SYS_capset, &hdr, data)) {
		perror("asuser: capset");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int userns = 0, nocaps = 0;
	char map[64];
	uid_t uid;

	if (argc > 1 && !strcmp(argv[1], "-U")) {
		userns = 1;
		argv++;
		argc--;
	} else if (argc > 1 && !strcmp(argv[1], "-C")) {
		nocaps = 1;
		argv++;
		argc--;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: asuser [-U | -C] UID CMD [ARG]...\n");
		return 2;
	}
	uid = (uid_t)strtoul(argv[1], NULL, 10);
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid)) {
		perror("asuser: drop privileges");
		return 1;
	}
	if (nocaps && drop_caps())
		return 1;
	if (userns) {
		/*
		 * The ID change made the process non-dumpable: its /proc files
		 * would stay root's, and it could not write its own maps.
		 */
		if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)) {
			perror("asuser: PR_SET_DUMPABLE");
			return 1;
		}
		if (unshare(CLONE_NEWUSER | CLONE_NEWNET)) {
			perror("asuser: unshare(CLONE_NEWUSER | CLONE_NEWNET)");
			return 1;
		}
		snprintf(map, sizeof(map), "0 %u 1\n", (unsigned int)uid);
		if (write_file("/proc/self/setgroups", "deny") ||
		    write_file("/proc/self/uid_map", map) ||
		    write_file("/proc/self/gid_map", map))
			return 1;
	}
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}

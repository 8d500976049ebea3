// SPDX-License-Identifier: GPL-2.0
/*
 * maglev-fleet - checks that load balancers agree, and exports
 * /proc/net/ip_vs_maglev to Prometheus.
 *
 *	maglev-fleet collect [-r ROOT]
 *	maglev-fleet check [-v] [LABEL=]FILE...
 *	maglev-fleet prom [FILE]
 *	maglev-fleet prom --metrics
 *	ipvsadm -S -n | maglev-fleet save [--drains] [FILE]
 *
 * Each FILE is one load balancer's /proc/net/ip_vs_maglev as collected
 * (ssh, a configuration tool), best by "maglev-fleet collect", which
 * puts a "module" line first: the loaded module, its version
 * (/sys/module/NAME/version), the kernel's word size and whether the
 * /proc file exists.  "maglev-fleet --help" and docs/fleet.md describe
 * the commands.  The check's exit status: 0 every service agrees, 1 some
 * service or the modules differ or are missing on some LB, 2 usage or
 * input error, 3 no difference but some LB's table has not caught up with
 * its configuration (pending 1): look again in a moment.
 *
 * save turns "ipvsadm -S -n" into a script for "ipvsadm -R" that also
 * restores the destinations FILE (default /proc/net/ip_vs_maglev) shows
 * draining ("drain D" on a dest line with weight 0): added with their
 * former weight D, then set to 0, so that the restored table is the
 * draining one, not that of a server added with weight 0.
 *
 * It reads the service line format with "key K" (an 8-hex-digit
 * fingerprint of the namespace's client hash key) and the older one with
 * "seed S" (the decimal hash_seed), so old transcripts still parse.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define FL_NAME_MAX	64	/* a destination name or a VIP, as in /proc */
#define FL_TOKENS	64	/* words on one line, at most */

static const char fl_help[] =
"usage: maglev-fleet collect [-r ROOT]\n"
"       maglev-fleet check [-v] [LABEL=]FILE...\n"
"       maglev-fleet prom [FILE]\n"
"       maglev-fleet prom --metrics\n"
"       ipvsadm -S -n | maglev-fleet save [--drains] [FILE]\n"
"       maglev-fleet --help\n"
"\n"
"collect: prints a \"module NAME version V bits B proc yes|missing\" line\n"
"  (the loaded module, ip_vs_maglev or ip_vs_mh or -, its running version\n"
"  from /sys/module/NAME/version or -, the kernel's word size from\n"
"  uname -m, whether /proc/net/ip_vs_maglev exists), then that file as it\n"
"  is, of the network namespace it runs in (ip netns exec NS ...).  -r\n"
"  reads ROOT/sys/module and ROOT/proc/net instead.\n"
"\n"
"check: each FILE is one load balancer's collect output (or its bare\n"
"  /proc/net/ip_vs_maglev); the LB is called LABEL, or the FILE's base\n"
"  name.  Two LBs agree on a service (PROTO VIP) when its table digest,\n"
"  client hash key fingerprint (or seed), table size and scheduler flags\n"
"  are the same on both; the fleet agrees when, too, the module versions\n"
"  and word sizes are the same on every LB and every LB has the /proc\n"
"  file.  Prints one status line (OK, DISAGREE or PENDING), then why: the\n"
"  modules, and for each service that differs, is missing on some LB or is\n"
"  pending, the destinations missing, weighted or draining differently,\n"
"  table sizes, keys, flags, digests.  A service whose line shows\n"
"  \"pending 1\" on some LB has a table that has not caught up with its\n"
"  configuration yet: it is reported as pending, not compared.\n"
"  -v also lists the services that agree.\n"
"  Exit status: 0 all agree, 1 some service or module differs or is\n"
"  missing on some LB, 2 usage or input error (a message names the file\n"
"  and line), 3 none differs but some are pending (check again shortly).\n"
"\n"
"prom: prints FILE (default: collect's output) in the Prometheus text\n"
"  exposition format, for node_exporter's textfile collector: metrics\n"
"  ip_vs_maglev_*, labels service=\"PROTO VIP\" and dest=\"NAME\".\n"
"  --metrics lists the metrics it can print, one a line: name, type, the\n"
"  field it comes from, help, separated by tabs.\n"
"  Exit status 0, or 2 on a usage or input error.\n"
"\n"
"save: reads \"ipvsadm -S -n\" on standard input and prints it as a script\n"
"  for \"ipvsadm -R\", in which every destination that FILE (default\n"
"  /proc/net/ip_vs_maglev) shows draining (weight 0, drain D) is added\n"
"  with its former weight D and then set to weight 0 again: restored, it\n"
"  drains as before, and its table is its peers'.  --drains prints only\n"
"  those two edits per draining destination (\"-e ... -w D\", \"-e ... -w\n"
"  0\"), to make an LB whose rules were restored otherwise (keepalived)\n"
"  drain as FILE, a peer's file, shows.  A service pending in FILE, or a\n"
"  weight 0 that FILE shows with a weight, is an error: wait for pending 0.\n"
"  Exit status 0, 2 on a usage or input error, 3 if FILE is pending.\n"
"\n"
"Lines starting with '#' and blank lines in a FILE are ignored.\n";

/* service line fields, in /proc order */
enum fl_field {
	F_SIZE, F_KEY, F_SEED, F_FLAGS, F_DESTS, F_BUILDS, F_CHURN, F_BUILD_NS,
	F_ALLOC_FAIL, F_BUILD_FAIL, F_DIGEST, F_PENDING, F_GEN, F_TABLE_GEN,
	F_MEM, F_TABLE, F_SHARED, F_TABLE_MEM, F_NR
};

enum fl_kind { K_DEC, K_HEX8, K_HEX16, K_FLAGS };

static const struct {
	const char *name;
	enum fl_kind kind;
} fl_fields[F_NR] = {
	[F_SIZE]	= { "size",		K_DEC },
	[F_KEY]		= { "key",		K_HEX8 },
	[F_SEED]	= { "seed",		K_DEC },
	[F_FLAGS]	= { "flags",		K_FLAGS },
	[F_DESTS]	= { "dests",		K_DEC },
	[F_BUILDS]	= { "builds",		K_DEC },
	[F_CHURN]	= { "churn",		K_DEC },
	[F_BUILD_NS]	= { "build_ns",		K_DEC },
	[F_ALLOC_FAIL]	= { "alloc_fail",	K_DEC },
	[F_BUILD_FAIL]	= { "build_fail",	K_DEC },
	[F_DIGEST]	= { "digest",		K_HEX16 },
	[F_PENDING]	= { "pending",		K_DEC },
	[F_GEN]		= { "gen",		K_DEC },
	[F_TABLE_GEN]	= { "table_gen",	K_DEC },
	[F_MEM]		= { "mem",		K_DEC },
	[F_TABLE]	= { "table",		K_DEC },
	[F_SHARED]	= { "shared",		K_DEC },
	[F_TABLE_MEM]	= { "table_mem",	K_DEC },
};

/* namespace line fields (optional line, before the services) */
enum fl_nfield { N_SERVICES, N_TABLES, N_FILLS, N_FOUND, N_MEM, N_NR };

static const char *const fl_nfields[N_NR] = {
	[N_SERVICES]	= "services",
	[N_TABLES]	= "tables",
	[N_FILLS]	= "fills",
	[N_FOUND]	= "found",
	[N_MEM]		= "mem",
};

struct fl_dest {
	char name[FL_NAME_MAX + 1];
	uint64_t weight, slots, drain;
	bool have_drain;		/* the line has "drain D" */
};

struct fl_svc {
	char id[FL_NAME_MAX + 8];	/* "PROTO VIP" */
	uint64_t val[F_NR];
	char text[F_NR][24];		/* each value as written */
	unsigned int have;		/* bit per enum fl_field */
	unsigned int unknown;		/* given as "-": not known */
	unsigned long line;
	struct fl_dest *dest;
	size_t nr_dest;
};

struct fl_lb {
	const char *label, *path;
	struct fl_svc *svc;
	size_t nr_svc;
	uint64_t ns[N_NR];		/* the namespace line's values */
	unsigned int ns_have;		/* bit per enum fl_nfield */
	unsigned long ns_line;
	/* the module line (maglev-fleet collect) */
	unsigned long mod_line;		/* 0: the file has none */
	char mod[32], ver[32];		/* "-": none, not known */
	char bits[4];			/* "32" or "64" */
	bool proc_missing;
};

static void *fl_realloc(void *p, size_t n, size_t size)
{
	p = reallocarray(p, n, size);
	if (!p) {
		perror("maglev-fleet");
		exit(2);
	}
	return p;
}

static __attribute__((format(printf, 3, 4), noreturn))
void fl_bad(const struct fl_lb *lb, unsigned long line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "maglev-fleet: %s:%lu: ", lb->path, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static int fl_parse_dec(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (!*s || (s[0] == '0' && s[1]))
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return 0;
}

static int fl_parse_hex(const char *s, size_t digits, uint64_t *v)
{
	uint64_t x = 0;
	size_t n;

	for (n = 0; s[n]; n++) {
		char c = s[n];

		if (n == digits || !((c >= '0' && c <= '9') ||
				     (c >= 'a' && c <= 'f')))
			return -1;
		x = x << 4 | (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
	}
	if (n != digits)
		return -1;
	*v = x;
	return 0;
}

static int fl_parse_value(enum fl_kind kind, const char *s, uint64_t *v)
{
	switch (kind) {
	case K_DEC:
		return fl_parse_dec(s, v);
	case K_HEX8:
		return fl_parse_hex(s, 8, v);
	case K_HEX16:
		return fl_parse_hex(s, 16, v);
	case K_FLAGS:
		if (strncmp(s, "0x", 2) || !s[2] || strlen(s) > 10)
			return -1;
		for (const char *p = s + 2; *p; p++)
			if (!((*p >= '0' && *p <= '9') ||
			      (*p >= 'a' && *p <= 'f')))
				return -1;
		*v = strtoull(s + 2, NULL, 16);
		return 0;
	}
	return -1;
}

/* An address with a port, as the kernel names them: A.B.C.D:P, [V6]:P. */
static int fl_addr_port(const char *s)
{
	char addr[FL_NAME_MAX + 1];
	unsigned char buf[16];
	const char *colon;
	uint64_t port;
	size_t len;

	if (strlen(s) > FL_NAME_MAX)
		return -1;
	if (s[0] == '[') {
		colon = strstr(s, "]:");
		if (!colon)
			return -1;
		len = (size_t)(colon - s - 1);
		memcpy(addr, s + 1, len);
		addr[len] = 0;
		colon++;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -1;
		len = (size_t)(colon - s);
		memcpy(addr, s, len);
		addr[len] = 0;
	}
	if (inet_pton(s[0] == '[' ? AF_INET6 : AF_INET, addr, buf) != 1)
		return -1;
	if (fl_parse_dec(colon + 1, &port) || port > 65535)
		return -1;
	return 0;
}

static int fl_vip_ok(const char *proto, const char *vip)
{
	uint64_t mark;

	if (!strcmp(proto, "TCP") || !strcmp(proto, "UDP") ||
	    !strcmp(proto, "SCTP"))
		return fl_addr_port(vip);
	if (!strcmp(proto, "FWM") || !strcmp(proto, "FWM6"))
		return fl_parse_dec(vip, &mark) || mark > UINT32_MAX ? -1 : 0;
	return -1;
}

static void fl_service_line(struct fl_lb *lb, unsigned long ln, char **tok,
			    int n)
{
	struct fl_svc *s;
	int i, f;

	if (n < 3)
		fl_bad(lb, ln, "service line without PROTO and VIP");
	if (fl_vip_ok(tok[1], tok[2]))
		fl_bad(lb, ln, "bad service '%s %s' (PROTO is TCP, UDP, SCTP, FWM or FWM6; VIP A.B.C.D:port, [IPv6]:port or a mark)",
		       tok[1], tok[2]);
	if ((n - 3) % 2)
		fl_bad(lb, ln, "'%s' has no value", tok[n - 1]);
	lb->svc = fl_realloc(lb->svc, lb->nr_svc + 1, sizeof(*lb->svc));
	s = &lb->svc[lb->nr_svc];
	memset(s, 0, sizeof(*s));
	snprintf(s->id, sizeof(s->id), "%s %s", tok[1], tok[2]);
	for (size_t k = 0; k < lb->nr_svc; k++)
		if (!strcmp(lb->svc[k].id, s->id))
			fl_bad(lb, ln, "service %s listed twice (line %lu)",
			       s->id, lb->svc[k].line);
	lb->nr_svc++;
	s->line = ln;
	for (i = 3; i < n; i += 2) {
		for (f = 0; f < F_NR; f++)
			if (!strcmp(tok[i], fl_fields[f].name))
				break;
		if (f == F_NR)
			continue;	/* a field added later: not ours */
		if (s->have & 1u << f)
			fl_bad(lb, ln, "'%s' given twice", tok[i]);
		/* "churn -": not counted (the build had no memory for it). */
		if (f == F_CHURN && !strcmp(tok[i + 1], "-")) {
			s->unknown |= 1u << f;
			continue;
		}
		if (strlen(tok[i + 1]) >= sizeof(s->text[f]) ||
		    fl_parse_value(fl_fields[f].kind, tok[i + 1], &s->val[f]))
			fl_bad(lb, ln, "bad %s '%s'", tok[i], tok[i + 1]);
		strcpy(s->text[f], tok[i + 1]);
		s->have |= 1u << f;
	}
	if ((s->have & (1u << F_KEY | 1u << F_SEED)) ==
	    (1u << F_KEY | 1u << F_SEED))
		fl_bad(lb, ln, "both key and seed");
	if (!(s->have & (1u << F_KEY | 1u << F_SEED)))
		fl_bad(lb, ln, "no key (or seed) on the service line");
	for (f = 0; f < F_NR; f++) {
		if (f == F_KEY || f == F_SEED || f >= F_PENDING)
			continue;	/* optional, or one of the two */
		if (!(s->have & 1u << f) && !(s->unknown & 1u << f))
			fl_bad(lb, ln, "no %s on the service line",
			       fl_fields[f].name);
	}
}

static void fl_dest_line(struct fl_lb *lb, unsigned long ln, char **tok,
			 int n)
{
	struct fl_svc *s;
	struct fl_dest *d;
	uint64_t w = 0, k = 0, dr = 0;
	int i, have_w = 0, have_k = 0, have_d = 0;

	if (!lb->nr_svc)
		fl_bad(lb, ln, "dest line before any service line");
	s = &lb->svc[lb->nr_svc - 1];
	if (n < 2 || (n - 2) % 2)
		fl_bad(lb, ln, "dest line is not 'dest NAME weight W slots K'");
	if (fl_addr_port(tok[1]))
		fl_bad(lb, ln, "bad dest name '%s'", tok[1]);
	for (i = 2; i < n; i += 2) {
		if (!strcmp(tok[i], "weight")) {
			if (have_w++ || fl_parse_dec(tok[i + 1], &w) ||
			    w > INT32_MAX)
				fl_bad(lb, ln, "bad weight '%s'", tok[i + 1]);
		} else if (!strcmp(tok[i], "slots")) {
			if (have_k++ || fl_parse_dec(tok[i + 1], &k))
				fl_bad(lb, ln, "bad slots '%s'", tok[i + 1]);
		} else if (!strcmp(tok[i], "drain")) {
			if (have_d++ || fl_parse_dec(tok[i + 1], &dr) ||
			    dr > INT32_MAX)
				fl_bad(lb, ln, "bad drain '%s'", tok[i + 1]);
		}
	}
	if (have_d && dr && w)
		fl_bad(lb, ln, "drain %" PRIu64 " with weight %" PRIu64 " (only a weight 0 drains)",
		       dr, w);
	if (!have_w || !have_k)
		fl_bad(lb, ln, "dest line without weight or slots");
	for (size_t j = 0; j < s->nr_dest; j++)
		if (!strcmp(s->dest[j].name, tok[1]))
			fl_bad(lb, ln, "dest %s listed twice in %s", tok[1],
			       s->id);
	s->dest = fl_realloc(s->dest, s->nr_dest + 1, sizeof(*s->dest));
	d = &s->dest[s->nr_dest++];
	strcpy(d->name, tok[1]);
	d->weight = w;
	d->slots = k;
	d->drain = dr;
	d->have_drain = have_d;
}

/* "namespace services S tables T fills F found H mem B" */
static void fl_namespace_line(struct fl_lb *lb, unsigned long ln, char **tok,
			      int n)
{
	int i, f;

	if (lb->ns_line)
		fl_bad(lb, ln, "namespace line twice (line %lu)", lb->ns_line);
	if (lb->nr_svc)
		fl_bad(lb, ln, "namespace line after a service line");
	if ((n - 1) % 2)
		fl_bad(lb, ln, "'%s' has no value", tok[n - 1]);
	lb->ns_line = ln;
	for (i = 1; i < n; i += 2) {
		for (f = 0; f < N_NR; f++)
			if (!strcmp(tok[i], fl_nfields[f]))
				break;
		if (f == N_NR)
			continue;	/* a field added later: not ours */
		if (lb->ns_have & 1u << f)
			fl_bad(lb, ln, "'%s' given twice", tok[i]);
		if (fl_parse_dec(tok[i + 1], &lb->ns[f]))
			fl_bad(lb, ln, "bad %s '%s'", tok[i], tok[i + 1]);
		lb->ns_have |= 1u << f;
	}
}

/* A word of the module line: letters, digits and ._+~:- only. */
static int fl_word_ok(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (!n || n >= max)
		return -1;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("._+~:-", *s)))
			return -1;
	return 0;
}

/* "module NAME version V bits B proc yes|missing", first in the file. */
static void fl_module_line(struct fl_lb *lb, unsigned long ln, char **tok,
			   int n)
{
	if (lb->mod_line)
		fl_bad(lb, ln, "module line twice (line %lu)", lb->mod_line);
	if (lb->ns_line || lb->nr_svc)
		fl_bad(lb, ln, "module line after a namespace or service line");
	if (n != 8 || strcmp(tok[2], "version") || strcmp(tok[4], "bits") ||
	    strcmp(tok[6], "proc"))
		fl_bad(lb, ln, "module line is not 'module NAME version V bits B proc yes|missing'");
	if (fl_word_ok(tok[1], sizeof(lb->mod)))
		fl_bad(lb, ln, "bad module name '%s'", tok[1]);
	if (fl_word_ok(tok[3], sizeof(lb->ver)))
		fl_bad(lb, ln, "bad version '%s'", tok[3]);
	if (strcmp(tok[5], "32") && strcmp(tok[5], "64"))
		fl_bad(lb, ln, "bad bits '%s' (32 or 64)", tok[5]);
	if (strcmp(tok[7], "yes") && strcmp(tok[7], "missing"))
		fl_bad(lb, ln, "bad proc '%s' (yes or missing)", tok[7]);
	lb->mod_line = ln;
	strcpy(lb->mod, tok[1]);
	strcpy(lb->ver, tok[3]);
	strcpy(lb->bits, tok[5]);
	lb->proc_missing = !strcmp(tok[7], "missing");
}

/* Read one LB's file from @f (named lb->path in messages). */
static void fl_read_stream(struct fl_lb *lb, FILE *f)
{
	static const char ws[] = " \t\r\n";
	char *line = NULL, *tok[FL_TOKENS + 1], *save, *w;
	unsigned long ln = 0;
	size_t cap = 0;
	ssize_t len;
	int n;

	while ((len = getline(&line, &cap, f)) >= 0) {
		ln++;
		if (strlen(line) != (size_t)len)
			fl_bad(lb, ln, "NUL byte");
		n = 0;
		save = NULL;
		for (w = strtok_r(line, ws, &save); w;
		     w = strtok_r(NULL, ws, &save)) {
			if (n == FL_TOKENS)
				fl_bad(lb, ln, "more than %d words",
				       FL_TOKENS);
			tok[n++] = w;
		}
		if (!n || tok[0][0] == '#')
			continue;
		if (lb->proc_missing)
			fl_bad(lb, ln, "a line after 'proc missing'");
		if (!strcmp(tok[0], "module"))
			fl_module_line(lb, ln, tok, n);
		else if (!strcmp(tok[0], "service"))
			fl_service_line(lb, ln, tok, n);
		else if (!strcmp(tok[0], "dest"))
			fl_dest_line(lb, ln, tok, n);
		else if (!strcmp(tok[0], "namespace"))
			fl_namespace_line(lb, ln, tok, n);
		else
			fl_bad(lb, ln, "neither a module, namespace, service nor dest line: '%.40s'",
			       tok[0]);
	}
	if (ferror(f)) {
		fprintf(stderr, "maglev-fleet: %s: read error\n", lb->path);
		exit(2);
	}
	free(line);
}

static void fl_read(struct fl_lb *lb)
{
	FILE *f = strcmp(lb->path, "-") ? fopen(lb->path, "r") : stdin;

	if (!f) {
		fprintf(stderr, "maglev-fleet: %s: %s\n", lb->path,
			strerror(errno));
		exit(2);
	}
	fl_read_stream(lb, f);
	if (f != stdin)
		fclose(f);
}

static const struct fl_svc *fl_find(const struct fl_lb *lb, const char *id)
{
	for (size_t i = 0; i < lb->nr_svc; i++)
		if (!strcmp(lb->svc[i].id, id))
			return &lb->svc[i];
	return NULL;
}

static const struct fl_dest *fl_find_dest(const struct fl_svc *s,
					  const char *name)
{
	for (size_t i = 0; i < s->nr_dest; i++)
		if (!strcmp(s->dest[i].name, name))
			return &s->dest[i];
	return NULL;
}

/* --- check ------------------------------------------------------------- */

/* The key as compared and printed: the fingerprint, or "seed S". */
static void fl_key_text(const struct fl_svc *s, char *buf, size_t len)
{
	if (s->have & 1u << F_KEY)
		snprintf(buf, len, "%s", s->text[F_KEY]);
	else
		snprintf(buf, len, "seed %s", s->text[F_SEED]);
}

/*
 * A destination's weight as compared across LBs: with weight 0, whether it
 * drains (from its former weight) or was added with weight 0, which give
 * different tables.  Files without "drain" show the weight alone.
 */
static void fl_dest_text(const struct fl_dest *d, char *buf, size_t len)
{
	if (d->weight || !d->have_drain)
		snprintf(buf, len, "weight %" PRIu64, d->weight);
	else if (d->drain)
		snprintf(buf, len, "weight 0 draining from %" PRIu64, d->drain);
	else
		snprintf(buf, len, "weight 0 added at 0");
}

/*
 * Print "V1 on a, b; V2 on c": the LBs grouped by equal value, in order of
 * first appearance.  val[i] is NULL for an LB without the service.
 */
static void fl_groups(FILE *o, const struct fl_lb *lbs, size_t nr, char **val)
{
	int *done = calloc(nr, sizeof(*done));
	const char *sep = "";

	if (!done) {
		perror("maglev-fleet");
		exit(2);
	}
	for (size_t i = 0; i < nr; i++) {
		const char *comma = "";

		if (!val[i] || done[i])
			continue;
		fprintf(o, "%s%s on ", sep, val[i]);
		for (size_t j = i; j < nr; j++) {
			if (val[j] && !done[j] && !strcmp(val[i], val[j])) {
				fprintf(o, "%s%s", comma, lbs[j].label);
				done[j] = 1;
				comma = ", ";
			}
		}
		sep = "; ";
	}
	free(done);
}

/* 1 if the LBs that have the service do not all show the same value. */
static int fl_differ(size_t nr, char **val)
{
	const char *first = NULL;

	for (size_t i = 0; i < nr; i++) {
		if (!val[i])
			continue;
		if (first && strcmp(first, val[i]))
			return 1;
		first = val[i];
	}
	return 0;
}

enum fl_verdict { V_AGREE, V_PENDING, V_DIFFER };

/* Compare one service across the LBs; print why if it does not agree. */
static enum fl_verdict fl_check_svc(FILE *o, const struct fl_lb *lbs,
				    size_t nr, const char *id, int verbose)
{
	const struct fl_svc **s = calloc(nr, sizeof(*s));
	char **val = calloc(nr, sizeof(*val));
	char (*buf)[96] = calloc(nr, sizeof(*buf));
	size_t nr_have = 0, i, j;
	int missing = 0, pending = 0, size_d, key_d, flags_d, digest_d;
	int dest_d = 0, drain_known = 1;
	char a[64], b[64];
	enum fl_verdict v;

	if (!s || !val || !buf) {
		perror("maglev-fleet");
		exit(2);
	}
	for (i = 0; i < nr; i++) {
		s[i] = fl_find(&lbs[i], id);
		if (!s[i]) {
			missing = 1;
			continue;
		}
		nr_have++;
		if (s[i]->val[F_PENDING])
			pending = 1;
	}

#define FL_VALUES(expr)	do {						\
		for (i = 0; i < nr; i++) {				\
			val[i] = s[i] ? buf[i] : NULL;			\
			if (s[i])					\
				expr;					\
		}							\
	} while (0)

	FL_VALUES(snprintf(buf[i], sizeof(buf[i]), "%s", s[i]->text[F_SIZE]));
	size_d = fl_differ(nr, val);
	FL_VALUES(fl_key_text(s[i], buf[i], sizeof(buf[i])));
	key_d = fl_differ(nr, val);
	FL_VALUES(snprintf(buf[i], sizeof(buf[i]), "0x%" PRIx64,
			   s[i]->val[F_FLAGS]));
	flags_d = fl_differ(nr, val);
	FL_VALUES(snprintf(buf[i], sizeof(buf[i]), "%s",
			   s[i]->text[F_DIGEST]));
	digest_d = fl_differ(nr, val);

	/* destinations: the union over the LBs, each LB's weight or none */
	for (i = 0; i < nr; i++) {
		for (j = 0; s[i] && j < s[i]->nr_dest; j++) {
			const char *name = s[i]->dest[j].name;
			size_t k;

			if (!s[i]->dest[j].have_drain)
				drain_known = 0;
			fl_dest_text(&s[i]->dest[j], a, sizeof(a));
			for (k = 0; k < nr; k++) {
				const struct fl_dest *d;

				if (!s[k])
					continue;
				d = fl_find_dest(s[k], name);
				if (d)
					fl_dest_text(d, b, sizeof(b));
				if (!d || strcmp(a, b))
					dest_d = 1;
			}
		}
	}

	if (missing)
		v = V_DIFFER;
	else if (pending)
		v = V_PENDING;
	else if (size_d || key_d || flags_d || digest_d)
		v = V_DIFFER;
	else
		v = V_AGREE;

	if (v == V_AGREE) {
		if (verbose) {
			const struct fl_svc *a = s[0];

			fl_key_text(a, buf[0], sizeof(buf[0]));
			fprintf(o, "%s: agrees on all %zu: digest %s key %s size %s flags 0x%" PRIx64 " dests %zu%s\n",
			       id, nr, a->text[F_DIGEST], buf[0],
			       a->text[F_SIZE], a->val[F_FLAGS], a->nr_dest,
			       dest_d ? " (the weights differ, their tables do not)" : "");
		}
		goto out;
	}

	if (v == V_PENDING) {
		const char *comma = "";

		fprintf(o, "%s: pending on ", id);
		for (i = 0; i < nr; i++) {
			if (!s[i]->val[F_PENDING])
				continue;
			fprintf(o, "%s%s", comma, lbs[i].label);
			if (s[i]->have & 1u << F_TABLE_GEN)
				fprintf(o, " (gen %s, table_gen %s)",
				       s[i]->text[F_GEN],
				       s[i]->text[F_TABLE_GEN]);
			comma = ", ";
		}
		fprintf(o, ": its table has not caught up with its configuration; not compared, look again when it shows pending 0\n");
	} else {
		fprintf(o, "%s: differs\n", id);
	}
	if (missing) {
		const char *comma = "";

		fprintf(o, "  service: missing on ");
		for (i = 0; i < nr; i++) {
			if (!s[i]) {
				fprintf(o, "%s%s", comma, lbs[i].label);
				comma = ", ";
			}
		}
		fprintf(o, "; present on ");
		comma = "";
		for (i = 0; i < nr; i++) {
			if (s[i]) {
				fprintf(o, "%s%s", comma, lbs[i].label);
				comma = ", ";
			}
		}
		fprintf(o, "\n");
	}
	if (nr_have < 2)
		goto out;
	/* each destination that is not on every LB with the same weight */
	for (i = 0; i < nr; i++) {
		for (j = 0; s[i] && j < s[i]->nr_dest; j++) {
			const char *name = s[i]->dest[j].name;
			size_t k, first = nr;
			int differs = 0, drains = 0, at0 = 0;

			for (k = 0; k < nr; k++) {
				const struct fl_dest *d;

				val[k] = NULL;
				if (!s[k])
					continue;
				d = fl_find_dest(s[k], name);
				if (d && first == nr)
					first = k;
				val[k] = buf[k];
				if (d) {
					fl_dest_text(d, buf[k], sizeof(buf[k]));
					drains |= d->have_drain && d->drain;
					at0 |= d->have_drain && !d->drain &&
					       !d->weight;
				} else {
					snprintf(buf[k], sizeof(buf[k]),
						 "missing");
				}
			}
			if (first != i)
				continue;	/* printed already */
			differs = fl_differ(nr, val);
			if (!differs)
				continue;
			fprintf(o, "  dest %s: ", name);
			fl_groups(o, lbs, nr, val);
			if (drains && at0)
				fprintf(o, " (restored at weight 0 during a drain: restore it as draining, maglev-fleet save)");
			fprintf(o, "\n");
		}
	}
	if (size_d) {
		FL_VALUES(snprintf(buf[i], sizeof(buf[i]), "%s",
				   s[i]->text[F_SIZE]));
		fprintf(o, "  size: ");
		fl_groups(o, lbs, nr, val);
		fprintf(o, " (table_size differs, or a service has more destinations than it)\n");
	}
	if (key_d) {
		FL_VALUES(fl_key_text(s[i], buf[i], sizeof(buf[i])));
		fprintf(o, "  key: ");
		fl_groups(o, lbs, nr, val);
		fprintf(o, " (client hash keys differ: the same client is looked up in another slot)\n");
	}
	if (flags_d) {
		FL_VALUES(snprintf(buf[i], sizeof(buf[i]), "0x%" PRIx64,
				   s[i]->val[F_FLAGS]));
		fprintf(o, "  flags: ");
		fl_groups(o, lbs, nr, val);
		fprintf(o, " (0x10 flag-2 port hashing, 0x8 flag-1 fallback)\n");
	}
	if (digest_d) {
		FL_VALUES(snprintf(buf[i], sizeof(buf[i]), "%s",
				   s[i]->text[F_DIGEST]));
		fprintf(o, "  digest: ");
		fl_groups(o, lbs, nr, val);
		if (!dest_d && !size_d && drain_known)
			fprintf(o, " (same destinations, weights, drains and size: different module versions or kernels)");
		else if (!dest_d && !size_d)
			fprintf(o, " (same destinations, weights and size: a drained destination's history, or different module versions)");
		fprintf(o, "\n");
	}
	if (v == V_DIFFER && !missing && !size_d && !key_d && !flags_d &&
	    !digest_d)
		fprintf(o, "  (no difference in the tables)\n");
out:
	free(s);
	free(val);
	free(buf);
	return v;
}

/* Why an LB has no /proc/net/ip_vs_maglev, from its module line. */
static const char *fl_noproc_why(const struct fl_lb *lb)
{
	if (!strcmp(lb->mod, "-"))
		return "no maglev module is loaded (ip_vs_maglev or ip_vs_mh): not installed for the running kernel, or not loaded yet";
	if (!strcmp(lb->ver, "-"))
		return "a module without a version is loaded: the kernel's own, another table (did the DKMS build fail for the running kernel?)";
	return "the module is loaded, but this network namespace has no file";
}

/*
 * The fleet's modules: every LB with a module line must have the /proc
 * file, and they must run one version on one word size.  Prints each
 * problem; returns their number.
 */
static size_t fl_check_modules(FILE *o, const struct fl_lb *lbs, size_t nr)
{
	char **val = calloc(nr, sizeof(*val));
	char (*buf)[64] = calloc(nr, sizeof(*buf));
	size_t i, bad = 0;

	if (!val || !buf) {
		perror("maglev-fleet");
		exit(2);
	}
	for (i = 0; i < nr; i++) {
		if (lbs[i].mod_line && lbs[i].proc_missing) {
			fprintf(o, "%s: no /proc/net/ip_vs_maglev (module %s, version %s): %s\n",
				lbs[i].label, lbs[i].mod, lbs[i].ver,
				fl_noproc_why(&lbs[i]));
			bad++;
		}
	}
	for (i = 0; i < nr; i++) {
		val[i] = NULL;
		/* (one without the file is reported above) */
		if (lbs[i].mod_line && strcmp(lbs[i].mod, "-") &&
		    !lbs[i].proc_missing) {
			snprintf(buf[i], sizeof(buf[i]), "%s", lbs[i].ver);
			val[i] = buf[i];
		}
	}
	if (fl_differ(nr, val)) {
		fprintf(o, "module version: ");
		fl_groups(o, lbs, nr, val);
		fprintf(o, " (a mixed fleet: finish the upgrade or the rollback; NEWS says which versions move clients)\n");
		bad++;
	}
	for (i = 0; i < nr; i++)
		val[i] = lbs[i].mod_line ? (char *)lbs[i].bits : NULL;
	if (fl_differ(nr, val)) {
		fprintf(o, "kernel word size: ");
		fl_groups(o, lbs, nr, val);
		fprintf(o, " bits (32-bit kernels hash clients with HalfSipHash, 64-bit ones with SipHash: the same tables, other servers)\n");
		bad++;
	}
	free(val);
	free(buf);
	return bad;
}

/* " (module V, B-bit)" when every LB has one module line and they agree. */
static void fl_modules_summary(const struct fl_lb *lbs, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		if (!lbs[i].mod_line || lbs[i].proc_missing ||
		    strcmp(lbs[i].ver, lbs[0].ver) ||
		    strcmp(lbs[i].bits, lbs[0].bits))
			return;
	printf("; module %s %s, %s-bit kernels", lbs[0].mod, lbs[0].ver,
	       lbs[0].bits);
}

static const char *fl_label(const char *arg, const char **path)
{
	const char *eq = strchr(arg, '='), *slash;

	if (eq && eq != arg && memchr(arg, '/', (size_t)(eq - arg)) == NULL) {
		*path = eq + 1;
		return strndup(arg, (size_t)(eq - arg));
	}
	*path = arg;
	slash = strrchr(arg, '/');
	return slash ? slash + 1 : arg;
}

static int fl_check(int argc, char **argv)
{
	struct fl_lb *lbs;
	size_t nr = 0, nr_svc = 0, n_differ = 0, n_pending = 0, n_mod, i, j, k;
	const char **ids = NULL;
	int verbose = 0;

	if (argc > 0 && !strcmp(argv[0], "-v")) {
		verbose = 1;
		argc--;
		argv++;
	}
	if (argc < 1) {
		fputs("maglev-fleet check: no FILE\n", stderr);
		fputs(fl_help, stderr);
		return 2;
	}
	lbs = calloc((size_t)argc, sizeof(*lbs));
	if (!lbs)
		return 2;
	for (i = 0; i < (size_t)argc; i++) {
		lbs[nr].label = fl_label(argv[i], &lbs[nr].path);
		if (!*lbs[nr].label || !*lbs[nr].path) {
			fprintf(stderr, "maglev-fleet: bad argument '%s'\n",
				argv[i]);
			return 2;
		}
		for (j = 0; j < nr; j++)
			if (!strcmp(lbs[j].label, lbs[nr].label)) {
				fprintf(stderr, "maglev-fleet: two load balancers called '%s': use LABEL=FILE\n",
					lbs[nr].label);
				return 2;
			}
		fl_read(&lbs[nr]);
		nr++;
	}
	/* every service of any LB, in order of first appearance */
	for (i = 0; i < nr; i++) {
		for (j = 0; j < lbs[i].nr_svc; j++) {
			const char *id = lbs[i].svc[j].id;

			for (k = 0; k < nr_svc; k++)
				if (!strcmp(ids[k], id))
					break;
			if (k < nr_svc)
				continue;
			ids = fl_realloc(ids, nr_svc + 1, sizeof(*ids));
			ids[nr_svc++] = id;
		}
	}

	/* the status line first, as monitoring checks print it */
	{
		char *out = NULL;
		size_t outlen = 0;
		FILE *body = open_memstream(&out, &outlen);

		if (!body) {
			perror("maglev-fleet");
			return 2;
		}
		n_mod = fl_check_modules(body, lbs, nr);
		for (k = 0; k < nr_svc; k++) {
			switch (fl_check_svc(body, lbs, nr, ids[k], verbose)) {
			case V_DIFFER:
				n_differ++;
				break;
			case V_PENDING:
				n_pending++;
				break;
			case V_AGREE:
				break;
			}
		}
		if (fclose(body)) {
			perror("maglev-fleet");
			return 2;
		}
		if (n_differ || n_mod)
			printf("DISAGREE: %zu of %zu maglev services differ across %zu load balancers%s",
			       n_differ, nr_svc, nr,
			       n_mod ? ", and their modules do" : "");
		else if (n_pending)
			printf("PENDING: %zu of %zu maglev services have tables still being built on %zu load balancers, none differs otherwise",
			       n_pending, nr_svc, nr);
		else
			printf("OK: %zu maglev services agree on %zu load balancers",
			       nr_svc, nr);
		if ((n_differ || n_mod) && n_pending)
			printf(", %zu more pending", n_pending);
		printf(" (");
		for (i = 0; i < nr; i++)
			printf("%s%s", i ? ", " : "", lbs[i].label);
		printf(")");
		if (!n_mod)
			fl_modules_summary(lbs, nr);
		printf("\n");
		fwrite(out, 1, outlen, stdout);
		free(out);
	}
	if (fflush(stdout) || ferror(stdout)) {
		perror("maglev-fleet: stdout");
		return 2;
	}
	if (n_differ || n_mod)
		return 1;
	return n_pending ? 3 : 0;
}

/* --- collect ------------------------------------------------------------- */

/* The kernel's word size, from uname(2)'s machine: "64" or "32". */
static const char *fl_bits(void)
{
	struct utsname u;

	if (uname(&u))
		return "64";
	return strstr(u.machine, "64") || !strcmp(u.machine, "s390x") ||
	       !strcmp(u.machine, "alpha") ? "64" : "32";
}

/*
 * The module line, then ROOT/proc/net/ip_vs_maglev as it is.  The module
 * is ip_vs_maglev, or else ip_vs_mh (the mh build, or the kernel's own mh,
 * which has no version), as /sys/module shows it.
 */
static int fl_collect_to(FILE *o, const char *root)
{
	static const char *const mods[] = { "ip_vs_maglev", "ip_vs_mh" };
	char path[4096], ver[32] = "-", buf[4096];
	const char *mod = "-";
	FILE *f;
	size_t n;

	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++) {
		snprintf(path, sizeof(path), "%s/sys/module/%s", root, mods[i]);
		if (!access(path, F_OK)) {
			mod = mods[i];
			break;
		}
	}
	if (strcmp(mod, "-")) {
		snprintf(path, sizeof(path), "%s/sys/module/%s/version", root,
			 mod);
		f = fopen(path, "r");
		if (f) {
			if (fgets(ver, sizeof(ver), f))
				ver[strcspn(ver, " \t\r\n")] = 0;
			if (fl_word_ok(ver, sizeof(ver)))
				strcpy(ver, "-");
			fclose(f);
		}
	}
	snprintf(path, sizeof(path), "%s/proc/net/ip_vs_maglev", root);
	f = fopen(path, "r");
	if (!f && errno != ENOENT) {
		fprintf(stderr, "maglev-fleet: %s: %s\n", path, strerror(errno));
		return 2;
	}
	fprintf(o, "module %s version %s bits %s proc %s\n", mod, ver,
		fl_bits(), f ? "yes" : "missing");
	if (!f)
		return 0;
	while ((n = fread(buf, 1, sizeof(buf), f)))
		fwrite(buf, 1, n, o);
	if (ferror(f)) {
		fprintf(stderr, "maglev-fleet: %s: read error\n", path);
		fclose(f);
		return 2;
	}
	fclose(f);
	return 0;
}

static int fl_collect(int argc, char **argv)
{
	const char *root = "";

	if (argc == 2 && !strcmp(argv[0], "-r") && *argv[1])
		root = argv[1];
	else if (argc) {
		fputs("maglev-fleet collect: usage: maglev-fleet collect [-r ROOT]\n",
		      stderr);
		return 2;
	}
	if (fl_collect_to(stdout, root))
		return 2;
	if (fflush(stdout) || ferror(stdout)) {
		perror("maglev-fleet: stdout");
		return 2;
	}
	return 0;
}

/* --- prom ---------------------------------------------------------------- */

/* A label value in the text format: backslash, quote and newline escaped. */
static void fl_label_value(const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			printf("\\%c", *s);
		else if (*s == '\n')
			printf("\\n");
		else
			putchar(*s);
	}
}

/* A metric family: its name, type, what it comes from, its help. */
struct fl_fam {
	const char *name, *type, *from, *help;
};

static void fl_family(const struct fl_fam *m)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", m->name, m->help, m->name,
	       m->type);
}

static void fl_sample_start(const char *name, const struct fl_svc *s)
{
	printf("%s{service=\"", name);
	fl_label_value(s->id);
	printf("\"");
}

static const struct fl_fam fl_f_module = {
	"ip_vs_maglev_module_info", "gauge",
	"the module line (maglev-fleet collect): labels module, version, bits",
	"Always 1: the loaded module (ip_vs_maglev, ip_vs_mh or -), its running version (/sys/module/NAME/version, - for none: the kernel's own mh) and the kernel's word size."
}, fl_f_proc = {
	"ip_vs_maglev_proc_present", "gauge",
	"the module line: proc yes or missing",
	"1 if /proc/net/ip_vs_maglev exists, 0 if not (no maglev module loaded, or the kernel's own ip_vs_mh in its place)."
}, fl_f_services = {
	"ip_vs_maglev_services", "gauge", "number of service lines",
	"maglev services listed in /proc/net/ip_vs_maglev."
}, fl_f_dweight = {
	"ip_vs_maglev_dest_weight", "gauge", "weight, per dest",
	"Weight the table in use was built with, per destination."
}, fl_f_dslots = {
	"ip_vs_maglev_dest_slots", "gauge", "slots, per dest",
	"Table slots a destination owns."
}, fl_f_ddrain = {
	"ip_vs_maglev_dest_drain_weight", "gauge", "drain, per dest",
	"With weight 0, the weight the destination is draining from; 0 if it is not draining (or was added with weight 0)."
}, fl_f_info = {
	"ip_vs_maglev_table_info", "gauge",
	"labels digest and key (seed:S from modules before the keyed hash)",
	"Always 1: the table's digest and the client hash key fingerprint (\"seed:S\" from modules that print a seed); load balancers agree when both are equal."
};

/* A gauge per destination: its slots, weight or drain weight. */
static void fl_dest_family(const struct fl_lb *lb, const struct fl_fam *m,
			   int what)
{
	size_t i, j;

	fl_family(m);
	for (i = 0; i < lb->nr_svc; i++) {
		for (j = 0; j < lb->svc[i].nr_dest; j++) {
			const struct fl_dest *d = &lb->svc[i].dest[j];

			if (what == 2 && !d->have_drain)
				continue;
			fl_sample_start(m->name, &lb->svc[i]);
			printf(",dest=\"");
			fl_label_value(d->name);
			printf("\"} %" PRIu64 "\n",
			       what == 0 ? d->weight : what == 1 ? d->slots :
			       d->drain);
		}
	}
}

static const struct {
	enum fl_field f;
	struct fl_fam m;
} fl_metrics[] = {
	{ F_SIZE, { "ip_vs_maglev_table_slots", "gauge", "size",
	  "Slots M of the lookup table in use." } },
	{ F_DESTS, { "ip_vs_maglev_dests", "gauge", "dests",
	  "Destinations in the table in use." } },
	{ F_FLAGS, { "ip_vs_maglev_flags", "gauge", "flags",
	  "Scheduler flags of the service (0x8 flag-1 fallback, 0x10 flag-2 port hashing)." } },
	{ F_BUILDS, { "ip_vs_maglev_builds_total", "counter", "builds",
	  "Tables built and published since the service was created." } },
	{ F_CHURN, { "ip_vs_maglev_last_build_churn_slots", "gauge", "churn",
	  "Slots whose owner changed in the last table build." } },
	{ F_BUILD_NS, { "ip_vs_maglev_last_build_duration_seconds", "gauge",
	  "build_ns / 1e9", "Duration of the last table build." } },
	{ F_ALLOC_FAIL, { "ip_vs_maglev_alloc_failures_total", "counter",
	  "alloc_fail",
	  "Table builds that failed for lack of memory (each is retried)." } },
	{ F_BUILD_FAIL, { "ip_vs_maglev_build_failures_total", "counter",
	  "build_fail", "Table builds that failed for another reason." } },
	{ F_PENDING, { "ip_vs_maglev_pending", "gauge", "pending",
	  "1 while a configuration change is not yet in the table in use." } },
	{ F_GEN, { "ip_vs_maglev_config_generation", "gauge", "gen",
	  "Configuration changes the service has seen (gen)." } },
	{ F_TABLE_GEN, { "ip_vs_maglev_table_generation", "gauge", "table_gen",
	  "The configuration generation the table in use was built from (table_gen)." } },
	{ F_MEM, { "ip_vs_maglev_service_memory_bytes", "gauge", "mem",
	  "Bytes the service holds as allocated: its scheduler state and its destinations, plus its share of a table shared with other services (table_mem / shared)." } },
	{ F_SHARED, { "ip_vs_maglev_table_shared_services", "gauge", "shared",
	  "Services of the namespace whose table in use is this service's (1: not shared)." } },
	{ F_TABLE_MEM, { "ip_vs_maglev_shared_table_memory_bytes", "gauge",
	  "table_mem",
	  "Bytes of the (possibly shared) table in use, counted once for all its services." } },
};

static const struct {
	enum fl_nfield f;
	struct fl_fam m;
} fl_nmetrics[] = {
	{ N_TABLES, { "ip_vs_maglev_tables", "gauge", "namespace tables",
	  "Distinct tables of the namespace, each shared by the services with the same inputs." } },
	{ N_FILLS, { "ip_vs_maglev_table_fills_total", "counter",
	  "namespace fills",
	  "Tables filled (real table builds) in the namespace." } },
	{ N_FOUND, { "ip_vs_maglev_table_found_total", "counter",
	  "namespace found",
	  "Builds that found an identical table to share instead of filling one." } },
	{ N_MEM, { "ip_vs_maglev_memory_bytes", "gauge", "namespace mem",
	  "Bytes of all the namespace's maglev tables and services, each shared table counted once." } },
};

#define FL_NR(a)	(sizeof(a) / sizeof((a)[0]))

/* Every family prom can print, in its order: name, type, from, help. */
static int fl_prom_metrics(void)
{
	const struct fl_fam *fixed[] = { &fl_f_module, &fl_f_proc,
					 &fl_f_services };
	const struct fl_fam *tail[] = { &fl_f_dweight, &fl_f_dslots,
					&fl_f_ddrain, &fl_f_info };
	const struct fl_fam *m;
	size_t i, n = FL_NR(fixed) + FL_NR(fl_nmetrics) + FL_NR(fl_metrics) +
		      FL_NR(tail);

	for (i = 0; i < n; i++) {
		size_t k = i;

		if (k < FL_NR(fixed)) {
			m = fixed[k];
		} else if ((k -= FL_NR(fixed)) < FL_NR(fl_nmetrics)) {
			m = &fl_nmetrics[k].m;
		} else if ((k -= FL_NR(fl_nmetrics)) < FL_NR(fl_metrics)) {
			m = &fl_metrics[k].m;
		} else {
			k -= FL_NR(fl_metrics);
			m = tail[k];
		}
		printf("%s\t%s\t%s\t%s\n", m->name, m->type, m->from, m->help);
	}
	return fflush(stdout) || ferror(stdout) ? 2 : 0;
}

static int fl_prom(int argc, char **argv)
{
	struct fl_lb lb = { .label = "", .path = "/proc/net/ip_vs_maglev" };
	size_t i, m;

	if (argc == 1 && !strcmp(argv[0], "--metrics"))
		return fl_prom_metrics();
	if (argc > 1) {
		fputs("maglev-fleet prom: one FILE at most\n", stderr);
		return 2;
	}
	if (argc == 1) {
		lb.path = argv[0];
		fl_read(&lb);
	} else {
		/* this host: what collect prints */
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		if (!f || fl_collect_to(f, "") || fclose(f)) {
			perror("maglev-fleet");
			return 2;
		}
		f = fmemopen(text, len ? len : 1, "r");
		if (!f) {
			perror("maglev-fleet");
			return 2;
		}
		fl_read_stream(&lb, f);
		fclose(f);
		free(text);
	}

	if (lb.mod_line) {
		fl_family(&fl_f_module);
		printf("ip_vs_maglev_module_info{module=\"%s\",version=\"%s\",bits=\"%s\"} 1\n",
		       lb.mod, lb.ver, lb.bits);
	}
	fl_family(&fl_f_proc);
	printf("ip_vs_maglev_proc_present %d\n", !lb.proc_missing);
	fl_family(&fl_f_services);
	printf("ip_vs_maglev_services %zu\n", lb.nr_svc);
	for (m = 0; m < FL_NR(fl_nmetrics); m++) {
		if (!(lb.ns_have & 1u << fl_nmetrics[m].f))
			continue;
		fl_family(&fl_nmetrics[m].m);
		printf("%s %" PRIu64 "\n", fl_nmetrics[m].m.name,
		       lb.ns[fl_nmetrics[m].f]);
	}
	for (m = 0; m < FL_NR(fl_metrics); m++) {
		fl_family(&fl_metrics[m].m);
		for (i = 0; i < lb.nr_svc; i++) {
			const struct fl_svc *s = &lb.svc[i];
			uint64_t v = s->val[fl_metrics[m].f];

			if (!(s->have & 1u << fl_metrics[m].f))
				continue;
			fl_sample_start(fl_metrics[m].m.name, s);
			if (fl_metrics[m].f == F_BUILD_NS)
				printf("} %" PRIu64 ".%09" PRIu64 "\n",
				       v / 1000000000, v % 1000000000);
			else
				printf("} %" PRIu64 "\n", v);
		}
	}
	fl_dest_family(&lb, &fl_f_dweight, 0);
	fl_dest_family(&lb, &fl_f_dslots, 1);
	fl_dest_family(&lb, &fl_f_ddrain, 2);
	fl_family(&fl_f_info);
	for (i = 0; i < lb.nr_svc; i++) {
		const struct fl_svc *s = &lb.svc[i];

		fl_sample_start("ip_vs_maglev_table_info", s);
		printf(",digest=\"%s\",key=\"", s->text[F_DIGEST]);
		if (s->have & 1u << F_KEY)
			printf("%s", s->text[F_KEY]);
		else
			printf("seed:%s", s->text[F_SEED]);
		printf("\"} 1\n");
	}
	if (fflush(stdout) || ferror(stdout)) {
		perror("maglev-fleet: stdout");
		return 2;
	}
	return 0;
}

/* --- save ---------------------------------------------------------------- */

/* "A.B.C.D:P" or "[V6]:P" as the kernel writes it, or -1. */
static int fl_norm_addr(const char *in, char *out, size_t len)
{
	char addr[FL_NAME_MAX + 1], txt[INET6_ADDRSTRLEN];
	unsigned char bin[16];
	const char *colon;
	uint64_t port;
	size_t n;
	int v6 = in[0] == '[';

	if (fl_addr_port(in))
		return -1;
	colon = v6 ? strstr(in, "]:") + 1 : strrchr(in, ':');
	n = (size_t)(colon - in) - 2 * v6;
	memcpy(addr, in + v6, n);
	addr[n] = 0;
	if (inet_pton(v6 ? AF_INET6 : AF_INET, addr, bin) != 1 ||
	    !inet_ntop(v6 ? AF_INET6 : AF_INET, bin, txt, sizeof(txt)) ||
	    fl_parse_dec(colon + 1, &port))
		return -1;
	snprintf(out, len, v6 ? "[%s]:%" PRIu64 : "%s:%" PRIu64, txt, port);
	return 0;
}

/* The service of FILE that an ipvsadm -S service option names, or NULL. */
static const struct fl_svc *fl_save_svc(const struct fl_lb *lb,
					const char *opt, const char *val,
					bool v6)
{
	const char *proto = NULL;
	char want[FL_NAME_MAX + 1], have[FL_NAME_MAX + 1];

	if (!strcmp(opt, "-t") || !strcmp(opt, "--tcp-service"))
		proto = "TCP";
	else if (!strcmp(opt, "-u") || !strcmp(opt, "--udp-service"))
		proto = "UDP";
	else if (!strcmp(opt, "--sctp-service"))
		proto = "SCTP";
	else if (!strcmp(opt, "-f") || !strcmp(opt, "--fwmark-service"))
		proto = v6 ? "FWM6" : "FWM";
	if (!proto)
		return NULL;
	if (strncmp(proto, "FWM", 3) && fl_norm_addr(val, want, sizeof(want)))
		return NULL;
	for (size_t i = 0; i < lb->nr_svc; i++) {
		const char *id = lb->svc[i].id, *sp = strchr(id, ' ');

		if ((size_t)(sp - id) != strlen(proto) ||
		    strncmp(id, proto, strlen(proto)))
			continue;
		if (!strncmp(proto, "FWM", 3) ? !strcmp(sp + 1, val) :
		    !fl_norm_addr(sp + 1, have, sizeof(have)) &&
		    !strcmp(have, want))
			return &lb->svc[i];
	}
	return NULL;
}

static const struct fl_dest *fl_save_dest(const struct fl_svc *s,
					  const char *name)
{
	char want[FL_NAME_MAX + 1], have[FL_NAME_MAX + 1];

	if (fl_norm_addr(name, want, sizeof(want)))
		return NULL;
	for (size_t i = 0; i < s->nr_dest; i++)
		if (!fl_norm_addr(s->dest[i].name, have, sizeof(have)) &&
		    !strcmp(have, want))
			return &s->dest[i];
	return NULL;
}

/* Print tok[0..n) with tok[0] as @cmd and tok[wi] as @w. */
static void fl_save_line(FILE *o, const char *cmd, char **tok, int n, int wi,
			 uint64_t w)
{
	fputs(cmd, o);
	for (int i = 1; i < n; i++) {
		if (i == wi)
			fprintf(o, " %" PRIu64, w);
		else
			fprintf(o, " %s", tok[i]);
	}
	fputc('\n', o);
}

static int fl_save(int argc, char **argv)
{
	static const char ws[] = " \t\r\n";
	struct fl_lb lb = { .label = "", .path = "/proc/net/ip_vs_maglev" };
	char *line = NULL, *copy, *tok[FL_TOKENS + 1], *save, *w;
	char *edits = NULL;
	size_t cap = 0, elen = 0, nr_drain = 0, i;
	unsigned long ln = 0;
	bool only_drains = false;
	FILE *e;
	int n;

	if (argc && !strcmp(argv[0], "--drains")) {
		only_drains = true;
		argc--;
		argv++;
	}
	if (argc > 1 || (argc == 1 && argv[0][0] == '-' && argv[0][1])) {
		fputs("maglev-fleet save: usage: ipvsadm -S -n | maglev-fleet save [--drains] [FILE]\n",
		      stderr);
		return 2;
	}
	if (argc == 1)
		lb.path = argv[0];
	fl_read(&lb);
	if (lb.proc_missing) {
		fprintf(stderr, "maglev-fleet: %s: no /proc/net/ip_vs_maglev on that load balancer\n",
			lb.path);
		return 2;
	}
	for (i = 0; i < lb.nr_svc; i++) {
		if (lb.svc[i].val[F_PENDING]) {
			fprintf(stderr, "maglev-fleet: %s:%lu: %s is pending: its table is not its configuration yet; wait for pending 0 and save again\n",
				lb.path, lb.svc[i].line, lb.svc[i].id);
			return 3;
		}
	}
	e = open_memstream(&edits, &elen);
	if (!e) {
		perror("maglev-fleet");
		return 2;
	}
	while (getline(&line, &cap, stdin) >= 0) {
		const char *sopt = NULL, *sval = NULL, *rname = NULL;
		char nbuf[FL_NAME_MAX + 1];
		const struct fl_svc *s;
		const struct fl_dest *d;
		uint64_t weight = 1;
		bool v6 = false;
		int wi = 0;

		ln++;
		copy = strdup(line);
		if (!copy) {
			perror("maglev-fleet");
			return 2;
		}
		n = 0;
		save = NULL;
		for (w = strtok_r(copy, ws, &save); w && n < FL_TOKENS;
		     w = strtok_r(NULL, ws, &save))
			tok[n++] = w;
		if (!n || (strcmp(tok[0], "-a") &&
			   strcmp(tok[0], "--add-server"))) {
			if (!only_drains)
				fputs(line, stdout);
			free(copy);
			continue;
		}
		for (int k = 1; k < n; k++) {
			if (!strcmp(tok[k], "-6") || !strcmp(tok[k], "--ipv6"))
				v6 = true;
			if (k + 1 >= n)
				continue;
			if (!strcmp(tok[k], "-r") ||
			    !strcmp(tok[k], "--real-server")) {
				rname = tok[k + 1];
			} else if (!strcmp(tok[k], "-w") ||
				   !strcmp(tok[k], "--weight")) {
				wi = k + 1;
				if (fl_parse_dec(tok[wi], &weight)) {
					fprintf(stderr, "maglev-fleet: stdin:%lu: bad weight '%s'\n",
						ln, tok[wi]);
					return 2;
				}
			} else if (!sopt && tok[k][0] == '-') {
				sopt = tok[k];
				sval = tok[k + 1];
			}
		}
		s = sopt ? fl_save_svc(&lb, sopt, sval, v6) : NULL;
		d = s && rname ? fl_save_dest(s, rname) : NULL;
		if (s && rname && fl_norm_addr(rname, nbuf, sizeof(nbuf))) {
			fprintf(stderr, "maglev-fleet: stdin:%lu: '%s' is not an address with a port: save with ipvsadm -S -n\n",
				ln, rname);
			return 2;
		}
		if (d && !only_drains && (d->weight != 0) != (weight != 0)) {
			fprintf(stderr, "maglev-fleet: stdin:%lu: %s %s has weight %" PRIu64 " here and %" PRIu64 " in %s: save the same load balancer's rules and file, with no change between them\n",
				ln, s->id, d->name, weight, d->weight, lb.path);
			return 3;
		}
		if (d && !weight && wi && d->have_drain && d->drain &&
		    !d->weight) {
			nr_drain++;
			if (only_drains)
				fl_save_line(stdout, "-e", tok, n, wi, d->drain);
			else
				fl_save_line(stdout, tok[0], tok, n, wi,
					     d->drain);
			fl_save_line(e, "-e", tok, n, wi, 0);
		} else if (!only_drains) {
			fputs(line, stdout);
		}
		free(copy);
	}
	free(line);
	if (ferror(stdin) || fclose(e)) {
		perror("maglev-fleet: stdin");
		return 2;
	}
	fwrite(edits, 1, elen, stdout);
	free(edits);
	if (fflush(stdout) || ferror(stdout)) {
		perror("maglev-fleet: stdout");
		return 2;
	}
	fprintf(stderr, "maglev-fleet save: %zu draining destination%s restored as draining\n",
		nr_drain, nr_drain == 1 ? "" : "s");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "--help") ||
			  !strcmp(argv[1], "-h"))) {
		fputs(fl_help, stdout);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "collect"))
		return fl_collect(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "check"))
		return fl_check(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "prom"))
		return fl_prom(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "save"))
		return fl_save(argc - 2, argv + 2);
	fputs(fl_help, stderr);
	return 2;
}

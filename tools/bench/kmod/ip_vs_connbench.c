// SPDX-License-Identifier: GPL-2.0
/*
 * ip_vs_connbench - per-connection cost of IPVS schedulers, the kernel's
 * own "mh" against "maglev", timed side by side inside a QEMU guest by
 * scripts/bench-conn-guest.sh (make bench-conn-guest).  A benchmark
 * module: not part of ip_vs_maglev.ko, never installed, loaded only in
 * the throwaway guest of that script.
 *
 * What is timed: each service's own bound scheduler, through
 * svc->scheduler->schedule(svc, skb, iph), the call IPVS makes for a new
 * connection (ip_vs_schedule()).  For mh that is ip_vs_mh_schedule() of
 * the running kernel, for maglev ip_vs_maglev_schedule() of the loaded
 * module: client key, hash, table lookup and availability test.  The
 * packet is prebuilt once per address family (an IPv4 or IPv6 header and
 * a TCP header, parsed with ip_vs_fill_iph_skb()); before every call the
 * client address in the parsed header and the source port in the packet
 * are set from a precomputed pseudo-random array of CB_KEYS clients, so
 * every call hashes another key and reads another part of the table.
 *
 * Finding the services: Linux 6.12 keeps its service table static in
 * ip_vs_ctl.c and exports no lookup, so this module registers a scheduler
 * of its own, "connbench", that only records each service bound to it
 * (init_service).  The guest creates every service with "-s connbench"
 * and then switches it with "ipvsadm -E" to mh or maglev; the service
 * stays the same struct ip_vs_service and binds the new scheduler.  Only
 * register_ip_vs_scheduler() and the public layouts of <net/ip_vs.h> are
 * used.  The recorded pointers are valid while the services exist: the
 * guest deletes them only after rmmod of this module.
 *
 * Interleaving: an mh service and a maglev service with the same address
 * family, port flag and number of servers form a case.  Each round times
 * one batch of calls of each of the case's mh, maglev and "loop" (the
 * same loop calling connbench's own schedule(), which returns at once:
 * the loop and the indirect call without a scheduler), in an order that
 * rotates with the round and the case; the three use the same clients in
 * a round.  The first round is a warm-up and is not counted.  Each batch
 * runs with bottom halves off under rcu_read_lock(), as in the packet
 * path, and is timed with ktime_get_ns().
 *
 * Interface: write "ROUNDS BATCH" (or an empty line, for the defaults) to
 * /sys/kernel/debug/ip_vs_connbench to run; read it for the table.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/tcp.h>
#include <linux/vmalloc.h>
#include <net/ip_vs.h>

#define CB_NAME		"connbench"
#define CB_MAX_SVC	32
#define CB_MAX_CASES	(CB_MAX_SVC / 2)
/* Distinct clients cycled through; a power of two. */
#define CB_KEYS		16384
#define CB_ROUNDS	101
#define CB_BATCH	4096
#define CB_MAX_ROUNDS	1001
#define CB_MAX_BATCH	(1024 * 1024)
#define CB_OUT_SIZE	8192

/* What one batch times. */
enum { CB_MH, CB_MG, CB_LOOP, CB_NT };

struct cb_key {
	union nf_inet_addr addr;
	__be16 port;
};

struct cb_case {
	struct ip_vs_service *svc[2];		/* CB_MH, CB_MG */
	struct ip_vs_scheduler *sched[2];
	int af;
	bool port;
	u32 n;
	struct ip_vs_iphdr iph;
	u64 *ps[CB_NT];				/* per call, ps, per round */
	u64 null[CB_NT];			/* calls that returned NULL */
};

static DEFINE_MUTEX(cb_lock);			/* all below */
static struct ip_vs_service *cb_svc[CB_MAX_SVC];
static unsigned int cb_nr_svc;
static char cb_out[CB_OUT_SIZE];
static size_t cb_out_len;
static struct dentry *cb_file;

static int cb_init_service(struct ip_vs_service *svc)
{
	unsigned int i;

	mutex_lock(&cb_lock);
	for (i = 0; i < cb_nr_svc; i++)
		if (cb_svc[i] == svc)
			break;
	if (i == cb_nr_svc && cb_nr_svc < CB_MAX_SVC)
		cb_svc[cb_nr_svc++] = svc;
	mutex_unlock(&cb_lock);
	return 0;
}

/* Never used for traffic; also the "loop" batches' callee. */
static struct ip_vs_dest *cb_schedule(struct ip_vs_service *svc,
				      const struct sk_buff *skb,
				      struct ip_vs_iphdr *iph)
{
	return NULL;
}

static struct ip_vs_scheduler cb_sched = {
	.name =		CB_NAME,
	.refcnt =	ATOMIC_INIT(0),
	.module =	THIS_MODULE,
	.n_list =	LIST_HEAD_INIT(cb_sched.n_list),
	.init_service =	cb_init_service,
	.schedule =	cb_schedule,
};

/* The prebuilt packet of one address family. */
struct cb_pkt {
	struct sk_buff *skb;
	__be16 *sport;				/* its TCP source port */
};

/* A TCP packet of family @af into @pkt. */
static int cb_skb(int af, struct cb_pkt *pkt)
{
	struct sk_buff *skb;
	struct tcphdr *th;

	skb = alloc_skb(LL_MAX_HEADER + sizeof(struct ipv6hdr) +
			sizeof(struct tcphdr), GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	skb_reserve(skb, LL_MAX_HEADER);
	skb_reset_network_header(skb);
	if (af == AF_INET6) {
		struct ipv6hdr *ip6 = skb_put_zero(skb, sizeof(*ip6));

		ip6->version = 6;
		ip6->payload_len = htons(sizeof(*th));
		ip6->nexthdr = IPPROTO_TCP;
		ip6->hop_limit = 64;
		skb->protocol = htons(ETH_P_IPV6);
	} else {
		struct iphdr *ip = skb_put_zero(skb, sizeof(*ip));

		ip->version = 4;
		ip->ihl = 5;
		ip->tot_len = htons(sizeof(*ip) + sizeof(*th));
		ip->ttl = 64;
		ip->protocol = IPPROTO_TCP;
		skb->protocol = htons(ETH_P_IP);
	}
	skb_set_transport_header(skb, skb->len);
	th = skb_put_zero(skb, sizeof(*th));
	th->dest = htons(80);
	th->doff = sizeof(*th) / 4;
	th->syn = 1;
	pkt->skb = skb;
	pkt->sport = &th->source;
	return 0;
}

/*
 * One batch of @n calls for case @c: schedule() of its scheduler @t
 * (CB_MH, CB_MG), or connbench's own (CB_LOOP), clients from @start on.
 * Returns the batch's ns, or 0 if the service changed its scheduler.
 */
static u64 cb_batch(struct cb_case *c, unsigned int t,
		    const struct cb_pkt *pkt, const struct cb_key *keys,
		    unsigned int start, unsigned int n)
{
	struct ip_vs_service *svc = c->svc[t == CB_MG ? CB_MG : CB_MH];
	struct ip_vs_scheduler *sched = t == CB_LOOP ? &cb_sched : c->sched[t];
	struct ip_vs_iphdr *iph = &c->iph;
	bool v6 = c->af == AF_INET6;
	unsigned int i, miss = 0;
	u64 t0, t1;

	local_bh_disable();
	rcu_read_lock();
	if (t != CB_LOOP && rcu_dereference(svc->scheduler) != sched) {
		rcu_read_unlock();
		local_bh_enable();
		return 0;
	}
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		const struct cb_key *k = &keys[(start + i) & (CB_KEYS - 1)];

		if (v6)
			iph->saddr.in6 = k->addr.in6;
		else
			iph->saddr.ip = k->addr.ip;
		*pkt->sport = k->port;
		if (!sched->schedule(svc, pkt->skb, iph))
			miss++;
	}
	t1 = ktime_get_ns();
	rcu_read_unlock();
	local_bh_enable();
	c->null[t] += miss;
	return max_t(u64, t1 - t0, 1);
}

static int cb_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* First quartile, median, third quartile of @v (sorted in place). */
static void cb_quartiles(u64 *v, unsigned int r, u64 q[3])
{
	sort(v, r, sizeof(*v), cb_cmp_u64, NULL);
	q[0] = v[(r - 1) / 4];
	q[1] = v[(r - 1) / 2];
	q[2] = v[3 * (r - 1) / 4];
}

/* ps as "ns.d" */
static size_t cb_ns(char *buf, size_t size, u64 ps)
{
	u64 d = div_u64(ps + 50, 100);

	return scnprintf(buf, size, "%llu.%llu", div_u64(d, 10), d % 10);
}

/* a / b as "x.yyx" */
static size_t cb_ratio(char *buf, size_t size, u64 a, u64 b)
{
	u64 c;

	if (!b)
		return scnprintf(buf, size, "-");
	c = div64_u64(a * 100 + b / 2, b);
	return scnprintf(buf, size, "%llu.%02llux", div_u64(c, 100), c % 100);
}

static const char *cb_kind(const struct cb_case *c)
{
	if (c->af == AF_INET6)
		return c->port ? "IPv6+port" : "IPv6";
	return c->port ? "IPv4+port" : "IPv4";
}

/* ps as "median (q1..q3)" in ns */
static size_t cb_quart(char *buf, size_t size, const u64 q[3])
{
	size_t l = cb_ns(buf, size, q[1]);

	l += scnprintf(buf + l, size - l, " (");
	l += cb_ns(buf + l, size - l, q[0]);
	l += scnprintf(buf + l, size - l, "..");
	l += cb_ns(buf + l, size - l, q[2]);
	return l + scnprintf(buf + l, size - l, ")");
}

#define CB_OUT(...) (len += scnprintf(cb_out + len, CB_OUT_SIZE - len, \
				       __VA_ARGS__))

/* The table, into cb_out; @tmp has room for @rounds figures. */
static void cb_report(struct cb_case *cases, unsigned int nc,
		      unsigned int rounds, unsigned int batch, u64 *tmp)
{
	char mh[32], mg[32], loop[16], ratio[40], rq1[16], rq3[16], net[16];
	unsigned int i, t, r;
	size_t len = 0, l;

	CB_OUT("connbench: %u rounds (+1 warm-up) of %u calls per scheduler and case,\n",
	       rounds, batch);
	CB_OUT("%u random clients; ns per call: median (q1..q3) of the rounds\n",
	       CB_KEYS);
	CB_OUT("%-9s %4s  %-24s  %-24s  %-7s  %-25s  %-6s  %s\n", "key", "N",
	       "mh ns", "maglev ns", "loop ns", "maglev/mh (rounds q1..q3)",
	       "net", "NULL mh/maglev");
	for (i = 0; i < nc; i++) {
		struct cb_case *c = &cases[i];
		u64 q[CB_NT][3], rq[3], d_mh, d_mg;

		for (t = 0; t < CB_NT; t++) {
			memcpy(tmp, c->ps[t], rounds * sizeof(*tmp));
			cb_quartiles(tmp, rounds, q[t]);
		}
		/* The paired ratio of each round, maglev / mh, x 1000. */
		for (r = 0; r < rounds; r++)
			tmp[r] = div64_u64(c->ps[CB_MG][r] * 1000,
					   max_t(u64, c->ps[CB_MH][r], 1));
		cb_quartiles(tmp, rounds, rq);

		cb_quart(mh, sizeof(mh), q[CB_MH]);
		cb_quart(mg, sizeof(mg), q[CB_MG]);
		cb_ns(loop, sizeof(loop), q[CB_LOOP][1]);
		cb_ratio(rq1, sizeof(rq1), rq[0], 1000);
		cb_ratio(rq3, sizeof(rq3), rq[2], 1000);
		l = cb_ratio(ratio, sizeof(ratio), q[CB_MG][1], q[CB_MH][1]);
		scnprintf(ratio + l, sizeof(ratio) - l, " (%s..%s)", rq1, rq3);
		/* Medians less the loop's: the schedulers' own code alone. */
		d_mh = q[CB_MH][1] - min(q[CB_MH][1], q[CB_LOOP][1]);
		d_mg = q[CB_MG][1] - min(q[CB_MG][1], q[CB_LOOP][1]);
		cb_ratio(net, sizeof(net), d_mg, d_mh);
		CB_OUT("%-9s %4u  %-24s  %-24s  %-7s  %-25s  %-6s  %llu/%llu\n",
		       cb_kind(c), c->n, mh, mg, loop, ratio, net,
		       c->null[CB_MH], c->null[CB_MG]);
	}
	cb_out_len = len;
}

static const char *cb_sched_name(struct ip_vs_service *svc,
				 struct ip_vs_scheduler **sched)
{
	*sched = rcu_dereference(svc->scheduler);
	return *sched ? (*sched)->name : "";
}

/* Pair the recorded mh and maglev services into cases; returns how many. */
static unsigned int cb_pair(struct cb_case *cases)
{
	struct ip_vs_scheduler *sched[CB_MAX_SVC];
	bool used[CB_MAX_SVC] = {};
	unsigned int i, j, nc = 0;

	rcu_read_lock();
	for (i = 0; i < cb_nr_svc; i++) {
		struct ip_vs_service *a = cb_svc[i], *b;
		struct cb_case *c;

		if (strcmp(cb_sched_name(a, &sched[i]), "mh") ||
		    a->protocol != IPPROTO_TCP)
			continue;
		for (j = 0; j < cb_nr_svc; j++) {
			b = cb_svc[j];
			if (used[j] || strcmp(cb_sched_name(b, &sched[j]),
					      "maglev"))
				continue;
			if (b->af == a->af && b->protocol == a->protocol &&
			    (b->flags & IP_VS_SVC_F_SCHED2) ==
			    (a->flags & IP_VS_SVC_F_SCHED2) &&
			    READ_ONCE(b->num_dests) == READ_ONCE(a->num_dests))
				break;
		}
		if (j == cb_nr_svc)
			continue;
		used[j] = true;
		c = &cases[nc++];
		c->svc[CB_MH] = a;
		c->svc[CB_MG] = b;
		c->sched[CB_MH] = sched[i];
		c->sched[CB_MG] = sched[j];
		c->af = a->af;
		c->port = a->flags & IP_VS_SVC_F_SCHED2;
		c->n = READ_ONCE(a->num_dests);
	}
	rcu_read_unlock();
	return nc;
}

/* Larger N first, then IPv4 before IPv6, without the port before with. */
static int cb_cmp_case(const void *x, const void *y)
{
	const struct cb_case *a = x, *b = y;

	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	if (a->af != b->af)
		return a->af == AF_INET ? -1 : 1;
	return (int)a->port - (int)b->port;
}

static int cb_run(unsigned int rounds, unsigned int batch)
{
	static const u8 order[3][CB_NT] = {
		{ CB_MH, CB_MG, CB_LOOP },
		{ CB_MG, CB_LOOP, CB_MH },
		{ CB_LOOP, CB_MH, CB_MG },
	};
	struct cb_pkt pkt[2] = {};		/* IPv4, IPv6 */
	struct cb_case *cases;
	struct cb_key *keys = NULL;
	u64 *ps = NULL, *tmp = NULL;
	unsigned int nc, i, r, k;
	int ret = -ENOMEM;

	cases = kcalloc(CB_MAX_CASES, sizeof(*cases), GFP_KERNEL);
	if (!cases)
		return -ENOMEM;
	nc = cb_pair(cases);
	if (!nc) {
		ret = -ENOENT;
		goto out;
	}
	sort(cases, nc, sizeof(*cases), cb_cmp_case, NULL);

	keys = vmalloc_array(CB_KEYS, sizeof(*keys));
	ps = kvcalloc(nc * CB_NT * rounds, sizeof(*ps), GFP_KERNEL);
	tmp = kvcalloc(rounds, sizeof(*tmp), GFP_KERNEL);
	if (!keys || !ps || !tmp || cb_skb(AF_INET, &pkt[0]) ||
	    cb_skb(AF_INET6, &pkt[1]))
		goto out;
	get_random_bytes(keys, CB_KEYS * sizeof(*keys));

	for (i = 0; i < nc; i++) {
		struct cb_case *c = &cases[i];

		for (k = 0; k < CB_NT; k++)
			c->ps[k] = ps + (i * CB_NT + k) * rounds;
		if (!ip_vs_fill_iph_skb(c->af, pkt[c->af == AF_INET6].skb,
					false, &c->iph) ||
		    c->iph.protocol != IPPROTO_TCP) {
			ret = -EINVAL;
			goto out;
		}
		c->iph.daddr = c->svc[CB_MH]->addr;
	}

	/* Round 0 warms up: its figures are overwritten by round 1's. */
	for (r = 0; r <= rounds; r++) {
		unsigned int slot = r ? r - 1 : 0;
		unsigned int start = (r * batch) & (CB_KEYS - 1);

		for (i = 0; i < nc; i++) {
			struct cb_case *c = &cases[i];

			if (r == 1)
				memset(c->null, 0, sizeof(c->null));
			for (k = 0; k < CB_NT; k++) {
				unsigned int t = order[(r + i) % 3][k];
				u64 ns;

				ns = cb_batch(c, t, &pkt[c->af == AF_INET6],
					      keys, start, batch);
				if (!ns) {
					ret = -EAGAIN;
					goto out;
				}
				c->ps[t][slot] = div_u64(ns * 1000, batch);
				cond_resched();
			}
		}
	}
	cb_report(cases, nc, rounds, batch, tmp);
	pr_info("%u cases, %u rounds of %u calls\n", nc, rounds, batch);
	ret = 0;
out:
	kfree_skb(pkt[0].skb);
	kfree_skb(pkt[1].skb);
	kvfree(tmp);
	kvfree(ps);
	vfree(keys);
	kfree(cases);
	return ret;
}

static ssize_t cb_write(struct file *file, const char __user *ubuf,
			size_t count, loff_t *ppos)
{
	unsigned int rounds = CB_ROUNDS, batch = CB_BATCH;
	char buf[32] = {};
	int ret;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	/* "ROUNDS BATCH", "ROUNDS" or nothing: the defaults for the rest. */
	if (sscanf(buf, "%u %u", &rounds, &batch) < 1)
		rounds = CB_ROUNDS;
	if (rounds < 3 || rounds > CB_MAX_ROUNDS || batch < 16 ||
	    batch > CB_MAX_BATCH)
		return -EINVAL;
	mutex_lock(&cb_lock);
	ret = cb_run(rounds, batch);
	mutex_unlock(&cb_lock);
	return ret ? ret : count;
}

static ssize_t cb_read(struct file *file, char __user *ubuf, size_t count,
		       loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&cb_lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, cb_out, cb_out_len);
	mutex_unlock(&cb_lock);
	return ret;
}

static const struct file_operations cb_fops = {
	.owner =	THIS_MODULE,
	.read =		cb_read,
	.write =	cb_write,
	.llseek =	default_llseek,
};

static int __init cb_init(void)
{
	int ret;

	cb_file = debugfs_create_file("ip_vs_connbench", 0600, NULL, NULL,
				      &cb_fops);
	ret = register_ip_vs_scheduler(&cb_sched);
	if (ret)
		debugfs_remove(cb_file);
	return ret;
}

static void __exit cb_exit(void)
{
	debugfs_remove(cb_file);
	unregister_ip_vs_scheduler(&cb_sched);
}

module_init(cb_init);
module_exit(cb_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Benchmark: IPVS mh and maglev schedule() side by side");

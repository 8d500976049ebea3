// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_sim.c - libFuzzer target for maglev-sim's line protocol.
 *
 * tools/maglev-sim.c is compiled in unchanged, with its main() renamed
 * (-Dmain=maglev_sim_main), and run in-process on the fuzz input as its
 * standard input, standard output and error going to memory.  Only the
 * protocol as "maglev-sim --help" describes it is relied on:
 *
 *   - it never crashes, leaks or trips ASan/UBSan;
 *   - every line of standard error is "error: line N: why", N an input line,
 *     and the exit status is 1 exactly when there is one (0 otherwise);
 *   - a bad line changes nothing: the input is run once with the state
 *     dumped (STATS, SHOW, DIGEST, CHURN) after every line, and once more with
 *     the failed lines replaced by comments.  Both runs must print the
 *     same, and the second must report no error.
 *
 * A broken invariant aborts, which libFuzzer reports as a crash.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maglev_compat.h"

#define FUZZ_NAME "fuzz_sim"
#include "fuzz_assert.h"

int maglev_sim_main(int argc, char **argv);

/* Longest fuzz input taken, and most lines of it. */
#define FZ_MAX_LEN	2048
#define FZ_MAX_LINES	64

/*
 * Run first: a small table keeps the fuzzer fast (the input may still ask
 * for any size).
 */
static const char fz_prefix[] = "SIZE 251\nREBUILD\n";
#define FZ_PREFIX_LINES	2

/* Commands that dump the whole state after each input line. */
static const char fz_dump[] = "STATS\nSHOW\nDIGEST\nCHURN\n";
#define FZ_DUMP_LINES	4

struct fz_run {
	char *out, *err;
	size_t out_len, err_len;
	int status;
};

static void fz_run(const char *input, size_t len, struct fz_run *r)
{
	FILE *in, *out, *err, *o_in = stdin, *o_out = stdout, *o_err = stderr;
	char *argv[] = { "maglev-sim", NULL };

	in = fmemopen((void *)input, len ? len : 1, "r");
	out = open_memstream(&r->out, &r->out_len);
	err = open_memstream(&r->err, &r->err_len);
	fz_assert(in && out && err, "no memory streams");
	if (!len)
		fgetc(in);	/* fmemopen wants a non-empty buffer */
	stdin = in;
	stdout = out;
	stderr = err;
	r->status = maglev_sim_main(1, argv);
	stdin = o_in;
	stdout = o_out;
	stderr = o_err;
	fclose(in);
	fclose(out);
	fclose(err);
}

/*
 * Check standard error and collect the failed line numbers in @bad
 * (indexed by line, 1-based, up to @nr_lines).
 */
static void fz_errors(const struct fz_run *r, unsigned long nr_lines,
		      unsigned char *bad)
{
	const char *p = r->err, *end = r->err + r->err_len;
	unsigned long nr = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		unsigned long line;
		char *rest;

		fz_assert(nl, "stderr ends without a newline");
		fz_assert(!strncmp(p, "error: line ", 12),
			  "stderr line is not an error: %.*s", (int)(nl - p), p);
		line = strtoul(p + 12, &rest, 10);
		fz_assert(line >= 1 && line <= nr_lines && *rest == ':',
			  "bad line number in: %.*s", (int)(nl - p), p);
		bad[line] = 1;
		nr++;
		p = nl + 1;
	}
	fz_assert(r->status == (nr ? 1 : 0), "exit status %d with %lu errors",
		  r->status, nr);
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t len);

int LLVMFuzzerTestOneInput(const u8 *data, size_t len)
{
	size_t cap = sizeof(fz_prefix) + len * 2 +
		     (FZ_MAX_LINES + 1) * (sizeof(fz_dump) + 4);
	unsigned char bad[FZ_PREFIX_LINES + 1 +
			  (FZ_MAX_LINES + 1) * (FZ_DUMP_LINES + 1)];
	unsigned long lines = 0, qline = 0;
	char *q1 = malloc(cap), *q2 = malloc(cap);
	size_t l1 = 0, l2 = 0, i = 0;
	struct fz_run r1 = { 0 }, r2 = { 0 };

	fz_assert(q1 && q2, "out of memory");
	if (len > FZ_MAX_LEN)
		goto out;

	/* q1: each input line, then the state dump; q2 is built below */
	memset(bad, 0, sizeof(bad));
	memcpy(q1, fz_prefix, sizeof(fz_prefix) - 1);
	l1 = sizeof(fz_prefix) - 1;
	while (i < len) {
		const u8 *nl = memchr(data + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (data + i)) : len - i;

		if (++lines > FZ_MAX_LINES)
			goto out;
		memcpy(q1 + l1, data + i, n);
		l1 += n;
		q1[l1++] = '\n';
		memcpy(q1 + l1, fz_dump, sizeof(fz_dump) - 1);
		l1 += sizeof(fz_dump) - 1;
		i += n + 1;
	}

	fz_run(q1, l1, &r1);
	qline = FZ_PREFIX_LINES + lines * (FZ_DUMP_LINES + 1);
	fz_errors(&r1, qline, bad);

	/* q2: the same with every failed line a comment */
	for (i = 0, qline = 1; i < l1; qline++) {
		const char *nl = memchr(q1 + i, '\n', l1 - i);
		size_t n = nl - (q1 + i);

		fz_assert(qline > FZ_PREFIX_LINES || !bad[qline],
			  "the prefix failed at line %lu", qline);
		fz_assert(qline <= FZ_PREFIX_LINES ||
			  (qline - FZ_PREFIX_LINES - 1) % (FZ_DUMP_LINES + 1) == 0 ||
			  !bad[qline],
			  "the state dump failed at line %lu", qline);
		if (bad[qline]) {
			memcpy(q2 + l2, "# failed\n", 9);
			l2 += 9;
		} else {
			memcpy(q2 + l2, q1 + i, n + 1);
			l2 += n + 1;
		}
		i += n + 1;
	}
	fz_run(q2, l2, &r2);
	fz_assert(r2.err_len == 0, "without the failed lines: %.*s",
		  (int)r2.err_len, r2.err);
	fz_assert(r1.out_len == r2.out_len &&
		  !memcmp(r1.out, r2.out, r1.out_len),
		  "a failed line changed the state or the answers");
out:
	free(r1.out);
	free(r1.err);
	free(r2.out);
	free(r2.err);
	free(q1);
	free(q2);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * tp4mark N [LOOPS [IDLE]]: execute marker N (0..255) of the instruction
 * counting plugin (bench/tp4count.c). With LOOPS, first a profiled window
 * (markers 129 and 130) around a loop of LOOPS turns of three
 * instructions: the plugin's self-check (scripts/count-test.sh) finds the
 * loop's block, the three instructions from its label, run exactly
 * LOOPS - 1 times (the first turn runs in the block that comes into the
 * loop). With IDLE, the window then has a second such loop of IDLE turns
 * between the markers of waiting (5 and 6), which the plugin counts as
 * idle in its mode=cb.
 *
 * tp4mark -w SECS FILE: a window of SECS seconds (markers 1 and 2) around
 * nothing but a sleep, for a cell with no program of its own to mark it
 * (make bench's pktgen alone): prints FILE as it was just before the
 * window starts and just after it ends, each after a line "T <seconds>"
 * (CLOCK_MONOTONIC), so that the counters it holds match the window.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tp4mark.h"

#define C1(n)	case n: TP4_MARK(n); break;
#define C4(n)	C1(n) C1(n + 1) C1(n + 2) C1(n + 3)
#define C16(n)	C4(n) C4(n + 4) C4(n + 8) C4(n + 12)
#define C64(n)	C16(n) C16(n + 16) C16(n + 32) C16(n + 48)

static void mark(int n)
{
	switch (n) {
	C64(0) C64(64) C64(128) C64(192)
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* FILE, all of it, read in one go: @buf, its length. */
static size_t slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f) {
		perror(path);
		exit(1);
	}
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = 0;
	return n;
}

static int window(double secs, const char *path)
{
	static char before[65536], after[65536];
	struct timespec ts = { (time_t)secs,
			       (long)((secs - (time_t)secs) * 1e9) };
	double t0, t1;

	slurp(path, before, sizeof(before));
	t0 = now();
	TP4_MARK(TP4_MARK_START);
	while (nanosleep(&ts, &ts))
		;
	TP4_MARK(TP4_MARK_END);
	t1 = now();
	slurp(path, after, sizeof(after));
	printf("T %.6f\n%sT %.6f\n%s", t0, before, t1, after);
	return 0;
}

int main(int argc, char **argv)
{
	long n;

	if (argc == 4 && !strcmp(argv[1], "-w"))
		return window(strtod(argv[2], NULL), argv[3]);
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: tp4mark N [LOOPS [IDLE]]\n");
		return 2;
	}
	n = strtol(argv[1], NULL, 0);
	if (n < 0 || n > 255) {
		fprintf(stderr, "tp4mark: N is 0..255\n");
		return 2;
	}
	if (argc >= 3) {
		unsigned long loops = strtoul(argv[2], NULL, 0);
		unsigned long idle = argc == 4 ? strtoul(argv[3], NULL, 0) : 0;

		TP4_MARK(129);
		/* Three instructions a turn: add, dec, jnz. */
		__asm__ __volatile__("1: add $1, %%rax\n\t"
				     "dec %0\n\t"
				     "jnz 1b"
				     : "+r"(loops) :: "rax", "cc");
		if (idle) {
			TP4_MARK(TP4_MARK_IDLE);
			__asm__ __volatile__("1: add $1, %%rax\n\t"
					     "dec %0\n\t"
					     "jnz 1b"
					     : "+r"(idle) :: "rax", "cc");
			TP4_MARK(TP4_MARK_BUSY);
		}
		TP4_MARK(130);
	}
	mark(n);
	return 0;
}

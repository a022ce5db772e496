// SPDX-License-Identifier: GPL-2.0
/*
 * tp4mark N [LOOPS]: execute marker N (0..255) of the instruction counting
 * plugin (bench/tp4count.c). With LOOPS, first a profiled window (markers
 * 129 and 130) around a loop of LOOPS turns of three instructions: the
 * plugin's self-check (scripts/count-test.sh) finds the loop's block, the
 * three instructions from its label, run exactly LOOPS - 1 times (the
 * first turn runs in the block that comes into the loop).
 */
#include <stdio.h>
#include <stdlib.h>
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

int main(int argc, char **argv)
{
	long n;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: tp4mark N [LOOPS]\n");
		return 2;
	}
	n = strtol(argv[1], NULL, 0);
	if (n < 0 || n > 255) {
		fprintf(stderr, "tp4mark: N is 0..255\n");
		return 2;
	}
	if (argc == 3) {
		unsigned long loops = strtoul(argv[2], NULL, 0);

		TP4_MARK(129);
		/* Three instructions a turn: add, dec, jnz. */
		__asm__ __volatile__("1: add $1, %%rax\n\t"
				     "dec %0\n\t"
				     "jnz 1b"
				     : "+r"(loops) :: "rax", "cc");
		TP4_MARK(130);
	}
	mark(n);
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tp4mark.h: the window markers of bench/tp4count.c, the instruction
 * counting plugin. TP4_MARK(n), n a constant 0..255, executes the 8-byte
 * NOP "nopl 0x545034nn(%rax,%rax,1)", which the plugin recognizes; it does
 * nothing else, with or without the plugin.
 */
#ifndef TP4MARK_H
#define TP4MARK_H

#define TP4_MARK_STR(n)	#n
#define TP4_MARK(n)							\
	__asm__ __volatile__(".byte 0x0f, 0x1f, 0x84, 0x00, "		\
			     TP4_MARK_STR(n) ", 0x34, 0x50, 0x54" ::: "memory")

/* Window start and end; with bit 7 set on both, the plugin also writes
 * the profile of the window: every block that ran in it.
 */
#define TP4_MARK_START		1
#define TP4_MARK_END		2
#define TP4_MARK_PROFILE	0x80
/* make bench's start of a run (a cell): windows are matched to runs. */
#define TP4_MARK_CELL		4
/* A turn that found nothing to do begins, ends (plugin mode=cb: its user
 * instructions are counted as idle).
 */
#define TP4_MARK_IDLE		5
#define TP4_MARK_BUSY		6

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench.h - what xskbench and shmring share, so that the harness reads the
 * same output from both: error messages, the clock, the per-second lines,
 * the closing JSON object, and the test frame.
 */
#ifndef BENCH_H
#define BENCH_H

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tp4mark.h"

#define __noreturn	__attribute__((noreturn))

struct bench_run {
	/* Described by the JSON object. */
	const char *tool, *bench, *mode, *ifname;
	unsigned int pkt_size, frame_size, ring_size, batch, inflight;
	double seconds;			/* asked for */
	bool quiet;			/* no per-second lines */
	bool count_window;		/* marks its window (tp4mark.h) */
	/* Measured. */
	uint64_t packets, bytes, errors;
	uint64_t dropped;		/* completed but dropped by the driver */
	uint64_t drops;			/* RX: dropped by the socket */
	double duration;
	double *samples;		/* packets per second, each second */
	unsigned int nsamples, max_samples;
	/* Clock. */
	double start, end, tick, last;
	uint64_t last_packets;
};

/* "<program>: <step>: <strerror> (errno N)" on stderr; returns -1. */
static inline int __attribute__((format(printf, 2, 3)))
bench_fail(int err, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s (errno %d)\n", strerror(err), err);
	return -1;
}

/* @handler on SIGINT and SIGTERM; -1 on failure, said on stderr. */
static inline int bench_on_stop(void (*handler)(int))
{
	struct sigaction sa = { .sa_handler = handler };

	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return bench_fail(errno, "sigaction");
	return 0;
}

/* The calling process on @cpu only; -1 on failure, said on stderr. */
static inline int bench_pin(unsigned int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return bench_fail(errno, "sched_setaffinity to CPU %u", cpu);
	return 0;
}

static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A duration argument: positive seconds, at most a day; 0 if invalid. */
static inline double bench_seconds(const char *s)
{
	char *end;
	double v;

	v = strtod(s, &end);
	if (end == s || *end || !(v > 0) || v > 86400)
		return 0;
	return v;
}

/* Line-buffered stdout (the harness reads it live) and the sample array. */
static inline int bench_init(struct bench_run *b)
{
	if (setvbuf(stdout, NULL, _IOLBF, 0))
		return bench_fail(errno, "setvbuf");
	b->max_samples = (unsigned int)b->seconds + 2;
	b->samples = calloc(b->max_samples, sizeof(*b->samples));
	if (!b->samples)
		return bench_fail(ENOMEM, "samples");
	return 0;
}

/*
 * The measured window starts, ends: with count_window set (the process
 * whose result is printed), the markers of the instruction counting
 * plugin (bench/tp4count.c) make the window's counts its own.
 */
static inline void bench_start(struct bench_run *b)
{
	if (b->count_window)
		TP4_MARK(TP4_MARK_START);
	b->start = bench_now();
	b->end = b->start + b->seconds;
	b->tick = b->start + 1;
	b->last = b->start;
	b->last_packets = b->packets;
}

static inline void bench_end(struct bench_run *b, double now)
{
	if (b->count_window)
		TP4_MARK(TP4_MARK_END);
	b->duration = now - b->start;
}

/* Records a sample (and prints its line) once a second has gone by. */
static inline void bench_tick(struct bench_run *b, double now)
{
	double pps;

	if (now < b->tick)
		return;
	/* What was sent: completions less those the driver dropped. */
	pps = (b->packets - b->dropped - b->last_packets) / (now - b->last);
	if (b->nsamples < b->max_samples)
		b->samples[b->nsamples++] = pps;
	if (!b->quiet)
		printf("%s %s %s: %us %.0f pps\n", b->bench, b->mode,
		       b->ifname, b->nsamples, pps);
	b->last = now;
	b->last_packets = b->packets - b->dropped;
	b->tick += 1;
}

static inline void bench_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* The one-line JSON object that ends the output. */
static inline void bench_report(const struct bench_run *b)
{
	unsigned int i;

	printf("{\"tool\":\"%s\",\"bench\":\"%s\",\"mode\":\"%s\",\"ifname\":",
	       b->tool, b->bench, b->mode);
	bench_json_str(b->ifname);
	printf(",\"pkt_size\":%u,\"frame_size\":%u,\"ring_size\":%u,"
	       "\"batch\":%u,\"inflight\":%u,\"duration\":%.3f,",
	       b->pkt_size, b->frame_size, b->ring_size, b->batch,
	       b->inflight, b->duration);
	printf("\"packets\":%llu,\"bytes\":%llu,\"pps\":%.1f,\"errors\":%llu,"
	       "\"drops\":%llu,\"samples\":[", (unsigned long long)b->packets,
	       (unsigned long long)b->bytes,
	       b->duration > 0 ? b->packets / b->duration : 0.0,
	       (unsigned long long)b->errors, (unsigned long long)b->drops);
	for (i = 0; i < b->nsamples; i++)
		printf("%s%.1f", i ? "," : "", b->samples[i]);
	printf("]}\n");
}

/* 02:00:00:00:00:07 -> 02:00:00:00:00:99, ethertype 0x88b5, 0x5a bytes. */
static inline void bench_frame(uint8_t *p, unsigned int len)
{
	static const uint8_t hdr[14] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x99,
		0x02, 0x00, 0x00, 0x00, 0x00, 0x07,
		0x88, 0xb5,
	};

	memcpy(p, hdr, sizeof(hdr));
	memset(p + sizeof(hdr), 0x5a, len - sizeof(hdr));
}

/* What an l2fwd does to every packet: swap destination and source MAC. */
static inline void bench_swap_macs(uint8_t *p)
{
	uint8_t t[6];

	memcpy(t, p, 6);
	memcpy(p, p + 6, 6);
	memcpy(p + 6, t, 6);
}

#endif /* BENCH_H */

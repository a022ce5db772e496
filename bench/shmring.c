// SPDX-License-Identifier: GPL-2.0
/*
 * shmring - the user-space ceiling for the AF_PACKET V4 benchmark.
 *
 * No socket can move packets between two CPUs faster than two processes
 * sharing memory. Process A (the parent, on CPU_A) and process B (the child,
 * on CPU_B) share, in one MAP_SHARED | MAP_ANONYMOUS mapping, a packet
 * buffer of INFLIGHT slots and two single-producer/single-consumer rings of
 * 16-byte descriptors, A->B and B->A, built like the V4 and AF_XDP rings:
 * free-running producer and consumer indices on cache lines of their own,
 * published with release stores and read with acquire loads, each side
 * caching the other's index until the ring looks full or empty.
 *
 * A starts INFLIGHT packets. B takes what is on the A->B ring (up to 64
 * descriptors a pass), touches each packet the way an l2fwd would (swaps the
 * first and the next 6 bytes) and returns it on the B->A ring. A counts each
 * packet that comes back and sends it again at once; it does not touch the
 * packet data. Both busy-poll (or yield, if given the same CPU). The rate is
 * measured in A: "packets" are completed round trips.
 *
 * Output: a line per second unless -Q, then one JSON object as last line.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "bench.h"

#define CACHE_LINE	64
#define __aligned(x)	__attribute__((aligned(x)))
#define MAX_BATCH	64
#define MAX_INFLIGHT	65536

struct desc {
	uint64_t idx;		/* packet slot */
	uint32_t len;
	uint16_t off;		/* packet start in the slot */
	uint8_t err;
	uint8_t flags;
};

_Static_assert(sizeof(struct desc) == 16, "descriptor is 16 bytes");

/* Shared ring head: producer and consumer index on separate lines. */
struct ring {
	uint32_t prod __aligned(CACHE_LINE);
	uint32_t cons __aligned(CACHE_LINE);
} __aligned(CACHE_LINE);

struct shared {
	int ready __aligned(CACHE_LINE);	/* B is polling */
	int stop;				/* A is done */
	struct ring ab, ba;
};

/* One side's private view of a ring. */
struct ring_end {
	struct ring *r;
	struct desc *slots;
	uint32_t mask;
	uint32_t head;		/* own index: next to produce or consume */
	uint32_t other;		/* cached index of the other side */
};

struct layout {
	struct shared *sh;
	struct desc *ab_slots, *ba_slots;
	uint8_t *pkts;
	size_t len;
	unsigned int ring_size, slot_size;
};

struct opts {
	unsigned int inflight, pkt_size;
	int cpu_a, cpu_b;
	double seconds;
	bool quiet;
};

struct child {
	pid_t pid;
	bool reaped;
	int status;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void __noreturn die(int err, const char *what)
{
	bench_fail(err, "%s", what);
	_exit(1);
}

static void __noreturn usage(void)
{
	fputs("usage: shmring [-n INFLIGHT] [-d SECONDS] [-s PKT_SIZE] "
	      "[-c CPU_A,CPU_B] [-Q]\n", stderr);
	exit(1);
}

static unsigned int num_arg(const char *s, unsigned long min,
			    unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		usage();
	return v;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	char extra;
	int c;

	while ((c = getopt(argc, argv, "n:d:s:c:Q")) != -1) {
		switch (c) {
		case 'n':
			o->inflight = num_arg(optarg, 1, MAX_INFLIGHT);
			break;
		case 'd':
			o->seconds = bench_seconds(optarg);
			if (!o->seconds)
				usage();
			break;
		case 's':
			o->pkt_size = num_arg(optarg, 14, 65536);
			break;
		case 'c':
			if (sscanf(optarg, "%d,%d%c", &o->cpu_a, &o->cpu_b,
				   &extra) != 2 || o->cpu_a < 0 ||
			    o->cpu_b < 0 || o->cpu_a >= CPU_SETSIZE ||
			    o->cpu_b >= CPU_SETSIZE)
				usage();
			break;
		case 'Q':
			o->quiet = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	asm volatile("yield" ::: "memory");
#else
	asm volatile("" ::: "memory");
#endif
}

/* Waiting: spin, or let the other side run if both share one CPU. */
static void relax(const struct opts *o)
{
	if (o->cpu_a != o->cpu_b)
		cpu_relax();
	else if (sched_yield())
		die(errno, "sched_yield");
}

/* Free slots for the producer; reloads the consumer index only when full. */
static uint32_t prod_space(struct ring_end *e)
{
	uint32_t size = e->mask + 1;

	if (e->head - e->other == size)
		e->other = __atomic_load_n(&e->r->cons, __ATOMIC_ACQUIRE);
	return size - (e->head - e->other);
}

static void prod_put(struct ring_end *e, const struct desc *d)
{
	e->slots[e->head++ & e->mask] = *d;
}

static void prod_publish(struct ring_end *e)
{
	__atomic_store_n(&e->r->prod, e->head, __ATOMIC_RELEASE);
}

/* Filled slots for the consumer; reloads the producer index when empty. */
static uint32_t cons_avail(struct ring_end *e)
{
	if (e->other == e->head)
		e->other = __atomic_load_n(&e->r->prod, __ATOMIC_ACQUIRE);
	return e->other - e->head;
}

static const struct desc *cons_get(struct ring_end *e)
{
	return &e->slots[e->head++ & e->mask];
}

static void cons_publish(struct ring_end *e)
{
	__atomic_store_n(&e->r->cons, e->head, __ATOMIC_RELEASE);
}

static void ring_end_init(struct ring_end *e, struct ring *r,
			  struct desc *slots, unsigned int size)
{
	memset(e, 0, sizeof(*e));
	e->r = r;
	e->slots = slots;
	e->mask = size - 1;
}

/* Both CPUs must be in our affinity mask; checked before forking. */
static void check_cpus(const struct opts *o)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		die(errno, "sched_getaffinity");
	if (!CPU_ISSET(o->cpu_a, &set) || !CPU_ISSET(o->cpu_b, &set))
		die(EINVAL, "-c: CPU not available");
}

static unsigned int roundup_pow2(unsigned int v)
{
	unsigned int p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* [struct shared][A->B slots][B->A slots][INFLIGHT packet slots] */
static void map_shared(const struct opts *o, struct layout *l)
{
	size_t ring_bytes;
	uint8_t *p;
	unsigned int i;

	l->ring_size = roundup_pow2(o->inflight);
	l->slot_size = (o->pkt_size + CACHE_LINE - 1) & ~(CACHE_LINE - 1);
	ring_bytes = (size_t)l->ring_size * sizeof(struct desc);
	ring_bytes = (ring_bytes + CACHE_LINE - 1) & ~(size_t)(CACHE_LINE - 1);
	l->len = sizeof(struct shared) + 2 * ring_bytes +
		 (size_t)o->inflight * l->slot_size;
	p = mmap(NULL, l->len, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		die(errno, "mmap shared memory");
	l->sh = (struct shared *)p;
	l->ab_slots = (struct desc *)(p + sizeof(struct shared));
	l->ba_slots = (struct desc *)(p + sizeof(struct shared) + ring_bytes);
	l->pkts = p + sizeof(struct shared) + 2 * ring_bytes;
	for (i = 0; i < o->inflight; i++)
		bench_frame(l->pkts + (size_t)i * l->slot_size, o->pkt_size);
}

/* B: return every packet, touched, until A says stop. */
static void __noreturn run_b(const struct opts *o, const struct layout *l,
			     pid_t parent)
{
	struct ring_end rx, tx;
	uint32_t n, i;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		die(errno, "prctl PR_SET_PDEATHSIG");
	if (getppid() != parent)
		_exit(1);
	/* Ctrl-C goes to A, which then stops B. */
	if (signal(SIGINT, SIG_IGN) == SIG_ERR)
		die(errno, "signal");
	if (bench_pin(o->cpu_b))
		_exit(1);
	ring_end_init(&rx, &l->sh->ab, l->ab_slots, l->ring_size);
	ring_end_init(&tx, &l->sh->ba, l->ba_slots, l->ring_size);
	__atomic_store_n(&l->sh->ready, 1, __ATOMIC_RELEASE);

	for (;;) {
		n = cons_avail(&rx);
		if (!n) {
			TP4_MARK(TP4_MARK_IDLE);
			if (__atomic_load_n(&l->sh->stop, __ATOMIC_RELAXED))
				_exit(0);
			relax(o);
			continue;
		}
		TP4_MARK(TP4_MARK_BUSY);
		if (n > MAX_BATCH)
			n = MAX_BATCH;
		/* Never waits long: only INFLIGHT packets exist. */
		while (prod_space(&tx) < n)
			relax(o);
		for (i = 0; i < n; i++) {
			const struct desc *d = cons_get(&rx);

			bench_swap_macs(l->pkts + d->idx * l->slot_size +
					d->off);
			prod_put(&tx, d);
		}
		cons_publish(&rx);
		prod_publish(&tx);
	}
}

static bool child_gone(struct child *c)
{
	pid_t ret = waitpid(c->pid, &c->status, WNOHANG);

	if (ret < 0)
		die(errno, "waitpid");
	c->reaped = ret == c->pid;
	return c->reaped;
}

/* A's packets: take back what B returned and send it again. */
static uint32_t bounce(const struct opts *o, struct ring_end *rx,
		       struct ring_end *tx, struct bench_run *r)
{
	uint32_t n, i;

	n = cons_avail(rx);
	if (!n)
		return 0;
	if (n > MAX_BATCH)
		n = MAX_BATCH;
	for (i = 0; i < n; i++) {
		const struct desc *d = cons_get(rx);

		/* A descriptor that came back changed: the ring is broken. */
		if (d->len != o->pkt_size)
			r->errors++;
		prod_put(tx, d);	/* room: the ring holds INFLIGHT */
	}
	cons_publish(rx);
	prod_publish(tx);
	r->packets += n;
	r->bytes += (uint64_t)n * o->pkt_size;
	return n;
}

/* A: keep INFLIGHT packets going round; -1 if B died. */
static int run_a(const struct opts *o, const struct layout *l,
		 struct child *child, struct bench_run *r)
{
	struct ring_end tx, rx;
	uint32_t i, spins = 0;
	double t;

	ring_end_init(&tx, &l->sh->ab, l->ab_slots, l->ring_size);
	ring_end_init(&rx, &l->sh->ba, l->ba_slots, l->ring_size);
	while (!__atomic_load_n(&l->sh->ready, __ATOMIC_ACQUIRE)) {
		if (child_gone(child))
			return -1;
		if (stop)
			return 0;
		relax(o);
	}
	for (i = 0; i < o->inflight; i++) {
		struct desc d = { .idx = i, .len = o->pkt_size };

		prod_put(&tx, &d);
	}
	r->count_window = true;
	bench_start(r);
	prod_publish(&tx);

	for (t = r->start; !stop && t < r->end; ) {
		if (!bounce(o, &rx, &tx, r)) {
			TP4_MARK(TP4_MARK_IDLE);
			relax(o);
			if (++spins & 1023)
				continue;
		} else {
			TP4_MARK(TP4_MARK_BUSY);
		}
		t = bench_now();
		if (t >= r->tick && child_gone(child))
			return -1;
		bench_tick(r, t);
	}
	bench_end(r, t);
	return 0;
}

/* Tells B to stop and reaps it; B must have exited with status 0. */
static int reap(const struct layout *l, struct child *c)
{
	__atomic_store_n(&l->sh->stop, 1, __ATOMIC_RELEASE);
	if (!c->reaped && waitpid(c->pid, &c->status, 0) != c->pid)
		die(errno, "waitpid");
	if (WIFEXITED(c->status) && !WEXITSTATUS(c->status))
		return 0;
	if (WIFSIGNALED(c->status))
		fprintf(stderr, "shmring: process B killed by signal %d\n",
			WTERMSIG(c->status));
	else
		fprintf(stderr, "shmring: process B exited with status %d\n",
			WEXITSTATUS(c->status));
	return -1;
}

int main(int argc, char **argv)
{
	struct opts o = { .inflight = 1, .seconds = 5, .pkt_size = 64,
			  .cpu_a = 0, .cpu_b = 1 };
	struct bench_run r = { .tool = "shmring", .bench = "pingpong",
			       .mode = "shm", .ifname = "" };
	struct child c = { 0 };
	struct layout l;
	pid_t parent = getpid();
	int ret;

	parse_args(argc, argv, &o);
	check_cpus(&o);
	map_shared(&o, &l);
	r.pkt_size = o.pkt_size;
	r.frame_size = l.slot_size;
	r.ring_size = l.ring_size;
	r.batch = o.inflight < MAX_BATCH ? o.inflight : MAX_BATCH;
	r.inflight = o.inflight;
	r.seconds = o.seconds;
	r.quiet = o.quiet;
	if (bench_init(&r))
		return 1;
	if (bench_on_stop(on_signal) || bench_pin(o.cpu_a))
		return 1;

	c.pid = fork();
	if (c.pid < 0)
		die(errno, "fork");
	if (!c.pid)
		run_b(&o, &l, parent);

	ret = run_a(&o, &l, &c, &r);
	if (reap(&l, &c) || ret)
		return 1;
	bench_report(&r);
	if (munmap(l.sh, l.len))
		die(errno, "munmap");
	free(r.samples);
	return 0;
}

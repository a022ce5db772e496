// SPDX-License-Identifier: GPL-2.0
/*
 * xskbench - AF_XDP reference numbers for the AF_PACKET V4 benchmark.
 *
 * One AF_XDP socket in copy mode (XDP_COPY; with -Z zero-copy, XDP_ZEROCOPY,
 * which needs -m drv and a driver that has it) on one queue of one
 * interface, driven through libxdp's xsk API, measures one of:
 *
 *   rxdrop  received frames go straight back to the fill ring
 *   txpush  PKT_SIZE-byte frames, built once, BATCH per sendto() kick; a
 *           packet counts when its frame comes back on the completion ring
 *   l2fwd   received frames get their MAC addresses swapped in place and go
 *           out of the same interface from the same umem frame; a packet
 *           counts when it completes, and its frame returns to the fill ring
 *           through a free-frame stack
 *   pingpong the veth ping-pong of the paper (tpbench --pingpong): a second
 *           process runs l2fwd on the peer -P, this one sends -n packets
 *           and then runs l2fwd; the packets go back and forth between the
 *           two ends, and each one this end forwards counts
 *
 * "xskbench attach -M PIN" attaches the program and pins its XSKMAP at PIN,
 * (pingpong: attach on both ends, the peer's map given with -N PIN2),
 * "xskbench detach -M PIN" undoes it, and a run given -M PIN uses that map
 * ("attach -X" attaches a program that returns XDP_TX for every frame
 * instead: a run bound to the queue then sees none, and the driver sends
 * each one back out of the interface from the socket's frame),
 * and neither attaches nor detaches: the harness keeps attach and detach
 * away from traffic (under QEMU's TCG, patching the XDP dispatcher while
 * another vCPU runs it can fault).
 *
 * The umem has 2 * RING_SIZE frames: the first half for fill/RX, the second
 * for TX. The XDP program is not libxdp's (no dispatcher: the bench kernel
 * has no BTF) but six instructions doing bpf_redirect_map(&xsks,
 * ctx->rx_queue_index, XDP_PASS), attached in skb (generic) or drv (native)
 * mode and detached on every exit but SIGKILL. txpush leaves the XSKMAP
 * empty, so frames arriving meanwhile go to the stack.
 *
 * Copy-mode TX happens only inside sendto() (at most 32 frames a call), so
 * the loop kicks while the TX ring holds unconsumed descriptors; zero-copy
 * TX is the driver's, which sendto() wakes (no XDP_USE_NEED_WAKEUP, as
 * tpbench's V4 has no wake-up flag either), and the loop kicks the same. sendto()
 * failing with EBUSY means the driver dropped a frame (veth: the peer's
 * backlog was full); it completes anyway, counts in "errors" and is
 * taken out of "packets" at the end. "errors" also has the socket's
 * invalid RX/TX descriptor counts; the other XDP_STATISTICS go to stderr
 * unless -Q.
 *
 * veth in drv mode: native XDP on veth A runs in A's NAPI, which packets
 * from the peer reach as soon as A has an XDP program; the peer needs no XDP
 * program and no GRO, since copy-mode TX is the skb path in both modes. veth
 * refuses the attach if the peer's MTU exceeds about 3.5 KB (ERANGE) or if
 * the peer has more TX queues than A has RX queues (ENOSPC); while attached,
 * it takes software GSO away from the peer. Frames sent by a copy-mode AF_XDP
 * socket have 64 bytes of headroom, not XDP's 256, so generic XDP and veth's
 * native path alike copy each one into a new buffer before the program runs
 * (and copy mode copies it once more into the umem): on veth, drv is no
 * faster than skb.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>
#include "bench.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NO_CPU		(~0U)

enum bench { RXDROP, TXPUSH, L2FWD, PINGPONG, ATTACH, DETACH };
static const char *const bench_name[] = {
	"rxdrop", "txpush", "l2fwd", "pingpong", "attach", "detach"
};

struct opts {
	enum bench bench;
	const char *ifname;
	unsigned int ifindex, queue, batch, frame_size, pkt_size, ring_size;
	unsigned int cpu;
	double seconds;
	bool drv, use_poll, quiet;
	bool zerocopy;		/* -Z: XDP_ZEROCOPY */
	bool xdp_tx;		/* attach -X: XDP_TX, not the redirect */
	const char *pin;	/* -M: the XSKMAP pinned by "attach" */
	/* pingpong: the peer, its pinned XSKMAP and CPU; packets in flight */
	const char *peer, *peer_pin;
	unsigned int peer_cpu, inflight;
};

struct xsk {
	void *area;
	size_t area_len;
	struct xsk_umem *umem;
	struct xsk_socket *sock;
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq, rx;
	int fd;
	uint64_t *stack;	/* l2fwd: free frame addresses */
	uint32_t nfree;
	uint32_t *txlen;	/* l2fwd: length sent, by frame number */
	uint32_t tx_next;	/* txpush: next TX frame, round robin */
	uint32_t outstanding;	/* txpush: sent, not completed */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void __noreturn usage(void)
{
	fputs("usage: xskbench rxdrop|txpush|l2fwd -i IFNAME [-m skb|drv]\n"
	      "       [-q QUEUE] [-d SECONDS] [-b BATCH] [-f FRAME_SIZE]\n"
	      "       [-s PKT_SIZE] [-r RING_SIZE] [-c CPU] [-p] [-Q] [-M PIN] [-Z]\n"
	      "       xskbench pingpong -i IFNAME -P PEER -n N -M PIN -N PIN2\n"
	      "       [-C PEER_CPU] [options as above]\n"
	      "       xskbench attach|detach -i IFNAME [-m skb|drv] -M PIN [-X]\n",
	      stderr);
	exit(1);
}

struct num_opt {
	int opt;
	unsigned long min, max;
	unsigned int *val;
};

/* Parses a numeric option; false if @c is not one. */
static bool num_arg(const struct num_opt *t, size_t n, int c, const char *s)
{
	unsigned long v;
	char *end;

	for (; n && t->opt != c; n--)
		t++;
	if (!n)
		return false;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v < t->min || v > t->max) {
		fprintf(stderr, "xskbench: -%c %s: expected %lu..%lu\n", c, s,
			t->min, t->max);
		exit(1);
	}
	*t->val = v;
	return true;
}

static bool is_pow2(unsigned long v)
{
	return v && !(v & (v - 1));
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	const struct num_opt nums[] = {
		{ 'q', 0, 65535, &o->queue },
		{ 'b', 1, 32768, &o->batch },
		{ 'f', 2048, sysconf(_SC_PAGESIZE), &o->frame_size },
		{ 's', 14, 65536, &o->pkt_size },
		{ 'r', 8, 32768, &o->ring_size },
		{ 'c', 0, CPU_SETSIZE - 1, &o->cpu },
		{ 'C', 0, CPU_SETSIZE - 1, &o->peer_cpu },
		{ 'n', 1, 32768, &o->inflight },
	};
	int c;

	while ((c = getopt(argc, argv, "i:m:q:d:b:f:s:r:c:pQM:P:N:C:n:ZX")) != -1) {
		if (c == 'i') {
			o->ifname = optarg;
		} else if (c == 'M') {
			o->pin = optarg;
		} else if (c == 'P') {
			o->peer = optarg;
		} else if (c == 'N') {
			o->peer_pin = optarg;
		} else if (c == 'm') {
			if (strcmp(optarg, "skb") && strcmp(optarg, "drv"))
				usage();
			o->drv = !strcmp(optarg, "drv");
		} else if (c == 'd') {
			o->seconds = bench_seconds(optarg);
			if (!o->seconds)
				usage();
		} else if (c == 'p') {
			o->use_poll = true;
		} else if (c == 'Q') {
			o->quiet = true;
		} else if (c == 'Z') {
			o->zerocopy = true;
		} else if (c == 'X') {
			o->xdp_tx = true;
		} else if (!num_arg(nums, ARRAY_SIZE(nums), c, optarg)) {
			usage();
		}
	}
	if (optind != argc - 1 || !o->ifname)
		usage();
	for (c = 0; c < (int)ARRAY_SIZE(bench_name); c++)
		if (!strcmp(argv[optind], bench_name[c]))
			break;
	if (c == (int)ARRAY_SIZE(bench_name))
		usage();
	o->bench = c;
	if ((o->bench == ATTACH || o->bench == DETACH) && !o->pin)
		usage();
	if ((o->zerocopy && !o->drv) || (o->xdp_tx && o->bench != ATTACH))
		usage();
	/* The harness attaches on both ends, away from the traffic. */
	if (o->bench == PINGPONG &&
	    (!o->peer || !o->pin || !o->peer_pin || !o->inflight ||
	     o->inflight > o->ring_size / 2))
		usage();
	if (!is_pow2(o->frame_size) || !is_pow2(o->ring_size) ||
	    o->pkt_size > o->frame_size || o->batch > o->ring_size) {
		fputs("xskbench: FRAME_SIZE and RING_SIZE must be powers of 2, "
		      "PKT_SIZE <= FRAME_SIZE, BATCH <= RING_SIZE\n", stderr);
		exit(1);
	}
}

/* The frame an address points into (aligned umem; RX adds headroom). */
static uint64_t frame_of(const struct opts *o, uint64_t addr)
{
	return addr & ~(uint64_t)(o->frame_size - 1);
}

static uint32_t xdp_mode(const struct opts *o)
{
	return o->drv ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
}

static int umem_map(const struct opts *o, struct xsk *x)
{
	x->area_len = (size_t)2 * o->ring_size * o->frame_size;
	x->area = mmap(NULL, x->area_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (x->area != MAP_FAILED)
		return 0;
	x->area = NULL;
	return bench_fail(errno, "mmap umem (%zu bytes)", x->area_len);
}

static void xsk_close(struct xsk *x)
{
	if (x->sock)
		xsk_socket__delete(x->sock);
	if (x->umem)
		xsk_umem__delete(x->umem);
	x->sock = NULL;
	x->umem = NULL;
}

/*
 * A queue stays bound for a moment after the last socket on it is closed
 * (the kernel frees the buffer pool from a work item), and binding it then
 * fails with EBUSY: back-to-back runs retry for up to two seconds.
 */
static int xsk_open(const struct opts *o, struct xsk *x)
{
	struct xsk_umem_config ucfg = {
		.fill_size = o->ring_size,
		.comp_size = o->ring_size,
		.frame_size = o->frame_size,
	};
	struct xsk_socket_config scfg = {
		.rx_size = o->ring_size,
		.tx_size = o->ring_size,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = xdp_mode(o),
		.bind_flags = o->zerocopy ? XDP_ZEROCOPY : XDP_COPY,
	};
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	int ret, tries;

	for (tries = 0; ; tries++) {
		ret = xsk_umem__create(&x->umem, x->area, x->area_len, &x->fq,
				       &x->cq, &ucfg);
		if (ret)
			return bench_fail(-ret, "xsk_umem__create");
		ret = xsk_socket__create(&x->sock, o->ifname, o->queue, x->umem,
					 o->bench == TXPUSH ? NULL : &x->rx,
					 o->bench == RXDROP ? NULL : &x->tx,
					 &scfg);
		if (!ret)
			break;
		x->sock = NULL;
		xsk_close(x);
		if (ret != -EBUSY || tries == 100 || stop)
			return bench_fail(-ret, "xsk_socket__create on %s "
					  "queue %u", o->ifname, o->queue);
		if (nanosleep(&pause, NULL) && errno != EINTR)
			return bench_fail(errno, "nanosleep");
	}
	x->fd = xsk_socket__fd(x->sock);
	return 0;
}

/* Prebuilt packets for txpush; fill ring (and l2fwd's stack) otherwise. */
static int frames_setup(const struct opts *o, struct xsk *x)
{
	uint32_t n = o->ring_size, i, idx;
	uint8_t *area = x->area;

	if (o->bench == TXPUSH) {
		for (i = n; i < 2 * n; i++)
			bench_frame(area + (size_t)i * o->frame_size,
				    o->pkt_size);
		return 0;
	}
	if (xsk_ring_prod__reserve(&x->fq, n, &idx) != n)
		return bench_fail(ENOSPC, "fill ring initial reserve");
	for (i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&x->fq, idx + i) =
			(uint64_t)i * o->frame_size;
	xsk_ring_prod__submit(&x->fq, n);
	if (o->bench != L2FWD && o->bench != PINGPONG)
		return 0;
	x->stack = calloc(2 * n, sizeof(*x->stack));
	x->txlen = calloc(2 * n, sizeof(*x->txlen));
	if (!x->stack || !x->txlen)
		return bench_fail(ENOMEM, "frame stack");
	for (i = n; i < 2 * n; i++)
		x->stack[x->nfree++] = (uint64_t)i * o->frame_size;
	return 0;
}

/*
 * bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS), or with -X
 * "return XDP_TX" (the map is still made and pinned, for a run's socket).
 */
static int prog_load(const struct opts *o, int map_fd)
{
	const struct bpf_insn tx_insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
		  .imm = XDP_TX },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct bpf_insn insns[] = {
		{ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = BPF_REG_2,
		  .src_reg = BPF_REG_1,
		  .off = offsetof(struct xdp_md, rx_queue_index) },
		{ .code = BPF_LD | BPF_IMM | BPF_DW, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map_fd },
		{ .imm = 0 },	/* upper half of the 64-bit immediate */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3,
		  .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_redirect_map },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static char log[4096];
	LIBBPF_OPTS(bpf_prog_load_opts, lo, .log_buf = log,
		    .log_size = sizeof(log));
	int fd;

	if (o->xdp_tx)
		fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xskbench_tx", "GPL",
				   tx_insns, ARRAY_SIZE(tx_insns), &lo);
	else
		fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xskbench_redir", "GPL",
				   insns, ARRAY_SIZE(insns), &lo);
	if (fd < 0) {
		bench_fail(-fd, "bpf_prog_load");
		fputs(log, stderr);
	}
	return fd;
}

static int xdp_attach(const struct opts *o, int prog_fd)
{
	int ret;

	ret = bpf_xdp_attach(o->ifindex, prog_fd,
			     xdp_mode(o) | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (!ret)
		return 0;
	if (ret == -EBUSY || ret == -EEXIST)
		return bench_fail(-ret, "attach XDP to %s (it has an XDP "
				  "program already)", o->ifname);
	if (o->drv && ret == -EOPNOTSUPP)
		return bench_fail(-ret, "attach XDP to %s in drv mode (no "
				  "native XDP in its driver; try -m skb)",
				  o->ifname);
	return bench_fail(-ret, "attach XDP to %s in %s mode", o->ifname,
			  o->drv ? "drv" : "skb");
}

/* Detaches only if our program is still the one attached. */
static int xdp_detach(const struct opts *o, int prog_fd)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, ao, .old_prog_fd = prog_fd);
	int ret;

	ret = bpf_xdp_detach(o->ifindex, xdp_mode(o), &ao);
	return ret ? bench_fail(-ret, "detach XDP from %s", o->ifname) : 0;
}

/*
 * "attach": the program attached and its XSKMAP pinned at -M, for runs
 * that must not attach or detach while traffic flows (under QEMU's TCG,
 * patching the XDP dispatcher while another vCPU runs it can fault).
 * "detach": the reverse.
 */
static int attach_pinned(const struct opts *o)
{
	int map_fd, prog_fd, ret;

	if (o->bench == DETACH) {
		ret = bpf_xdp_detach(o->ifindex, xdp_mode(o), NULL);
		if (ret)
			return bench_fail(-ret, "detach XDP from %s", o->ifname);
		if (unlink(o->pin))
			return bench_fail(errno, "unlink %s", o->pin);
		return 0;
	}
	map_fd = bpf_map_create(BPF_MAP_TYPE_XSKMAP, "xsks", sizeof(int),
				sizeof(int), o->queue + 1, NULL);
	if (map_fd < 0)
		return bench_fail(-map_fd, "bpf_map_create XSKMAP");
	prog_fd = prog_load(o, map_fd);
	ret = prog_fd < 0 || xdp_attach(o, prog_fd);
	if (!ret && bpf_obj_pin(map_fd, o->pin)) {
		ret = bench_fail(errno, "bpf_obj_pin %s", o->pin);
		xdp_detach(o, prog_fd);
	}
	if (prog_fd >= 0)
		close(prog_fd);
	close(map_fd);
	return ret ? 1 : 0;
}

static void kick_tx(struct xsk *x, struct bench_run *r)
{
	if (sendto(x->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
		return;
	/* EAGAIN: the 32-frame budget is used up. EBUSY: a frame dropped. */
	if (errno != EAGAIN && errno != EINTR && errno != ENOBUFS)
		r->errors++;
	if (errno == EBUSY)
		r->dropped++;
}

/* Descriptors on the TX ring the kernel has not consumed yet. */
static uint32_t tx_unsent(const struct xsk *x)
{
	return x->tx.cached_prod - __atomic_load_n(x->tx.consumer,
						   __ATOMIC_ACQUIRE);
}

static void idle(const struct opts *o, struct xsk *x, short events,
		 double deadline)
{
	struct pollfd pfd = { .fd = x->fd, .events = events };
	int ms;

	/* Copy-mode RX needs no wakeup: the kernel fills RX on its own. */
	if (!o->use_poll)
		return;
	ms = (int)((deadline - bench_now()) * 1000) + 1;
	if (poll(&pfd, 1, ms > 0 ? ms : 1) < 0 && errno != EINTR)
		bench_fail(errno, "poll");
}

static void rxdrop_step(const struct opts *o, struct xsk *x,
			struct bench_run *r, double deadline)
{
	uint32_t n, i, ri, fi;

	n = xsk_ring_cons__peek(&x->rx, o->batch, &ri);
	if (!n) {
		TP4_MARK(TP4_MARK_IDLE);
		idle(o, x, POLLIN, deadline);
		return;
	}
	TP4_MARK(TP4_MARK_BUSY);
	/*
	 * The fill ring has room for every RX frame; it can look full only
	 * for the moment between the kernel publishing RX and releasing fill.
	 */
	while (xsk_ring_prod__reserve(&x->fq, n, &fi) != n)
		;
	for (i = 0; i < n; i++) {
		const struct xdp_desc *d;

		d = xsk_ring_cons__rx_desc(&x->rx, ri + i);
		r->bytes += d->len;
		*xsk_ring_prod__fill_addr(&x->fq, fi + i) =
			frame_of(o, d->addr);
	}
	xsk_ring_prod__submit(&x->fq, n);
	xsk_ring_cons__release(&x->rx, n);
	r->packets += n;
}

static void txpush_step(const struct opts *o, struct xsk *x,
			struct bench_run *r, double deadline)
{
	uint32_t n, i, idx = 0, room;

	n = xsk_ring_cons__peek(&x->cq, o->ring_size, &idx);
	if (n) {
		xsk_ring_cons__release(&x->cq, n);
		x->outstanding -= n;
		r->packets += n;
		r->bytes += (uint64_t)n * o->pkt_size;
	}
	room = o->ring_size - x->outstanding;
	if (room > o->batch)
		room = o->batch;
	if (room && xsk_ring_prod__reserve(&x->tx, room, &idx) == room) {
		for (i = 0; i < room; i++) {
			struct xdp_desc *d;
			uint32_t f;

			d = xsk_ring_prod__tx_desc(&x->tx, idx + i);
			f = x->tx_next++ & (o->ring_size - 1);
			d->addr = (uint64_t)(o->ring_size + f) * o->frame_size;
			d->len = o->pkt_size;
			d->options = 0;
		}
		xsk_ring_prod__submit(&x->tx, room);
		x->outstanding += room;
	} else if (!n) {
		idle(o, x, POLLOUT, deadline);
	}
	if (tx_unsent(x))
		kick_tx(x, r);
}

/* Completed frames go onto the stack, and from there to the fill ring. */
static uint32_t l2fwd_recycle(const struct opts *o, struct xsk *x,
			      struct bench_run *r)
{
	uint32_t n, k, i, idx = 0;

	n = xsk_ring_cons__peek(&x->cq, o->ring_size, &idx);
	for (i = 0; i < n; i++) {
		uint64_t f = *xsk_ring_cons__comp_addr(&x->cq, idx + i);

		f = frame_of(o, f);
		r->bytes += x->txlen[f / o->frame_size];
		x->stack[x->nfree++] = f;
	}
	xsk_ring_cons__release(&x->cq, n);
	r->packets += n;

	k = xsk_prod_nb_free(&x->fq, x->nfree);
	if (k > x->nfree)
		k = x->nfree;
	if (k && xsk_ring_prod__reserve(&x->fq, k, &idx) == k) {
		for (i = 0; i < k; i++)
			*xsk_ring_prod__fill_addr(&x->fq, idx + i) =
				x->stack[--x->nfree];
		xsk_ring_prod__submit(&x->fq, k);
	}
	return n;
}

static void l2fwd_step(const struct opts *o, struct xsk *x,
		       struct bench_run *r, double deadline)
{
	uint32_t done, room, n = 0, i, ri, ti;

	done = l2fwd_recycle(o, x, r);
	room = xsk_prod_nb_free(&x->tx, o->batch);
	if (room > o->batch)
		room = o->batch;
	if (room)
		n = xsk_ring_cons__peek(&x->rx, room, &ri);
	if (n && xsk_ring_prod__reserve(&x->tx, n, &ti) == n) {
		for (i = 0; i < n; i++) {
			const struct xdp_desc *rd;
			struct xdp_desc *td;

			rd = xsk_ring_cons__rx_desc(&x->rx, ri + i);
			td = xsk_ring_prod__tx_desc(&x->tx, ti + i);
			if (rd->len >= 12)
				bench_swap_macs((uint8_t *)x->area + rd->addr);
			else
				r->errors++;
			x->txlen[rd->addr / o->frame_size] = rd->len;
			td->addr = rd->addr;
			td->len = rd->len;
			td->options = 0;
		}
		xsk_ring_cons__release(&x->rx, n);
		xsk_ring_prod__submit(&x->tx, n);
	}
	/* A turn that moved nothing waits (tp4mark.h), kick or not. */
	if (!n && !done)
		TP4_MARK(TP4_MARK_IDLE);
	else
		TP4_MARK(TP4_MARK_BUSY);
	if (tx_unsent(x))
		kick_tx(x, r);
	else if (!n && !done)
		idle(o, x, POLLIN, deadline);
}

static void run(const struct opts *o, struct xsk *x, struct bench_run *r)
{
	double t;

	bench_start(r);
	for (t = r->start; !stop && t < r->end; bench_tick(r, t)) {
		double deadline = r->tick < r->end ? r->tick : r->end;

		if (o->bench == RXDROP)
			rxdrop_step(o, x, r, deadline);
		else if (o->bench == TXPUSH)
			txpush_step(o, x, r, deadline);
		else
			l2fwd_step(o, x, r, deadline);
		t = bench_now();
	}
	bench_end(r, t);
}

static void xsk_stats(const struct opts *o, struct xsk *x, struct bench_run *r)
{
	struct xdp_statistics s;
	socklen_t len = sizeof(s);

	if (getsockopt(x->fd, SOL_XDP, XDP_STATISTICS, &s, &len)) {
		bench_fail(errno, "getsockopt XDP_STATISTICS");
		return;
	}
	r->errors += s.rx_invalid_descs + s.tx_invalid_descs;
	/* In the result also under -Q: what RX lost, ring full or not. */
	r->drops = s.rx_dropped + s.rx_ring_full;
	if (!o->quiet)
		fprintf(stderr, "xskbench: rx_dropped %llu rx_ring_full %llu "
			"rx_fill_ring_empty_descs %llu "
			"tx_ring_empty_descs %llu rx_invalid_descs %llu "
			"tx_invalid_descs %llu\n", s.rx_dropped,
			s.rx_ring_full, s.rx_fill_ring_empty_descs,
			s.tx_ring_empty_descs, s.rx_invalid_descs,
			s.tx_invalid_descs);
}

/* The pinned XSKMAP of an "attach" gets the socket: @map_fd. */
static int map_pinned(const struct opts *o, struct xsk *x, int *map_fd)
{
	int err;

	*map_fd = bpf_obj_get(o->pin);
	if (*map_fd < 0)
		return bench_fail(errno, "bpf_obj_get %s", o->pin);
	err = xsk_socket__update_xskmap(x->sock, *map_fd);
	return err ? bench_fail(-err, "xsk_socket__update_xskmap") : 0;
}

/* The ping-pong's first packets: -n frames from the free stack. */
static int pingpong_inject(const struct opts *o, struct xsk *x)
{
	uint32_t n = o->inflight, i, idx;

	if (xsk_ring_prod__reserve(&x->tx, n, &idx) != n)
		return bench_fail(ENOSPC, "TX ring reserve");
	for (i = 0; i < n; i++) {
		uint64_t f = x->stack[--x->nfree];
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&x->tx, idx + i);

		bench_frame((uint8_t *)x->area + f, o->pkt_size);
		x->txlen[f / o->frame_size] = o->pkt_size;
		d->addr = f;
		d->len = o->pkt_size;
		d->options = 0;
	}
	xsk_ring_prod__submit(&x->tx, n);
	return 0;
}

static int prepare(const struct opts *o, struct bench_run *r);

/*
 * The far end of the ping-pong: l2fwd on the peer, in a child process,
 * until the parent stops it (SIGTERM, also when the parent dies). Returns
 * its pid once its socket is ready, or -1.
 */
static pid_t start_peer(const struct opts *o)
{
	struct bench_run pr = { 0 };
	struct xsk px = { .fd = -1 };
	struct opts po = *o;
	int ready[2], map_fd;
	pid_t pid;
	char c = 0;

	if (pipe(ready))
		return bench_fail(errno, "pipe");
	pid = fork();
	if (pid < 0)
		return bench_fail(errno, "fork");
	if (pid) {
		close(ready[1]);
		if (read(ready[0], &c, 1) != 1) {
			waitpid(pid, NULL, 0);
			pid = bench_fail(EPIPE, "the ping-pong peer did not start");
		}
		close(ready[0]);
		return pid;
	}
	close(ready[0]);
	if (prctl(PR_SET_PDEATHSIG, SIGTERM))
		_exit(bench_fail(errno, "prctl"));
	po.ifname = o->peer;
	po.ifindex = if_nametoindex(o->peer);
	po.pin = o->peer_pin;
	po.cpu = o->peer_cpu;
	po.quiet = true;
	po.seconds = 24 * 3600;
	if (!po.ifindex)
		_exit(bench_fail(errno, "interface %s", o->peer));
	if (prepare(&po, &pr) || umem_map(&po, &px) || xsk_open(&po, &px) ||
	    frames_setup(&po, &px) || map_pinned(&po, &px, &map_fd))
		_exit(1);
	if (write(ready[1], &c, 1) != 1)
		_exit(bench_fail(errno, "write"));
	run(&po, &px, &pr);
	_exit(0);
}

static int prepare(const struct opts *o, struct bench_run *r)
{
	r->tool = "xskbench";
	r->bench = bench_name[o->bench];
	r->mode = o->zerocopy ? "xdp-zc" : o->drv ? "xdp-drv" : "xdp-skb";
	r->ifname = o->ifname;
	r->pkt_size = o->pkt_size;
	r->frame_size = o->frame_size;
	r->ring_size = o->ring_size;
	r->batch = o->batch;
	r->inflight = o->bench == PINGPONG ? o->inflight : 0;
	r->seconds = o->seconds;
	r->quiet = o->quiet;
	if (bench_init(r))
		return -1;
	if (bench_on_stop(on_signal))
		return -1;
	return o->cpu == NO_CPU ? 0 : bench_pin(o->cpu);
}

int main(int argc, char **argv)
{
	struct opts o = {
		.seconds = 5, .batch = 64, .frame_size = 2048, .pkt_size = 64,
		.ring_size = 2048, .cpu = NO_CPU,
	};
	struct bench_run r = { 0 };
	struct xsk x = { .fd = -1 };
	int map_fd = -1, prog_fd = -1, ret = 1, err, status;
	pid_t peer = 0;

	parse_args(argc, argv, &o);
	o.ifindex = if_nametoindex(o.ifname);
	if (!o.ifindex) {
		bench_fail(errno, "interface %s", o.ifname);
		return 1;
	}
	if (o.bench == ATTACH || o.bench == DETACH)
		return attach_pinned(&o);
	if (prepare(&o, &r))
		goto out;
	if (o.bench == PINGPONG) {
		peer = start_peer(&o);
		if (peer < 0)
			goto out;
	}
	if (umem_map(&o, &x) || xsk_open(&o, &x) || frames_setup(&o, &x))
		goto out;
	if (o.pin) {
		/* The program is attached already ("attach"): only the map. */
		map_fd = bpf_obj_get(o.pin);
		if (map_fd < 0) {
			bench_fail(errno, "bpf_obj_get %s", o.pin);
			goto out;
		}
	} else {
		map_fd = bpf_map_create(BPF_MAP_TYPE_XSKMAP, "xsks",
					sizeof(int), sizeof(int),
					o.queue + 1, NULL);
		if (map_fd < 0) {
			bench_fail(-map_fd, "bpf_map_create XSKMAP");
			goto out;
		}
		prog_fd = prog_load(&o, map_fd);
		if (prog_fd < 0)
			goto out;
	}
	err = o.bench == TXPUSH ? 0 : xsk_socket__update_xskmap(x.sock, map_fd);
	if (err) {
		bench_fail(-err, "xsk_socket__update_xskmap");
		goto out;
	}
	if (!o.pin && xdp_attach(&o, prog_fd))
		goto out;
	if (o.bench == PINGPONG && pingpong_inject(&o, &x))
		goto out;

	r.count_window = true;
	run(&o, &x, &r);

	ret = !o.pin && xdp_detach(&o, prog_fd) ? 1 : 0;
	xsk_stats(&o, &x, &r);
	/*
	 * A frame the driver dropped completes like a sent one: it is not a
	 * packet sent (tpbench's V4 does not count those either).
	 */
	if (r.dropped && r.packets) {
		uint64_t sent = r.dropped < r.packets ? r.packets - r.dropped : 0;

		r.bytes = (uint64_t)((double)r.bytes * sent / r.packets);
		r.packets = sent;
	}
	if (peer > 0) {
		/* A peer that failed makes the run void. */
		kill(peer, SIGTERM);
		if (waitpid(peer, &status, 0) != peer || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			bench_fail(ECHILD, "the ping-pong peer failed");
			ret = 1;
		}
		peer = 0;
	}
	if (!ret)
		bench_report(&r);
out:
	if (peer > 0) {
		kill(peer, SIGTERM);
		waitpid(peer, NULL, 0);
	}
	xsk_close(&x);
	if (x.area && munmap(x.area, x.area_len))
		bench_fail(errno, "munmap");
	if (prog_fd >= 0)
		close(prog_fd);
	if (map_fd >= 0)
		close(map_fd);
	free(x.stack);
	free(x.txlen);
	free(r.samples);
	return ret;
}

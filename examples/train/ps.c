/*
 * ps.c - the parameter server: one thread, one poll() loop over its
 * listening socket and up to PS_CONNS_MAX worker connections. It owns the
 * weights and the global step and applies each gradient as it arrives
 * (asynchronous SGD). A worker that goes away only closes its connection;
 * the PS goes on with whoever is connected, and tells each worker its rank
 * among them with every answer, so the shards follow the replicas drake
 * actually runs (TF_CONFIG lists max-instances workers, not the live ones).
 *
 * Ownership: everything lives in one struct ps on ps_main's stack, freed
 * before it returns.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "examples/train/net.h"
#include "examples/train/proto.h"
#include "examples/train/train.h"

#define PS_CONNS_MAX 256
#define PS_SEEN_MAX  (TFC_TASKS_MAX + 1) /* the chief, then each worker index */

struct conn {
	int fd;
	uint8_t *in, *out;
	size_t in_len, in_need, out_len, out_off;
	bool hello, closing, done_sent, replaced;
	uint8_t role;
	uint32_t index;
	double last;
};

struct ps {
	const struct train_opts *o;
	struct model_shape shape;
	size_t np, in_cap, out_cap;
	double *w, *g;
	uint64_t id, step, applied, stale;
	int lfd;
	struct conn conns[PS_CONNS_MAX];
	int nconns;
	bool seen[PS_SEEN_MAX];
	int nseen, njoins;
	double t0, last_log, acc, acc_loss, finished_at;
	uint64_t last_log_step, acc_step;
	bool have_acc, finished, reached;
};

static const char *role_name(uint8_t role)
{
	return role == PROTO_ROLE_CHIEF    ? "chief"
	       : role == PROTO_ROLE_WORKER ? "worker"
	                                   : "evaluator";
}

static bool trains(const struct conn *c)
{
	return c->hello && !c->replaced && c->role != PROTO_ROLE_EVALUATOR;
}

/* Live training replicas, and c's rank among them (the chief first, then
 * workers by index). */
static uint32_t live_rank(const struct ps *p, const struct conn *c, uint32_t *rank)
{
	uint32_t live = 0, r = 0;
	for (int i = 0; i < p->nconns; i++) {
		const struct conn *o = &p->conns[i];
		if (!trains(o))
			continue;
		live++;
		if (o != c && (o->role < c->role || (o->role == c->role && o->index < c->index)))
			r++;
	}
	*rank = r;
	return live;
}

static void queue(struct ps *p, struct conn *c, const struct proto_msg *m)
{
	size_t n = proto_encode(m, c->out, p->out_cap);
	if (n == 0) { /* cannot happen with finite weights; never answer garbage */
		c->closing = true;
		return;
	}
	c->out_len = n;
	c->out_off = 0;
	if (m->type == PROTO_DONE)
		c->done_sent = true;
}

static void answer_error(struct ps *p, struct conn *c, const char *why)
{
	struct proto_msg m = {.type = PROTO_ERROR};
	snprintf(m.text, sizeof(m.text), "%s", why);
	queue(p, c, &m);
	c->closing = true;
	printf("ps: refused a %s %u: %s\n", c->hello ? role_name(c->role) : "peer", c->index, why);
}

static void answer_weights(struct ps *p, struct conn *c, bool applied)
{
	struct proto_msg m = {.type = PROTO_WEIGHTS, .ps_id = p->id, .step = p->step};
	m.live = live_rank(p, c, &m.rank);
	m.flag = applied;
	m.n = (uint32_t)p->np;
	m.params = p->w;
	queue(p, c, &m);
}

static void answer_done(struct ps *p, struct conn *c)
{
	struct proto_msg m = {.type = PROTO_DONE, .step = p->step, .accuracy = p->acc};
	queue(p, c, &m);
}

static void on_hello(struct ps *p, struct conn *c, const struct proto_msg *m)
{
	char why[PROTO_TEXT_MAX];
	if (m->shape[0] != (uint32_t)p->shape.in || m->shape[1] != (uint32_t)p->shape.hidden ||
	    m->shape[2] != (uint32_t)p->shape.out) {
		snprintf(
		    why, sizeof(why),
		    "model mismatch: the PS trains %d-%d-%d, this replica %u-%u-%u (give every "
		    "replica the same TRAIN_HIDDEN)",
		    p->shape.in, p->shape.hidden, p->shape.out, m->shape[0], m->shape[1],
		    m->shape[2]);
		answer_error(p, c, why);
		return;
	}
	if (m->index >= TFC_TASKS_MAX || (m->role == PROTO_ROLE_CHIEF && m->index != 0)) {
		snprintf(why, sizeof(why), "%s index %u is out of range", role_name(m->role),
		         m->index);
		answer_error(p, c, why);
		return;
	}
	c->hello = true;
	c->role = m->role;
	c->index = m->index;
	/* The same replica connecting again: its old connection is dead (the
	 * pod was recreated, or the network dropped it) even if no FIN came. */
	for (int i = 0; i < p->nconns; i++) {
		struct conn *o = &p->conns[i];
		if (o != c && o->hello && o->role == c->role && o->index == c->index) {
			o->closing = o->replaced = true;
			o->out_len = o->out_off = 0;
		}
	}
	bool again = false;
	if (c->role != PROTO_ROLE_EVALUATOR) {
		size_t k = c->role == PROTO_ROLE_CHIEF ? 0 : 1 + c->index;
		again = p->seen[k];
		if (!again)
			p->nseen++;
		p->seen[k] = true;
	}
	p->njoins++;
	uint32_t rank, live = live_rank(p, c, &rank);
	printf("ps: %s %u %s at step %llu (%u training, %d seen)\n", role_name(c->role), c->index,
	       again ? "rejoined" : "joined", (unsigned long long)p->step, live, p->nseen);
	struct proto_msg w = {.type = PROTO_WELCOME, .ps_id = p->id, .step = p->step};
	queue(p, c, &w);
}

static void on_finish(struct ps *p, struct conn *c, const struct proto_msg *m)
{
	p->finished = true;
	p->finished_at = net_now();
	p->reached = m->flag != 0;
	p->acc = m->accuracy;
	p->acc_step = m->step;
	p->have_acc = true;
	double secs = p->finished_at - p->t0;
	printf("ps: finished at step %llu: accuracy %.4f %s %.4f (%s), %.1f s, %.1f steps/s, "
	       "%llu gradients applied, %llu stale, %d replicas seen\n",
	       (unsigned long long)p->step, p->acc, p->reached ? ">=" : "<", p->o->target,
	       p->reached ? "target reached" : "step cap reached", secs,
	       secs > 0 ? (double)p->step / secs : 0, (unsigned long long)p->applied,
	       (unsigned long long)p->stale, p->nseen);
	answer_done(p, c);
}

/* One whole request in c->in: decode it and queue the answer. */
static void on_request(struct ps *p, struct conn *c, enum proto_type type)
{
	struct proto_msg m;
	char why[PROTO_TEXT_MAX];
	c->last = net_now();
	if (proto_decode(type, c->in + PROTO_HEADER, c->in_len - PROTO_HEADER, &m, p->g, p->np, why,
	                 sizeof(why)) != DRAKE_OK) {
		answer_error(p, c, why);
		return;
	}
	if (type == PROTO_HELLO) {
		on_hello(p, c, &m);
		if (p->finished && c->hello)
			answer_done(p, c); /* the WELCOME is replaced: nothing left to train */
		return;
	}
	if (!c->hello) {
		answer_error(p, c, "say HELLO first");
		return;
	}
	if (p->finished) {
		answer_done(p, c);
		return;
	}
	bool applied = false;
	switch (type) {
	case PROTO_PULL: break;
	case PROTO_PUSH:
		if (m.n != p->np) {
			snprintf(why, sizeof(why), "PUSH of %u values, the model has %zu", m.n,
			         p->np);
			answer_error(p, c, why);
			return;
		}
		if (m.ps_id != p->id || (p->o->global_steps && p->step >= p->o->global_steps)) {
			p->stale++;
		} else {
			model_sgd(p->np, p->w, p->g, p->o->lr);
			p->step++;
			p->applied++;
			applied = true;
		}
		break;
	case PROTO_EVAL:
		p->acc = m.accuracy;
		p->acc_loss = m.loss;
		p->acc_step = m.step;
		p->have_acc = true;
		break;
	case PROTO_FINISH: on_finish(p, c, &m); return;
	default:
		snprintf(why, sizeof(why), "a %s is not a request", proto_type_name(type));
		answer_error(p, c, why);
		return;
	}
	answer_weights(p, c, applied);
}

static void drop(struct ps *p, int i)
{
	struct conn *c = &p->conns[i];
	if (c->hello && !c->done_sent && !c->replaced && !p->finished)
		printf("ps: %s %u left at step %llu\n", role_name(c->role), c->index,
		       (unsigned long long)p->step);
	close(c->fd);
	free(c->in);
	free(c->out);
	p->conns[i] = p->conns[--p->nconns];
}

static void on_accept(struct ps *p)
{
	int fd = accept4(p->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	if (p->nconns == PS_CONNS_MAX) {
		close(fd); /* the worker retries; a real job has far fewer replicas */
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct conn *c = &p->conns[p->nconns];
	*c = (struct conn){.fd = fd, .in_need = PROTO_HEADER, .last = net_now()};
	c->in = malloc(p->in_cap);
	c->out = malloc(p->out_cap);
	if (!c->in || !c->out) {
		free(c->in);
		free(c->out);
		close(fd);
		return;
	}
	p->nconns++;
}

/* Reads what c has sent; handles a request once it is whole. false: drop c. */
static bool on_readable(struct ps *p, struct conn *c)
{
	ssize_t n = recv(c->fd, c->in + c->in_len, c->in_need - c->in_len, 0);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		return false;
	if (n < 0)
		return true;
	c->in_len += (size_t)n;
	if (c->in_len < c->in_need)
		return true;
	enum proto_type type;
	uint32_t plen;
	char why[PROTO_TEXT_MAX];
	if (proto_header(c->in, &type, &plen, why, sizeof(why)) != DRAKE_OK) {
		answer_error(p, c, why);
		return true;
	}
	if (PROTO_HEADER + (size_t)plen > p->in_cap) {
		snprintf(why, sizeof(why), "a %s of %u bytes is larger than this model's requests",
		         proto_type_name(type), plen);
		answer_error(p, c, why);
		return true;
	}
	if (c->in_len < PROTO_HEADER + (size_t)plen) {
		c->in_need = PROTO_HEADER + plen;
		return true;
	}
	on_request(p, c, type);
	c->in_len = 0;
	c->in_need = PROTO_HEADER;
	return true;
}

/* Writes what is queued for c. false: drop c. */
static bool on_writable(struct conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return true;
		if (n <= 0)
			return false;
		c->out_off += (size_t)n;
	}
	c->out_len = c->out_off = 0;
	return !c->closing;
}

static void log_line(struct ps *p, double now)
{
	double dt = now - p->last_log;
	uint32_t live = 0;
	for (int i = 0; i < p->nconns; i++)
		if (trains(&p->conns[i]))
			live++;
	char acc[64] = "accuracy=-";
	if (p->have_acc)
		snprintf(acc, sizeof(acc), "accuracy=%.4f@%llu", p->acc,
		         (unsigned long long)p->acc_step);
	printf("ps: step=%llu steps/s=%.1f %s workers=%u seen=%d stale=%llu\n",
	       (unsigned long long)p->step, dt > 0 ? (double)(p->step - p->last_log_step) / dt : 0,
	       acc, live, p->nseen, (unsigned long long)p->stale);
	fflush(stdout);
	p->last_log = now;
	p->last_log_step = p->step;
}

/* Done once every connected replica has been told, or the linger is over. */
static bool all_told(const struct ps *p, double now)
{
	if (now - p->finished_at >= p->o->finish_linger)
		return true;
	for (int i = 0; i < p->nconns; i++) {
		const struct conn *c = &p->conns[i];
		if (c->hello && !c->replaced && (!c->done_sent || c->out_len > c->out_off))
			return false;
	}
	return true;
}

static uint64_t fresh_id(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct model_rng r = {(uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec ^
	                      (uint64_t)getpid() << 32};
	return model_rng_next(&r) | 1; /* never 0 */
}

int ps_main(const struct train_opts *o, const struct tf_config *tc, const struct model_shape *s)
{
	char host[TFC_HOST_MAX + 1], why[512];
	int port;
	if (tfc_split_address(tc->ep[TFC_PS][tc->index], host, sizeof(host), &port, why,
	                      sizeof(why)) != DRAKE_OK) {
		fprintf(stderr, "drake-train ps: TF_CONFIG: %s\n", why);
		return 2;
	}
	struct ps *p = calloc(1, sizeof(*p));
	if (!p) {
		fprintf(stderr, "drake-train ps: out of memory\n");
		return 1;
	}
	p->o = o;
	p->lfd = -1;
	p->shape = *s;
	p->np = model_nparams(s);
	p->in_cap = PROTO_HEADER + 28 + 8 * p->np; /* PUSH, the largest request */
	p->out_cap = PROTO_HEADER + 32 + 8 * p->np;
	p->w = malloc(p->np * sizeof(double));
	p->g = malloc(p->np * sizeof(double));
	p->id = fresh_id();
	int rc = 1;
	if (!p->w || !p->g) {
		fprintf(stderr, "drake-train ps: out of memory\n");
		goto out;
	}
	model_init(s, (uint64_t)o->seed, p->w);
	p->lfd = net_listen(port, why, sizeof(why));
	if (p->lfd < 0) {
		fprintf(stderr, "drake-train ps: %s\n", why);
		goto out;
	}
	p->t0 = p->last_log = net_now();
	printf("ps: listening on port %d; model %d-%d-%d (%zu weights), learning rate %g, step cap "
	       "%zu\n",
	       port, s->in, s->hidden, s->out, p->np, o->lr, o->global_steps);
	fflush(stdout);
	struct pollfd pf[PS_CONNS_MAX + 1];
	for (;;) {
		pf[0] = (struct pollfd){p->lfd, POLLIN, 0};
		for (int i = 0; i < p->nconns; i++) {
			struct conn *c = &p->conns[i];
			/* one request at a time: read the next once the answer is out */
			short ev = c->out_len > c->out_off ? POLLOUT : POLLIN;
			pf[i + 1] = (struct pollfd){c->fd, ev, 0};
		}
		int nfds = p->nconns + 1;
		if (poll(pf, (nfds_t)nfds, 200) < 0 && errno != EINTR) {
			fprintf(stderr, "drake-train ps: poll: %s\n", strerror(errno));
			goto out;
		}
		double now = net_now();
		/* Walk backwards: drop() moves the last connection into the hole. */
		for (int i = nfds - 2; i >= 0; i--) {
			struct conn *c = &p->conns[i];
			short re = pf[i + 1].revents;
			bool keep = true;
			if (re & (POLLERR | POLLNVAL))
				keep = false;
			else if (re & POLLOUT)
				keep = on_writable(c);
			else if (re & (POLLIN | POLLHUP))
				keep = on_readable(p, c) && on_writable(c);
			else if (c->closing && c->out_len == c->out_off)
				keep = false;
			else if (now - c->last > o->idle_timeout)
				keep = false; /* its node is gone, or it hangs: free its rank */
			if (!keep)
				drop(p, i);
		}
		if (pf[0].revents & POLLIN)
			on_accept(p);
		if (!p->finished && now - p->last_log >= o->log_every)
			log_line(p, now);
		if (p->finished && all_told(p, now)) {
			rc = 0;
			break;
		}
	}
out:
	fflush(stdout);
	while (p->nconns > 0)
		drop(p, p->nconns - 1);
	if (p->lfd >= 0)
		close(p->lfd);
	free(p->w);
	free(p->g);
	free(p);
	return rc;
}

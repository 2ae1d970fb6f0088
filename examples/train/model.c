/*
 * model.c - forward and backward passes of model.h's perceptron. Softmax
 * subtracts the largest logit first, so no logit overflows exp(); the loss
 * of a probability that underflows to 0 is capped rather than infinite.
 */
#include "examples/train/model.h"

#include <math.h>
#include <string.h>

#define LOSS_CAP 50.0 /* -log of a probability that underflowed */

uint64_t model_rng_next(struct model_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double model_rng_uniform(struct model_rng *r)
{
	return (model_rng_next(r) >> 11) * 0x1.0p-53;
}

size_t model_nparams(const struct model_shape *s)
{
	if (s->in < 1 || s->in > MODEL_IN_MAX || s->out < 2 || s->out > MODEL_OUT_MAX ||
	    s->hidden < 0 || s->hidden > MODEL_HIDDEN_MAX)
		return 0;
	size_t in = (size_t)s->in, h = (size_t)s->hidden, out = (size_t)s->out;
	if (h == 0)
		return out * in + out;
	return h * in + h + out * h + out;
}

size_t model_scratch_len(const struct model_shape *s)
{
	return 2 * (size_t)s->hidden + (size_t)s->out;
}

static void glorot(struct model_rng *r, double *w, size_t n, int fan_in, int fan_out)
{
	double a = sqrt(6.0 / (fan_in + fan_out));
	for (size_t i = 0; i < n; i++)
		w[i] = (2 * model_rng_uniform(r) - 1) * a;
}

void model_init(const struct model_shape *s, uint64_t seed, double *w)
{
	struct model_rng r = {seed};
	size_t in = (size_t)s->in, h = (size_t)s->hidden, out = (size_t)s->out;
	memset(w, 0, model_nparams(s) * sizeof(double));
	if (h == 0) {
		glorot(&r, w, out * in, s->in, s->out);
		return;
	}
	glorot(&r, w, h * in, s->in, s->hidden);
	glorot(&r, w + h * in + h, out * h, s->hidden, s->out);
}

/* Forward pass of one row: hidden activations in hid (if any), class
 * probabilities in p. */
static void forward(const struct model_shape *s, const double *w, const double *x, double *hid,
                    double *p)
{
	size_t in = (size_t)s->in, h = (size_t)s->hidden, out = (size_t)s->out;
	const double *a = x, *W, *b;
	size_t na = in;
	if (h > 0) {
		const double *W1 = w, *b1 = w + h * in;
		for (size_t j = 0; j < h; j++) {
			double z = b1[j];
			const double *row = W1 + j * in;
			for (size_t i = 0; i < in; i++)
				z += row[i] * x[i];
			hid[j] = tanh(z);
		}
		a = hid;
		na = h;
		W = w + h * in + h;
	} else {
		W = w;
	}
	b = W + out * na;
	double max = -INFINITY;
	for (size_t k = 0; k < out; k++) {
		double z = b[k];
		const double *row = W + k * na;
		for (size_t i = 0; i < na; i++)
			z += row[i] * a[i];
		p[k] = z;
		if (z > max)
			max = z;
	}
	double sum = 0;
	for (size_t k = 0; k < out; k++) {
		p[k] = exp(p[k] - max);
		sum += p[k];
	}
	for (size_t k = 0; k < out; k++)
		p[k] /= sum;
}

static double nll(double p)
{
	return p > exp(-LOSS_CAP) ? -log(p) : LOSS_CAP;
}

double model_gradient(const struct model_shape *s, const double *w, const double *x,
                      const uint8_t *y, const uint32_t *rows, size_t n, double *grad,
                      double *scratch)
{
	size_t in = (size_t)s->in, h = (size_t)s->hidden, out = (size_t)s->out;
	size_t np = model_nparams(s);
	double *hid = scratch, *p = scratch + h, *dh = scratch + h + out;
	memset(grad, 0, np * sizeof(double));
	if (n == 0)
		return 0;
	double loss = 0;
	for (size_t r = 0; r < n; r++) {
		const double *xr = x + (size_t)rows[r] * in;
		int label = y[rows[r]];
		forward(s, w, xr, hid, p);
		loss += nll(p[label]);
		p[label] -= 1; /* dloss/dlogits = p - onehot */
		const double *a = h > 0 ? hid : xr;
		size_t na = h > 0 ? h : in;
		double *gW = h > 0 ? grad + h * in + h : grad, *gb = gW + out * na;
		const double *W = h > 0 ? w + h * in + h : w;
		for (size_t k = 0; k < out; k++) {
			double *row = gW + k * na;
			for (size_t i = 0; i < na; i++)
				row[i] += p[k] * a[i];
			gb[k] += p[k];
		}
		if (h == 0)
			continue;
		for (size_t j = 0; j < h; j++) {
			double d = 0;
			for (size_t k = 0; k < out; k++)
				d += W[k * h + j] * p[k];
			dh[j] = d * (1 - hid[j] * hid[j]); /* tanh' = 1 - tanh^2 */
		}
		double *gW1 = grad, *gb1 = grad + h * in;
		for (size_t j = 0; j < h; j++) {
			double *row = gW1 + j * in;
			for (size_t i = 0; i < in; i++)
				row[i] += dh[j] * xr[i];
			gb1[j] += dh[j];
		}
	}
	double inv = 1.0 / (double)n;
	for (size_t i = 0; i < np; i++)
		grad[i] *= inv;
	return loss * inv;
}

int model_predict(const struct model_shape *s, const double *w, const double *xrow, int label,
                  double *loss, double *scratch)
{
	double *hid = scratch, *p = scratch + s->hidden;
	forward(s, w, xrow, hid, p);
	int best = 0;
	for (int k = 1; k < s->out; k++)
		if (p[k] > p[best])
			best = k;
	if (loss)
		*loss = label >= 0 && label < s->out ? nll(p[label]) : 0;
	return best;
}

double model_evaluate(const struct model_shape *s, const double *w, const double *x,
                      const uint8_t *y, size_t n, double *loss, double *scratch)
{
	size_t right = 0;
	double sum = 0;
	for (size_t r = 0; r < n; r++) {
		double l;
		if (model_predict(s, w, x + r * (size_t)s->in, y[r], &l, scratch) == y[r])
			right++;
		sum += l;
	}
	if (loss)
		*loss = n ? sum / (double)n : 0;
	return n ? (double)right / (double)n : 0;
}

void model_sgd(size_t n, double *w, const double *g, double lr)
{
	for (size_t i = 0; i < n; i++)
		w[i] -= lr * g[i];
}

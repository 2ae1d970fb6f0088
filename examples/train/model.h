/*
 * model.h - the model drake-train trains: a one-hidden-layer perceptron
 * (tanh) with a softmax output and cross-entropy loss, in float64, or
 * multinomial logistic regression when the hidden layer has no units. Pure
 * math: no I/O, no clock, no global state; the same seed gives the same
 * weights on every machine.
 *
 * Parameters are one flat array (what the PS holds and the wire carries):
 *   hidden > 0:  W1[hidden][in], b1[hidden], W2[out][hidden], b2[out]
 *   hidden = 0:  W[out][in], b[out]
 *
 * Ownership: every array is the caller's; nothing is allocated here.
 */
#ifndef DRAKE_TRAIN_MODEL_H
#define DRAKE_TRAIN_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define MODEL_IN_MAX     4096
#define MODEL_HIDDEN_MAX 4096
#define MODEL_OUT_MAX    256

struct model_shape {
	int in, hidden, out;
};

/* A small, fast generator (splitmix64): deterministic streams from a seed. */
struct model_rng {
	uint64_t s;
};
uint64_t model_rng_next(struct model_rng *r);
/* Uniform in [0, 1). */
double model_rng_uniform(struct model_rng *r);

/* 0 when the shape is outside the limits above. */
size_t model_nparams(const struct model_shape *s);
/* Doubles of scratch the functions below need. */
size_t model_scratch_len(const struct model_shape *s);

/* Glorot-uniform weights and zero biases from seed. */
void model_init(const struct model_shape *s, uint64_t seed, double *w);

/*
 * The mean cross-entropy loss over rows[0..n) of x (row-major, s->in
 * features a row) with labels y, and its gradient with respect to w
 * (overwritten, model_nparams doubles).
 */
double model_gradient(const struct model_shape *s, const double *w, const double *x,
                      const uint8_t *y, const uint32_t *rows, size_t n, double *grad,
                      double *scratch);

/* The most probable class of one row; *loss (if not NULL) gets -log p(label). */
int model_predict(const struct model_shape *s, const double *w, const double *xrow, int label,
                  double *loss, double *scratch);

/* Accuracy over n rows, and their mean loss in *loss (if not NULL). */
double model_evaluate(const struct model_shape *s, const double *w, const double *x,
                      const uint8_t *y, size_t n, double *loss, double *scratch);

/* w -= lr * g: one step of plain SGD. */
void model_sgd(size_t n, double *w, const double *g, double lr);

#endif

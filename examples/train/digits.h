/*
 * digits.h - the handwritten digits drake-train learns: scikit-learn's copy
 * of the UCI optdigits test set (1,797 8x8 images, 17 grey levels), one CSV
 * row an image, 64 pixels in 0..16 then the digit 0..9, gzip-compressed as
 * Debian's python3-sklearn ships it (sklearn/datasets/data/digits.csv.gz).
 * An uncompressed file reads the same way.
 *
 * Ownership: digits_load and digits_split fill a caller's struct dataset
 * and allocate its arrays; dataset_release frees them (safe on a zeroed
 * struct).
 */
#ifndef DRAKE_TRAIN_DIGITS_H
#define DRAKE_TRAIN_DIGITS_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define DIGITS_FEATURES 64
#define DIGITS_CLASSES  10
#define DIGITS_ROWS_MAX 100000 /* rows a file may hold */
#define DIGITS_LINE_MAX 1024   /* bytes of one row */

struct dataset {
	size_t n;
	double *x; /* n rows of DIGITS_FEATURES, scaled to [0, 1] */
	uint8_t *y;
};

/* Reads path; on error msg names the file and line. */
drake_err digits_load(const char *path, struct dataset *d, char *msg, size_t len) DRAKE_MUST_CHECK;

/*
 * Holds out test_fraction of the rows for testing, spread evenly through
 * the file: row i is a test row when floor((i + 1) f) > floor(i f), so 0.2
 * takes rows 4, 9, 14, ... The same split on every replica, with no seed to
 * agree on. (The file's last rows come from other writers than its first:
 * a model trained on the first 80 % tops out near 0.92 on the last 20 %,
 * against 0.97 on an even split.) Each side gets at least one row, so
 * fewer than two rows are refused.
 */
drake_err digits_split(const struct dataset *all, double test_fraction, struct dataset *train,
                       struct dataset *test, char *msg, size_t len) DRAKE_MUST_CHECK;

void dataset_release(struct dataset *d);

#endif

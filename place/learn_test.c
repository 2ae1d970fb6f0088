/* learn_test.c - the learner counts each pod of its window once, forgets
 * the oldest when full, follows the workload's shapes, and stays bounded
 * and deterministic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "place/learn.h"

#define NCASES(a) (sizeof(a) / sizeof((a)[0]))

static const struct place_task CPU_ONLY = {4000, 8192, 0, 0, PLACE_ANY_MODEL};
static const struct place_task ONE_GPU = {8000, 32768, 1, 1000, PLACE_ANY_MODEL};
static const struct place_task HALF_GPU = {2000, 8192, 1, 500, PLACE_ANY_MODEL};
static const struct place_task EIGHT_GPU = {64000, 262144, 8, 1000, PLACE_ANY_MODEL};

static int64_t count_of(struct place_learner *l, const struct place_task *t)
{
	const struct place_typical *ty = place_learner_typical(l);
	for (size_t i = 0; i < ty->n; i++)
		if (!memcmp(&ty->s[i].t, t, sizeof(*t)))
			return ty->s[i].count;
	return 0;
}

struct seen {
	const char *key;
	const struct place_task *t;
	bool counted;
};

struct window_case {
	const char *name;
	size_t window;
	struct seen pods[8];
	size_t n;
	size_t in_window;
	int64_t one_gpu, half_gpu, eight_gpu;
};

static void test_each_pod_of_the_window_counts_once_and_the_oldest_goes(void **state)
{
	(void)state;
	static const struct window_case cases[] = {
	    {"a pod kube-scheduler retries is counted once",
	     4,
	     {{"a", &ONE_GPU, true}, {"a", &ONE_GPU, false}, {"b", &HALF_GPU, true}},
	     3,
	     2,
	     1,
	     1,
	     0},
	    {"a full window forgets its oldest pod",
	     2,
	     {{"a", &ONE_GPU, true}, {"b", &HALF_GPU, true}, {"c", &EIGHT_GPU, true}},
	     3,
	     2,
	     0,
	     1,
	     1},
	    {"a pod seen again after it left the window counts again",
	     2,
	     {{"a", &ONE_GPU, true},
	      {"b", &HALF_GPU, true},
	      {"c", &HALF_GPU, true},
	      {"a", &ONE_GPU, true}},
	     4,
	     2,
	     1,
	     1,
	     0},
	    {"pods without a key are counted every time",
	     4,
	     {{"", &ONE_GPU, true}, {"", &ONE_GPU, true}, {NULL, &ONE_GPU, true}},
	     3,
	     3,
	     3,
	     0,
	     0},
	};
	for (size_t c = 0; c < NCASES(cases); c++) {
		const struct window_case *k = &cases[c];
		struct place_learner l;
		char msg[128];
		assert_int_equal(place_learner_init(&l, k->window, msg, sizeof(msg)), DRAKE_OK);
		for (size_t i = 0; i < k->n; i++) {
			bool counted;
			assert_int_equal(
			    place_learner_observe(&l, k->pods[i].key, k->pods[i].t, &counted),
			    DRAKE_OK);
			if (counted != k->pods[i].counted)
				fail_msg("%s: pod %zu counted %d", k->name, i, counted);
		}
		assert_int_equal(place_learner_count(&l), k->in_window);
		if (count_of(&l, &ONE_GPU) != k->one_gpu ||
		    count_of(&l, &HALF_GPU) != k->half_gpu ||
		    count_of(&l, &EIGHT_GPU) != k->eight_gpu)
			fail_msg("%s: counts %lld %lld %lld", k->name,
			         (long long)count_of(&l, &ONE_GPU),
			         (long long)count_of(&l, &HALF_GPU),
			         (long long)count_of(&l, &EIGHT_GPU));
		place_learner_release(&l);
	}
}

/* The set agrees with a plain list of the window's keys over many pods,
 * so deleting keys never loses another key sharing their probe cluster. */
static void test_the_window_remembers_exactly_its_last_pods(void **state)
{
	(void)state;
	enum { WINDOW = 37, PODS = 5000, KEYS = 120 };
	struct place_learner l;
	char msg[128];
	assert_int_equal(place_learner_init(&l, WINDOW, msg, sizeof(msg)), DRAKE_OK);
	int ring[WINDOW] = {0}, n = 0, head = 0;
	uint32_t x = 12345;
	for (int p = 0; p < PODS; p++) {
		x = x * 1103515245u + 12345u;
		int id = (int)((x >> 8) % KEYS);
		char key[16];
		snprintf(key, sizeof(key), "uid-%d", id);
		bool present = false;
		for (int i = 0; i < n; i++)
			present |= ring[(head + i) % WINDOW] == id;
		bool counted;
		assert_int_equal(
		    place_learner_observe(&l, key, (id & 1) ? &ONE_GPU : &CPU_ONLY, &counted),
		    DRAKE_OK);
		if (counted == present)
			fail_msg("pod %d (%s): counted %d, in the window %d", p, key, counted,
			         present);
		if (!present) {
			if (n == WINDOW) {
				head = (head + 1) % WINDOW;
				n--;
			}
			ring[(head + n++) % WINDOW] = id;
		}
	}
	int64_t odd = 0;
	for (int i = 0; i < n; i++)
		odd += ring[(head + i) % WINDOW] & 1;
	assert_int_equal(place_learner_count(&l), n);
	assert_int_equal(l.dist.total, n);
	assert_int_equal(count_of(&l, &ONE_GPU), odd);
	place_learner_release(&l);
}

static void test_the_same_pods_give_the_same_typical_shapes(void **state)
{
	(void)state;
	const struct place_task *shapes[] = {&ONE_GPU, &HALF_GPU, &EIGHT_GPU, &CPU_ONLY};
	struct place_learner a, b;
	char msg[128];
	assert_int_equal(place_learner_init(&a, 50, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(place_learner_init(&b, 50, msg, sizeof(msg)), DRAKE_OK);
	for (int i = 0; i < 200; i++) {
		char key[16];
		bool counted;
		snprintf(key, sizeof(key), "p%d", i);
		assert_int_equal(place_learner_observe(&a, key, shapes[(i * 7) % 4], &counted),
		                 DRAKE_OK);
		if (i % 3 == 0) /* b sees some pods twice more: retries */
			assert_int_equal(
			    place_learner_observe(&b, key, shapes[(i * 7) % 4], &counted),
			    DRAKE_OK);
		assert_int_equal(place_learner_observe(&b, key, shapes[(i * 7) % 4], &counted),
		                 DRAKE_OK);
	}
	const struct place_typical *ta = place_learner_typical(&a), *tb = place_learner_typical(&b);
	assert_int_equal(ta->n, tb->n);
	assert_int_equal(ta->total, 50);
	for (size_t i = 0; i < ta->n; i++) {
		assert_memory_equal(&ta->s[i].t, &tb->s[i].t, sizeof(ta->s[i].t));
		assert_int_equal(ta->s[i].count, tb->s[i].count);
	}
	place_learner_release(&a);
	place_learner_release(&b);
}

static void test_a_window_out_of_range_is_refused(void **state)
{
	(void)state;
	static const size_t bad[] = {0, PLACE_LEARN_WINDOW_MAX + 1};
	for (size_t i = 0; i < NCASES(bad); i++) {
		struct place_learner l;
		char msg[128] = "";
		assert_int_equal(place_learner_init(&l, bad[i], msg, sizeof(msg)), DRAKE_EINVAL);
		assert_non_null(strstr(msg, "window"));
		place_learner_release(&l); /* safe on a refused learner */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_each_pod_of_the_window_counts_once_and_the_oldest_goes),
	    cmocka_unit_test(test_the_window_remembers_exactly_its_last_pods),
	    cmocka_unit_test(test_the_same_pods_give_the_same_typical_shapes),
	    cmocka_unit_test(test_a_window_out_of_range_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

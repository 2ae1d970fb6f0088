/*
 * scale_test.c - the drake.dev/scale record: what is accepted, what a
 * forged or stale record is refused for, and that what drake writes reads
 * back the same.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "reconciler/scale.h"

/* A job with min 2, max 6 workers. */
static struct job job_2_6(void)
{
	struct job j;
	memset(&j, 0, sizeof(j));
	snprintf(j.ns, sizeof(j.ns), "ml");
	snprintf(j.name, sizeof(j.name), "a");
	j.min_instances = 2;
	j.max_instances = 6;
	return j;
}

static json_t *with_annotation(const char *value)
{
	json_t *o = json_pack("{s:{s:s,s:s}}", "metadata", "name", "a", "namespace", "ml");
	if (value)
		json_object_set_new(json_object_get(o, "metadata"), "annotations",
		                    json_pack("{s:s}", JOB_ANNOTATION_SCALE, value));
	return o;
}

static drake_err decode(const char *value, struct job_scale *s, char *why)
{
	struct job j = job_2_6();
	json_t *o = with_annotation(value);
	why[0] = '\0';
	drake_err e = job_scale_decode(o, &j, s, why, 200);
	json_decref(o);
	return e;
}

static void a_valid_record_gives_members_time_and_places(void **state)
{
	(void)state;
	struct job_scale s;
	char why[200];
	assert_int_equal(decode("{\"workers\":[0,1,4],\"at\":1763880000,\"for\":\"ml/big\","
	                        "\"place\":{\"4\":\"node-3\"}}",
	                        &s, why),
	                 DRAKE_OK);
	assert_true(s.present);
	assert_int_equal(s.n, 3);
	assert_true(s.member[0] && s.member[1] && s.member[4]);
	assert_false(s.member[2] || s.member[3] || s.member[5]);
	assert_true(s.at == 1763880000);
	assert_string_equal(s.for_key, "ml/big");
	assert_string_equal(job_scale_place(&s, 4), "node-3");
	assert_null(job_scale_place(&s, 1));
	job_scale_release(&s);
}

static void no_annotation_is_absent_not_an_error(void **state)
{
	(void)state;
	struct job_scale s;
	char why[200];
	assert_int_equal(decode(NULL, &s, why), DRAKE_OK);
	assert_false(s.present);
}

/* Each record a user could write by hand that does not fit the job is
 * refused whole, with why. */
static void a_record_that_does_not_fit_the_job_is_refused_whole(void **state)
{
	(void)state;
	static const struct {
		const char *value, *why;
	} bad[] = {
	    {"{\"workers\":[0,1,6]}", "below max-instances"},
	    {"{\"workers\":[0,1,1]}", "listed twice"},
	    {"{\"workers\":[1,2,3]}", "worker 0"},
	    {"{\"workers\":[0]}", "min-instances"},
	    {"{\"workers\":[0,-1,2]}", "below max-instances"},
	    {"{\"workers\":\"0-3\"}", "not an array"},
	    {"{\"workers\":[0,1],\"at\":\"yesterday\"}", "\"at\""},
	    {"{\"workers\":[0,1],\"for\":7}", "\"for\""},
	    {"{\"workers\":[0,1],\"place\":{\"3\":\"n\"}}", "\"place\""},
	    {"{\"workers\":[0,1],\"place\":{\"x\":\"n\"}}", "\"place\""},
	    {"[0,1,2]", "not a JSON object"},
	    {"{\"workers\":[0,1]", "not a JSON object"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct job_scale s;
		char why[200];
		drake_err e = decode(bad[i].value, &s, why);
		if (e != DRAKE_EINVAL || !strstr(why, bad[i].why))
			fail_msg("%s: got %s \"%s\", want EINVAL naming %s", bad[i].value,
			         drake_strerror(e), why, bad[i].why);
		assert_false(s.present);
		assert_null(s.place);
	}
}

static void what_drake_writes_reads_back_the_same(void **state)
{
	(void)state;
	struct job_scale w;
	memset(&w, 0, sizeof(w));
	w.present = true;
	w.member[0] = w.member[2] = w.member[5] = 1;
	w.n = 3;
	w.at = 1763880042;
	snprintf(w.for_key, sizeof(w.for_key), "ml/c");
	struct job_place pl = {5, "node-9"};
	w.place = &pl;
	w.n_place = 1;
	char *value = job_scale_value(&w);
	assert_non_null(value);
	char *patch = job_scale_patch(value);
	assert_non_null(patch);
	json_error_t je;
	json_t *p = json_loads(patch, 0, &je);
	assert_non_null(p);
	assert_string_equal(json_string_value(json_object_get(
	                        json_object_get(json_object_get(p, "metadata"), "annotations"),
	                        JOB_ANNOTATION_SCALE)),
	                    value);
	json_decref(p);
	struct job_scale r;
	char why[200];
	assert_int_equal(decode(value, &r, why), DRAKE_OK);
	assert_int_equal(r.n, 3);
	assert_memory_equal(r.member, w.member, sizeof(r.member));
	assert_true(r.at == w.at);
	assert_string_equal(r.for_key, "ml/c");
	assert_string_equal(job_scale_place(&r, 5), "node-9");
	job_scale_release(&r);
	free(value);
	free(patch);
}

/* The round decides at fractional seconds, and the rescale pause and
 * --idle-after count from the record: it keeps the millisecond (it kept
 * the whole second, so a 0.9 s pause could be over when it began). */
static void the_time_is_kept_to_the_millisecond(void **state)
{
	(void)state;
	static const struct {
		double at;
		const char *written;
	} cases[] = {
	    {1763880042.2346, "\"at\":1763880042.235"},
	    {1763880042.9999, "\"at\":1763880043,"},
	    {1763880042.0, "\"at\":1763880042,"},
	    {41.91, "\"at\":41.91,"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct job_scale w;
		memset(&w, 0, sizeof(w));
		w.present = true;
		w.member[0] = w.member[1] = 1;
		w.n = 2;
		w.at = cases[i].at;
		char *value = job_scale_value(&w);
		assert_non_null(value);
		if (!strstr(value, cases[i].written))
			fail_msg("at %.4f: wrote %s, want %s", cases[i].at, value,
			         cases[i].written);
		struct job_scale r;
		char why[200];
		assert_int_equal(decode(value, &r, why), DRAKE_OK);
		if (fabs(r.at - cases[i].at) > 0.0005 + 1e-9)
			fail_msg("at %.4f: read back %.6f", cases[i].at, r.at);
		job_scale_release(&r);
		free(value);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_valid_record_gives_members_time_and_places),
	    cmocka_unit_test(no_annotation_is_absent_not_an_error),
	    cmocka_unit_test(a_record_that_does_not_fit_the_job_is_refused_whole),
	    cmocka_unit_test(what_drake_writes_reads_back_the_same),
	    cmocka_unit_test(the_time_is_kept_to_the_millisecond),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

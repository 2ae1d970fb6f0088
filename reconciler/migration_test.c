/*
 * migration_test.c - the drake.dev/migrations record: accepted, refused
 * whole when it does not fit its job, and what drake writes reads back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "reconciler/migration.h"

/* A job with a PS and four workers. */
static struct job job4(void)
{
	struct job j;
	memset(&j, 0, sizeof(j));
	snprintf(j.ns, sizeof(j.ns), "ml");
	snprintf(j.name, sizeof(j.name), "a");
	j.rs[JOB_PS].present = true;
	j.rs[JOB_PS].replicas = 1;
	j.rs[JOB_WORKER].present = true;
	j.rs[JOB_WORKER].replicas = 4;
	j.min_instances = 1;
	j.max_instances = 4;
	return j;
}

static drake_err decode(const char *value, struct job_migrations *m, char *why)
{
	struct job j = job4();
	json_t *o = json_pack("{s:{s:s,s:s}}", "metadata", "name", "a", "namespace", "ml");
	if (value)
		json_object_set_new(json_object_get(o, "metadata"), "annotations",
		                    json_pack("{s:s}", JOB_ANNOTATION_MIGRATIONS, value));
	why[0] = '\0';
	drake_err e = job_migrations_decode(o, &j, m, why, 200);
	json_decref(o);
	return e;
}

static void a_record_with_counts_and_a_move_reads_whole(void **state)
{
	(void)state;
	struct job_migrations m;
	char why[200];
	assert_int_equal(decode("{\"counts\":{\"worker-1\":{\"n\":2,\"last\":1700000000},"
	                        "\"ps-0\":{\"n\":1,\"last\":1700000100}},\"moving\":{\"replica\":"
	                        "\"worker-1\",\"from\":\"a\",\"to\":\"b\",\"uid\":\"u1\",\"at\":"
	                        "1700000200,\"reason\":\"overload\",\"by\":\"policy\"}}",
	                        &m, why),
	                 DRAKE_OK);
	double last;
	assert_int_equal(job_migrations_count(&m, JOB_WORKER, 1, &last), 2);
	assert_true(last == 1700000000);
	assert_int_equal(job_migrations_count(&m, JOB_PS, 0, NULL), 1);
	assert_int_equal(job_migrations_count(&m, JOB_WORKER, 0, &last), 0);
	assert_true(last == -1);
	assert_true(m.moving.active);
	assert_int_equal(m.moving.type, JOB_WORKER);
	assert_int_equal(m.moving.index, 1);
	assert_string_equal(m.moving.to, "b");
	assert_string_equal(m.moving.uid, "u1");
}

static void a_record_that_does_not_fit_its_job_is_refused_whole(void **state)
{
	(void)state;
	static const char *bad[] = {
	    "{\"counts\":{\"worker-4\":{\"n\":1,\"last\":1}}}",  /* no worker 4 */
	    "{\"counts\":{\"worker-1\":{\"n\":-1,\"last\":1}}}", /* negative count */
	    "{\"counts\":{\"worker-1\":{\"n\":1}}}",             /* no time */
	    "{\"moving\":{\"replica\":\"chief-0\",\"from\":\"a\",\"uid\":\"u\",\"at\":1}}",
	    "{\"moving\":{\"replica\":\"worker-1\",\"from\":\"a\",\"at\":1}}", /* no uid */
	    "{\"moving\":{\"replica\":\"worker-1\",\"from\":\"a\",\"uid\":\"u\",\"at\":-5}}",
	    "[1,2]",
	    "{\"counts\":",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct job_migrations m;
		char why[200];
		if (decode(bad[i], &m, why) != DRAKE_EINVAL ||
		    !strstr(why, JOB_ANNOTATION_MIGRATIONS))
			fail_msg("%s: accepted or no reason (%s)", bad[i], why);
		assert_int_equal(m.n_counts, 0);
		assert_false(m.moving.active);
	}
}

static void what_drake_writes_reads_back_the_same(void **state)
{
	(void)state;
	struct job_migrations w;
	memset(&w, 0, sizeof(w));
	assert_int_equal(job_migrations_bump(&w, JOB_WORKER, 2, 1700000000), DRAKE_OK);
	assert_int_equal(job_migrations_bump(&w, JOB_WORKER, 2, 1700000050), DRAKE_OK);
	w.moving =
	    (struct job_move){.active = true, .type = JOB_WORKER, .index = 2, .at = 1700000050};
	snprintf(w.moving.from, sizeof(w.moving.from), "n1");
	snprintf(w.moving.to, sizeof(w.moving.to), "n2");
	snprintf(w.moving.uid, sizeof(w.moving.uid), "uid-x");
	char *value = job_migrations_value(&w);
	assert_non_null(value);
	struct job_migrations r;
	char why[200];
	assert_int_equal(decode(value, &r, why), DRAKE_OK);
	assert_int_equal(job_migrations_count(&r, JOB_WORKER, 2, NULL), 2);
	assert_true(r.moving.active);
	assert_string_equal(r.moving.uid, "uid-x");
	free(value);
	/* cleared: "moving":null */
	w.moving.active = false;
	value = job_migrations_value(&w);
	assert_non_null(strstr(value, "\"moving\":null"));
	assert_int_equal(decode(value, &r, why), DRAKE_OK);
	assert_false(r.moving.active);
	free(value);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_record_with_counts_and_a_move_reads_whole),
	    cmocka_unit_test(a_record_that_does_not_fit_its_job_is_refused_whole),
	    cmocka_unit_test(what_drake_writes_reads_back_the_same),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

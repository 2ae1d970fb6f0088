/* jobs_json_test.c - `drake sim --print-jobs`: the document carries the
 * model's shape of each job (PS, W0, min/max, requests), its work at the
 * original size, the time scale and the speed model with the cluster's
 * node GPUs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "sim/jobs_json.h"

static json_t *run(const char *csv, struct sim_config *cfg)
{
	struct sim_trace t;
	char msg[256];
	assert_int_equal(sim_trace_parse(csv, strlen(csv), "t.csv", &t, msg, sizeof(msg)),
	                 DRAKE_OK);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(sim_jobs_json(f, "t.csv", cfg, &t, msg, sizeof(msg)), DRAKE_OK);
	fclose(f);
	sim_trace_release(&t);
	json_error_t je;
	json_t *doc = json_loads(buf, 0, &je);
	free(buf);
	assert_non_null(doc);
	return doc;
}

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	assert_non_null(v);
	return json_number_value(v);
}

static void itp_jobs_are_elastic_with_the_models_bounds_and_work(void **state)
{
	(void)state;
	struct sim_config cfg;
	sim_config_defaults(&cfg);
	cfg.nodes = 4;
	cfg.node_gpus = 4; /* n_min(4 workers of 2 GPUs) = 2 nodes */
	cfg.node_cpu_milli = 96000;
	cfg.node_mem_bytes = 1LL << 40;
	cfg.time_scale = 0.5;
	cfg.model.gpus_per_worker = 2;
	json_t *doc = run("job_id,submission_time,duration,num_gpu\n"
	                  "a,0,100,8\n"
	                  "b,40,30,1\n",
	                  &cfg);
	assert_string_equal(json_string_value(json_object_get(doc, "kind")), "itp");
	json_t *sp = json_object_get(doc, "speed");
	assert_int_equal((int)num(sp, "node_gpus"), 4);
	assert_true(num(sp, "rescale_pause_s") == cfg.model.speed.rescale_pause);
	json_t *jobs = json_object_get(doc, "jobs");
	assert_int_equal(json_array_size(jobs), 2);
	json_t *a = json_array_get(jobs, 0), *b = json_array_get(jobs, 1);
	/* 8 GPUs in workers of 2: W0 4, min ceil(4 * 0.5) 2, max 4 * 2 */
	assert_int_equal((int)num(a, "workers"), 4);
	assert_int_equal((int)num(a, "min_workers"), 2);
	assert_int_equal((int)num(a, "max_workers"), 8);
	assert_int_equal((int)num(a, "gpus_per_worker"), 2);
	assert_int_equal((int)num(a, "ps"), 1);
	assert_int_equal((int64_t)num(a, "worker_cpu_milli"),
	                 2 * cfg.model.worker_cpu_milli_per_gpu);
	/* work = 100 s x T(4, n_min = 2 nodes of 2 workers each) */
	struct drake_speed m = cfg.model.speed;
	m.node_gpus = 4;
	assert_true(num(a, "work") > 100 * drake_speed_rate(&m, 4, 2, 2) - 1e-9);
	assert_true(num(a, "work") < 100 * drake_speed_rate(&m, 4, 2, 2) + 1e-9);
	assert_true(num(a, "work") > 300); /* 4 workers do more than 3 workers' work */
	/* a 1-GPU job: one worker of 1 GPU, submitted at 40 x 0.5 */
	assert_int_equal((int)num(b, "gpus_per_worker"), 1);
	assert_int_equal((int)num(b, "workers"), 1);
	assert_true(num(b, "submit_s") == 20);
	assert_true(num(b, "work") == 30);
	json_decref(doc);
}

static void gang_jobs_are_rigid_and_max_jobs_cuts_the_list(void **state)
{
	(void)state;
	struct sim_config cfg;
	sim_config_defaults(&cfg);
	cfg.max_jobs = 1;
	json_t *doc = run("job_id,submit_order,replicas,gpus_per_pod,duration_s\n"
	                  "g0,0,4,8,30\n"
	                  "g1,1,2,8,30\n",
	                  &cfg);
	assert_string_equal(json_string_value(json_object_get(doc, "kind")), "gang");
	assert_int_equal((int)num(json_object_get(doc, "cluster"), "nodes"), 32);
	json_t *jobs = json_object_get(doc, "jobs");
	assert_int_equal(json_array_size(jobs), 1);
	json_t *g = json_array_get(jobs, 0);
	assert_int_equal((int)num(g, "workers"), 4);
	assert_int_equal((int)num(g, "min_workers"), 4);
	assert_int_equal((int)num(g, "max_workers"), 4);
	assert_int_equal((int)num(g, "gpus_per_worker"), 8);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(itp_jobs_are_elastic_with_the_models_bounds_and_work),
	    cmocka_unit_test(gang_jobs_are_rigid_and_max_jobs_cuts_the_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

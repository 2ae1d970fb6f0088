/* placement_test.c - the placement study: task lists are read by column
 * name and a bad row is refused naming file:line; the workload is the list
 * plus draws up to the arrival target, shuffled, the same for a seed; a run
 * is deterministic, skips what fits nowhere, honours gpu_spec, and settles
 * ties by the seed's node order or by a draw. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "place/frag.h"
#include "place/learn.h"
#include "sim/placement.h"

#define NCASES(a) (sizeof(a) / sizeof((a)[0]))
#define HDR       "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos\n"

struct tcase {
	const char *name;
	const char *text;
	drake_err err;
	size_t rows;
	const char *msg_has;
};

static const struct tcase task_cases[] = {
    {"the Alibaba layout parses, other columns ignored",
     HDR "p0,12000,16384,1,1000,,LS\np1,6000,12288,1,460,,LS\np2,4000,8192,0,0,,BE\n", DRAKE_OK, 3,
     NULL},
    {"columns in another order, without gpu_spec, parse",
     "gpu_milli,num_gpu,memory_mib,cpu_milli\n1000,8,1024,32000\n", DRAKE_OK, 1, NULL},
    {"CRLF, a byte order mark and blank lines are fine",
     "\xef\xbb\xbf" HDR "p0,1,1,1,500,,LS\r\n\r\np1,1,1,0,0,,LS\r\n", DRAKE_OK, 2, NULL},
    {"an empty file is refused", "", DRAKE_EINVAL, 0, "t.csv: empty file"},
    {"a header without rows is refused", HDR, DRAKE_EINVAL, 0, "t.csv: no tasks after the header"},
    {"a missing column is named", "name,cpu_milli,memory_mib,num_gpu\n", DRAKE_EINVAL, 0,
     "t.csv:1: no column gpu_milli"},
    {"a column twice is refused", "cpu_milli,memory_mib,num_gpu,gpu_milli,num_gpu\n", DRAKE_EINVAL,
     0, "t.csv:1: column num_gpu appears twice"},
    {"a short row names its line", HDR "p0,1,1,1,500,,LS\np1,1,1,1\n", DRAKE_EINVAL, 0,
     "t.csv:3: 4 fields, the header has 7"},
    {"a non-numeric field names line and field", HDR "p0,12k,1,1,500,,LS\n", DRAKE_EINVAL, 0,
     "t.csv:2: cpu_milli \"12k\" is not an integer"},
    {"a negative number is refused", HDR "p0,1,-5,1,500,,LS\n", DRAKE_EINVAL, 0,
     "t.csv:2: memory_mib \"-5\" is not an integer >= 0"},
    {"more GPUs than a node has is a limit error", HDR "p0,1,1,17,1000,,LS\n", DRAKE_ELIMIT, 0,
     "t.csv:2: num_gpu 17 exceeds 16"},
    {"more than a GPU each is a limit error", HDR "p0,1,1,1,1500,,LS\n", DRAKE_ELIMIT, 0,
     "t.csv:2: gpu_milli 1500 exceeds 1000"},
    {"a share of two GPUs is refused", HDR "p0,1,1,1,500,,LS\np1,1,1,2,500,,LS\n", DRAKE_EINVAL, 0,
     "t.csv:3: a share (gpu_milli 500) of more than one GPU"},
    {"GPU milli without GPUs is refused", HDR "p0,1,1,0,300,,LS\n", DRAKE_EINVAL, 0,
     "t.csv:2: gpu_milli 300 without GPUs"},
    {"a GPU task without GPU milli is refused", HDR "p0,1,1,2,0,,LS\n", DRAKE_EINVAL, 0,
     "t.csv:2: gpu_milli 0 outside 1..1000"},
    {"a gpu_spec with a space is refused", HDR "p0,1,1,1,500,V100 T4,LS\n", DRAKE_EINVAL, 0,
     "t.csv:2: gpu_spec has a space"},
    {"a quoted field is refused", HDR "\"p0\",1,1,1,500,,LS\n", DRAKE_EINVAL, 0,
     "t.csv:2: a double quote"},
    {"a model name too long is a limit error",
     HDR "p0,1,1,1,500,A|ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456,LS\n", DRAKE_ELIMIT, 0,
     "t.csv:2: gpu_spec: GPU model"},
};

static void run_task_case(void **state)
{
	const struct tcase *c = *state;
	struct place_models m = {0};
	struct placement_tasks t;
	char msg[256] = "";
	drake_err err =
	    placement_tasks_parse(c->text, strlen(c->text), "t.csv", &m, &t, msg, sizeof(msg));
	if (err != c->err || (c->msg_has && !strstr(msg, c->msg_has)))
		print_error("got %s: \"%s\"\n", drake_strerror(err), msg);
	assert_int_equal(err, c->err);
	if (err == DRAKE_OK) {
		assert_int_equal(t.n, c->rows);
		placement_tasks_release(&t);
	} else {
		assert_null(t.t);
		assert_non_null(strstr(msg, c->msg_has));
	}
}

static void a_line_too_long_is_refused(void **state)
{
	(void)state;
	char *text = malloc(SIM_TRACE_MAX_LINE + 200);
	snprintf(text, SIM_TRACE_MAX_LINE + 200, HDR "p0,1,1,1,500,");
	size_t n = strlen(text);
	memset(text + n, 'A', SIM_TRACE_MAX_LINE);
	strcpy(text + n + SIM_TRACE_MAX_LINE, ",LS\n");
	struct place_models m = {0};
	struct placement_tasks t;
	char msg[256];
	assert_int_equal(
	    placement_tasks_parse(text, strlen(text), "t.csv", &m, &t, msg, sizeof(msg)),
	    DRAKE_ELIMIT);
	assert_non_null(strstr(msg, "t.csv:2: line longer than 1024 bytes"));
	free(text);
}

static void a_header_over_the_column_limit_is_refused(void **state)
{
	(void)state;
	char text[1024] = "cpu_milli,memory_mib,num_gpu,gpu_milli";
	for (int i = 4; i <= SIM_TRACE_MAX_COLUMNS; i++)
		strcat(text, ",x");
	strcat(text, "\n1,1,1,500\n");
	struct place_models m = {0};
	struct placement_tasks t;
	char msg[256];
	assert_int_equal(
	    placement_tasks_parse(text, strlen(text), "t.csv", &m, &t, msg, sizeof(msg)),
	    DRAKE_ELIMIT);
	assert_non_null(strstr(msg, "t.csv:1: more than 64 columns"));
}

static void gpu_spec_names_models_and_a_cpu_task_drops_it(void **state)
{
	(void)state;
	struct place_models m = {0};
	assert_int_equal(place_model_index(&m, "T4", true), 0);
	const char *text = HDR "p0,1,1,1,500,V100|T4,LS\np1,1,1,0,0,T4,LS\np2,1,1,1,500,,LS\n";
	struct placement_tasks t;
	char msg[256];
	assert_int_equal(
	    placement_tasks_parse(text, strlen(text), "t.csv", &m, &t, msg, sizeof(msg)), DRAKE_OK);
	assert_true(t.t[0].models == 3); /* T4 (0) and V100 (1) */
	assert_true(t.t[1].models == PLACE_ANY_MODEL);
	assert_true(t.t[2].models == PLACE_ANY_MODEL);
	assert_int_equal(t.t[0].gpu_milli, 500);
	placement_tasks_release(&t);
}

static void nodes_over_the_gpu_limit_or_without_gpus_are_refused(void **state)
{
	(void)state;
	struct sim_nodes rows;
	struct placement_cluster c;
	char msg[256];
	const char *big =
	    "sn,cpu_milli,memory_mib,gpu,model\na,1000,1000,8,T4\n\nb,1000,1000,17,T4\n";
	assert_int_equal(sim_nodes_parse(big, strlen(big), "n.csv", &rows, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_int_equal(placement_cluster_build(&rows, "n.csv", &c, msg, sizeof(msg)),
	                 DRAKE_ELIMIT);
	assert_non_null(strstr(msg, "n.csv:4: node b has 17 GPUs"));
	sim_nodes_release(&rows);
	const char *none = "sn,cpu_milli,memory_mib,gpu,model\na,1000,1000,0,\n";
	assert_int_equal(sim_nodes_parse(none, strlen(none), "n.csv", &rows, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_int_equal(placement_cluster_build(&rows, "n.csv", &c, msg, sizeof(msg)),
	                 DRAKE_EINVAL);
	assert_non_null(strstr(msg, "no node has a GPU"));
	sim_nodes_release(&rows);
}

/* A cluster from node-list text (nodes named by the caller). */
static void cluster(const char *text, struct placement_cluster *c)
{
	struct sim_nodes rows;
	char msg[256];
	assert_int_equal(sim_nodes_parse(text, strlen(text), "n.csv", &rows, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_int_equal(placement_cluster_build(&rows, "n.csv", c, msg, sizeof(msg)), DRAKE_OK);
	sim_nodes_release(&rows);
}

static int64_t gpu_sum(const struct place_task *w, size_t n)
{
	int64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += place_task_gpu(&w[i]);
	return s;
}

static void the_workload_is_the_list_plus_draws_up_to_the_target(void **state)
{
	(void)state;
	/* ten different one-GPU tasks: 10,000 milli */
	struct place_task list[10];
	for (int i = 0; i < 10; i++)
		list[i] = (struct place_task){1000 + i, 1, 1, 1000, PLACE_ANY_MODEL};
	struct placement_tasks tasks = {list, 10};
	struct place_task *w, *w2;
	size_t n, n2;
	/* 10 GPUs, 130 %: 13,000 milli, three draws on top of the list */
	assert_int_equal(placement_workload(&tasks, 10000, 1.3, 42, &w, &n), DRAKE_OK);
	assert_int_equal(n, 13);
	assert_int_equal(gpu_sum(w, n), 13000);
	size_t seen[10] = {0};
	for (size_t i = 0; i < n; i++)
		seen[w[i].cpu_milli - 1000]++;
	for (int k = 0; k < 10; k++)
		assert_true(seen[k] >= 1); /* the whole list is in */
	/* shuffled: the list is not kept in front in its order */
	int in_order = 1;
	for (int k = 0; k < 10; k++)
		in_order &= w[k].cpu_milli == 1000 + k;
	assert_false(in_order);
	/* the same seed gives the same workload, another seed another order */
	assert_int_equal(placement_workload(&tasks, 10000, 1.3, 42, &w2, &n2), DRAKE_OK);
	assert_int_equal(n2, n);
	assert_memory_equal(w, w2, n * sizeof(*w));
	free(w2);
	assert_int_equal(placement_workload(&tasks, 10000, 1.3, 43, &w2, &n2), DRAKE_OK);
	assert_true(n2 != n || memcmp(w, w2, n * sizeof(*w)) != 0);
	free(w2);
	free(w);
	/* a draw that would pass the target ends the appending */
	struct place_task big[2] = {{1, 1, 8, 1000, PLACE_ANY_MODEL},
	                            {2, 1, 1, 500, PLACE_ANY_MODEL}};
	struct placement_tasks two = {big, 2};
	assert_int_equal(placement_workload(&two, 10000, 1.3, 42, &w, &n), DRAKE_OK);
	assert_true(gpu_sum(w, n) <= 13000);
	free(w);
	/* a list already above the target loses tasks until within it */
	assert_int_equal(placement_workload(&tasks, 5000, 1.0, 42, &w, &n), DRAKE_OK);
	assert_int_equal(n, 5);
	assert_int_equal(gpu_sum(w, n), 5000);
	free(w);
}

/* Runs policy p once over w on the cluster, typical shapes from w itself. */
static void run(const struct placement_cluster *c, const struct place_task *w, size_t n,
                enum place_policy p, enum placement_ties ties, uint64_t seed,
                struct placement_run *out)
{
	struct place_dist d;
	place_dist_init(&d);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(place_dist_observe(&d, &w[i], 1), DRAKE_OK);
	struct place_typical *ty = malloc(sizeof(*ty));
	place_typical_build(&d, 95, ty);
	char msg[256];
	assert_int_equal(placement_run(c, ty, 0, w, n, p, seed, ties, out, msg, sizeof(msg)),
	                 DRAKE_OK);
	free(ty);
	place_dist_release(&d);
}

static void a_task_that_fits_nowhere_fails_and_the_next_is_placed(void **state)
{
	(void)state;
	struct placement_cluster c;
	/* 16 GPUs: one GPU is 6.25 % */
	cluster("sn,cpu_milli,memory_mib,gpu,model\na,64000,65536,8,T4\nb,64000,65536,8,T4\n", &c);
	const struct place_task w[] = {
	    {4000, 1, 1, 1000, PLACE_ANY_MODEL}, /* 6.25 % arrived, 6.25 % allocated */
	    {4000, 1, 9, 1000, PLACE_ANY_MODEL}, /* 62.5 %: no node has 9 GPUs */
	    {4000, 1, 1, 500, PLACE_ANY_MODEL},  /* 65.6 %: placed, 9.4 % allocated */
	};
	for (int p = 0; p < PLACE_NPOLICIES; p++) {
		struct placement_run r;
		run(&c, w, 3, (enum place_policy)p, PLACEMENT_TIES_ORDER, 1, &r);
		assert_int_equal(r.tasks, 3);
		assert_int_equal(r.failed, 1);
		assert_int_equal(r.failed_gpu_milli, 9000);
		assert_true(r.alloc[6] == 0.0625);
		assert_true(r.alloc[63] == 0.0625);
		assert_true(r.alloc[66] == 0.09375);
		assert_true(r.alloc[100] < 0); /* no step there */
		assert_true(r.final_alloc == 0.09375);
		assert_true(r.final_arrived == 0.65625);
		assert_true(r.frag_rate[6] >= 0 && r.frag_rate[6] <= 1);
	}
	placement_cluster_release(&c);
}

static void a_percent_jumped_over_takes_its_neighbours(void **state)
{
	(void)state;
	struct placement_cluster c;
	/* 50 GPUs: one GPU is 2 % */
	cluster("sn,cpu_milli,memory_mib,gpu,model\na,64000,65536,16,\nb,64000,65536,16,\n"
	        "c,64000,65536,16,\nd,64000,65536,2,\n",
	        &c);
	const struct place_task one = {1, 1, 1, 1000, PLACE_ANY_MODEL};
	const struct place_task two = {1, 1, 2, 1000, PLACE_ANY_MODEL};
	struct placement_run r;
	/* 2 %, then 4 %: no step at 3 %, which takes the mean of 2 and 4 */
	const struct place_task w[] = {one, one};
	run(&c, w, 2, PLACE_BESTFIT, PLACEMENT_TIES_ORDER, 1, &r);
	assert_true(r.alloc[2] == 0.02);
	assert_true(r.alloc[4] == 0.04);
	assert_true(r.alloc[3] > 0.0299 && r.alloc[3] < 0.0301);
	assert_true(r.alloc[5] < 0); /* after the last step */
	/* 2 %, then 6 %: 4 % has no neighbour with a step and stays empty */
	const struct place_task w2[] = {one, two};
	run(&c, w2, 2, PLACE_BESTFIT, PLACEMENT_TIES_ORDER, 1, &r);
	assert_true(r.alloc[6] == 0.06);
	assert_true(r.alloc[4] < 0);
	placement_cluster_release(&c);
}

static void runs_are_deterministic(void **state)
{
	(void)state;
	struct placement_cluster c;
	cluster("sn,cpu_milli,memory_mib,gpu,model\na,32000,65536,4,T4\nb,16000,65536,2,V100\n"
	        "c,64000,131072,8,T4\nd,8000,32768,1,P100\n",
	        &c);
	const struct place_task list[] = {
	    {4000, 2048, 1, 1000, PLACE_ANY_MODEL}, {2000, 1024, 1, 470, PLACE_ANY_MODEL},
	    {3152, 5600, 1, 810, PLACE_ANY_MODEL},  {12000, 8192, 0, 0, PLACE_ANY_MODEL},
	    {8000, 4096, 2, 1000, PLACE_ANY_MODEL}, {1000, 512, 1, 230, PLACE_ANY_MODEL},
	};
	struct placement_tasks tasks = {(struct place_task *)list, NCASES(list)};
	struct place_task *w;
	size_t n;
	assert_int_equal(placement_workload(&tasks, c.gpu_milli, 1.3, 7, &w, &n), DRAKE_OK);
	for (int p = 0; p < PLACE_NPOLICIES; p++)
		for (int ties = 0; ties < 2; ties++) {
			struct placement_run a, b;
			run(&c, w, n, (enum place_policy)p, (enum placement_ties)ties, 7, &a);
			run(&c, w, n, (enum place_policy)p, (enum placement_ties)ties, 7, &b);
			assert_memory_equal(&a, &b, sizeof(a));
			assert_true(a.final_alloc > 0.5);
		}
	free(w);
	placement_cluster_release(&c);
}

static void a_task_restricted_to_gpu_models_goes_only_there(void **state)
{
	(void)state;
	struct placement_cluster c;
	cluster("sn,cpu_milli,memory_mib,gpu,model\nt4,64000,65536,4,T4\nv1,64000,65536,2,V100\n",
	        &c);
	struct place_models m = c.models;
	const char *text = HDR "p,1000,1,1,1000,V100|A100,LS\n";
	struct placement_tasks t;
	char msg[256];
	assert_int_equal(
	    placement_tasks_parse(text, strlen(text), "t.csv", &m, &t, msg, sizeof(msg)), DRAKE_OK);
	/* three V100-only tasks: two fit the V100 node, the third fails though
	 * the T4 node is empty */
	struct place_task w[3] = {t.t[0], t.t[0], t.t[0]};
	for (int p = 0; p < PLACE_NPOLICIES; p++) {
		struct placement_run r;
		run(&c, w, 3, (enum place_policy)p, PLACEMENT_TIES_ORDER, 3, &r);
		assert_int_equal(r.failed, 1);
		assert_true(r.final_alloc > 0.3333 && r.final_alloc < 0.3334);
	}
	placement_tasks_release(&t);
	placement_cluster_release(&c);
}

/* With learnt shapes, fgd and drake score each task with the shapes seen so
 * far (the first task of a run has only itself to go by), the run is as
 * deterministic as with the list's, and a window the learner refuses is an
 * error. */
static void learnt_shapes_score_with_the_tasks_seen_so_far(void **state)
{
	(void)state;
	struct placement_cluster c;
	cluster("sn,cpu_milli,memory_mib,gpu,model\na,64000,65536,2,T4\nb,64000,65536,2,T4\n", &c);
	const struct place_task w[] = {
	    {1000, 1, 1, 500, PLACE_ANY_MODEL},
	    {1000, 1, 1, 1000, PLACE_ANY_MODEL},
	    {1000, 1, 1, 500, PLACE_ANY_MODEL},
	    {1000, 1, 2, 1000, PLACE_ANY_MODEL},
	};
	struct place_dist d;
	place_dist_init(&d);
	for (size_t i = 0; i < NCASES(w); i++)
		assert_int_equal(place_dist_observe(&d, &w[i], 1), DRAKE_OK);
	struct place_typical *ty = malloc(sizeof(*ty));
	place_typical_build(&d, 100, ty);
	char msg[256];
	struct placement_run list, learnt, again;
	/* with the list's shapes the 2-GPU task is known from the start, so
	 * the node it needs stays whole */
	assert_int_equal(placement_run(&c, ty, 0, w, NCASES(w), PLACE_DRAKE, 1,
	                               PLACEMENT_TIES_ORDER, &list, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_int_equal(list.failed, 0);
	/* learning: the 2-GPU task is seen only when it comes; the same run twice */
	assert_int_equal(placement_run(&c, ty, 16, w, NCASES(w), PLACE_DRAKE, 1,
	                               PLACEMENT_TIES_ORDER, &learnt, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_int_equal(placement_run(&c, ty, 16, w, NCASES(w), PLACE_DRAKE, 1,
	                               PLACEMENT_TIES_ORDER, &again, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_memory_equal(&learnt, &again, sizeof(learnt));
	assert_int_equal(learnt.tasks, NCASES(w));
	/* a window the learner refuses is an error, not a run */
	assert_int_equal(placement_run(&c, ty, PLACE_LEARN_WINDOW_MAX + 1, w, NCASES(w),
	                               PLACE_DRAKE, 1, PLACEMENT_TIES_ORDER, &again, msg,
	                               sizeof(msg)),
	                 DRAKE_EINVAL);
	free(ty);
	place_dist_release(&d);
	placement_cluster_release(&c);
}

static void ties_go_to_one_node_in_order_and_spread_when_drawn(void **state)
{
	(void)state;
	struct placement_cluster c;
	cluster("sn,cpu_milli,memory_mib,gpu,model\na,8000,8192,1,\nb,8000,8192,1,\n"
	        "c,8000,8192,1,\nd,8000,8192,1,\n",
	        &c);
	/* four small CPU tasks: GPU packing scores them 0 everywhere */
	const struct place_task w[4] = {{1000, 1, 0, 0, PLACE_ANY_MODEL},
	                                {1000, 1, 0, 0, PLACE_ANY_MODEL},
	                                {1000, 1, 0, 0, PLACE_ANY_MODEL},
	                                {1000, 1, 0, 0, PLACE_ANY_MODEL}};
	struct placement_run r;
	run(&c, w, 4, PLACE_PACKING, PLACEMENT_TIES_ORDER, 5, &r);
	assert_int_equal(r.nodes_used, 1);
	run(&c, w, 4, PLACE_PACKING, PLACEMENT_TIES_RANDOM, 5, &r);
	assert_true(r.nodes_used > 1);
	/* the random policy draws whatever the tie rule */
	run(&c, w, 4, PLACE_RANDOM, PLACEMENT_TIES_ORDER, 5, &r);
	assert_true(r.nodes_used > 1);
	placement_cluster_release(&c);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
	    cmocka_unit_test(a_line_too_long_is_refused),
	    cmocka_unit_test(a_header_over_the_column_limit_is_refused),
	    cmocka_unit_test(gpu_spec_names_models_and_a_cpu_task_drops_it),
	    cmocka_unit_test(nodes_over_the_gpu_limit_or_without_gpus_are_refused),
	    cmocka_unit_test(the_workload_is_the_list_plus_draws_up_to_the_target),
	    cmocka_unit_test(a_task_that_fits_nowhere_fails_and_the_next_is_placed),
	    cmocka_unit_test(a_percent_jumped_over_takes_its_neighbours),
	    cmocka_unit_test(runs_are_deterministic),
	    cmocka_unit_test(a_task_restricted_to_gpu_models_goes_only_there),
	    cmocka_unit_test(ties_go_to_one_node_in_order_and_spread_when_drawn),
	    cmocka_unit_test(learnt_shapes_score_with_the_tasks_seen_so_far),
	};
	struct CMUnitTest tests[NCASES(task_cases) + NCASES(fixed)];
	size_t n = 0;
	for (size_t i = 0; i < NCASES(task_cases); i++)
		tests[n++] = (struct CMUnitTest){task_cases[i].name, run_task_case, NULL, NULL,
		                                 (void *)&task_cases[i]};
	for (size_t i = 0; i < NCASES(fixed); i++)
		tests[n++] = fixed[i];
	return _cmocka_run_group_tests("placement", tests, n, NULL, NULL);
}

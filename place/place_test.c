/* place_test.c - the task and node model: a task's numbers are checked,
 * fit honours CPU, memory, GPU models, whole GPUs and shares, GPUs are
 * picked and charged back exactly, and gpu_spec becomes a model mask. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "place/place.h"

#define NCASES(a) (sizeof(a) / sizeof((a)[0]))
#define ANY       PLACE_ANY_MODEL
#define MODEL(i)  (UINT64_C(1) << (i))

struct check_case {
	const char *name;
	struct place_task t;
	drake_err err;
	const char *msg_has;
};

static const struct check_case check_cases[] = {
    {"a share of one GPU is a task", {4000, 1024, 1, 470, ANY}, DRAKE_OK, NULL},
    {"eight whole GPUs are a task", {4000, 1024, 8, 1000, ANY}, DRAKE_OK, NULL},
    {"a task without GPUs is a task", {4000, 1024, 0, 0, ANY}, DRAKE_OK, NULL},
    {"gpu_milli without GPUs is refused",
     {1, 1, 0, 500, ANY},
     DRAKE_EINVAL,
     "gpu_milli 500 without GPUs"},
    {"a GPU task without gpu_milli is refused",
     {1, 1, 1, 0, ANY},
     DRAKE_EINVAL,
     "gpu_milli 0 outside 1..1000"},
    {"more than a whole GPU each is refused",
     {1, 1, 1, 1001, ANY},
     DRAKE_EINVAL,
     "gpu_milli 1001 outside 1..1000"},
    {"a share of two GPUs is refused",
     {1, 1, 2, 500, ANY},
     DRAKE_EINVAL,
     "a share (gpu_milli 500) of more than one GPU (num_gpu 2)"},
    {"more GPUs than a node can have is refused",
     {1, 1, PLACE_MAX_GPUS + 1, 1000, ANY},
     DRAKE_ELIMIT,
     "num_gpu 17 outside 0..16"},
    {"negative CPU is refused", {-1, 1, 0, 0, ANY}, DRAKE_ELIMIT, "cpu_milli -1"},
    {"CPU over the limit is refused",
     {PLACE_MAX_CPU_MILLI + 1, 1, 0, 0, ANY},
     DRAKE_ELIMIT,
     "cpu_milli 100000001"},
    {"memory over the limit is refused",
     {1, PLACE_MAX_MEM_MIB + 1, 0, 0, ANY},
     DRAKE_ELIMIT,
     "memory_mib"},
};

static void run_check_case(void **state)
{
	const struct check_case *c = *state;
	char msg[256] = "";
	drake_err err = place_task_check(&c->t, msg, sizeof(msg));
	if (err != c->err || (c->msg_has && !strstr(msg, c->msg_has)))
		print_error("got %s: \"%s\"\n", drake_strerror(err), msg);
	assert_int_equal(err, c->err);
	if (c->msg_has)
		assert_non_null(strstr(msg, c->msg_has));
}

/* A node of model 0: 16 cores, 64 GiB, GPUs with the given free milli. */
struct fit_case {
	const char *name;
	int32_t left[4];
	int gpus;
	int64_t cpu, mem;
	int model;
	struct place_task t;
	bool fits;
};

static const struct fit_case fit_cases[] = {
    {"a whole GPU needs one wholly free GPU, not two nearly free ones",
     {999, 999},
     2,
     16000,
     65536,
     0,
     {1000, 1024, 1, 1000, ANY},
     false},
    {"two whole GPUs fit two free GPUs among used ones",
     {1000, 200, 1000, 0},
     4,
     16000,
     65536,
     0,
     {1000, 1024, 2, 1000, ANY},
     true},
    {"a share fits a GPU with exactly its room",
     {300, 470},
     2,
     16000,
     65536,
     0,
     {1000, 1024, 1, 470, ANY},
     true},
    {"a share does not fit when every GPU has less room than it",
     {300, 469},
     2,
     16000,
     65536,
     0,
     {1000, 1024, 1, 470, ANY},
     false},
    {"a share does not add the room of two GPUs",
     {300, 300},
     2,
     16000,
     65536,
     0,
     {1000, 1024, 1, 470, ANY},
     false},
    {"one milli-core short does not fit",
     {1000},
     1,
     3999,
     65536,
     0,
     {4000, 1024, 1, 1000, ANY},
     false},
    {"exactly the CPU and memory left fits",
     {1000},
     1,
     4000,
     1024,
     0,
     {4000, 1024, 1, 1000, ANY},
     true},
    {"one MiB short does not fit", {1000}, 1, 16000, 1023, 0, {4000, 1024, 1, 1000, ANY}, false},
    {"a task restricted to other GPU models does not fit",
     {1000},
     1,
     16000,
     65536,
     0,
     {1000, 1, 1, 1000, MODEL(1) | MODEL(2)},
     false},
    {"a task restricted to the node's model among others fits",
     {1000},
     1,
     16000,
     65536,
     2,
     {1000, 1, 1, 1000, MODEL(1) | MODEL(2)},
     true},
    {"a node whose model is not named takes no restricted task",
     {1000},
     1,
     16000,
     65536,
     -1,
     {1000, 1, 1, 500, MODEL(0)},
     false},
    {"a node whose model is not named takes an unrestricted one",
     {1000},
     1,
     16000,
     65536,
     -1,
     {1000, 1, 1, 500, ANY},
     true},
    {"a task without GPUs ignores GPU models",
     {0},
     1,
     16000,
     65536,
     0,
     {1000, 1, 0, 0, MODEL(5)},
     true},
    {"a task without GPUs fits a node without GPUs",
     {0},
     0,
     16000,
     65536,
     -1,
     {1000, 1, 0, 0, ANY},
     true},
    {"a GPU task does not fit a node without GPUs",
     {0},
     0,
     16000,
     65536,
     -1,
     {1000, 1, 1, 100, ANY},
     false},
};

static void build(struct place_node *n, const int32_t *left, int gpus, int64_t cpu, int64_t mem,
                  int model)
{
	place_node_init(n, cpu, mem, gpus, model);
	for (int i = 0; i < gpus; i++)
		n->gpu_left[i] = left[i];
}

static void run_fit_case(void **state)
{
	const struct fit_case *c = *state;
	struct place_node n;
	build(&n, c->left, c->gpus, c->cpu, c->mem, c->model);
	assert_int_equal(place_fits(&n, &c->t), c->fits);
}

static void spec_becomes_a_mask_of_known_and_new_models(void **state)
{
	(void)state;
	struct place_models m = {0};
	char msg[128];
	uint64_t mask;
	assert_int_equal(place_model_index(&m, "T4", true), 0);
	assert_int_equal(place_models_mask(&m, "V100|T4", &mask, msg, sizeof(msg)), DRAKE_OK);
	assert_true(mask == (MODEL(0) | MODEL(1)));
	assert_int_equal(place_model_index(&m, "V100", false), 1);
	assert_int_equal(place_models_mask(&m, "", &mask, msg, sizeof(msg)), DRAKE_OK);
	assert_true(mask == ANY);
	assert_int_equal(place_models_mask(&m, "||", &mask, msg, sizeof(msg)), DRAKE_OK);
	assert_true(mask == ANY);
	assert_int_equal(place_models_mask(&m, "T4||A100|", &mask, msg, sizeof(msg)), DRAKE_OK);
	assert_true(mask == (MODEL(0) | MODEL(2)));
	assert_int_equal(place_model_index(&m, "P100", false), -1);
	assert_int_equal(place_model_index(&m, "", true), -1);
}

static void a_full_model_table_and_long_names_are_limit_errors(void **state)
{
	(void)state;
	struct place_models m = {0};
	char msg[128], name[16];
	uint64_t mask;
	for (int i = 0; i < PLACE_MAX_MODELS; i++) {
		snprintf(name, sizeof(name), "M%d", i);
		assert_int_equal(place_model_index(&m, name, true), i);
	}
	assert_int_equal(place_model_index(&m, "ONE-MORE", true), -1);
	assert_int_equal(place_models_mask(&m, "M3|ONE-MORE", &mask, msg, sizeof(msg)),
	                 DRAKE_ELIMIT);
	assert_non_null(strstr(msg, "more than 64 GPU models"));
	struct place_models e = {0};
	assert_int_equal(
	    place_models_mask(&e, "A|ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456", &mask, msg, sizeof(msg)),
	    DRAKE_ELIMIT);
	assert_non_null(strstr(msg, "longer than 31 characters"));
}

static void whole_gpus_are_the_lowest_free_ones_and_shares_their_given_gpu(void **state)
{
	(void)state;
	struct place_node n;
	build(&n, (const int32_t[]){500, 1000, 0, 1000, 1000}, 5, 64000, 65536, 0);
	int gpus[PLACE_MAX_GPUS];
	struct place_task two = {1000, 1, 2, 1000, ANY}, share = {1000, 1, 1, 400, ANY};
	assert_int_equal(place_pick_gpus(&n, &two, -1, gpus), 2);
	assert_int_equal(gpus[0], 1);
	assert_int_equal(gpus[1], 3);
	assert_int_equal(place_pick_gpus(&n, &share, 0, gpus), 1);
	assert_int_equal(gpus[0], 0);
	assert_int_equal(place_pick_gpus(&n, &share, 2, gpus), 0); /* too full */
	assert_int_equal(place_pick_gpus(&n, &share, 5, gpus), 0); /* no such GPU */
	assert_int_equal(place_pick_gpus(&n, &share, -1, gpus), 0);
	/* best fit: the fullest GPU that holds it, lowest index among equals */
	build(&n, (const int32_t[]){1000, 450, 400, 450}, 4, 64000, 65536, 0);
	assert_int_equal(place_share_best_fit(&n, &share), 2);
	n.gpu_left[2] = 399;
	assert_int_equal(place_share_best_fit(&n, &share), 1);
	struct place_task big = {1, 1, 1, 999, ANY};
	n.gpu_left[0] = 998;
	assert_int_equal(place_share_best_fit(&n, &big), -1);
}

static void charging_and_giving_back_restore_the_node_exactly(void **state)
{
	(void)state;
	struct place_node n, before;
	build(&n, (const int32_t[]){1000, 1000, 700, 1000}, 4, 32000, 65536, 0);
	before = n;
	const struct place_task tasks[] = {
	    {8000, 4096, 2, 1000, ANY}, {2000, 1024, 1, 300, ANY}, {6000, 2048, 0, 0, ANY}};
	const int share_gpu[] = {-1, 2, -1};
	int held[3][PLACE_MAX_GPUS];
	for (int i = 0; i < 3; i++) {
		assert_true(place_fits(&n, &tasks[i]));
		place_pick_gpus(&n, &tasks[i], share_gpu[i], held[i]);
		place_charge(&n, &tasks[i], held[i], 1);
	}
	assert_int_equal(n.cpu_left, 16000);
	assert_int_equal(n.mem_left, 65536 - 7168);
	assert_int_equal(n.gpu_left[0], 0);
	assert_int_equal(n.gpu_left[1], 0);
	assert_int_equal(n.gpu_left[2], 400);
	assert_int_equal(place_node_gpu_left(&n), 1400);
	assert_int_equal(place_node_free_gpus(&n), 1);
	assert_int_equal(n.tasks[2], 1);
	assert_int_equal(n.tasks[PLACE_CLASS_SHARE], 1);
	for (int i = 2; i >= 0; i--)
		place_charge(&n, &tasks[i], held[i], -1);
	assert_memory_equal(&n, &before, sizeof(n));
	/* giving back more than was charged stops at the capacity */
	place_charge(&n, &tasks[0], held[0], -1);
	assert_memory_equal(&n, &before, sizeof(n));
}

static void task_classes_name_the_gpu_request(void **state)
{
	(void)state;
	struct place_task cpu = {1, 1, 0, 0, ANY}, share = {1, 1, 1, 999, ANY},
	                  one = {1, 1, 1, 1000, ANY}, eight = {1, 1, 8, 1000, ANY};
	assert_int_equal(place_task_class(&cpu), -1);
	assert_int_equal(place_task_class(&share), PLACE_CLASS_SHARE);
	assert_int_equal(place_task_class(&one), 1);
	assert_int_equal(place_task_class(&eight), 8);
	assert_int_equal(place_task_gpu(&eight), 8000);
	assert_int_equal(place_task_gpu(&share), 999);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
	    cmocka_unit_test(spec_becomes_a_mask_of_known_and_new_models),
	    cmocka_unit_test(a_full_model_table_and_long_names_are_limit_errors),
	    cmocka_unit_test(whole_gpus_are_the_lowest_free_ones_and_shares_their_given_gpu),
	    cmocka_unit_test(charging_and_giving_back_restore_the_node_exactly),
	    cmocka_unit_test(task_classes_name_the_gpu_request),
	};
	struct CMUnitTest tests[NCASES(check_cases) + NCASES(fit_cases) + NCASES(fixed)];
	size_t n = 0;
	for (size_t i = 0; i < NCASES(check_cases); i++)
		tests[n++] = (struct CMUnitTest){check_cases[i].name, run_check_case, NULL, NULL,
		                                 (void *)&check_cases[i]};
	for (size_t i = 0; i < NCASES(fit_cases); i++)
		tests[n++] = (struct CMUnitTest){fit_cases[i].name, run_fit_case, NULL, NULL,
		                                 (void *)&fit_cases[i]};
	for (size_t i = 0; i < NCASES(fixed); i++)
		tests[n++] = fixed[i];
	return _cmocka_run_group_tests("place", tests, n, NULL, NULL);
}

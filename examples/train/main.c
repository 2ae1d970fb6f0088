/*
 * main.c - drake-train's entry point: options (flags, then the
 * environment, then defaults), TF_CONFIG, and the role it names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/flags.h"
#include "examples/train/digits.h"
#include "examples/train/stop.h"
#include "examples/train/train.h"

#define DEFAULT_DATA "/usr/share/drake-train/digits.csv.gz"

static void usage(const struct flag *flags, size_t n)
{
	printf("usage: drake-train [flags]\n\n"
	       "A data-parallel parameter-server trainer for drake's TFJobs. It reads TF_CONFIG\n"
	       "as TensorFlow does; its task type says what it is: the ps holds the weights, the\n"
	       "chief (if any) or worker 0 tests them and ends the job, every worker (and the\n"
	       "chief) trains on its shard of the digits, an evaluator only tests.\n"
	       "Exit codes: 0 the job finished, 1 it cannot go on (why on stderr), 2 bad usage\n"
	       "or TF_CONFIG, 143 SIGTERM, 130 SIGINT.\n\nflags:\n");
	flags_usage(stdout, flags, n);
}

static int bad(const char *what)
{
	fprintf(stderr, "drake-train: %s\n", what);
	return 2;
}

int main(int argc, char **argv)
{
	struct train_opts o = {0};
	int hidden = 0, seed = 0;
	size_t batch = 0;
	/* DRAGON's example jobs name the step cap global_steps. */
	if (!getenv("GLOBAL_STEPS") && getenv("global_steps"))
		setenv("GLOBAL_STEPS", getenv("global_steps"), 1);
	const struct flag flags[] = {
	    {"target-accuracy", "TARGET_ACCURACY", FLAG_DOUBLE, &o.target, "0.96",
	     "test accuracy at which the coordinator ends the job, in (0, 1]"},
	    {"global-steps", "GLOBAL_STEPS", FLAG_COUNT, &o.global_steps, "20000",
	     "step cap: the job ends here even below the target (also env global_steps); 0 for "
	     "none"},
	    {"data", "TRAIN_DATA", FLAG_STRING, &o.data, DEFAULT_DATA,
	     "the digits, CSV of 64 pixels (0..16) and the digit, gzip or plain"},
	    {"test-fraction", "TRAIN_TEST_FRACTION", FLAG_DOUBLE, &o.test_fraction, "0.2",
	     "fraction of the rows held out for testing, spread evenly (0.2: every fifth)"},
	    {"hidden", "TRAIN_HIDDEN", FLAG_INT, &hidden, "32",
	     "hidden units (tanh); 0 for softmax regression. Same on every replica"},
	    {"batch-size", "TRAIN_BATCH_SIZE", FLAG_COUNT, &batch, "32",
	     "rows in each worker's minibatch"},
	    {"learning-rate", "TRAIN_LEARNING_RATE", FLAG_DOUBLE, &o.lr, "0.1",
	     "SGD step size, applied by the PS"},
	    {"seed", "TRAIN_SEED", FLAG_INT, &seed, "1",
	     "seed of the initial weights and the minibatches"},
	    {"eval-every", "TRAIN_EVAL_EVERY", FLAG_COUNT, &o.eval_every, "100",
	     "the coordinator tests every this many global steps"},
	    {"log-interval", "TRAIN_LOG_INTERVAL", FLAG_DURATION, &o.log_every, "5s",
	     "time between progress lines on stdout"},
	    {"ps-timeout", "TRAIN_PS_TIMEOUT", FLAG_DURATION, &o.ps_timeout, "120s",
	     "a worker that cannot reach the PS this long exits 1"},
	    {"io-timeout", "TRAIN_IO_TIMEOUT", FLAG_DURATION, &o.io_timeout, "30s",
	     "a PS answer slower than this drops the connection (then it is retried)"},
	    {"step-delay", "TRAIN_STEP_DELAY", FLAG_DURATION, &o.step_delay, "0s",
	     "sleep after each step, to make a demonstration job last"},
	    {"report-interval", "TRAIN_REPORT_INTERVAL", FLAG_DURATION, &o.report_every, "10s",
	     "time between the coordinator's reports to drake"},
	    {"drake", "TRAIN_DRAKE", FLAG_STRING, &o.drake, "drake",
	     "the drake binary that sends reports (drake progress); found on PATH"},
	    {"finish-linger", "TRAIN_FINISH_LINGER", FLAG_DURATION, &o.finish_linger, "10s",
	     "the PS waits this long after the end for workers to hear it"},
	    {"idle-timeout", "TRAIN_IDLE_TIMEOUT", FLAG_DURATION, &o.idle_timeout, "60s",
	     "the PS drops a worker silent this long"},
	};
	size_t nflags = sizeof(flags) / sizeof(flags[0]);
	enum flags_outcome outcome;
	char msg[512];
	if (flags_parse(flags, nflags, argc, argv, &outcome, msg, sizeof(msg)) != DRAKE_OK)
		return bad(msg);
	if (outcome == FLAGS_HELP) {
		usage(flags, nflags);
		return 0;
	}
	o.hidden = hidden;
	o.seed = seed;
	o.batch = batch;
	o.report_url = getenv("DRAKE_PROGRESS_URL");
	if (!(o.target > 0 && o.target <= 1))
		return bad("--target-accuracy must be in (0, 1]");
	if (!(o.lr > 0 && o.lr < 100))
		return bad("--learning-rate must be in (0, 100)");
	if (batch < 1 || batch > 65536)
		return bad("--batch-size must be in 1..65536");
	if (!(o.test_fraction > 0 && o.test_fraction < 1))
		return bad("--test-fraction must be in (0, 1)");
	if (o.eval_every < 1)
		return bad("--eval-every must be at least 1");
	if (o.io_timeout <= 0)
		return bad("--io-timeout must be positive");
	struct model_shape shape = {DIGITS_FEATURES, hidden, DIGITS_CLASSES};
	if (model_nparams(&shape) == 0) {
		snprintf(msg, sizeof(msg), "--hidden must be in 0..%d", MODEL_HIDDEN_MAX);
		return bad(msg);
	}

	const char *env = getenv("TF_CONFIG");
	if (!env || !*env)
		return bad("TF_CONFIG is not set. drake-train is one replica of a distributed job: "
		           "run it in a TFJob (drake's controller sets TF_CONFIG) or set it, e.g. "
		           "TF_CONFIG='{\"cluster\":{\"ps\":[\"localhost:2222\"],\"worker\":["
		           "\"localhost:2223\"]},\"task\":{\"type\":\"ps\",\"index\":0}}'");
	struct tf_config tc;
	if (tfc_parse(env, &tc, msg, sizeof(msg)) != DRAKE_OK) {
		fprintf(stderr, "drake-train: TF_CONFIG: %s\n", msg);
		return 2;
	}
	int rc = 2;
	struct train_coord coord = {TFC_CHIEF, 0};
	if (tc.slots[TFC_PS] != 1) {
		fprintf(
		    stderr,
		    "drake-train: TF_CONFIG: cluster.ps lists %d parameter servers; drake-train "
		    "keeps every weight on exactly one (replicas: 1 in the TFJob's PS spec)\n",
		    tc.slots[TFC_PS]);
	} else if (!tc.ep[TFC_PS][0]) {
		fprintf(stderr, "drake-train: TF_CONFIG: cluster.ps has no entry 0\n");
	} else if (tc.slots[TFC_CHIEF] == 0 && tc.slots[TFC_WORKER] == 0) {
		fprintf(stderr,
		        "drake-train: TF_CONFIG: the cluster has neither a chief nor a worker: "
		        "nobody would train\n");
	} else {
		if (tc.slots[TFC_CHIEF] == 0)
			coord.type = TFC_WORKER;
		setvbuf(stdout, NULL, _IOLBF, 0);
		stop_on_term();
		rc = tc.type == TFC_PS ? ps_main(&o, &tc, &shape)
		                       : worker_main(&o, &tc, &shape, coord);
	}
	tfc_release(&tc);
	return rc;
}

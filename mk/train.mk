# train.mk - drake-train, the example parameter-server trainer for TFJobs
# (examples/train/README.md): the binary, its unit tests (they join `make
# unit`, and so the sanitizer and valgrind runs), its loopback integration
# test (part of `make test`), the digits it trains on, and its image.

TRAIN_DIR := examples/train
TRAIN_O := $(O)/$(TRAIN_DIR)
TRAIN := $(TRAIN_O)/drake-train
TRAIN_LIB_SRC := $(filter-out %_test.c $(TRAIN_DIR)/main.c,$(wildcard $(TRAIN_DIR)/*.c))
TRAIN_LIB_OBJ := $(TRAIN_LIB_SRC:%.c=$(O)/%.o) $(O)/common/flags.o $(O)/common/err.o
TRAIN_TEST_BIN := $(patsubst %.c,$(O)/%,$(wildcard $(TRAIN_DIR)/*_test.c))
TRAIN_LDLIBS := $(shell pkg-config --libs jansson zlib 2>/dev/null || echo -ljansson -lz) -lm
# scikit-learn's digits, taken from Debian's python3-sklearn package (not
# installed) once and kept here.
TRAIN_DATA := build/train/digits.csv.gz

.PHONY: train train-data train-itest train-image

train: $(TRAIN) ## build/release/examples/train/drake-train, the example PS trainer

$(TRAIN_O)/libtrain.a: $(TRAIN_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(TRAIN): $(TRAIN_O)/main.o $(TRAIN_O)/libtrain.a
	$(CC) $(LDFLAGS) -o $@ $^ $(TRAIN_LDLIBS)

# More specific than the Makefile's $(O)/%_test, so it wins for these.
$(TRAIN_O)/%_test: $(TRAIN_O)/%_test.o $(TRAIN_O)/libtrain.a
	$(CC) $(LDFLAGS) -o $@ $^ $(TRAIN_LDLIBS) -lcmocka

# The TF_CONFIG test reads what drake's own reconciler writes, so it links
# libdrake.a as well.
$(TRAIN_O)/tfconfig_test: $(TRAIN_O)/tfconfig_test.o $(TRAIN_O)/libtrain.a $(O)/libdrake.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(TRAIN_LDLIBS) -lcmocka

UNIT_BIN += $(TRAIN_TEST_BIN)
unit valgrind: $(TRAIN_TEST_BIN)

train-data: $(TRAIN_DATA) ## the digits drake-train learns, from Debian's python3-sklearn

$(TRAIN_DATA): $(TRAIN_DIR)/fetch-digits.sh
	@$(TRAIN_DIR)/fetch-digits.sh $@

test: train-itest

train-itest: $(TRAIN) $(TRAIN_DATA) $(DRAKE) ## drake-train on loopback: PS and workers train to the target, a worker rejoins, bad TF_CONFIG, a PS that never answers, reports to a real drake
	@tests/train/itest.sh $(abspath $(TRAIN)) $(abspath $(TRAIN_DATA)) $(abspath $(DRAKE))

train-image: ## drake-train's image, no engine needed: build/image/drake-train-<tag>.oci.tar
	@VERSION='$(VERSION)' $(TRAIN_DIR)/build-image.sh

# torch-train (examples/torch-train), the elastic PyTorch trainer: torchrun
# agents on loopback with Debian's python3-torch. Not part of `make test`
# (a minute of mostly waiting); make e2e-real (case 6, and so make check)
# runs the trainer in a PyTorchJob.
.PHONY: torch-train-itest torch-train-image
torch-train-itest: $(TRAIN_DATA) ## torch-train on loopback: two torchrun agents train, one stops and the other resumes from its checkpoint, a new one joins at the job's step, target reached
	@hack/install-deps.sh --torch
	@tests/torch-train/itest.sh $(abspath $(TRAIN_DATA))

torch-train-image: ## torch-train's image, no engine needed: build/image/torch-train-<tag>.oci.tar
	@hack/install-deps.sh --torch
	@VERSION='$(VERSION)' hack/build-image.sh --which torch-train

# sim.mk - the trace-driven simulator's benchmark (see sim/README.md).

TRACES ?= ../shared/traces
SIM_OUT ?= bench/results/sim
SIM_ARGS ?=

.PHONY: bench-sim

bench-sim: $(DRAKE) ## drake / dragon (and default) on the gang, ITP (time scale 0.5, 1, 2) and Alibaba-node traces; drake with learning curves and migration
	@hack/bench-sim.sh $(DRAKE) $(TRACES) $(SIM_OUT) $(SIM_ARGS)

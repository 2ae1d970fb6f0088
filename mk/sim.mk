# sim.mk - the trace-driven simulator's benchmarks (see sim/README.md): the job
# replays (bench-sim) and the GPU placement study (bench-placement).

TRACES ?= traces
SIM_OUT ?= bench/results/sim
SIM_ARGS ?=

.PHONY: bench-sim bench-placement bench-kinds bench-ablation

bench-sim: $(DRAKE) ## drake / dragon (and default) on the gang, ITP (time scale 0.5, 1, 2) and Alibaba-node traces; drake with learning curves and migration; drake / dragon over stretches of 40 to 1,000 ITP jobs
	@hack/bench-sim.sh $(DRAKE) $(TRACES) $(SIM_OUT) $(SIM_ARGS)

KINDS_OUT ?= bench/results/kinds

bench-kinds: $(DRAKE) ## the mixed-kind replay: Pollux workloads at load 1.0, drake with all TFJobs, all PyTorchJobs and half of each, each resize costing its kind's measured cost, the policy told the costs or blind to them; bench/results/kinds/kinds.csv (SIM_ARGS)
	@hack/bench-kinds.sh $(DRAKE) $(TRACES) $(KINDS_OUT) $(SIM_ARGS)

ABLATION_OUT ?= bench/results/ablation

bench-ablation: $(DRAKE) ## what each of drake's rules is worth: Pollux's workloads 1-6 at every load, drake with its defaults and with one rule switched off at a time (about 5 minutes); bench/results/ablation/ablation.csv (SIM_ARGS)
	@hack/bench-ablation.sh $(DRAKE) $(TRACES) $(ABLATION_OUT) $(SIM_ARGS)

PLACEMENT_OUT ?= bench/results/placement
PLACEMENT_ARGS ?=

bench-placement: $(DRAKE) ## the FGD placement study (Weng et al. ATC'23): 7 policies x 7 Alibaba task lists x 10 seeds, and drake with learnt shapes; table vs the published means, CSVs and PNGs in bench/results/placement/ (PLACEMENT_ARGS)
	@hack/bench-placement.sh $(DRAKE) $(TRACES) $(PLACEMENT_OUT) $(PLACEMENT_ARGS)

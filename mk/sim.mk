# sim.mk - the trace-driven simulator's benchmark (see sim/README.md).

TRACES ?= ../shared/traces
SIM_OUT ?= bench/results/sim
SIM_ARGS ?=

.PHONY: bench-sim

bench-sim: $(DRAKE) ## replay the ITP, gang and Alibaba-node traces through default/dragon/drake
	@mkdir -p $(SIM_OUT)
	$(DRAKE) sim --trace $(TRACES)/knavigator_gang53.csv --out $(SIM_OUT) --tag gang53 \
		--progress=false $(SIM_ARGS)
	$(DRAKE) sim --trace $(TRACES)/ms_itp_cluster03.csv --out $(SIM_OUT) --tag itp512 \
		--progress=false $(SIM_ARGS)
	$(DRAKE) sim --trace $(TRACES)/ms_itp_cluster03.csv \
		--nodes-file $(TRACES)/alibaba2023_openb_nodes.csv --time-scale 0.1 \
		--out $(SIM_OUT) --tag itp-alibaba --progress=false $(SIM_ARGS)

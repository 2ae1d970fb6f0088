# Local control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler with drake as extender, kwok nodes), e2e tests and the
# end-to-end benchmark. Scripts live in hack/; see e2e/README.md.

.PHONY: control-plane up down e2e e2e-quick e2e-real e2e-real-torch real-suites bench-real-nodes bench-train-real bench-e2e bench-gang bench-replay bench-replay-smoke bench-frag soak soak-short

control-plane: ## build (or reuse cached) etcd, kube-*, kubectl, kwok, helm
	@hack/build-control-plane.sh

up: ## install deps, build, start a local cluster with drake, apply examples/ (runs until make down); REAL_NODES=N: N real nodes and a TFJob that trains
	@hack/install-deps.sh
	@$(MAKE) --no-print-directory all
	@hack/build-control-plane.sh $(if $(filter-out 0,$(REAL_NODES)),etcd kwok k8s helm node)
	@DRAKE_REAL_NODES=$(or $(REAL_NODES),0) hack/up.sh

down: ## stop the local cluster started by make up (logs stay in build/cluster/logs)
	@hack/cluster-down.sh

# make check adds replay and soak (hack/e2e-parallel.sh lists the suites).
E2E_SUITES ?= simple gang gang-faults chart-second chart-extender
e2e: $(DRAKE) ## the e2e suites at once, each on a fresh local cluster of its own: simple mode, gang mode, and the Helm chart installed for real in both of its modes (make chart-e2e); E2E_SUITES chooses
	@hack/build-control-plane.sh etcd k8s kwok helm
	@hack/e2e-parallel.sh $(E2E_SUITES)

# e2e-quick leaves out the fault and HA tests (5 minutes more) unless
# E2E_QUICK_SKIP is set empty.
E2E_QUICK_SKIP ?= ^(TestFault|TestHA)
e2e-quick: $(DRAKE) ## one mode's e2e suite on a fresh local cluster, but its fault and HA tests (E2E_MODE: gang, or simple; E2E_RUN narrows it to matching tests; E2E_QUICK_SKIP= keeps every test)
	@hack/build-control-plane.sh etcd k8s kwok helm >/dev/null
	@DRAKE_EXTENDER_MODE=$(or $(E2E_MODE),gang) E2E_SKIP='$(E2E_QUICK_SKIP)' hack/e2e.sh

e2e-real: $(DRAKE) $(O)/examples/train/drake-train ## real training on 2 real nodes: drake-train TFJobs placed by drake (installed by its chart) train to their target, shrunk and grown, with a worker migrated, their progress classed, across a leader change, and an elastic PyTorchJob of torch-train shrunk for a TFJob and grown back, resuming from its checkpoint; needs root; installs python3-torch (hack/install-deps.sh --torch)
	@hack/install-deps.sh --torch
	@hack/build-control-plane.sh etcd k8s kwok helm node >/dev/null
	@hack/e2e-real.sh

e2e-real-torch: $(DRAKE) ## make e2e-real's case 6 alone: an elastic PyTorchJob of examples/torch-train (torchrun) shrunk by drake for a TFJob and grown back, resuming from its checkpoint, with each resize's cost; needs root; installs python3-torch (hack/install-deps.sh --torch)
	@hack/install-deps.sh --torch
	@hack/build-control-plane.sh etcd k8s kwok helm node >/dev/null
	@E2E_REAL_CASES=6 hack/e2e-real.sh

real-suites: $(DRAKE) $(O)/examples/train/drake-train ## make chart-e2e-real (both modes) and make e2e-real one after the other on one real-node cluster instead of three; needs root; installs python3-torch (hack/install-deps.sh --torch)
	@hack/install-deps.sh --torch
	@hack/build-control-plane.sh etcd k8s kwok helm node >/dev/null
	@hack/real-suites.sh

bench-e2e: $(DRAKE) ## pods bound/s on 1,000 kwok nodes: kube-scheduler alone vs with drake
	@hack/build-control-plane.sh etcd k8s kwok
	@hack/bench-e2e.sh

bench-frag: $(DRAKE) ## GPU fragmentation on 300 openb-shaped kwok nodes, simple mode, drake's score on prioritize vs kube-scheduler alone: GPU allocation at the first pod that fits nowhere, CSV in bench/results/ (BENCH_FRAG_NODES, BENCH_FRAG_SEEDS)
	@hack/bench-frag.sh

bench-gang: $(DRAKE) $(O)/bench/extender_bench ## gangs under contention: drake vs in-tree GangScheduling vs no gang, and the cost of being an extender; table, CSV + PNG in bench/results/bench-gang/ (BENCH_GANG_SEEDS, BENCH_GANG_DEMAND, BENCH_GANG_ARGS)
	@hack/build-control-plane.sh etcd k8s kwok
	@DRAKE_TRIVIAL_EXTENDER_BIN=$(abspath $(O)/bench/extender_bench) hack/bench-gang.sh

bench-replay: $(DRAKE) ## a trace window (ITP by default) replayed on kwok nodes: drake vs DRAGON's rules (--policy dragon) vs in-tree gang scheduling vs no gang (and in-tree-packed, tiresias, Volcano's vc-scheduler if --arms names them: hack/build-control-plane.sh volcano first), run times by drake's speed model or, for a Pollux workload with --apps, by measured step times, beside drake sim's prediction; table, CSVs + PNG in bench/results/bench-replay/ (BENCH_REPLAY_ARGS)
	@hack/build-control-plane.sh etcd k8s kwok
	@hack/bench-replay.sh

bench-replay-smoke: $(DRAKE) ## make check's trace replay: 6 jobs on 4 kwok nodes, every default arm (not volcano); asserts every job finishes, no partial gang (but under no-gang), every logged round of drake's arms replays the same and drake accepted their progress reports
	@hack/build-control-plane.sh etcd k8s kwok
	@BENCH_REPLAY_NODES=4 BENCH_REPLAY_OUT=build/bench-replay-smoke \
		BENCH_REPLAY_ARGS="--jobs 6 --arm-budget 2m --min-load 1 --decision-logs --check $(BENCH_REPLAY_ARGS)" hack/bench-replay.sh

SOAK_DURATION ?= 30m
soak: $(DRAKE) ## steady-state TFJobs on 200 kwok nodes for SOAK_DURATION (30m): every job Succeeded, no partial gang, drake's RSS and fds flat (CSV + PNG in bench/results/soak/)
	@hack/build-control-plane.sh etcd k8s kwok
	@SOAK_DURATION=$(SOAK_DURATION) hack/soak.sh

# The short soak make check runs: 2 minutes of arrivals, shorter jobs so the
# drain is quick, samples every 2 s so each quarter has enough of them. Two
# minutes are still drake's warm-up (its caches fill as the first jobs come
# and go: RSS rose 10 % between the second and last half-minute in a 2-minute
# run), so the RSS bound is 1.5 here, catching only a gross leak; the 30-minute
# run keeps 1.10.
soak-short: $(DRAKE) ## make soak for 2 minutes (what make check runs)
	@hack/build-control-plane.sh etcd k8s kwok
	@SOAK_DURATION=2m SOAK_ARGS="--run-min 10s --run-max 40s --linger-min 2s --linger-max 15s --sample 2s --rss-ratio 1.5 $(SOAK_ARGS)" hack/soak.sh

bench-real-nodes: $(DRAKE) ## real nodes' cost: cluster-up time, 10 pods Running, RSS of kubelet, containerd, kube-proxy, CoreDNS; CSV in bench/results/ (needs root)
	@hack/bench-real-nodes.sh $(or $(REAL_NODES),2)

bench-train-real: $(DRAKE) $(O)/examples/train/drake-train ## drake-train on 2 real nodes at a fixed width, shrunk and grown, and with a worker migrated: time to target, decision-to-effect per membership change; CSVs + curves.png in bench/results/train-real/ (needs root)
	@hack/build-control-plane.sh etcd k8s kwok helm node >/dev/null
	@hack/bench-train-real.sh

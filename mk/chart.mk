# The Helm chart (charts/drake): lint and render every mode, and install it
# for real on the local control plane.

.PHONY: chart-check chart-e2e chart-e2e-real

chart-check: $(DRAKE) ## helm lint + helm template of every chart mode, schema refusals
	@hack/build-control-plane.sh helm >/dev/null
	@hack/chart-check.sh

chart-e2e: $(DRAKE) ## helm install on a fresh local cluster, both modes; drake runs with the chart's RBAC
	@hack/build-control-plane.sh etcd k8s kwok helm >/dev/null
	@rc=0; \
	hack/chart-e2e.sh secondScheduler || rc=1; \
	hack/chart-e2e.sh extenderOnly || rc=1; \
	exit $$rc

chart-e2e-real: $(DRAKE) ## the chart with drake's own image on 2 real nodes (kubelet, containerd, CNI, CoreDNS), both modes, with faults; needs root
	@hack/build-control-plane.sh etcd k8s kwok helm node >/dev/null
	@rc=0; \
	hack/chart-e2e-real.sh secondScheduler || rc=1; \
	hack/chart-e2e-real.sh extenderOnly || rc=1; \
	exit $$rc

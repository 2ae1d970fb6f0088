# The Helm chart (charts/drake): lint and render every mode, and install it
# for real on the local control plane.

.PHONY: chart-check chart-e2e

chart-check: $(DRAKE) ## helm lint + helm template of every chart mode, schema refusals
	@hack/build-control-plane.sh helm >/dev/null
	@hack/chart-check.sh

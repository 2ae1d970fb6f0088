# The container image (Dockerfile). Needs a working docker or podman; without
# one `make image` says so and fails.

IMAGE ?= ghcr.io/drake-scheduler/drake
IMAGE_TAG ?= $(VERSION)

.PHONY: image image-push

# container_engine: docker when `docker info` works, else podman when
# `podman info` works, else nothing.
container_engine = $(shell if docker info >/dev/null 2>&1; then echo docker; \
	elif podman info >/dev/null 2>&1; then echo podman; fi)

image: ## build the container image $(IMAGE):$(IMAGE_TAG) with docker or podman
	@engine="$(container_engine)"; \
	if [ -z "$$engine" ]; then \
		echo "make image: no container engine available (neither 'docker info' nor 'podman info' succeeds)" >&2; \
		exit 1; \
	fi; \
	echo "make image: $$engine build -t $(IMAGE):$(IMAGE_TAG) --build-arg VERSION=$(VERSION) ."; \
	$$engine build -t "$(IMAGE):$(IMAGE_TAG)" --build-arg VERSION="$(VERSION)" .

image-push: image ## push $(IMAGE):$(IMAGE_TAG)
	@engine="$(container_engine)"; $$engine push "$(IMAGE):$(IMAGE_TAG)"

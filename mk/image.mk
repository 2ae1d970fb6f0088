# drake's container image. `make image` needs no container engine: it packs
# build/release/drake, the shared libraries it links and a CA bundle from this
# machine's Debian packages into an OCI archive (hack/build-image.sh,
# hack/oci-image.sh) that `ctr images import`, `docker load` and `podman load`
# read. `make image-docker` builds the Dockerfile with docker or podman.

IMAGE ?= ghcr.io/drake-scheduler/drake
IMAGE_TAG ?= $(VERSION)
IMAGE_FILE := build/image/drake-$(IMAGE_TAG).oci.tar
image_env = IMAGE='$(IMAGE)' IMAGE_TAG='$(IMAGE_TAG)' VERSION='$(VERSION)'

.PHONY: image images image-check image-docker image-push

image: ## drake's image as an OCI archive, no engine needed: build/image/drake-<tag>.oci.tar
	@$(image_env) hack/build-image.sh --which drake

images: ## the four images of the real-node cluster (drake, pause, kube-scheduler, busybox) under build/image/
	@$(image_env) hack/build-image.sh --which all

image-check: ## the image's own contents: libraries resolve, runs as 65532, entrypoint, reproducible digest
	@$(image_env) hack/image-check.sh

# container_engine: docker when `docker info` works, else podman when
# `podman info` works, else nothing.
container_engine = $(shell if docker info >/dev/null 2>&1; then echo docker; \
	elif podman info >/dev/null 2>&1; then echo podman; fi)

image-docker: ## build IMAGE:IMAGE_TAG from the Dockerfile with docker or podman
	@engine="$(container_engine)"; \
	if [ -z "$$engine" ]; then \
		echo "make image-docker: no container engine available (neither 'docker info' nor 'podman info' succeeds); 'make image' needs none" >&2; \
		exit 1; \
	fi; \
	echo "make image-docker: $$engine build -t $(IMAGE):$(IMAGE_TAG) --build-arg VERSION=$(VERSION) ."; \
	$$engine build -t "$(IMAGE):$(IMAGE_TAG)" --build-arg VERSION="$(VERSION)" .

image-push: image ## push the OCI archive to IMAGE:IMAGE_TAG with skopeo (no engine needed)
	skopeo copy "oci-archive:$(IMAGE_FILE):$(IMAGE_TAG)" "docker://$(IMAGE):$(IMAGE_TAG)"

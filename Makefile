# chartctl — build, run and test. `make help` lists the targets.

GO        ?= go
BIN       ?= bin/chartctl
PKG        = github.com/chartctl/chartctl
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo none)
DATE      ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS    = -s -w -X $(PKG)/internal/build.Version=$(VERSION) -X $(PKG)/internal/build.Commit=$(COMMIT) -X $(PKG)/internal/build.Date=$(DATE)
TOOLS     := $(CURDIR)/.tools
HELM4_VERSION ?= v4.3.1
HELM3_VERSION ?= v3.22.0
FUZZTIME  ?= 5s
REVISION  ?= $(shell git rev-parse HEAD 2>/dev/null || echo none)
IMAGE_DIR ?= dist/image
IMAGE_PLATFORMS ?= linux/amd64 linux/arm64
IMAGE_REPO ?= $(shell sed -n 's/^ *- IMAGE_REPO=//p' .goreleaser.yaml)
PEBBLE_VERSION ?= v2.10.1

.PHONY: help build run test test-short fuzz lint api-docs completions man bench bench-scale bench-pushed bench-static tools image image-push packages pebble release-snapshot release-check clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

build: ## build bin/chartctl and bin/chartctl-lint (the bounded linter serve runs for lint policies)
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/chartctl
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)-lint ./cmd/chartctl-lint

run: build ## run the server on the embedded store in ./chartctl-data
	./$(BIN) serve

test: ## run every test with the race detector, then short fuzz runs
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 30m ./...
	$(MAKE) fuzz

test-short: ## run the tests without the race detector
	$(GO) test -count=1 ./...

fuzz: ## run each fuzz target for FUZZTIME
	@for t in FuzzRead FuzzValidateName FuzzValidateVersion FuzzParseArchiveFileName; do \
		echo "fuzz $$t"; $(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) ./internal/chart || exit 1; done
	$(GO) test -run='^$$' -fuzz='^FuzzValid$$' -fuzztime=$(FUZZTIME) ./internal/token
	$(GO) test -run='^$$' -fuzz='^FuzzDecodeIndex$$' -fuzztime=$(FUZZTIME) ./internal/importer

lint: ## gofmt, go vet and staticcheck
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1)
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@latest ./...

api-docs: ## regenerate docs/api-reference.md from server/openapi.yaml
	$(GO) generate ./server

completions: build ## regenerate completions/ from the binary
	@mkdir -p completions
	./$(BIN) completion bash > completions/chartctl.bash
	./$(BIN) completion zsh > completions/_chartctl
	./$(BIN) completion fish > completions/chartctl.fish
	./$(BIN) completion powershell > completions/chartctl.ps1

man: build ## write the man pages into man/ (the packages ship them)
	./$(BIN) man man

bench: build ## go benchmarks of the hot paths, the load harness, then chartctl beside nginx (needs nginx and wrk)
	$(GO) test -run='^$$' -bench=. -benchmem ./internal/... ./server/...
	$(GO) run ./bench/cmd/chartbench --binary $(BIN) --n 1000 --markdown docs/performance.md
	$(MAKE) bench-static

# The side-by-side of issue #19 compares with Debian's nginx (1.22 on
# bookworm) under wrk; install both with: apt-get install -y nginx wrk
bench-scale: ## bolt + files beside PostgreSQL + S3 (issue 14): real processes, PostgreSQL and versitygw (see bench/scale)
	$(GO) test -run '^$$' -bench . -skip PushedRepository -benchtime 3s -count 1 -timeout 120m ./bench/scale

bench-pushed: ## 100,000 versions pushed through the binary on bolt, then PostgreSQL + S3 (issue 32; hours on a busy machine)
	$(GO) test -run '^$$' -bench PushedRepository -benchtime 1x -count 1 -timeout 300m ./bench/scale

bench-static: build ## chartctl's read routes beside nginx serving the same bytes (apt-get install -y nginx wrk)
	@command -v nginx >/dev/null && command -v wrk >/dev/null || { echo "bench-static needs nginx and wrk: apt-get install -y nginx wrk"; exit 1; }
	$(GO) run ./bench/cmd/chartbench static --binary $(BIN) --n 1000 --rounds 5 --markdown docs/performance.md

tools: ## install Helm 4 and Helm 3 into .tools/ (used by the Helm compatibility tests)
	GOBIN=$(TOOLS)/helm4 $(GO) install helm.sh/helm/v4/cmd/helm@$(HELM4_VERSION)
	GOBIN=$(TOOLS)/helm3 $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM3_VERSION)

image: ## build the container image (IMAGE_PLATFORMS) as an OCI layout in IMAGE_DIR, without a daemon
	@rm -rf $(IMAGE_DIR) $(IMAGE_DIR)-bin && mkdir -p $(IMAGE_DIR)-bin
	@set -e; bins=""; for p in $(IMAGE_PLATFORMS); do arch=$${p#linux/}; \
		echo "build chartctl for $$p"; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(IMAGE_DIR)-bin/chartctl-linux-$$arch ./cmd/chartctl; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(IMAGE_DIR)-bin/chartctl-lint-linux-$$arch ./cmd/chartctl-lint; \
		bins="$$bins --binary $$p=$(IMAGE_DIR)-bin/chartctl-linux-$$arch --lint $$p=$(IMAGE_DIR)-bin/chartctl-lint-linux-$$arch"; done; \
		$(GO) run ./internal/imagebuild/buildimage --out $(IMAGE_DIR) $$bins --version $(VERSION) --revision $(REVISION)

pebble: ## install Pebble, the ACME test server, into .tools/pebble (used by the ACME tests)
	test -x $(TOOLS)/pebble/pebble || GOBIN=$(TOOLS)/pebble $(GO) install github.com/letsencrypt/pebble/v2/cmd/pebble@$(PEBBLE_VERSION)

image-push: ## push the layout in IMAGE_DIR (make image) to IMAGE_REPO:VERSION, with ~/.docker/config.json credentials
	$(GO) run ./internal/imagebuild/buildimage --out $(IMAGE_DIR) --push $(IMAGE_REPO):$(VERSION)

GORELEASER = $(GO) run github.com/goreleaser/goreleaser/v2@v2.15.4
PKG_ARCH  ?= amd64

packages: ## build the .deb and .rpm for linux/PKG_ARCH into dist/ (goreleaser snapshot of .goreleaser.yaml, one platform)
	@mkdir -p .tmp
	sed -e 's/goos: \[linux, darwin, windows\]/goos: [linux]/' -e 's/goos: \[linux, darwin\]/goos: [linux]/' -e 's/goarch: \[amd64, arm64\]/goarch: [$(PKG_ARCH)]/' .goreleaser.yaml > .tmp/goreleaser-packages.yaml
	grep -q 'goarch: \[$(PKG_ARCH)\]' .tmp/goreleaser-packages.yaml
	! grep -q 'darwin' .tmp/goreleaser-packages.yaml
	$(GORELEASER) release --snapshot --clean --skip=archive,publish,validate --config .tmp/goreleaser-packages.yaml

release-snapshot: ## build release archives locally with goreleaser
	$(GORELEASER) release --snapshot --clean

release-check: ## validate .goreleaser.yaml
	$(GORELEASER) check

clean: ## remove build output
	rm -rf bin dist man .tmp

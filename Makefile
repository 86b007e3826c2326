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

.PHONY: help build run test test-short fuzz lint api-docs completions bench tools release-snapshot release-check clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

build: ## build bin/chartctl
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/chartctl

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

bench: build ## go benchmarks of the hot paths, then the load harness against a fresh server
	$(GO) test -run='^$$' -bench=. -benchmem ./internal/... ./server/...
	$(GO) run ./bench/cmd/chartbench --binary $(BIN) --n 1000 --markdown docs/performance.md

tools: ## install Helm 4 and Helm 3 into .tools/ (used by the Helm compatibility tests)
	GOBIN=$(TOOLS)/helm4 $(GO) install helm.sh/helm/v4/cmd/helm@$(HELM4_VERSION)
	GOBIN=$(TOOLS)/helm3 $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM3_VERSION)

GORELEASER = $(GO) run github.com/goreleaser/goreleaser/v2@v2.15.4

release-snapshot: ## build release archives locally with goreleaser
	$(GORELEASER) release --snapshot --clean

release-check: ## validate .goreleaser.yaml
	$(GORELEASER) check

clean: ## remove build output
	rm -rf bin dist

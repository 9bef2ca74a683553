# Weir's build. `make test` is what CI runs (through .ci/run).

GO       ?= go
NPM_DIR  := testdata/npm
CONFORMANCE_DIR := testdata/conformance
STATICCHECK_VERSION := v0.8.2

.PHONY: all build test deps lint fuzz bench clean

all: build

build:
	$(GO) build -o bin/weir ./cmd/weir

# deps installs the real MCP peers the end-to-end tests run against,
# exactly as pinned in testdata/npm/package-lock.json, and the official MCP
# conformance suite with the Node 22 it needs, as pinned in
# testdata/conformance/package-lock.json.
deps: $(NPM_DIR)/node_modules/.package-lock.json $(CONFORMANCE_DIR)/node_modules/.package-lock.json

$(NPM_DIR)/node_modules/.package-lock.json: $(NPM_DIR)/package-lock.json
	npm ci --prefix $(NPM_DIR) --no-audit --no-fund --loglevel=error

$(CONFORMANCE_DIR)/node_modules/.package-lock.json: $(CONFORMANCE_DIR)/package-lock.json
	npm ci --prefix $(CONFORMANCE_DIR) --no-audit --no-fund --loglevel=error

# test runs every test: unit, property, golden, and end-to-end against the
# real peers, plus the static checks; then, without the race detector, the
# tests it would distort (the adversarial inputs are slow under it, and it
# changes what loading a package allocates).
test: deps lint
	$(GO) test -race -count=1 -timeout 20m ./...
	$(GO) test -count=1 -run '^(TestSinglePassMatchesReferenceAdversarial|TestInitAllocations)$$' ./internal/detect/

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) mod tidy -diff
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# fuzz runs each fuzz target briefly (the seed corpora run in `make test`).
FUZZTIME ?= 30s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list 'Fuzz.*' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run XXX -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

bench:
	$(GO) test -run XXX -bench . -benchmem ./...

clean:
	rm -rf bin

# results re-runs every benchmark RESULTS.md reports — the core Go
# benchmarks, the AgentDojo replay (all four presets on the corpus in
# ../shared/corpora/agentdojo, with and without a person answering), the
# overhead benchmark, labels and tool poisoning on real servers — and
# regenerates RESULTS.md and the README's results blocks.
.PHONY: results
results:
	$(GO) run ./bench/core
	$(GO) run ./bench/agentdojo --corpus ../shared/corpora/agentdojo --presets default,strict,dataflow,integrity
	$(GO) run ./bench/overhead
	$(GO) run ./bench/gateway --readme README.md
	$(GO) run ./bench/labels --quiet --readme README.md
	$(GO) run ./bench/poisoning --list 0 --readme README.md
	$(GO) run ./bench/scratch --readme README.md
	$(GO) run ./bench/report

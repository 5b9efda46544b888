# fencesim: deterministic simulation and property testing of three distributed designs.
# Every target runs on a fresh machine with Go 1.26 and the Go module proxy.

GO      ?= go
PKGS    ?= ./...
SOAK_RUNS ?= 10000

.PHONY: help test race bench soak cover fuzz fmt fmt-check vet pg pg-stop mutate

## test: vet, formatting, and every test (the command CI runs)
test: vet fmt-check
	$(GO) test -count=1 $(PKGS)

## vet: go vet
vet:
	$(GO) vet $(PKGS)

## fmt-check: fail when gofmt would change a file
fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

## fmt: format every file
fmt:
	gofmt -w $$(git ls-files '*.go')

## race: every test under the race detector
race:
	$(GO) test -race -count=1 -timeout 60m $(PKGS)

## bench: every benchmark once, with allocation figures
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

## soak: long randomized runs (FENCESIM_SOAK_RUNS runs per property), then the full baseline matrix (BASELINE_RUNS seeds a cell)
BASELINE_RUNS ?= 3000
soak:
	FENCESIM_SOAK_RUNS=$(SOAK_RUNS) $(GO) test -count=1 -timeout 0 -run 'Soak' -v $(PKGS)
	$(GO) build -o bin/fencesim ./cmd/fencesim
	./bin/fencesim baseline --runs $(BASELINE_RUNS)

## baseline: the baseline matrix alone: every default design in every world and at every fault level, BASELINE_RUNS seeds a cell
.PHONY: baseline
baseline:
	$(GO) build -o bin/fencesim ./cmd/fencesim
	./bin/fencesim baseline --runs $(BASELINE_RUNS)

## cover: coverage report in coverage.out, summary printed
cover:
	$(GO) test -count=1 -coverprofile=coverage.out $(PKGS)
	$(GO) tool cover -func=coverage.out | tail -1

## fuzz: fuzz the trace reader for FUZZTIME (default 60s)
FUZZTIME ?= 60s
fuzz:
	$(GO) test ./traces -run '^$$' -fuzz FuzzReader -fuzztime $(FUZZTIME)

## mutate: mutation testing of checker/ with checker/'s own tests (gremlins; several minutes, not part of test)
GREMLINS_VERSION ?= v0.6.0
GREMLINS ?= $(shell $(GO) env GOPATH)/bin/gremlins
MUTATE_WORKERS ?= 2
MUTATE_TIMEOUT_COEFFICIENT ?= 10
# -count=1: gremlins times each mutant's tests from its coverage run; a cached
# coverage run would make that timeout a fraction of a second.
mutate:
	@$(GO) version -m $(GREMLINS) 2>/dev/null | grep -q 'mod.*go-gremlins/gremlins.*$(GREMLINS_VERSION)' || \
		$(GO) install github.com/go-gremlins/gremlins/cmd/gremlins@$(GREMLINS_VERSION)
	GOFLAGS="$$($(GO) env GOFLAGS) -count=1" $(GREMLINS) unleash --workers $(MUTATE_WORKERS) \
		--timeout-coefficient $(MUTATE_TIMEOUT_COEFFICIENT) ./checker

## pg: install and start a throw-away PostgreSQL for the conformance tests: eval "$$(make -s pg)"
pg:
	@bash scripts/pg.sh install
	@bash scripts/pg.sh start

## pg-stop: stop that PostgreSQL and delete its data
pg-stop:
	@bash scripts/pg.sh stop

## sim: build bin/fencesim and explore every system on its default design (3,000 seeds each)
SIM_RUNS ?= 3000
.PHONY: sim
sim:
	$(GO) build -o bin/fencesim ./cmd/fencesim
	./bin/fencesim explore --runs $(SIM_RUNS)

## diff: the working tree against BASE (a git revision, default HEAD) on DIFF_RUNS seeds per system; exit 1 when a property newly fails or a FAIL_ON bound is crossed, e.g. make diff BASE=origin/main FAIL_ON='MA2=+10%'
BASE ?= HEAD
DIFF_RUNS ?= 300
FAIL_ON ?=
DIFF_FLAGS ?=
.PHONY: diff
diff:
	$(GO) build -o bin/fencesim ./cmd/fencesim
	./bin/fencesim diff --base $(BASE) --runs $(DIFF_RUNS) $(foreach f,$(FAIL_ON),--fail-on '$(f)') $(DIFF_FLAGS)

## help: list the targets with what each does (the "## target: text" comments)
help:
	@sed -n 's/^## \([a-zA-Z_-]*\): *\(.*\)/\1\t\2/p' $(MAKEFILE_LIST) | sed 's/\$$\$$/$$/g' | awk -F '\t' '{ printf "  %-10s %s\n", $$1, $$2 }'

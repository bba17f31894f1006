# Masthead: `make run` starts everything locally, `make test` runs every test.
# Both install what they need on a fresh Debian machine (apt when root, npm, the Go module proxy).

GO        ?= go
BIN       := bin/masthead
# -timeout bounds each package's test binary, a guard against a hang: handlers, the longest,
# took 600 s under -race on the machine of earlier sessions and 1,599 s on one 2.65x slower
# (2026-12-08), so 40 minutes left too thin a margin.
GOTESTFLAGS ?= -race -count=1 -timeout 60m
SUDO      := $(if $(filter 0,$(shell id -u)),,sudo)
APT_PKGS_PG := postgresql
APT_PKGS_BROWSER := chromium chromium-driver fonts-dejavu-core
APT_PKGS_HAPROXY := haproxy
APT_PKGS_POOLER := pgbouncer
APT_PKGS_PROMETHEUS := prometheus
NPM_DIRS  := $(patsubst %/package.json,%,$(wildcard internal/*/jstest/package.json e2e/package.json))

.PHONY: run build test fuzz deps deps-pg deps-pgbouncer deps-browser deps-haproxy deps-prometheus deps-node deps-npm lint generate bench bench-report clean

# make run ADDR=127.0.0.1:9090 DATA=/tmp/masthead picks the address and data folder; unset,
# masthead dev's own defaults apply (MASTHEAD_ADDR / MASTHEAD_DATA, else 127.0.0.1:8080 and .masthead).
run: build deps-pg
	./$(BIN) dev $(if $(ADDR),--addr '$(ADDR)') $(if $(DATA),--data '$(DATA)')

# -buildvcs=auto records the checkout's commit for `masthead version` even where the machine's
# go env turns stamping off (GOFLAGS=-buildvcs=false), and builds without it outside a checkout.
build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/masthead

# deps-pg makes sure PostgreSQL's server binaries exist (initdb, postgres).
deps-pg:
	@if command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing PostgreSQL server: apt-get install -y $(APT_PKGS_PG)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PKGS_PG) >/dev/null; \
	else \
		echo "PostgreSQL server binaries are missing. Install them with:"; \
		echo "  sudo apt-get install -y $(APT_PKGS_PG)"; exit 1; \
	fi

# deps-pgbouncer makes sure Debian's PgBouncer is there for the tests behind a transaction pooler.
deps-pgbouncer:
	@if command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing pgbouncer: apt-get install -y $(APT_PKGS_POOLER)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PKGS_POOLER) >/dev/null; \
	else \
		echo "pgbouncer is missing. Install it with:"; \
		echo "  sudo apt-get install -y $(APT_PKGS_POOLER)"; exit 1; \
	fi

# deps-browser makes sure Debian's chromium is there for the browser tests.
deps-browser:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing chromium: apt-get install -y $(APT_PKGS_BROWSER)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PKGS_BROWSER) >/dev/null; \
	else \
		echo "chromium is missing. Install it with:"; \
		echo "  sudo apt-get install -y $(APT_PKGS_BROWSER)"; exit 1; \
	fi

# deps-haproxy makes sure Debian's HAProxy is there for the multi-instance tests
# (internal/cluster runs its own haproxy process in the foreground; the service the package may
# install is not used).
deps-haproxy:
	@if [ -x /usr/sbin/haproxy ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing haproxy: apt-get install -y $(APT_PKGS_HAPROXY)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PKGS_HAPROXY) >/dev/null; \
	else \
		echo "haproxy is missing. Install it with:"; \
		echo "  sudo apt-get install -y $(APT_PKGS_HAPROXY)"; exit 1; \
	fi

# deps-prometheus makes sure Debian's Prometheus is there for the test that scrapes /metrics
# (internal/server TestPrometheusScrapesMetrics runs its own prometheus process; the service the
# package may install is not used).
deps-prometheus:
	@if [ -x /usr/bin/prometheus ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing prometheus: apt-get install -y $(APT_PKGS_PROMETHEUS)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PKGS_PROMETHEUS) >/dev/null; \
	else \
		echo "prometheus is missing. Install it with:"; \
		echo "  sudo apt-get install -y $(APT_PKGS_PROMETHEUS)"; exit 1; \
	fi

# deps-node makes sure node and npm exist for the supabase-js and axe-core tests.
deps-node:
	@if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing node: apt-get install -y nodejs npm"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; \
	else \
		echo "node and npm are missing. Install them with:"; \
		echo "  sudo apt-get install -y nodejs npm"; exit 1; \
	fi

# deps-npm installs the JavaScript clients our tests drive (supabase-js, axe-core) from the lock files.
deps-npm: deps-node
	@for d in $(NPM_DIRS); do \
		if [ ! -d $$d/node_modules ] || [ $$d/package-lock.json -nt $$d/node_modules ]; then \
			echo "npm ci in $$d"; npm ci --prefix $$d --no-audit --no-fund --loglevel=error || exit 1; \
		fi; \
	done

deps: deps-pg deps-pgbouncer deps-browser deps-haproxy deps-prometheus deps-node deps-npm

test: deps
	$(GO) vet ./...
	$(GO) test $(GOTESTFLAGS) ./...
	$(MAKE) fuzz

# fuzz runs each fuzz target of the PostgREST parser briefly; the seed corpora also run as
# ordinary tests above. FUZZTIME=2000000x make fuzz digs deeper. The budget is a count of
# inputs (about 10 s a target here), not a duration: with a duration, Go before 1.27 can fail a
# target with a bare "context deadline exceeded" at its end, no failing input written (the
# fuzz coordinator's race, go.dev/issue/75804); make test met it once in FuzzOrder.
FUZZTIME ?= 100000x
FUZZ_REST := FuzzSelect FuzzFilter FuzzOrder FuzzLogic FuzzQuery
fuzz:
	@for f in $(FUZZ_REST); do \
		echo "fuzz $$f for $(FUZZTIME)"; \
		$(GO) test ./internal/rest -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) || exit 1; \
	done

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '_templ.go$$')); \
		if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

generate:
	$(GO) tool templ generate

# bench runs every benchmark; the dashboard's page benchmark needs a fixed count for its
# percentiles to mean something. The 100k-per-project seed benchmark alone takes minutes.
bench: deps
	$(GO) test -run '^$$' -bench . -benchmem $$($(GO) list ./... | grep -v '/handlers$$')
	$(GO) test -run '^$$' -bench Pages -benchtime 400x ./handlers

# bench-report runs issue 14's benchmarks (every BenchmarkFloor…: ours and the best hand-written
# equivalent, alternately in one loop) BENCHCOUNT times, one package at a time so they do not
# load each other, and prints one table: measure | ours | floor | ratio | target (min–max over
# the runs; the convention and the targets are in internal/benchreport). It takes minutes, so
# `make test` runs only the parser's tests. The raw output stays in BENCH_OUT.
BENCHCOUNT ?= 3
BENCH_OUT  ?= bench-report.txt
bench-report: deps
	@pkgs=$$(grep -rl --include='*_test.go' --exclude-dir=node_modules '^func BenchmarkFloor' . | xargs -n1 dirname | sort -u); \
		echo "$(GO) test -p 1 -run '^$$' -bench '^BenchmarkFloor' -count $(BENCHCOUNT)" $$pkgs; \
		$(GO) test -p 1 -run '^$$' -bench '^BenchmarkFloor' -count $(BENCHCOUNT) -timeout 60m $$pkgs 2>&1 | tee $(BENCH_OUT)
	$(GO) run ./cmd/benchreport $(BENCH_OUT)

clean:
	rm -rf bin

# Developer and CI entry points. Run `make test` on a fresh clone; it needs only python3.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: venv chromium redis clients lite-venv lite test lab bench lint clean

venv: $(STAMP)

# Reinstall only when requirements.txt changes.
$(STAMP): requirements.txt
	@test -x $(BIN)/python || { echo "venv: creating $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@$(BIN)/python tools/pip_install.py requirements.txt
	@touch $@

# Browser tests use Debian's chromium. Never fails: without it those tests skip.
chromium:
	@if command -v chromium >/dev/null 2>&1; then \
	  echo "chromium: $$(command -v chromium)"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "chromium missing: installing it with apt-get (about 30 s)"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
	    || echo "WARNING: apt-get could not install chromium; browser tests will be skipped."; \
	else \
	  echo "WARNING: chromium is not installed and cannot be installed here (needs root and apt-get)."; \
	  echo "         Install it (Debian: apt-get install chromium); browser tests will be skipped."; \
	fi

# The fleet tests of `serve --http --spent-states redis://...` (tests/http) start Debian's
# redis-server on 127.0.0.1 themselves. Never fails: without it those tests skip (under CI=true
# they fail instead).
redis:
	@if command -v redis-server >/dev/null 2>&1; then \
	  echo "redis-server: $$(command -v redis-server)"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "redis-server missing: installing it with apt-get"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends redis-server) \
	    || echo "WARNING: apt-get could not install redis-server; the Redis tests will be skipped."; \
	else \
	  echo "WARNING: redis-server is not installed and cannot be installed here (needs root and apt-get)."; \
	  echo "         Install it (Debian: apt-get install redis-server); the Redis tests will be skipped."; \
	fi

# Node packages pinned by package-lock.json, each folder with the Node it needs (the npm package
# `node`, 22.x): tests/clients (TypeScript SDK, MCP Inspector), tests/conformance (the official
# MCP conformance suite) and tests/hub (JupyterHub's proxy, configurable-http-proxy, for the
# real-hub test). Without Node.js/npm it only warns (those tests skip; under CI=true they
# fail instead).
CLIENTS := tests/clients
CONFORMANCE := tests/conformance
HUB_PROXY := tests/hub
NODE_DIRS := $(CLIENTS) $(CONFORMANCE) $(HUB_PROXY)
clients:
	@if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then \
	  echo "WARNING: node/npm not found: the tests in $(NODE_DIRS) will be skipped."; \
	else \
	  for dir in $(NODE_DIRS); do \
	    if [ -f $$dir/node_modules/.installed ] && \
	       [ ! $$dir/package-lock.json -nt $$dir/node_modules/.installed ]; then \
	      echo "clients: $$dir/node_modules is up to date"; \
	    else \
	      echo "clients: npm ci in $$dir"; \
	      (cd $$dir && npm ci --no-audit --no-fund --loglevel=error) \
	        && touch $$dir/node_modules/.installed || exit 1; \
	    fi; \
	  done; \
	fi

# JupyterLite edition (editions/lite/README.md): build tools in their own venv (never in .venv), a
# static site from pinned packages, built from the student edition (LITE_FROM; in the
# instructors' source `make release` makes it first). LITE_CONTENT: a ready content folder
# instead; LITE_OUT: the site folder.
LITE_VENV  := .venv-lite
LITE_STAMP := $(LITE_VENV)/.installed
LITE_OUT   ?= build/lite
LITE_CONTENT ?=
LITE_FROM  ?= $(if $(wildcard editions/release/build.py),build/release/student,.)

lite-venv: $(LITE_STAMP)

$(LITE_STAMP): editions/lite/requirements-lite.txt
	@test -x $(LITE_VENV)/bin/python || $(PYTHON) -m venv $(LITE_VENV)
	$(LITE_VENV)/bin/python -m pip install -q -r editions/lite/requirements-lite.txt
	@touch $@

lite: lite-venv
	@if [ -z "$(LITE_CONTENT)" ] && [ "$(LITE_FROM)" = build/release/student ]; then \
	  $(MAKE) --no-print-directory release; fi
	$(LITE_VENV)/bin/python editions/lite/build.py --out $(LITE_OUT) \
	  $(if $(LITE_CONTENT),--content $(LITE_CONTENT),--from $(LITE_FROM))

# Rendered edition (editions/rendered/build.py): static HTML pages from an unattended run of the
# student edition's notebooks (LESSON_USER=scripted), readable offline; RENDERED_OUT: the folder.
RENDERED_OUT  ?= build/rendered
RENDERED_FROM ?= $(if $(wildcard editions/release/build.py),build/release/student,.)
.PHONY: rendered
rendered: venv
	@if [ "$(RENDERED_FROM)" = build/release/student ]; then \
	  $(MAKE) --no-print-directory release; fi
	LESSON_USER=scripted $(BIN)/python editions/rendered/build.py --from $(RENDERED_FROM) --out $(RENDERED_OUT)

# The two editions (PROFESORADO.md, «Las ediciones»): build/release/student/ (a git repository
# learners clone) and build/release/autograder.zip (Gradescope), with a leak check.
.PHONY: release
release:
	@test -f editions/release/build.py || { echo "make release: only in the instructors' source"; exit 2; }
	$(PYTHON) editions/release/build.py

# The whole suite as groups of pytest processes run side by side, each group's duration (wall
# and CPU) in one summary (tools/run_tests.py; TEST_ARGS: e.g. "--jobs 1" or "--only grader").
# PYTEST_ARGS instead runs one plain pytest with them, e.g. PYTEST_ARGS="tests/notes_server -k fuzz".
# exec: a SIGTERM that make passes on reaches the runner, which stops every group by PID.
# The lint `make test` runs is tools/lint_course.py: in a learner's clone it checks the lesson
# notebooks as committed, never the cells the learner typed there (`make lint` checks all).
test: venv chromium redis clients lite-venv lint-course
	exec env LESSON_USER=scripted $(BIN)/python \
	  $(if $(strip $(PYTEST_ARGS)),-m pytest $(PYTEST_ARGS),tools/run_tests.py $(TEST_ARGS))

lab: venv
	$(BIN)/jupyter lab --ServerApp.root_dir=lessons $(ROOT_FLAG)

# The seven speed goals in one run, side by side (benchmarks/__main__.py): the demo, grading a class,
# Gradescope's latency, serve (stdio and --http), JupyterLite and the check loop, each against a baseline measured in
# the same run. Exit 1 names every missed goal and its cause. BENCH_ARGS: e.g. "--only demo,serve"
# or "--full-lite".
bench: venv lite-venv
	$(BIN)/python -m benchmarks $(BENCH_ARGS)

# Mutation benchmark (benchmarks/mutation/mutants.py): slow, one mutant at a time at the lowest
# priority, never part of `make test`; exits 1 while a surviving mutant is unexplained.
.PHONY: mutants
MUTANTS_STAMP := $(VENV)/.mutants-installed
$(MUTANTS_STAMP): $(STAMP) benchmarks/mutation/requirements.txt
	$(BIN)/python -m pip install -q -c requirements.txt -r benchmarks/mutation/requirements.txt
	@touch $@

mutants: $(MUTANTS_STAMP)
	nice -n 19 $(BIN)/python benchmarks/mutation/mutants.py $(MUTANTS_ARGS)

# Stress check (tools/stress.py), never part of `make test`: the browser suites (tests/browser,
# tests/lite) must pass while the machine is kept busy by CPU burners the harness starts and
# stops by PID (one per core), 3 rounds in a row, in this tree and (instructors' source only)
# in a git clone of the student edition that release/build.py makes in a temporary folder.
# Stops at the first failing run (exit 1); one line per run, pytest's output in build/stress/.
# STRESS_ARGS: e.g. "--rounds 5 --burners 4 --editions student".
# `make stress-full` runs `CI=true make test` itself (set-up, lint, the whole suite) instead,
# in a git clone of HEAD and in the student clone, each building its own environments: the
# done-means of issue 23; about 3 x (35 + 15) minutes of busy machine on 2 cores.
.PHONY: stress stress-full
stress: venv chromium clients lite-venv
	$(BIN)/python tools/stress.py $(STRESS_ARGS)

stress-full:
	$(PYTHON) tools/stress.py --make-test $(STRESS_ARGS)

# --no-cache: a cached verdict hid an import order that depends on build/ existing (isort
# counts a top-level folder as first-party), so a second `make test` in one tree failed here.
# tools/check_hints.py: every callable of the learner's API (its LEARNER_API) keeps its type
# hints, so an editor completes `ctx.`, `page.`, `binding.`...; lint-course runs it too.
lint: venv
	$(BIN)/ruff check --no-cache .
	$(BIN)/python tools/check_hints.py

.PHONY: lint-course
lint-course: venv
	$(BIN)/python tools/lint_course.py

clean:
	rm -rf $(VENV) tests/artifacts .pytest_cache .ruff_cache $(CLIENTS)/node_modules \
	  $(CONFORMANCE)/node_modules $(HUB_PROXY)/node_modules build/hub-env
	rm -rf $(LITE_VENV) build/lite build/lite-test build/lite-cache build/.lite*.fingerprint
	find . -name __pycache__ -type d -not -path './.git/*' -prune -exec rm -rf {} +

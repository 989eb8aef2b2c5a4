# The two commands: `make run` (set up and start the portal) and `make test` (set up and run
# every test). Everything either needs is installed from here.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
PG_URL     ?= postgres://postgres@127.0.0.1:5432/jaxbench
REDIS_URL  ?= redis://127.0.0.1:6379/15
AMQP_URL   ?= amqp://guest:guest@127.0.0.1:5672/%2F

.PHONY: run test setup venv venv-test venv-gpu system-deps lint format typecheck test-embedded test-embedded-fast test-embedded-integration test-heavy test-alone test-side-by-side test-postgres test-postgres-redis test-postgres-rabbitmq demo bench clean

# Every install step prints what it installs, pip's progress bars and the time it took
# (.ci/pip_install.py); the times quoted were measured on 2 cores with a fast package mirror.
INSTALL := $(PYTHON) .ci/pip_install.py --python $(PY)

$(VENV)/.runtime: requirements.txt
	@test -x $(PY) || { echo "[install] creating the virtual environment $(VENV)/"; $(PYTHON) -m venv $(VENV); }
	@$(INSTALL) --step "runtime 1/3" --what "pip itself" --about "a few seconds" -- --upgrade pip
	@$(INSTALL) --step "runtime 2/3" --what "the runtime: Django, Dramatiq, gunicorn, JAX, jaxlib, numpy, ... (requirements.txt)" \
	  --about "about 25 s with a fast package mirror; jaxlib alone is an 85 MB download" -- -r requirements.txt
	@# the harness as its own package (the `jaxbench` command); no build download: setuptools is pinned above
	@$(INSTALL) --step "runtime 3/3" --what "the harness package (pip install -e .)" --about "about 1 s" -- \
	  --no-deps --no-build-isolation -e .
	@touch $@

$(VENV)/.test: requirements-test.txt $(VENV)/.runtime
	@$(INSTALL) --step "test 1/1" --what "the test packages: pytest, Playwright's driver, CPU PyTorch, schemathesis, ruff, mypy, ... (requirements-test.txt)" \
	  --about "about 25 s with a fast package mirror; the CPU PyTorch wheel is 190 MB" -- -r requirements-test.txt
	@touch $@

venv: $(VENV)/.runtime
venv-test: $(VENV)/.test

# GPU hosts: the runtime plus JAX's CUDA plugin (requirements-gpu.txt); never part of `make test`
$(VENV)/.gpu: requirements-gpu.txt $(VENV)/.runtime
	@$(INSTALL) --step "gpu 1/1" --what "JAX's CUDA plugin with the CUDA libraries (requirements-gpu.txt)" \
	  --about "several minutes: about 3 GB of NVIDIA wheels" -- -r requirements-gpu.txt
	@touch $@

venv-gpu: $(VENV)/.gpu

# One process sets up (migrate, sync_registry, collectstatic, ensure_admin), a line and a time
# each; runportal does the same itself, loading the registry beside the starting web server.
setup: venv
	@$(PY) manage.py setup_portal

# make run RUN_ARGS=--quick-demo: the first run's demo without the expert sweeps
run: venv
	@$(PY) manage.py runportal $(RUN_ARGS)

# The demo needs a running worker (make run starts one, and this demo, on its first run).
demo: setup
	@$(PY) manage.py demo $(DEMO_ARGS)

system-deps:
	@bash .ci/system-deps.sh

test: venv-test system-deps
	$(MAKE) --no-print-directory lint typecheck test-embedded-fast test-side-by-side test-alone

# Lint and types run first: they take seconds and fail before the long tests start.
lint: venv-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports .importlinter

format: venv-test
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

typecheck: venv-test
	$(BIN)/mypy

# Every test that can share the machine runs on both cores (the heavy kernel checks too); the
# integration, browser and heavy tests beside the production configurations' (test-side-by-side);
# the whole corpus through a worker by itself.
test-embedded: test-embedded-fast test-embedded-integration test-heavy test-alone

test-embedded-fast:
	@echo "== tests: embedded (SQLite + embedded Redis), on both cores =="
	$(PY) -m pytest -m "not integration and not browser and not heavy and not alone" -n 2 --dist loadfile --durations=15

test-embedded-integration:
	@echo "== tests: embedded (SQLite + embedded Redis), integration and browser tests =="
	$(PY) -m pytest -m "(integration or browser) and not heavy and not alone" --durations=15

# The tests that start their own worker, portal or fresh clone (a level-2 trace, `make run`,
# runportal, a benchmark), with their own var dir (database, embedded Redis): each keeps about
# one core busy, so they run beside the integration tiers (test-side-by-side), whose workers
# leave a core idle while they wait on brokers, databases and outages.
test-heavy:
	@echo "== tests: embedded (SQLite + embedded Redis), heavy =="
	JAXBENCH_VAR_DIR=$(CURDIR)/var/test-heavy $(PY) -m pytest -m heavy --durations=15

# The whole red-team corpus through one worker (two threads, both cores): by itself, after
# everything else.
test-alone:
	@echo "== tests: embedded (SQLite + embedded Redis), alone =="
	$(PY) -m pytest -m alone --durations=15

# The three configurations' integration tests and the heavy tests side by side (each its own
# database, broker and var dir): their workers wait on brokers, databases and children as much
# as they compute, and a verdict must not depend on the load the others add.
test-side-by-side:
	@$(MAKE) --no-print-directory -j4 --output-sync=target test-embedded-integration test-postgres-redis test-postgres-rabbitmq test-heavy

# The two production configurations side by side (each its own database and var dir; their
# brokers are separate services): their workers wait on brokers and databases as much as they
# compute, and a verdict must not depend on the load the other adds.
test-postgres:
	@$(MAKE) --no-print-directory -j2 --output-sync=target test-postgres-redis test-postgres-rabbitmq

test-postgres-redis:
	@echo "== integration tests: PostgreSQL + Redis =="
	JAXBENCH_VARIANT=postgres-redis DATABASE_URL=$(PG_URL)_redis DRAMATIQ_BROKER_URL=$(REDIS_URL) \
	  JAXBENCH_VAR_DIR=$(CURDIR)/var/test-postgres-redis $(PY) -m pytest -m integration --durations=10

test-postgres-rabbitmq:
	@echo "== integration tests: PostgreSQL + RabbitMQ =="
	JAXBENCH_VARIANT=postgres-rabbitmq DATABASE_URL=$(PG_URL)_rabbitmq DRAMATIQ_BROKER_URL=$(AMQP_URL) \
	  JAXBENCH_VAR_DIR=$(CURDIR)/var/test-postgres-rabbitmq $(PY) -m pytest -m integration --durations=10

bench: venv-test
	$(PY) benchmarks/workloads_small.py
	$(PY) benchmarks/harness_overhead.py
	$(PY) benchmarks/trace_upload.py

clean:
	rm -rf $(VENV) var/staticfiles

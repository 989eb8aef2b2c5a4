# The two commands: `make run` (set up and start the portal) and `make test` (set up and run
# every test). Everything either needs is installed from here.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
PG_URL     ?= postgres://postgres@127.0.0.1:5432/jaxbench
REDIS_URL  ?= redis://127.0.0.1:6379/15
AMQP_URL   ?= amqp://guest:guest@127.0.0.1:5672/%2F

.PHONY: run test setup venv venv-test venv-gpu system-deps lint format typecheck test-embedded test-postgres-redis test-postgres-rabbitmq demo bench clean

$(VENV)/.runtime: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	# the harness as its own package (the `jaxbench` command); no build download: setuptools is pinned above
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $@

$(VENV)/.test: requirements-test.txt $(VENV)/.runtime
	$(PY) -m pip install -q -r requirements-test.txt
	touch $@

venv: $(VENV)/.runtime
venv-test: $(VENV)/.test

# GPU hosts: the runtime plus JAX's CUDA plugin (requirements-gpu.txt); never part of `make test`
$(VENV)/.gpu: requirements-gpu.txt $(VENV)/.runtime
	$(PY) -m pip install -q -r requirements-gpu.txt
	touch $@

venv-gpu: $(VENV)/.gpu

setup: venv
	$(PY) manage.py migrate --noinput -v0
	$(PY) manage.py sync_registry
	$(PY) manage.py collectstatic --noinput -v0
	$(PY) manage.py ensure_admin

run: setup
	$(PY) manage.py runportal

demo: setup
	$(PY) manage.py demo

system-deps:
	@bash .ci/system-deps.sh

test: venv-test system-deps
	$(MAKE) --no-print-directory lint typecheck test-embedded test-postgres-redis test-postgres-rabbitmq

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

# Every test that can share the machine runs on both cores (the heavy kernel checks too); tests
# that start workers, a browser, a fresh clone or the whole corpus run by themselves.
test-embedded:
	@echo "== tests: embedded (SQLite + embedded Redis), on both cores =="
	$(PY) -m pytest -m "not integration and not browser and not alone" -n 2 --dist loadfile
	@echo "== tests: embedded (SQLite + embedded Redis), integration, browser and alone tests =="
	$(PY) -m pytest -m "integration or browser or alone"

test-postgres-redis:
	@echo "== integration tests: PostgreSQL + Redis =="
	JAXBENCH_VARIANT=postgres-redis DATABASE_URL=$(PG_URL) DRAMATIQ_BROKER_URL=$(REDIS_URL) \
	  $(PY) -m pytest -m integration

test-postgres-rabbitmq:
	@echo "== integration tests: PostgreSQL + RabbitMQ =="
	JAXBENCH_VARIANT=postgres-rabbitmq DATABASE_URL=$(PG_URL) DRAMATIQ_BROKER_URL=$(AMQP_URL) \
	  $(PY) -m pytest -m integration

bench: venv-test
	$(PY) benchmarks/workloads_small.py
	$(PY) benchmarks/harness_overhead.py
	$(PY) benchmarks/trace_upload.py

clean:
	rm -rf $(VENV) var/staticfiles

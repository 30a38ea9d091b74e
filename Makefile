# Two commands do all the set-up on a fresh machine: `make demo` and `make test`.
# Each creates .venv and installs what it needs (the native core is compiled by pip).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.ciyuan-installed

.PHONY: demo test test-fast check bench install clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Reinstall whenever a source of the package changes.
$(STAMP): $(PY) pyproject.toml CMakeLists.txt $(shell find cpp src -type f \( -name '*.cc' -o -name '*.h' -o -name '*.py' \) 2>/dev/null)
	$(PY) -m pip install --quiet scikit-build-core nanobind setuptools wheel
	$(PY) -m pip install --quiet --no-build-isolation ".[test]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m ciyuan.demo

# The architecture's checks: lint, import contracts (layers, no cycles), types of the installed package.
check: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks scripts
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy -p ciyuan

test: check
	$(PY) -m pytest -q tests

test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow" tests

bench: $(STAMP)
	$(PY) benchmarks/encode.py

clean:
	rm -rf $(VENV) build dist .pytest_cache .hypothesis

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
	# megatron-core's IndexedDataset reads the Megatron shards in tests/datasets/test_megatron_core.py;
	# --no-deps: its torch requirement is gigabytes of CUDA wheels, and reading an index needs none of it.
	$(PY) -m pip install --quiet --no-deps "megatron-core==0.16.1"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m ciyuan.demo

# The architecture's checks: lint, import contracts (layers, no cycles), types of the installed package.
check: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks scripts
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy -p ciyuan

# tokenizers 1.0 (a pre-release) in a virtual environment of its own, beside the 0.2x of the test
# extra: tests/formats/test_hf_json_tokenizers1.py loads ciyuan's tokenizer.json files in it.
TOK1 := build/tokenizers1-venv
$(TOK1)/.installed:
	$(PYTHON) -m venv $(TOK1)
	$(TOK1)/bin/pip install --quiet --pre "tokenizers>=1.0.0rc1,<1.1"
	touch $@

test: check $(TOK1)/.installed
	CIYUAN_TOKENIZERS1_PYTHON=$(abspath $(TOK1))/bin/python $(PY) -m pytest -q -n auto --dist loadfile --durations=20 tests

test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow" tests

bench: $(STAMP)
	$(PY) benchmarks/encode.py

clean:
	rm -rf $(VENV) build dist .pytest_cache .hypothesis

# Two commands do all the set-up on a fresh machine: `make demo` and `make test`.
# Each creates .venv and installs what it needs (the native core is compiled by pip).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.ciyuan-installed

.PHONY: demo test test-fast check bench install clean sanitize sanitize-install fuzz fuzz-merge fuzz-regress

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Reinstall whenever a source of the package changes.
$(STAMP): $(PY) pyproject.toml CMakeLists.txt $(shell find cpp src -type f \( -name '*.cc' -o -name '*.h' -o -name '*.py' \) 2>/dev/null)
	$(PY) -m pip install --quiet scikit-build-core nanobind setuptools wheel
	$(PY) -m pip install --quiet --no-build-isolation ".[test]"
	# megatron-core's IndexedDataset, on real PyTorch, reads the Megatron shards in
	# tests/datasets/test_megatron_core.py. torch==2.13.0 is the CPU build this machine keeps on disk
	# (machines/python-native.md): pinned in the same command, so megatron-core's torch>=2.6 takes it
	# and not PyPI's CUDA build (gigabytes). Adds about 35 s to a fresh install.
	$(PY) -m pip install --quiet "torch==2.13.0" "megatron-core==0.16.1"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m ciyuan.demo

# The architecture's checks: lint, import contracts (layers, no cycles), types of the installed package.
check: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks scripts fuzz
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

# ---- Reliability: the sanitized build and the fuzz targets (docs/reliability.md, "## Fuzzing") ----
# `make sanitize` builds the native core with AddressSanitizer + UndefinedBehaviorSanitizer (GCC)
# into a venv of its own, build/sanitize-venv, which sees the main venv's packages through a .pth
# line (so no second copy of the test dependencies), and runs the test suite against it. The
# interpreter is not instrumented, so the ASan runtime is preloaded; leak checking is off (CPython
# frees little at exit) and any UBSan report aborts the test run.
SAN_VENV   := build/sanitize-venv
SAN_PY     := $(SAN_VENV)/bin/python
SAN_STAMP  := $(SAN_VENV)/.ciyuan-installed
SAN_FLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# libstdc++ is preloaded with the runtime: CPython does not link it, and ASan's interceptor of
# __cxa_throw must find the real one at start-up (else the first C++ exception aborts).
SAN_ENV    := LD_PRELOAD="$$($(CXX) -print-file-name=libasan.so) $$($(CXX) -print-file-name=libstdc++.so)" \
              ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:abort_on_error=1:strict_string_checks=1 \
              UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 CIYUAN_SANITIZED=1
SAN_SITE   = $$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

$(SAN_STAMP): $(STAMP)
	$(PYTHON) -m venv $(SAN_VENV)
	echo "$(SAN_SITE)" > "$$($(SAN_PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/ciyuan-main-venv.pth"
	# The build imports the module (nanobind's stub generator), hence the preloaded runtime here too.
	$(SAN_ENV) $(SAN_PY) -m pip install --quiet --no-build-isolation --no-deps \
	  -C build-dir=build/sanitize -C cmake.build-type=RelWithDebInfo \
	  -C cmake.define.CMAKE_CXX_FLAGS="$(SAN_FLAGS)" \
	  -C cmake.define.CMAKE_SHARED_LINKER_FLAGS="$(SAN_FLAGS)" .
	touch $(SAN_STAMP)

sanitize-install: $(SAN_STAMP)

sanitize: $(SAN_STAMP) $(TOK1)/.installed
	$(SAN_ENV) $(SAN_PY) -c 'import ciyuan._core, sys; assert "sanitize-venv" in ciyuan._core.__file__, ciyuan._core.__file__'
	$(SAN_ENV) CIYUAN_TOKENIZERS1_PYTHON=$(abspath $(TOK1))/bin/python \
	  $(SAN_PY) -m pytest -q -n auto --dist loadfile --durations=20 $(or $(TESTS),tests)

# Fuzz targets (fuzz/README.md). C++ harnesses in fuzz/cpp/*.cc call the core directly;
# Python ones in fuzz/py/*.py (atheris) call ciyuan's entry points, on the sanitized build.
#   make fuzz TARGET=bpe SECONDS=600     libFuzzer (clang, ASan+UBSan) or atheris, at nice 19;
#                                        new inputs land in build/fuzz/corpus/TARGET, crashes in
#                                        build/fuzz/crashes/TARGET
#   make fuzz-merge TARGET=bpe           the working corpus minimized into tests/fuzz_corpus/TARGET
#   make fuzz-regress                    every target's tests/fuzz_corpus/ replayed under GCC's
#                                        sanitizers (no libFuzzer needed: CI runs this)
FUZZ_CPP      := $(filter-out standalone_main,$(basename $(notdir $(wildcard fuzz/cpp/*.cc))))
FUZZ_PY       := $(basename $(notdir $(wildcard fuzz/py/fuzz_*.py)))
CORE_SRCS     := $(wildcard cpp/src/*.cc cpp/src/generated/*.cc)
CORE_DEPS     := $(wildcard cpp/include/ciyuan/*.h cpp/src/*.h cpp/src/*.inc) fuzz/cpp/fuzz_input.h
FUZZ_CLANG    ?= $(shell command -v clang++-14 || command -v clang++)
LF_DIR        := build/fuzz/libfuzzer
RG_DIR        := build/fuzz/regress
LF_FLAGS      := -std=c++17 -O1 -g -fno-omit-frame-pointer -Icpp/include -fsanitize=address,undefined \
                 -fno-sanitize-recover=undefined
RG_FLAGS      := -std=c++17 -O1 -g -fno-omit-frame-pointer -Icpp/include -fsanitize=address,undefined \
                 -fno-sanitize-recover=undefined
FUZZ_ENV      := ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:abort_on_error=1 \
                 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
TARGET        ?= bpe
LF_OBJS       := $(patsubst cpp/src/%.cc,$(LF_DIR)/core/%.o,$(CORE_SRCS))
RG_OBJS       := $(patsubst cpp/src/%.cc,$(RG_DIR)/core/%.o,$(CORE_SRCS))
# Keep the core's objects between targets (make would delete them as intermediates).
.SECONDARY: $(LF_OBJS) $(RG_OBJS)
SECONDS       ?= 60

$(LF_DIR)/core/%.o: cpp/src/%.cc $(CORE_DEPS)
	@mkdir -p $(@D)
	nice -n 15 $(FUZZ_CLANG) $(LF_FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
$(LF_DIR)/%: fuzz/cpp/%.cc $(LF_OBJS)
	nice -n 15 $(FUZZ_CLANG) $(LF_FLAGS) -fsanitize=fuzzer $^ -lpthread -o $@
$(RG_DIR)/core/%.o: cpp/src/%.cc $(CORE_DEPS)
	@mkdir -p $(@D)
	nice -n 15 $(CXX) $(RG_FLAGS) -c $< -o $@
$(RG_DIR)/%: fuzz/cpp/%.cc fuzz/cpp/standalone_main.cc $(RG_OBJS)
	nice -n 15 $(CXX) $(RG_FLAGS) $^ -lpthread -o $@

fuzz:
	@mkdir -p build/fuzz/corpus/$(TARGET) build/fuzz/crashes/$(TARGET) tests/fuzz_corpus/$(TARGET)
ifneq ($(filter $(TARGET),$(FUZZ_CPP)),)
	@test -n "$(FUZZ_CLANG)" || { echo "make fuzz needs clang and libFuzzer: apt-get install clang-14 libclang-rt-14-dev"; exit 1; }
	$(MAKE) $(LF_DIR)/$(TARGET)
	$(FUZZ_ENV) nice -n 19 $(LF_DIR)/$(TARGET) -max_total_time=$(SECONDS) -max_len=4096 -timeout=20 -rss_limit_mb=4096 \
	  -artifact_prefix=build/fuzz/crashes/$(TARGET)/ -print_final_stats=1 \
	  build/fuzz/corpus/$(TARGET) tests/fuzz_corpus/$(TARGET)
else ifneq ($(filter fuzz_$(TARGET),$(FUZZ_PY)),)
	# atheris runs on the ordinary build: GCC's preloaded ASan runtime would take over the coverage
	# hooks atheris feeds libFuzzer with (no input would ever look new). What it finds is then
	# replayed on the sanitized build, where the native core's memory errors show.
	$(MAKE) sanitize-install
	$(PY) -c 'import atheris' 2>/dev/null || $(PY) -m pip install --quiet atheris
	nice -n 19 $(PY) fuzz/py/fuzz_$(TARGET).py -max_total_time=$(SECONDS) -max_len=4096 -timeout=20 \
	  -rss_limit_mb=4096 -artifact_prefix=build/fuzz/crashes/$(TARGET)/ -print_final_stats=1 \
	  build/fuzz/corpus/$(TARGET) tests/fuzz_corpus/$(TARGET)
	$(SAN_ENV) nice -n 19 $(SAN_PY) fuzz/py/replay.py --dir build/fuzz/corpus/$(TARGET) $(TARGET)
else
	@echo "unknown TARGET=$(TARGET); C++ targets: $(FUZZ_CPP); Python targets: $(patsubst fuzz_%,%,$(FUZZ_PY))"; exit 1
endif

fuzz-merge:
	@mkdir -p tests/fuzz_corpus/$(TARGET)
ifneq ($(filter $(TARGET),$(FUZZ_CPP)),)
	$(MAKE) $(LF_DIR)/$(TARGET)
	$(FUZZ_ENV) nice -n 19 $(LF_DIR)/$(TARGET) -merge=1 -max_len=4096 tests/fuzz_corpus/$(TARGET) build/fuzz/corpus/$(TARGET)
else
	# libFuzzer's -merge re-executes argv[0], which a Python script run by .venv's interpreter is
	# not; atheris keeps only inputs that added coverage anyway, so they are copied as they are.
	cp -n build/fuzz/corpus/$(TARGET)/* tests/fuzz_corpus/$(TARGET)/
endif

fuzz-regress: $(SAN_STAMP) $(addprefix $(RG_DIR)/,$(FUZZ_CPP))
	@set -e; for t in $(FUZZ_CPP); do \
	  echo "== $$t"; $(FUZZ_ENV) $(RG_DIR)/$$t tests/fuzz_corpus/$$t; done
	$(SAN_ENV) $(SAN_PY) fuzz/py/replay.py $(patsubst fuzz_%,%,$(FUZZ_PY))

clean:
	rm -rf $(VENV) build dist .pytest_cache .hypothesis

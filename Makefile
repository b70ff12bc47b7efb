# jupyter_fuse — build skeleton.  `make test` and `make demo` are all you need.

PYTHON      ?= python3
VENV        := .venv
PY          := $(VENV)/bin/python
STAMP       := $(VENV)/.installed
# The JupyterLab extension: rebuilt only when its sources change, linked into the venv.
LABEXT_SRC   := $(shell find labextension/src labextension/style -type f -not -path '*/__tests__/*' 2>/dev/null) \
                labextension/package.json labextension/package-lock.json labextension/tsconfig.json
LABEXT_OUT   := jupyter_fuse/labextension/package.json
LABEXT_STAMP := $(VENV)/.labextension
PYTEST_ARGS ?=
# Test files run in parallel, one worker per core up to 4 (numba compiles on one core: on a clean clone,
# with no kernel cached, the suite took 18 minutes on 2 cores in one process); each file stays in one worker.
JOBS        ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 4 ] && n=4; echo $$n)

# On CI, tests pick the "ci" hypothesis profile (the tests register it).
ifdef CI
export HYPOTHESIS_PROFILE ?= ci
endif

.PHONY: install test demo clean chromium cxx bytecode

install: $(STAMP) $(LABEXT_STAMP) cxx bytecode

# The package's bytecode, written once per change of its sources: where PYTHONDONTWRITEBYTECODE is set
# (these machines set it) Python never writes it, and every new process compiled the ~45 modules again,
# 0.1 s of each first run of a cell. Python reads it whatever the variable says (up to date in ~40 ms).
bytecode: | $(STAMP)
	@$(PY) -m compileall -q jupyter_fuse

# Create the venv once; reinstall only when pyproject.toml changes.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -e '.[test]'
	touch $@

# Build the extension (npm ci + tsc + JupyterLab's builder; see labextension/build.py).
$(LABEXT_OUT): $(LABEXT_SRC) | $(STAMP)
	PATH="$(abspath $(VENV)/bin):$$PATH" $(PY) labextension/build.py --force

# Editable install: link the built extension where `jupyter labextension list` finds it.
$(LABEXT_STAMP): $(LABEXT_OUT)
	@d=$(VENV)/share/jupyter/labextensions/jupyter-fuse; mkdir -p $$(dirname $$d); \
	  if [ -d $$d ] && [ ! -L $$d ]; then rm -rf $$d; fi; ln -sfn $(abspath jupyter_fuse/labextension) $$d
	touch $@

# The browser tests drive Debian's chromium; install it once when it is missing.
chromium:
	@test -x /usr/bin/chromium || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } \
	  || echo "chromium could not be installed: the browser tests will skip"

# `--emulate` compiles CUDA kernels with the host C++ compiler; install g++ once when it is missing.
cxx:
	@command -v $${CXX:-g++} >/dev/null || { apt-get update -qq && apt-get install -y -qq g++ >/dev/null; } \
	  || echo "g++ could not be installed: --emulate (and its tests) need a C++ compiler"

# Run every test (no GPU needed; gpu-marked tests skip themselves).
test: install chromium
	$(PY) -m pytest -q -p no:cacheprovider -n $(JOBS) --dist loadfile tests $(PYTEST_ARGS)

# Execute demo_notebooks/*.ipynb and write HTML reports to build/demo/.
demo: install
	$(PY) -m jupyter_fuse.demo

clean:
	rm -rf build $(VENV)

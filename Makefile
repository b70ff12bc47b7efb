# jupyter_fuse — build skeleton.  `make test` and `make demo` are all you need.

PYTHON      ?= python3
VENV        := .venv
PY          := $(VENV)/bin/python
STAMP       := $(VENV)/.installed
PYTEST_ARGS ?=

# On CI, tests pick the "ci" hypothesis profile (the tests register it).
ifdef CI
export HYPOTHESIS_PROFILE ?= ci
endif

.PHONY: install test demo clean

install: $(STAMP)

# Create the venv once; reinstall only when pyproject.toml changes.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -e '.[test]'
	touch $@

# Run every test (no GPU needed; gpu-marked tests skip themselves).
test: install
	$(PY) -m pytest -q -p no:cacheprovider tests $(PYTEST_ARGS)

# Execute demo_notebooks/*.ipynb and write HTML reports to build/demo/.
demo: install
	$(PY) -m jupyter_fuse.demo

clean:
	rm -rf build $(VENV)

"""Shared test setup: hypothesis profiles and the differential harness on the path."""

from __future__ import annotations

import os
import sys

from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))
# a kernel that fails to render or compile is a test failure, not a quiet NumPy fallback
os.environ.setdefault("JUPYTER_FUSE_STRICT", "1")
# every kernel compiled where it first runs: the first run tests the compiled kernels (background
# compiles, jupyter_fuse/backends/compiler.py, have their own tests)
os.environ.setdefault("JUPYTER_FUSE_COMPILE", "sync")
# replays stay replays, however their times compare with NumPy's (tests/replay/test_plain.py turns it on)
os.environ.setdefault("JUPYTER_FUSE_PLAIN", "off")
# compiled kernels are cached inside the checkout (build/ is not tracked), not in the user's home
os.environ.setdefault("JUPYTER_FUSE_CACHE_DIR",
                      os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "kernel-cache"))  # `from harness import check` in every test folder

# "ci": few, reproducible examples (the whole suite stays within minutes on 2 cores);
# "dev": more examples, for hunting bugs locally.
settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=300, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

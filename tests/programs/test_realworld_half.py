"""The other half of bench/realworld.py's programs, checked as test_realworld.py checks its half (a file of
its own: the suite's two workers run a file each, ``--dist loadfile``)."""

from __future__ import annotations

import pytest
from test_realworld import _empty_plan_cache, half, replays_and_matches_numpy  # noqa: F401 - (a fixture)


@pytest.mark.parametrize("program", half(1), ids=lambda p: p.name)
def test_realworld_program_replays_and_matches_numpy(program, monkeypatch):
    replays_and_matches_numpy(program, monkeypatch)

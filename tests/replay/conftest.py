import pytest

from jupyter_fuse.cache import PLAN_CACHE


@pytest.fixture(autouse=True)
def empty_cache():
    PLAN_CACHE.clear()
    yield
    PLAN_CACHE.clear()

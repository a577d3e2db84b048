"""Real servers on loopback: `reward-api serve` in a subprocess, talked to over HTTP."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest

from reward_api.local import LocalServer

SANDBOX_TOKEN = "s3cret"  # guarded_sandbox's bearer token

# `make test` installs every language's toolchain (Makefile: LANGUAGES_STAMP); sandboxes and services started
# here serve them all unless a test says otherwise.
os.environ["SANDBOX_LANGUAGES"] = "all"
# Compiles kept for this run only (sandbox/compile_cache.py): what a test sees does not depend on earlier runs.
os.environ["SANDBOX_COMPILE_CACHE_DIR"] = tempfile.mkdtemp(prefix="compile-cache-")
atexit.register(shutil.rmtree, os.environ["SANDBOX_COMPILE_CACHE_DIR"], True)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """The service on its defaults, with a short deadline so pathological items end quickly."""
    with LocalServer(tmp_path_factory.mktemp("server"), REWARD_API_WORKERS="2", REWARD_API_ITEM_DEADLINE_S="3") as srv:
        yield srv


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """`sandbox serve` with two workers, for every module that sends it runs and changes nothing in it (a module
    that needs other settings has a `sandbox` of its own)."""
    with LocalServer.sandbox(tmp_path_factory.mktemp("sandbox"), SANDBOX_WORKERS="2") as server:
        yield server


@pytest.fixture(scope="session")
def guarded_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """`sandbox serve` with one worker, behind the bearer token SANDBOX_TOKEN."""
    settings = {"SANDBOX_WORKERS": "1", "SANDBOX_AUTH_TOKEN": SANDBOX_TOKEN}
    with LocalServer.sandbox(tmp_path_factory.mktemp("guarded"), **settings) as server:
        yield server

"""Runs untrusted programs against tests, isolated and bounded (README: "Sandbox")."""

import sys

if sys.version_info < (3, 11):  # noqa: UP036 - the client extra alone runs on 3.10 (pyproject.toml)
    raise ImportError(
        f"the reward service and its sandbox need Python 3.11 or newer, not {sys.version.split()[0]}: on 3.10, "
        "install only the client (pip install 'reward-service[client]') and run the service on 3.11"
    )

"""Tests that drive a trainer framework's own code, each framework in an environment of its own.

verl and OpenRLHF pin transformers, ray and torch versions that exclude each other's and the service's, so each
gets a virtual environment with its own pins (`tests/frameworks/NAME/requirements.txt` installed under
`constraints.txt`, `pip check` clean) plus this project's client (`reward-service[client]`), as a trainer's image
holds them. `make test` builds them in `.venv/frameworks/NAME` and runs `tests/frameworks/NAME/` there; the
service those tests start runs from `.venv`, the environment with its packages (`LOCAL_SERVER_PYTHON`), as a
service deployed apart from the trainer does. The main run does not collect this folder (pyproject.toml).
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def framework_python(name: str) -> Path:
    """The interpreter of framework `name`'s environment, which `make test` builds."""
    python = REPO / ".venv" / "frameworks" / name / "bin" / "python"
    if not python.exists():
        raise FileNotFoundError(f"{python} is missing: `make test` builds it (Makefile: FRAMEWORKS)")
    return python

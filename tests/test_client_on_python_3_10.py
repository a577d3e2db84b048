"""The client extra on Python 3.10, as many trainer images have it: `pip install '<checkout>[client]'` into a 3.10
virtual environment, then RewardClient, SyncRewardClient and each trainer adapter (TRL, verl, OpenRLHF, slime) grade
through the real service, which runs on 3.11. The service's own packages refuse 3.10 with a message saying so."""

from __future__ import annotations

import glob
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from reward_api.local import LocalServer

REPO = Path(__file__).resolve().parent.parent
# pyenv's 3.10 on these machines (its shim answers only where pyenv selects 3.10), else one on PATH
PYTHON_310 = next(iter(sorted(glob.glob("/root/.pyenv/versions/3.10.*/bin/python3.10"))), None) or shutil.which(
    "python3.10"
)

CLIENT_SCRIPT = """
import asyncio, json, sys
from types import SimpleNamespace

from trainer_client.adapters import openrlhf, slime, trl, verl
from trainer_client.client import RewardClient, SyncRewardClient

url = sys.argv[1]
item = {"task": "math", "reference": "4", "completion": "<think>two and two</think> \\\\boxed{4}"}
wrong = dict(item, completion="<think>two and two</think> \\\\boxed{5}")


async def graded():
    async with RewardClient(url) as client:
        return [result.reward for result in await client.submit([item, wrong])]


with SyncRewardClient(url) as client:
    sync = client.rewards([item, wrong])
rewards = {
    "async": asyncio.run(graded()),
    "sync": sync,
    "trl": trl.reward_function(reference_column="answer", urls=url)(
        prompts=["two and two?"], completions=[item["completion"]], answer=["4"]
    ),
    "verl": verl.compute_score_sync("gsm8k", item["completion"], "4", url=url)["score"],
    "openrlhf": openrlhf.reward_func([item["completion"]], ["two and two?"], ["4"])["rewards"],
}
sample = SimpleNamespace(prompt="two and two?", response=item["completion"], label="4")
rewards["slime"] = asyncio.run(slime.reward(SimpleNamespace(reward_service_url=url), sample))
print(json.dumps({"python": sys.version.split()[0], "rewards": rewards}))
"""


@pytest.fixture(scope="module")
def python_310(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 3.10 virtual environment with the client extra installed from a copy of this checkout's sources."""
    assert PYTHON_310, "no Python 3.10 interpreter: install one (pyenv install 3.10) to test the client on it"
    root = tmp_path_factory.mktemp("py310")
    source = root / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    for package in ("reward_api", "sandbox", "service_kit", "trainer_client"):
        shutil.copytree(REPO / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    venv = root / "venv"
    subprocess.run([PYTHON_310, "-m", "venv", str(venv)], check=True)
    install = [str(venv / "bin/pip"), "install", "--quiet", "--disable-pip-version-check", f"{source}[client]"]
    subprocess.run(install, check=True, timeout=600)
    return venv / "bin/python"


def test_the_client_and_every_adapter_grade_on_python_3_10(python_310: Path, server: LocalServer) -> None:
    ran = subprocess.run(
        [str(python_310), "-c", CLIENT_SCRIPT, server.url], capture_output=True, text=True, timeout=120,
        env={"REWARD_SERVICE_URL": server.url, "PATH": "/usr/bin:/bin"}, cwd=python_310.parent,  # not this checkout
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert report["python"].startswith("3.10.")
    right = 1.0
    assert report["rewards"] == {
        "async": [right, 0.0], "sync": [right, 0.0], "trl": [right], "verl": right, "openrlhf": [right],
        "slime": right,
    }  # fmt: skip


def test_the_service_refuses_python_3_10_saying_what_runs_there(python_310: Path) -> None:
    ran = subprocess.run(
        [str(python_310), "-c", "import sandbox"], capture_output=True, text=True, timeout=60, cwd=python_310.parent
    )
    assert ran.returncode != 0 and "need Python 3.11 or newer" in ran.stderr and "[client]" in ran.stderr

"""Hostile items against the real service on loopback: each test is a defect a load and
fault run found (issue 8), with the figure it must hold now.

The "slow" items here are sort items over hundreds of thousands of numbers: plain Python
work that burns a worker's CPU for seconds, as reliably as any hostile math answer.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from reward_api.grading import MAX_DETAIL_ITEMS, ItemJob, looks_costly
from reward_api.local import LocalServer
from reward_api.profiles import resolve_profile
from reward_api.schemas import MAX_REFERENCE_DEPTH
from tests.scrape import metric

DEADLINE_S = 2.0
CACHE_MB = 4


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory):
    settings = {
        "REWARD_API_WORKERS": "2",
        "REWARD_API_ITEM_DEADLINE_S": str(DEADLINE_S),
        "REWARD_API_CACHE_MB": str(CACHE_MB),
        "REWARD_API_SLOW_AFTER_S": "0.25",
    }
    with LocalServer(tmp_path_factory.mktemp("hostile"), **settings) as server:
        yield server


def math_item(i: int) -> dict:
    return {"task": "math", "completion": f"\\boxed{{{i}}}", "reference": str(i), "id": i}


def sort_item(n: int, seed: int) -> dict:
    """A correct sort answer over n numbers; about 1 s of CPU per 200,000."""
    numbers = random.Random(seed).sample(range(-10 * n, 10 * n), n)
    return {
        "task": "sort",
        "completion": " ".join(map(str, sorted(numbers))),
        "reference": " ".join(map(str, numbers)),
    }


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("task", "completion", "reference", "costly"),
    [
        ("math", "\\boxed{55}", "\\sum_{k=1}^{10} k", False),  # a short sum: ordinary
        ("math", "\\boxed{\\frac{x+1}{x^2-1}}", "\\frac{1}{x-1}", False),
        ("math", "\\boxed{1}", "\\sum_{k=0}^{999} x^k", True),
        ("math", "\\boxed{\\sum_{k=1}^{n} k}", "\\frac{n(n+1)}{2}", True),  # a symbolic bound
        ("math", "\\boxed{\\int x e^x dx}", "x e^x - e^x", True),
        ("math", "\\boxed{\\det(A)}", "0", True),
        ("math", "\\boxed{2^{1000}}", "1", True),
        ("math", "\\boxed{200!}", "1", True),
        ("math", "\\int reasoning far above ... " + "x " * 300 + "\\boxed{4}", "4", False),  # only the tail
        ("sort", "1 2 3", [3, 2, 1], False),
        ("sort", "1 " * 60_000, [1] * 60_000, True),  # a text too long to read fast
        ("code", "```python\nprint(sum(range(10**9)))\n```", {"tests": []}, False),  # its cost is the sandbox's
    ],
)
def test_items_that_look_costly_are_told_apart_before_grading(task, completion, reference, costly) -> None:
    job = ItemJob(task, completion, reference, None, None, ("accuracy",), resolve_profile("accuracy"))
    assert looks_costly(job) is costly


def test_a_deeply_nested_reference_is_one_invalid_item_on_every_endpoint(hostile_server) -> None:
    restarts = metric(hostile_server, "reward_worker_restarts_total")
    deep = nested(500)
    with hostile_server.client() as client:
        native = client.post("/v1/rewards", json={"items": [math_item(1), {**math_item(2), "reference": deep}]})
        openrlhf = client.post("/get_reward", json={"query": ["\\boxed{1}", "\\boxed{2}"], "labels": ["1", deep]})
        slime = client.post("/slime?reward_key=r", json={"prompt": "p", "response": "\\boxed{2}", "label": deep})
    assert native.status_code == openrlhf.status_code == slime.status_code == 200
    good, bad = native.json()["results"]
    assert good["status"] == "ok" and good["reward"] == 1.0
    assert bad["status"] == "invalid" and bad["id"] == 2
    assert "reference" in bad["details"]["reason"] and f"{MAX_REFERENCE_DEPTH} levels" in bad["details"]["reason"]
    assert openrlhf.json()["scores"] == [1.0, 0.0]
    assert slime.json()["status"] == "invalid"
    assert metric(hostile_server, "reward_worker_restarts_total") == restarts  # no worker was lost


def test_task_names_from_clients_do_not_grow_the_metrics(hostile_server) -> None:
    size_before = len(httpx.get(f"{hostile_server.url}/metrics").content)
    with hostile_server.client() as client:
        for batch in range(4):
            items = [{"task": f"made-up-{batch}-{i}", "completion": "x"} for i in range(500)]
            results = client.post("/v1/rewards", json={"items": items}).json()["results"]
            assert {r["status"] for r in results} == {"invalid"}
    page = httpx.get(f"{hostile_server.url}/metrics").text
    assert "made-up" not in page
    assert len(page.encode()) - size_before < 2_000  # 2,000 new task names, no new series
    assert metric(hostile_server, "reward_items_total", task="unknown", status="invalid") >= 2_000


def test_echoed_details_and_the_cache_are_bounded_in_bytes(hostile_server) -> None:
    with hostile_server.client() as client:
        for seed in range(12):  # 12 distinct answers of 30,000 numbers: ~2.4 MB each if echoed whole
            [result] = client.post("/v1/rewards", json={"items": [sort_item(30_000, seed)]}).json()["results"]
            assert result["status"] == "ok" and result["reward"] == 1.0
            echoed = result["details"]["accuracy"]["response"]
            assert len(echoed) == MAX_DETAIL_ITEMS + 1 and echoed[-1] == f"... {30_000 - MAX_DETAIL_ITEMS} more"
    assert 0 < metric(hostile_server, "reward_cache_bytes") <= CACHE_MB * 1024 * 1024
    assert metric(hostile_server, "reward_cache_entries") >= 1


async def _post(url: str, items: list[dict], timeout_s: float = 120) -> tuple[float, list[dict]]:
    async with httpx.AsyncClient(timeout=timeout_s) as client:
        response = await client.post(f"{url}/v1/rewards", json={"items": items})
        response.raise_for_status()
        return time.monotonic(), response.json()["results"]


def test_slow_items_wait_aside_and_normal_items_are_not_starved(hostile_server) -> None:
    """Four items that each burn the whole deadline, on two workers: without a lane of their own the
    normal batch would wait behind them; now it is answered while they still run."""
    slow_items = [sort_item(400_000, seed) for seed in range(100, 104)]  # texts this long look costly
    normal_items = [math_item(i) for i in range(1000, 1040)]

    async def scenario() -> tuple:
        slow = asyncio.ensure_future(_post(hostile_server.url, slow_items))
        await asyncio.sleep(1.0)  # sent and being graded
        normal_done, normal = await _post(hostile_server.url, normal_items)
        slow_done, slow_results = await slow
        return normal_done, normal, slow_done, slow_results

    normal_done, normal, slow_done, slow_results = asyncio.run(scenario())
    assert [r["status"] for r in normal] == ["ok"] * len(normal_items)
    assert normal_done < slow_done
    assert {r["status"] for r in slow_results} <= {"ok", "timeout"}  # cut at the deadline, never `error`


def test_an_item_that_burns_its_deadline_is_remembered(tmp_path) -> None:
    """Only an item that burnt its deadline in CPU is remembered, so this server never demotes
    (a demoted item competing with other work may get too little CPU to count)."""
    item = sort_item(1_000_000, seed=7)  # ~4 s of CPU against a 2 s deadline
    settings = {"REWARD_API_WORKERS": "1", "REWARD_API_ITEM_DEADLINE_S": str(DEADLINE_S)}
    with LocalServer(tmp_path, REWARD_API_SLOW_AFTER_S="60", **settings) as server, server.client() as client:
        [first] = client.post("/v1/rewards", json={"items": [item]}).json()["results"]
        started = time.monotonic()
        [again] = client.post("/v1/rewards", json={"items": [item]}).json()["results"]
        again_s = time.monotonic() - started
    assert first["status"] == "timeout" and "cached" not in first["details"]
    assert again["status"] == "timeout" and again["details"]["cached"] is True
    assert "remembered" in again["details"]["reason"]
    assert again_s < DEADLINE_S  # answered from memory, not graded again


def test_a_call_shared_by_two_requests_survives_one_of_them_leaving(hostile_server) -> None:
    item = sort_item(200_000, seed=11)
    cancelled = metric(hostile_server, "reward_worker_restarts_total", reason="cancelled")

    async def scenario() -> list[dict]:
        leaving = asyncio.ensure_future(_post(hostile_server.url, [item], timeout_s=0.3))
        staying = asyncio.ensure_future(_post(hostile_server.url, [item]))
        with pytest.raises(httpx.ReadTimeout):
            await leaving
        return (await staying)[1]

    [result] = asyncio.run(scenario())
    assert result["status"] == "ok" and result["reward"] == 1.0
    assert metric(hostile_server, "reward_worker_restarts_total", reason="cancelled") == cancelled


def test_a_client_that_leaves_stops_its_work(hostile_server) -> None:
    cancelled = metric(hostile_server, "reward_worker_restarts_total", reason="cancelled")
    items = [sort_item(400_000, seed) for seed in range(200, 202)]
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{hostile_server.url}/v1/rewards", json={"items": items}, timeout=0.5)
    deadline = time.monotonic() + 30
    while metric(hostile_server, "reward_worker_restarts_total", reason="cancelled") < cancelled + 2:
        assert time.monotonic() < deadline, "the gone client's items were still being graded"
        time.sleep(0.1)


def _grading_workers(server: LocalServer) -> list[int]:
    """Worker processes: children of the forkserver, itself a child of the service."""

    def children(pid: int) -> list[int]:
        found = []
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(p) for p in (task / "children").read_text().split()]
        return found

    return [worker for child in children(server.process.pid) for worker in children(child)]


def test_workers_killed_from_outside_lose_no_item(hostile_server) -> None:
    items = [sort_item(60_000, seed) for seed in range(300, 304)]  # ~0.2 s each, all within the deadline
    killed: list[int] = []

    def kill_workers_once_busy() -> None:
        time.sleep(0.15)
        for pid in _grading_workers(hostile_server):
            killed.append(pid)
            os.kill(pid, signal.SIGKILL)

    crashes = metric(hostile_server, "reward_worker_restarts_total", reason="crash")
    killer = threading.Thread(target=kill_workers_once_busy)
    killer.start()
    with hostile_server.client() as client:
        results = client.post("/v1/rewards", json={"items": items}).json()["results"]
    killer.join()
    assert killed and metric(hostile_server, "reward_worker_restarts_total", reason="crash") > crashes
    assert [r["status"] for r in results] == ["ok"] * len(items)
    assert all(r["reward"] == 1.0 for r in results)


def test_the_load_benchmark_runs_and_prints_its_figure() -> None:
    """bench/load.py, tiny: both phases run against a real service and the summary line is there."""
    script = Path(__file__).resolve().parents[1] / "bench" / "load.py"
    argv = [sys.executable, str(script), "--seconds", "2", "--deadline", "2", "--concurrency", "4"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    figure = re.search(r"normal items/s: A=([\d.]+) B=([\d.]+) ratio B/A=([\d.]+)", done.stdout)
    assert figure, done.stdout
    assert float(figure.group(1)) > 0  # phase A graded normal items
    assert "memory at end" in done.stdout and "geometric_sum" in done.stdout


def test_a_repeat_right_after_its_twin_was_abandoned_is_graded_not_cancelled() -> None:
    """A trainer that times out and resends at once: the abandoned call is being cancelled when the
    identical item arrives again; the new request gets a call of its own, not the cancellation."""
    from reward_api.config import Config
    from reward_api.engine import RewardEngine

    item = sort_item(100_000, seed=21)

    async def scenario() -> list:
        engine = RewardEngine(Config(workers=1, heavy_workers=1, item_deadline_s=30))
        await engine.start()
        try:
            profile = resolve_profile("accuracy")
            abandoned = asyncio.ensure_future(engine.grade([item], profile))
            await asyncio.sleep(0.3)  # its call is running
            abandoned.cancel()
            await asyncio.sleep(0)  # the cancellation reaches the shared call; it has not finished yet
            return await engine.grade([item], profile)
        finally:
            await engine.close()

    [result] = asyncio.run(scenario())
    assert result.status == "ok" and result.reward == 1.0

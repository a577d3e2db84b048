"""The reward service on Ray Serve: a real two-node Ray cluster on loopback, deployed with `serve deploy` of
services/ray/serve.yaml, graded through Serve's HTTP proxy and compared with one local service; then one replica
is SIGKILLed mid-load: no item is lost, results stay identical, and Serve replaces the replica."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import httpx
import pytest
import yaml

from reward_api.config import Config
from reward_api.engine import RewardEngine
from reward_api.local import LocalServer
from reward_api.ray_serve import (
    CLUSTER_ENV,
    SERVE_CONFIG,
    UNREADY_GRACE_S,
    PoolHealth,
    local_serve_cluster,
    one_machine_node_env,
)
from trainer_client.client import RewardClient

FIXED = [
    {"task": "math", "completion": "<think>2 + 2 is 4.</think> \\boxed{4}", "reference": "4"},
    {"task": "math", "completion": "\\boxed{5}", "reference": "4"},
    {"task": "math", "completion": "The answer is \\boxed{\\frac{1}{2}}.", "reference": "0.5"},
    {"task": "math", "completion": "\\boxed{\\frac{\\sqrt{2}}{2}}", "reference": "\\sqrt{2}/2"},
    {"task": "math", "completion": "\\boxed{(x+1)^2}", "reference": "x^2 + 2x + 1"},
    {"task": "math", "completion": "I do not know.", "reference": "7"},
    {"task": "math", "reference": "4"},  # no completion: invalid
    {"task": "no-such-task", "completion": "x", "reference": "y"},  # invalid
]
LOAD_ITEMS = 2000
CHUNK = 256
KILL_AFTER_CHUNKS = 3  # of 8: the kill lands while most of the load is still to come


def load_items() -> list[dict]:
    """Distinct math items (no cache hits), a third of them wrong."""
    items = []
    for i in range(LOAD_ITEMS):
        num, den = i + 1, i % 9 + 2
        completion, reference = [
            (f"\\boxed{{\\frac{{{num}}}{{{den}}}}}", f"{2 * num}/{2 * den}"),
            (f"\\boxed{{{num + 1}}}", str(num)),
            (f"so it is \\boxed{{{num}.5}}", f"\\frac{{{2 * num + 1}}}{{2}}"),
        ][i % 3]
        items.append({"id": i, "task": "math", "completion": completion, "reference": reference})
    return items


def outcome(result: dict) -> tuple:
    """What must not depend on where an item was graded (details hold timings)."""
    return result["reward"], result["status"], result["components"]


def post(url: str, items: list[dict]) -> list[tuple]:
    response = httpx.post(f"{url}/v1/rewards", json={"items": items}, timeout=120)
    response.raise_for_status()
    return [outcome(r) for r in response.json()["results"]]


def live_processes() -> dict[int, int]:
    """pid -> parent pid of every live (not zombie) process, from /proc."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                state, ppid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
            except OSError:  # exited meanwhile
                continue
            if state != "Z":
                parents[int(entry.name)] = int(ppid)
    return parents


def haproxy_node_ids(node_ids: set[str]) -> set[str]:
    """Those of `node_ids` whose HAProxy runs: Serve names its config file after the node."""
    found = set()
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # exited meanwhile
            continue
        if Path(argv[0].decode(errors="replace")).name == "haproxy":
            found |= {node for node in node_ids if node.encode() in b" ".join(argv)}
    return found


def descendants(pid: int) -> set[int]:
    """Live processes below `pid`: a replica's forkserver and its grading workers."""
    parents = live_processes()
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        children = {child for child, ppid in parents.items() if ppid == parent}
        found |= children
        todo += children
    return found


async def grade_while_killing(url: str, items: list[dict], victim: int) -> list[tuple]:
    """Grade `items` in chunks through the trainer client; SIGKILL `victim` once a few chunks are answered."""
    async with RewardClient(url, batch_size=64, max_concurrency=4, timeout_s=120) as client:
        pending = [client.submit(items[i : i + CHUNK]) for i in range(0, len(items), CHUNK)]
        results = []
        for done, chunk in enumerate(pending, start=1):
            results += [(r.reward, r.status, r.components) for r in await chunk]
            if done == KILL_AFTER_CHUNKS:
                os.kill(victim, signal.SIGKILL)
        return results


@pytest.mark.slow
def test_ray_serve_grades_like_one_local_service_and_survives_a_killed_replica(tmp_path: Path) -> None:
    items = load_items()
    with LocalServer(tmp_path, REWARD_API_WORKERS="2") as local:
        expected_fixed = post(local.url, FIXED)
        local_started = time.monotonic()
        expected_load = post(local.url, items)
        local_s = time.monotonic() - local_started

    started = time.monotonic()
    with local_serve_cluster(replicas=2, cpus_per_replica=1) as cluster:
        deployed_s = time.monotonic() - started
        replicas = cluster.replicas()
        nodes = {node["node_id"]: node for node in cluster.nodes()}
        # Placement: only on the node labelled as a CPU node, never on the head, which has a GPU and a free CPU.
        assert {nodes[r["node_id"]]["labels"].get("node-kind") for r in replicas} == {"cpu"}, replicas
        head = next(node for node in nodes.values() if node["is_head_node"])
        assert head["resources_total"].get("GPU") == 1 and head["resources_total"]["CPU"] >= 1
        # Requests go through each node's HAProxy straight to the replicas, not through Serve's Python proxy.
        assert haproxy_node_ids(set(nodes)) == set(nodes)
        # Each replica's pool is sized to the one CPU it reserved (not to the machine's cores).
        ready = httpx.get(f"{cluster.url}/readyz", timeout=10).json()
        assert ready | {"code": None} == {"ready": True, "workers": 1, "want": 1, "code": None}
        assert ready["code"]["available"] is True

        assert post(cluster.url, FIXED) == expected_fixed

        victim = replicas[0]["pid"]
        victim_graders = descendants(victim)
        assert victim_graders, "a replica runs its grading pool in child processes"
        load_started = time.monotonic()
        results = asyncio.run(asyncio.wait_for(grade_while_killing(cluster.url, items, victim), timeout=180))
        load_s = time.monotonic() - load_started
        assert len(results) == len(items)
        mismatches = [i for i, want in enumerate(expected_load) if results[i] != want]
        assert not mismatches, [(i, results[i], expected_load[i]) for i in mismatches[:5]]

        cluster.wait_running(replicas=2, timeout_s=90, exclude_pids=frozenset({victim}))
        assert victim not in {r["pid"] for r in cluster.replicas()}
        assert not victim_graders & live_processes().keys(), "the killed replica's grading processes exited"
        assert post(cluster.url, FIXED) == expected_fixed
    serve_rate, local_rate = len(items) / load_s, len(items) / local_s
    print(f"\nray serve: deployed in {deployed_s:.1f}s; {serve_rate:.0f} items/s with one of 2 replicas killed; "
          f"one local service: {local_rate:.0f} items/s")  # fmt: skip


def test_health_check_fails_only_when_the_pool_stays_unready() -> None:
    engine = RewardEngine(Config(workers=1, heavy_workers=0))
    health = PoolHealth(grace_s=0.5)
    health.check(engine)  # not started yet: unready, but within the grace
    time.sleep(0.6)
    with pytest.raises(RuntimeError, match=r"unready for over 0.5s \(0/1 workers up\)"):
        health.check(engine)

    async def started_then_closed() -> None:
        await engine.start()
        try:
            health.check(engine)  # ready: healthy, and the grace starts over
        finally:
            await engine.close()
        health.check(engine)  # closed, hence unready again: a fresh grace

    asyncio.run(started_then_closed())


def test_the_deploy_config_follows_serves_schema_and_keeps_graders_off_gpu_nodes() -> None:
    from ray.serve.schema import ServeDeploySchema

    config = ServeDeploySchema.model_validate(yaml.safe_load(SERVE_CONFIG.read_text()))
    [application] = config.applications
    assert application.import_path == "reward_api.ray_serve:app"
    [deployment] = application.deployments
    actor = deployment.ray_actor_options
    assert actor.num_gpus == 0 and actor.num_cpus >= 1 and actor.label_selector
    autoscaling = deployment.autoscaling_config
    assert 2 <= autoscaling["min_replicas"] < autoscaling["max_replicas"], autoscaling
    # A replica's pool may be unready for UNREADY_GRACE_S; Serve's checks must give it that long before replacing it.
    assert deployment.health_check_timeout_s >= UNREADY_GRACE_S


def test_nodes_of_one_machine_enable_haproxy_each_on_ports_of_its_own() -> None:
    first, second = one_machine_node_env(), one_machine_node_env()
    assert first.items() >= CLUSTER_ENV.items() and second.items() >= CLUSTER_ENV.items()
    ports = ["RAY_SERVE_HAPROXY_STATS_PORT", "RAY_SERVE_HAPROXY_METRICS_PORT"]
    assert len({env[port] for env in (first, second) for port in ports}) == 4

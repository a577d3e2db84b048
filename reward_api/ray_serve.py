"""The reward service as a Ray Serve application: the same FastAPI app, one grading pool per replica.

Deploy it on a running Ray cluster (every node has `reward-service[ray]` installed) with

    RAY_DASHBOARD_ADDRESS=http://<head>:8265 serve deploy services/ray/serve.yaml

The YAML holds what a cluster operator tunes: autoscaling bounds, CPUs per replica, the node label replicas
are pinned to (CPU nodes, apart from the trainer's GPU nodes) and the service's `REWARD_API_*` settings.

Each replica runs the app's lifespan (the grading pool starts before Serve routes a request to it), sizes its
grading workers to the CPUs Ray reserved for it (unless REWARD_API_WORKERS says otherwise), and answers Serve's
health checks from the pool's readiness: a pool whose workers keep failing to start gets its replica replaced.

Start every node with CLUSTER_ENV (`RAY_SERVE_ENABLE_HA_PROXY=1 ray start ...`): each node's HAProxy (shipped
with `ray[serve]`) forwards requests straight to the replicas' own HTTP servers, instead of Serve's Python proxy
relaying each request and its body over actor calls, which cost about as much CPU per request as our app.

`local_serve_cluster` starts a throwaway two-node cluster on this machine's loopback and deploys the same YAML
to it, for tests, benchmarks and trying the deployment out (Linux).
"""

from __future__ import annotations

import logging
import math
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import ray
    import yaml
    from ray import serve
except ImportError as exc:  # `pip install reward-service[server]` without the Ray extra
    raise ImportError("reward_api.ray_serve needs Ray Serve: pip install 'reward-service[ray]'") from exc

import httpx
from fastapi import FastAPI

from reward_api.app import create_app, settle_heap
from reward_api.config import Config
from reward_api.engine import RewardEngine
from reward_api.local import free_port
from service_kit.cli import JsonLogFormatter

SERVE_CONFIG = Path(__file__).resolve().parent.parent / "services" / "ray" / "serve.yaml"
"""The deployment's YAML in a source checkout (services/ray/serve.yaml)."""

# A pool whose workers fail to start (memory, an import error) is unready; one failed start can be a passing
# squeeze, so only a pool that stays unready this long is unhealthy, and Serve replaces its replica.
UNREADY_GRACE_S = 30.0


class PoolHealth:
    """Serve's health verdict on a replica from its grading pool's readiness, across Serve's periodic checks."""

    def __init__(self, grace_s: float = UNREADY_GRACE_S) -> None:
        self.grace_s = grace_s
        self._unready_since: float | None = None

    def check(self, engine: RewardEngine) -> None:
        """Raise (Serve then replaces the replica) when the pool has been unready for `grace_s`."""
        if engine.ready:
            self._unready_since = None
            return
        now = time.monotonic()
        self._unready_since = self._unready_since or now
        if now - self._unready_since >= self.grace_s:
            raise RuntimeError(
                f"grading pool unready for over {self.grace_s:g}s ({engine.pool.alive}/{engine.pool.size} workers up); "
                "this replica's log says why workers fail to start (memory limit, import error)"
            )


@serve.deployment
@serve.ingress()
class RewardService:
    """One replica: the reward app with its own grading pool, sized to the replica's reserved CPUs."""

    def __init__(self) -> None:
        workers = None if os.environ.get("REWARD_API_WORKERS") else reserved_cpus()
        self.config = Config.from_env(workers=workers)
        _log_json_to_stderr(self.config.log_level)
        self._reward_app: FastAPI | None = None  # not `app`: that is the ASGI wrapper's, set by Serve
        self._health = PoolHealth()

    def __serve_build_asgi_app__(self) -> FastAPI:
        """Serve runs the returned app's lifespan (the pool starts) before it routes a request here."""
        self._reward_app = create_app(self.config)
        settle_heap()
        return self._reward_app

    def check_health(self) -> None:
        """Called by Serve every `health_check_period_s` once the replica is up; raising replaces the replica."""
        if self._reward_app is not None:
            self._health.check(self._reward_app.state.engine)


def reserved_cpus() -> int:
    """Grading workers for this replica: the CPUs Ray reserved for it (`ray_actor_options.num_cpus`), at least 1."""
    cpus = ray.get_runtime_context().get_assigned_resources().get("CPU", 0.0)
    return max(1, math.floor(cpus))


def _log_json_to_stderr(level: str) -> None:
    """The service's JSON log lines on the replica's stderr (Ray keeps it in the worker's log file), without
    touching the root logger, which Ray configures for its own output."""
    logger = logging.getLogger("reward_api")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonLogFormatter())
        logger.addHandler(handler)
    logger.setLevel(level.upper())
    logger.propagate = False


app = RewardService.bind()


# --- A throwaway local cluster: tests, benchmarks, trying the YAML out -------------------------------------------

CLUSTER_ENV = {"RAY_SERVE_ENABLE_HA_PROXY": "1"}
"""The environment of `ray start` on every node (Serve's controller, proxies and replicas inherit it)."""

# Ray swaps 127.0.0.1 for the machine's network address ("reachable from other nodes"); another loopback address
# is kept as it is, so every node of the local cluster talks over loopback.
LOOPBACK_NODE_IP = "127.0.0.2"
_STOP_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class LocalServeCluster:
    """A running local cluster with the reward service deployed; `url` takes the service's API."""

    url: str  # Serve's HTTP proxy: POST {url}/v1/rewards
    dashboard_url: str  # where `serve deploy` and `serve status` talk (RAY_DASHBOARD_ADDRESS)
    env: dict[str, str]  # for `ray` / `serve` commands against this cluster: its dashboard and auth token
    config_path: Path  # the deployed copy of the YAML
    app_name: str
    deployment_name: str

    def serve_cli(self, *args: str, timeout_s: float = 120.0) -> str:
        """`serve <args>` against this cluster; its output, or a RuntimeError holding it."""
        return _run([_venv_bin("serve"), *args], self.env, timeout_s)

    def api(self, path: str) -> Any:
        """GET a dashboard REST path (`/api/serve/applications/`, `/api/v0/nodes`) with the cluster's token."""
        headers = {"Authorization": f"Bearer {self.env['RAY_AUTH_TOKEN']}"}
        response = httpx.get(f"{self.dashboard_url}{path}", headers=headers, timeout=30)
        response.raise_for_status()
        return response.json()

    def application(self) -> dict[str, Any]:
        """The application's Serve status (`status`, `deployments`), {} before it exists."""
        return self.api("/api/serve/applications/")["applications"].get(self.app_name, {})

    def replicas(self) -> list[dict[str, Any]]:
        """The deployment's replicas, each with `state`, `pid` and `node_id`."""
        deployment = self.application().get("deployments", {}).get(self.deployment_name, {})
        return deployment.get("replicas", [])

    def nodes(self) -> list[dict[str, Any]]:
        """The cluster's nodes, each with `node_id`, `labels`, `resources_total` and `is_head_node`."""
        return self.api("/api/v0/nodes")["data"]["result"]["result"]

    def wait_running(self, replicas: int, timeout_s: float = 180.0, exclude_pids: frozenset[int] = frozenset()) -> None:
        """Until the application is RUNNING on `replicas` running replicas (none of `exclude_pids`) and the
        service answers /readyz through Serve's proxy; a RuntimeError with Serve's status otherwise."""
        deadline = time.monotonic() + timeout_s
        status: dict[str, Any] = {}
        while time.monotonic() < deadline:
            status = self.application()
            if status.get("status") == "DEPLOY_FAILED":
                break
            running = [r for r in self.replicas() if r["state"] == "RUNNING" and r["pid"] not in exclude_pids]
            if status.get("status") == "RUNNING" and len(running) == replicas and self._proxy_ready():
                return
            time.sleep(0.5)
        raise RuntimeError(f"the Serve application did not reach {replicas} running replicas: {status}")

    def _proxy_ready(self) -> bool:
        try:
            return httpx.get(f"{self.url}/readyz", timeout=5).status_code == 200
        except httpx.TransportError:
            return False


@contextmanager
def local_serve_cluster(
    replicas: int = 2,
    cpus_per_replica: int = 1,
    settings: Mapping[str, str] | None = None,
    config: Path = SERVE_CONFIG,
    ready_timeout_s: float = 180.0,
) -> Iterator[LocalServeCluster]:
    """A two-node Ray cluster on loopback with `config` deployed by `serve deploy`, stopped on exit.

    The head node stands for a trainer's GPU node (one logical GPU and a free CPU); the second node is a CPU
    node with the labels the YAML's `label_selector` asks for and `replicas * cpus_per_replica` CPUs, so the
    replicas can only run there. The deployed copy of the YAML differs from `config` only in what one machine
    needs: Serve's HTTP port (a free one on 127.0.0.1), `replicas` replicas (autoscaling bounds), CPUs per
    replica, and `settings` (`REWARD_API_*`) added to the application's environment. Its nodes are started with
    CLUSTER_ENV, as a real cluster's. The cluster uses Ray's token authentication with a fresh token, and its
    processes are stopped by session id on exit, so other Ray clusters on the machine are left alone.
    """
    work_dir = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))  # short: Ray's socket paths must fit 107 bytes
    sessions: list[int] = []
    try:
        yield _start_cluster(work_dir, sessions, replicas, cpus_per_replica, settings or {}, config, ready_timeout_s)
    finally:
        _stop_sessions(sessions)
        shutil.rmtree(work_dir, ignore_errors=True)


def _start_cluster(
    work_dir: Path,
    sessions: list[int],
    replicas: int,
    cpus_per_replica: int,
    settings: Mapping[str, str],
    config: Path,
    ready_timeout_s: float,
) -> LocalServeCluster:
    deploy_config = yaml.safe_load(config.read_text(encoding="utf-8"))
    application = deploy_config["applications"][0]
    deployment = application["deployments"][0]
    labels = deployment.get("ray_actor_options", {}).get("label_selector") or {}
    http_port, gcs_port, dashboard_port = free_port(), free_port(), free_port()
    _fit_one_machine(deploy_config, http_port, replicas, cpus_per_replica, settings)
    config_path = work_dir / "serve.yaml"
    config_path.write_text(yaml.safe_dump(deploy_config), encoding="utf-8")

    dashboard_url = f"http://127.0.0.1:{dashboard_port}"
    token = secrets.token_hex(32)
    env = os.environ | {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token, "RAY_DASHBOARD_ADDRESS": dashboard_url}
    # No log monitor: it tails every worker's log to stream it to drivers, and `serve deploy` leaves none.
    common = [
        "--node-ip-address", LOOPBACK_NODE_IP, "--temp-dir", str(work_dir), "--disable-usage-stats",
        "--include-log-monitor=false",
    ]  # fmt: skip
    head = [
        "--head", f"--port={gcs_port}", "--num-cpus=1", "--num-gpus=1", "--include-dashboard=true",
        "--dashboard-host=127.0.0.1", f"--dashboard-port={dashboard_port}", f"--ray-client-server-port={free_port()}",
    ]  # fmt: skip
    cpu_node = [f"--address={LOOPBACK_NODE_IP}:{gcs_port}", f"--num-cpus={replicas * cpus_per_replica}"]
    if labels:
        cpu_node.append("--labels=" + ",".join(f"{key}={value}" for key, value in labels.items()))
    for node in (head, cpu_node):
        # Every node of one machine needs ports of its own (Ray's defaults are fixed numbers).
        ports = [
            f"--dashboard-agent-listen-port={free_port()}", f"--dashboard-agent-grpc-port={free_port()}",
            f"--runtime-env-agent-port={free_port()}", f"--metrics-export-port={free_port()}",
        ]  # fmt: skip
        _ray_start([*node, *common, *ports], env | one_machine_node_env(), work_dir, sessions)

    cluster = LocalServeCluster(
        url=f"http://127.0.0.1:{http_port}", dashboard_url=dashboard_url, env=env, config_path=config_path,
        app_name=application["name"], deployment_name=deployment["name"],
    )  # fmt: skip
    cluster.serve_cli("deploy", str(config_path))
    cluster.wait_running(replicas, ready_timeout_s)
    return cluster


def _fit_one_machine(
    deploy_config: dict[str, Any], http_port: int, replicas: int, cpus_per_replica: int, settings: Mapping[str, str]
) -> None:
    """Change a deploy config in place for one machine (see `local_serve_cluster`)."""
    deploy_config["http_options"] = {**deploy_config.get("http_options", {}), "host": "127.0.0.1", "port": http_port}
    application = deploy_config["applications"][0]
    runtime_env = application.setdefault("runtime_env", {})
    runtime_env["env_vars"] = {**runtime_env.get("env_vars", {}), **settings}
    deployment = application["deployments"][0]
    deployment.setdefault("ray_actor_options", {})["num_cpus"] = cpus_per_replica
    deployment.pop("num_replicas", None)
    autoscaling = deployment.setdefault("autoscaling_config", {})
    autoscaling.update(min_replicas=replicas, max_replicas=replicas)


def one_machine_node_env() -> dict[str, str]:
    """CLUSTER_ENV for one of several nodes on one machine: its HAProxy's stats and metrics ports of its own (Ray's
    defaults are fixed numbers), sharing Serve's HTTP port with the other nodes' (SO_REUSEPORT, as Serve's proxy)."""
    return CLUSTER_ENV | {
        "RAY_SERVE_HAPROXY_STATS_PORT": str(free_port()),
        "RAY_SERVE_HAPROXY_METRICS_PORT": str(free_port()),
        "SERVE_SOCKET_REUSE_PORT_ENABLED": "1",
    }


def _ray_start(args: list[str], env: dict[str, str], work_dir: Path, sessions: list[int]) -> None:
    """`ray start <args>` in a session of its own, added to `sessions`: its id names every process the node starts."""
    log_path = work_dir / f"ray-start-{len(sessions)}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [_venv_bin("ray"), "start", *args], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    sessions.append(process.pid)
    try:
        returncode = process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        returncode = None
    if returncode != 0:
        output = log_path.read_text(errors="replace")[-4000:]
        raise RuntimeError(f"`ray start {' '.join(args)}` failed ({returncode}):\n{output}")


def _stop_sessions(sessions: Collection[int]) -> None:
    """SIGKILL every process of these sessions (Ray's daemons, workers and replicas, their grading processes), as
    `ray stop --force` does, but only this cluster's: `ray stop` stops every Ray cluster on the machine. Repeated
    until none is left, since a raylet may start a worker while it is being stopped."""
    deadline = time.monotonic() + _STOP_TIMEOUT_S
    while (pids := _session_pids(sessions)) and time.monotonic() < deadline:
        for pid in pids:
            with suppress(ProcessLookupError):  # exited meanwhile
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)


def _session_pids(sessions: Collection[int]) -> list[int]:
    """Live (not zombie) processes of these sessions, read from /proc."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # exited meanwhile
            continue
        state, _ppid, _pgrp, sid = stat.rsplit(")", 1)[1].split()[:4]  # the name before ")" may hold spaces
        if int(sid) in sessions and state != "Z":
            pids.append(int(entry.name))
    return pids


def _run(argv: list[str], env: dict[str, str], timeout_s: float) -> str:
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout_s, check=False)
    if done.returncode != 0:
        output = done.stdout[-2000:] + done.stderr[-4000:]
        raise RuntimeError(f"`{' '.join(argv)}` failed ({done.returncode}):\n{output}")
    return done.stdout


def _venv_bin(name: str) -> str:
    """The `ray` / `serve` command installed beside this interpreter (the same Ray as this module's), else PATH's."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else name

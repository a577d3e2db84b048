"""Start a real service in a subprocess on a free loopback port (tests, benchmarks, demos).

with LocalServer(REWARD_API_WORKERS="2") as server:           # `reward-api serve`
    httpx.post(f"{server.url}/v1/rewards", json=...)
with LocalServer.sandbox(SANDBOX_WORKERS="2") as sandbox:      # `sandbox serve`
    httpx.post(f"{sandbox.url}/v1/judge", json=...)

The servers run on this interpreter, or on the one `LOCAL_SERVER_PYTHON` names: an environment that holds a trainer
framework and the client only (tests/frameworks/) starts the service from the environment that has its packages,
as a trainer reaches a service deployed apart.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_python() -> str:
    """The interpreter that runs the services and the programs of their compose commands (`LOCAL_SERVER_PYTHON`,
    else this one)."""
    return os.environ.get("LOCAL_SERVER_PYTHON") or sys.executable


class LocalServer:
    """`python -m <module> serve` as a child process, by default `reward-api serve`.

    `env` entries are its `<env_prefix>_*` settings; the port goes in `<env_prefix>_PORT`. A `launcher`
    turns (argv, environment) into the command actually run (e.g. as another user, tests/as_user.py).
    """

    def __init__(
        self,
        log_dir: Path | None = None,
        ready_timeout_s: float = 120.0,
        *,
        module: str = "reward_api.cli",
        env_prefix: str = "REWARD_API",
        launcher: Callable[[list[str], dict[str, str]], list[str]] | None = None,
        **env: str,
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.name = f"{module} serve"
        log_dir = Path(log_dir or tempfile.mkdtemp(prefix=f"{env_prefix.lower()}-"))
        self.log_path = log_dir / f"server-{self.port}.log"
        self._argv = [server_python(), "-m", module, "serve"]
        self._env = os.environ | {f"{env_prefix}_PORT": str(self.port), "PYTHONUNBUFFERED": "1"} | env
        self._ready_timeout_s = ready_timeout_s
        self._launcher = launcher
        self.process: subprocess.Popen | None = None

    @classmethod
    def sandbox(cls, log_dir: Path | None = None, ready_timeout_s: float = 120.0, **env: str) -> LocalServer:
        """`sandbox serve`; `env` entries are `SANDBOX_*` settings."""
        return cls(log_dir, ready_timeout_s, module="sandbox.cli", env_prefix="SANDBOX", **env)

    def start(self) -> LocalServer:
        with self.log_path.open("wb") as log:
            argv = self._launcher(self._argv, self._env) if self._launcher else self._argv
            self.process = subprocess.Popen(argv, env=self._env, stdout=log, stderr=log)
        deadline = time.monotonic() + self._ready_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}:\n{self.log()}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"{self.name} not ready after {self._ready_timeout_s}s:\n{self.log()}")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def client(self, **kwargs) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=kwargs.pop("timeout", 60), **kwargs)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

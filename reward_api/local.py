"""Start the real service in a subprocess on a free loopback port (tests, benchmarks, demos).

with LocalServer(REWARD_API_WORKERS="2") as server:
    httpx.post(f"{server.url}/v1/rewards", json=...)
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalServer:
    """`reward-api serve` as a child process; `env` entries are `REWARD_API_*` settings."""

    def __init__(self, log_dir: Path | None = None, ready_timeout_s: float = 120.0, **env: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(log_dir or tempfile.mkdtemp(prefix="reward-api-")) / f"server-{self.port}.log"
        self._env = os.environ | {"REWARD_API_PORT": str(self.port), "PYTHONUNBUFFERED": "1"} | env
        self._ready_timeout_s = ready_timeout_s
        self.process: subprocess.Popen | None = None

    def start(self) -> LocalServer:
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "reward_api.cli", "serve"], env=self._env, stdout=log, stderr=log
            )
        deadline = time.monotonic() + self._ready_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"reward service exited with {self.process.returncode}:\n{self.log()}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"reward service not ready after {self._ready_timeout_s}s:\n{self.log()}")

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

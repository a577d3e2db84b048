"""`redis-server` on loopback for the tests of what replicas share through Redis (the cache, split groups)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

import redis

from reward_api.local import free_port

# Debian's redis-server, which `make test` installs: without it these tests fail, they never skip.
REDIS_SERVER = shutil.which("redis-server") or "redis-server"


class RedisProcess:
    """`redis-server` on a loopback port without persistence; killed and started again on the same port."""

    def __init__(self, *args: str) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._args = args
        self.process: subprocess.Popen | None = None

    def start(self) -> RedisProcess:
        argv = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen([*argv, *self._args], stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                with self.client() as client:
                    client.ping()
                return self
            except redis.ConnectionError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server on port {self.port} did not start") from None
                time.sleep(0.05)

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=5)

    def signal(self, signum: int) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signum)

    def kill(self) -> None:
        self.signal(signal.SIGKILL)
        assert self.process is not None
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> RedisProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

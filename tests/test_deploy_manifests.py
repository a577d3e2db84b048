"""The deployment files say what the services really do: services/k8s, services/prometheus, services/grafana.

- Every Kubernetes manifest validates strictly (an unknown or misspelt field fails) against the API schemas of
  the oldest and the newest Kubernetes we support, and kustomization.yaml lists them all.
- Selectors match the pods' labels; the sandbox NetworkPolicy selects the sandbox pods and allows no egress.
- The environment the kubelet gives each container is settings its service accepts; workers = CPU limit.
- The probes' paths answer 200 on the container ports of the real services started with the manifests'
  settings; both pods also run under runc (podman, rootful) with their securityContext, volumes, limits,
  environment and command, and grade a math and a code item end to end; the sandbox pod, with nothing of the
  node mounted, gives every run a cgroup (`bwrap+cgroup1` on this hybrid host).
- Every metric the Grafana dashboard queries is in the real /metrics of both services after grading;
  Prometheus' targets follow the port plan and docker-compose.yml.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import httpx
import kubernetes_validate
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from reward_api.config import Config
from reward_api.local import LocalServer, free_port
from sandbox.cgroups import host_version
from sandbox.service import ServiceConfig

REPO = Path(__file__).resolve().parents[1]
K8S = REPO / "services" / "k8s"
PROMETHEUS_CONFIG = REPO / "services" / "prometheus" / "prometheus.yml"
GRAFANA = REPO / "services" / "grafana"
DASHBOARD = GRAFANA / "dashboards" / "reward-service.json"
COMPOSE_FILE = REPO / "docker-compose.yml"
PODMAN_CONF = REPO / "services" / "podman" / "containers.conf"
READY_WITHIN_S = 60.0  # a pod's /readyz answers 200 within this (both take seconds when the machine is idle)

# The oldest Kubernetes the manifests support (the preStop `sleep` action is on by default from 1.30) and the
# newest the validator knows.
K8S_VERSIONS = ("1.30.0", "1.37.0")
# Where compose runs each service (the deployment's port plan); Prometheus scrapes them there.
PORT_PLAN = {
    "reward-api": {"reward-api-1": 8001, "reward-api-2": 8002, "reward-api-3": 8003},
    "sandbox": {"sandbox-1": 8081, "sandbox-2": 8082},
    "lb": {"lb": 8404},  # HAProxy's Prometheus exporter
}
# Label names Prometheus adds to every scraped series.
SCRAPE_LABELS = {"instance", "job"}
# Counters whose samples appear only after a fault (a killed worker, a refused or failed run): the dashboard's
# use of them is checked against the metric's declaration alone.
FAULT_ONLY_METRICS = {"reward_worker_restarts_total", "sandbox_rejected_total", "sandbox_errors_total"}
# PromQL words that are neither metrics nor functions called with parentheses.
_PROMQL_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool"}


# --- the manifests --------------------------------------------------------------------------------------------


@functools.cache
def manifests() -> tuple[tuple[str, dict[str, Any]], ...]:
    """(file name, object) for every object of every manifest but kustomization.yaml."""
    found = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name != "kustomization.yaml":
            found += [(path.name, doc) for doc in yaml.safe_load_all(path.read_text()) if doc]
    return tuple(found)


def objects(kind: str) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for _, doc in manifests() if doc["kind"] == kind}


def deployment(name: str) -> dict[str, Any]:
    return objects("Deployment")[name]


def container(name: str) -> dict[str, Any]:
    """The one container of Deployment `name`."""
    (only,) = deployment(name)["spec"]["template"]["spec"]["containers"]
    return only


def literal_env(name: str) -> dict[str, str]:
    """The container's `env` entries with a literal value."""
    return {e["name"]: e["value"] for e in container(name).get("env", []) if "value" in e}


def kubelet_env(name: str) -> dict[str, str]:
    """The environment the kubelet gives Deployment `name`'s container: service-link variables of every Service
    in the namespace (unless the pod turns them off), then its own `env`, Secret-backed entries as if set."""
    spec = deployment(name)["spec"]["template"]["spec"]
    env: dict[str, str] = {}
    if spec.get("enableServiceLinks", True):
        for service in objects("Service").values():
            env |= service_link_env(service)
    for entry in container(name).get("env", []):
        env[entry["name"]] = entry.get("value", "a-secret-value")
    return env


def service_link_env(service: dict[str, Any]) -> dict[str, str]:
    """The variables Kubernetes sets in every pod for a Service when service links are on (docker-link style)."""
    prefix = service["metadata"]["name"].upper().replace("-", "_")
    host = "10.96.0.10"
    env = {f"{prefix}_SERVICE_HOST": host}
    for index, port in enumerate(service["spec"]["ports"]):
        number, protocol = port["port"], port.get("protocol", "TCP")
        link = f"{prefix}_PORT_{number}_{protocol}"
        if index == 0:
            env |= {f"{prefix}_SERVICE_PORT": str(number), f"{prefix}_PORT": f"{protocol.lower()}://{host}:{number}"}
        if "name" in port:
            env[f"{prefix}_SERVICE_PORT_{port['name'].upper().replace('-', '_')}"] = str(number)
        env |= {
            link: f"{protocol.lower()}://{host}:{number}",
            f"{link}_PROTO": protocol.lower(),
            f"{link}_PORT": str(number),
            f"{link}_ADDR": host,
        }
    return env


def container_port(name: str, port: int | str) -> int:
    """A port of Deployment `name`'s container, given by number or by name, as probes and Services give it."""
    ports = container(name)["ports"]
    found = [p["containerPort"] for p in ports if port in (p["containerPort"], p.get("name"))]
    assert len(found) == 1, f"{name}: port {port!r} names no container port of {ports}"
    return found[0]


def cpus(quantity: str) -> float:
    return float(quantity[:-1]) / 1000 if quantity.endswith("m") else float(quantity)


def matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """A label selector (matchLabels, or a Service's plain map) against a pod's labels."""
    wanted = selector.get("matchLabels", selector)
    assert "matchExpressions" not in selector, "extend matches() to matchExpressions"
    return bool(wanted) and wanted.items() <= labels.items()


def pod_labels(name: str) -> dict[str, str]:
    return deployment(name)["spec"]["template"]["metadata"]["labels"]


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_every_manifest_validates_strictly_against_the_api_schemas(version: str) -> None:
    kinds = {doc["kind"] for _, doc in manifests()}
    assert kinds == {
        "Namespace",
        "Deployment",
        "Service",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "NetworkPolicy",
    }
    for file_name, doc in manifests():
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            where = ".".join(str(part) for part in exc.path)
            pytest.fail(f"{file_name}: {doc['kind']} {doc['metadata']['name']} at {where}: {exc.message}")


def test_kustomization_lists_every_manifest() -> None:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    on_disk = {path.name for path in K8S.glob("*.y*ml")} - {"kustomization.yaml"}
    assert sorted(kustomization["resources"]) == sorted(on_disk)
    namespaces = objects("Namespace")
    assert list(namespaces) == [kustomization["namespace"]]


def test_selectors_match_the_pods_they_mean() -> None:
    for name, dep in objects("Deployment").items():
        assert matches(dep["spec"]["selector"], pod_labels(name)), f"Deployment {name} does not select its pods"
    deployments = objects("Deployment")
    for kind in ("Service", "PodDisruptionBudget"):
        for name, obj in objects(kind).items():
            selector = obj["spec"]["selector"]
            selected = [d for d in deployments if matches(selector, pod_labels(d))]
            assert selected == [name], f"{kind} {name} selects the pods of {selected}"
    for name, hpa in objects("HorizontalPodAutoscaler").items():
        target = hpa["spec"]["scaleTargetRef"]
        assert (target["kind"], target["name"]) == ("Deployment", name)
        assert target["name"] in deployments
        (metric,) = hpa["spec"]["metrics"]
        assert metric["resource"]["name"] == "cpu"
        # Utilisation is relative to the requests: without them the HPA has nothing to scale on.
        assert "cpu" in container(name)["resources"]["requests"]
    for name, service in objects("Service").items():
        for port in service["spec"]["ports"]:
            assert container_port(name, port["targetPort"]) == port["port"]


def test_sandbox_network_policy_allows_no_egress_and_only_reward_api_and_prometheus_in() -> None:
    (policy,) = objects("NetworkPolicy").values()
    spec = policy["spec"]
    assert matches(spec["podSelector"], pod_labels("sandbox"))
    assert not matches(spec["podSelector"], pod_labels("reward-api"))
    assert spec["policyTypes"] == ["Ingress", "Egress"]
    assert spec["egress"] == []  # Egress listed and no rule: nothing leaves a sandbox pod, DNS included
    peers = [peer for rule in spec["ingress"] for peer in rule["from"]]
    same_namespace = [p for p in peers if "namespaceSelector" not in p]
    assert [matches(p["podSelector"], pod_labels("reward-api")) for p in same_namespace] == [True]
    for peer in peers:
        assert "ipBlock" not in peer and peer["podSelector"]["matchLabels"], f"too wide an ingress peer: {peer}"
    for rule in spec["ingress"]:
        assert [container_port("sandbox", p["port"]) for p in rule["ports"]] == [8080]


def test_every_env_var_is_a_setting_the_service_accepts() -> None:
    reward_env = kubelet_env("reward-api")
    config = Config.from_env(environ=reward_env)  # rejects unknown REWARD_API_* names and bad values
    assert config.sandbox_urls == f"http://sandbox:{objects('Service')['sandbox']['spec']['ports'][0]['port']}"
    sandbox_env = kubelet_env("sandbox")
    known = {f"SANDBOX_{f.name.upper()}" for f in fields(ServiceConfig)}
    unknown = {name for name in sandbox_env if name.startswith("SANDBOX_")} - known
    assert not unknown, f"the sandbox service has no such settings: {sorted(unknown)}"
    ServiceConfig.from_env(environ=sandbox_env)  # every value parses


def test_service_links_would_stop_the_reward_api() -> None:
    """Why the pods turn service links off: the Service `reward-api` would give the pod REWARD_API_PORT=tcp://..."""
    links = service_link_env(objects("Service")["reward-api"])
    with pytest.raises(ValueError, match="REWARD_API_"):
        Config.from_env(environ=links | literal_env("reward-api"))


@pytest.mark.parametrize(("name", "workers"), [("reward-api", "REWARD_API_WORKERS"), ("sandbox", "SANDBOX_WORKERS")])
def test_workers_match_the_cpu_limit_and_requests_equal_limits(name: str, workers: str) -> None:
    resources = container(name)["resources"]
    assert resources["requests"] == resources["limits"]  # Guaranteed QoS: whole cores with the static CPU manager
    assert int(literal_env(name)[workers]) == cpus(resources["limits"]["cpu"])
    if name == "sandbox":  # tests of one program at once: workers x parallel = the pod's CPUs
        assert literal_env(name)["SANDBOX_PARALLEL"] == "1"


def test_no_pod_mounts_the_node_and_the_reward_api_pod_is_restricted() -> None:
    """The sandbox pod is option A of its manifest: privileged, so the runtime gives it its own cgroup writable on
    cgroup v1 and v2 nodes alike (the pods' run checks its level below); nothing of the node is mounted."""
    for name, dep in objects("Deployment").items():
        volumes = dep["spec"]["template"]["spec"].get("volumes", [])
        assert not [v for v in volumes if "hostPath" in v], f"{name} mounts a path of the node"
    sandbox = container("sandbox")
    assert sandbox["securityContext"] == {"privileged": True, "runAsUser": 0, "readOnlyRootFilesystem": True}
    assert [m["mountPath"] for m in sandbox["volumeMounts"]] == ["/tmp"]
    pod = deployment("reward-api")["spec"]["template"]["spec"]
    context = container("reward-api")["securityContext"]
    # Pod Security Standards, restricted profile.
    assert pod["securityContext"]["runAsNonRoot"] and pod["securityContext"]["runAsUser"] != 0
    assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
    assert context["allowPrivilegeEscalation"] is False and context["capabilities"]["drop"] == ["ALL"]
    assert "add" not in context["capabilities"] and not context.get("privileged")
    # The sandbox pod runs privileged: the namespace must admit it.
    labels = objects("Namespace")["reward-service"]["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "privileged"


# --- the services, as the manifests configure them -------------------------------------------------------------

MATH_ITEMS = [
    {"task": "math", "completion": r"so \boxed{\frac{1}{2}}", "reference": "0.5"},
    {"task": "math", "completion": r"\boxed{3}", "reference": "4"},
]
CODE_ITEM = {
    "task": "code",
    "completion": "```python\nprint(int(input()) * 2)\n```",
    "reference": {"language": "python", "tests": [{"input": "21", "output": "42"}]},
}


def local_env(name: str, **overrides: str) -> dict[str, str]:
    """Deployment `name`'s settings for a process on loopback: the port is LocalServer's, the host loopback."""
    env = {k: v for k, v in literal_env(name).items() if not k.endswith("_PORT")}
    return env | {k: "127.0.0.1" for k in env if k.endswith("_HOST")} | overrides


def grade(url: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    response = httpx.post(f"{url}/v1/rewards", json={"items": items}, timeout=120)
    assert response.status_code == 200, response.text
    return response.json()["results"]


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, LocalServer]]:
    """Both services with their Deployment's settings, after grading math and code items through them."""
    logs = tmp_path_factory.mktemp("services")
    sandbox = LocalServer.sandbox(logs, **local_env("sandbox"))
    with sandbox, LocalServer(logs, **local_env("reward-api", REWARD_API_SANDBOX_URLS=sandbox.url)) as reward_api:
        results = grade(reward_api.url, [*MATH_ITEMS, CODE_ITEM])
        assert [(r["status"], r["reward"]) for r in results] == [("ok", 1.0), ("ok", 0.0), ("ok", 1.0)]
        yield {"reward-api": reward_api, "sandbox": sandbox}


PROBES = ("startupProbe", "readinessProbe", "livenessProbe")


def probe_passes(url: str, probe: dict[str, Any]) -> str | None:
    """None when `probe` would pass against the service at `url`, else its last answer. Like the kubelet, it
    tolerates failures for failureThreshold x periodSeconds: a grading worker being replaced (a slow item stepped
    aside) makes /readyz 503 for a moment without the pod ever leaving the Service."""
    deadline = time.monotonic() + probe.get("failureThreshold", 3) * probe.get("periodSeconds", 10)
    while True:
        try:
            response = httpx.get(url + probe["httpGet"]["path"], timeout=probe.get("timeoutSeconds", 1) + 5)
            if response.status_code == 200:
                return None
            answer = f"{response.status_code} {response.text}"
        except httpx.TransportError as exc:
            answer = repr(exc)
        if time.monotonic() > deadline:
            return answer
        time.sleep(0.2)


@pytest.mark.parametrize("name", ["reward-api", "sandbox"])
def test_probes_answer_on_the_container_port(services: dict[str, LocalServer], name: str) -> None:
    spec = container(name)
    (port_variable,) = [k for k in literal_env(name) if k.endswith("_PORT")]
    assert int(literal_env(name)[port_variable]) == container_port(name, "http")
    assert {spec[kind]["httpGet"]["path"] for kind in PROBES} == {"/healthz", "/readyz"}
    for kind in PROBES:
        assert container_port(name, spec[kind]["httpGet"]["port"]) == container_port(name, "http")
        failure = probe_passes(services[name].url, spec[kind])
        assert failure is None, f"{name} {kind}: {failure}"
    annotations = deployment(name)["spec"]["template"]["metadata"]["annotations"]
    assert int(annotations["prometheus.io/port"]) == container_port(name, "http")
    assert httpx.get(services[name].url + annotations["prometheus.io/path"], timeout=10).status_code == 200


# --- the dashboard and the scrape config -----------------------------------------------------------------------


def exported(url: str) -> dict[str, set[str] | None]:
    """Every series name a service's /metrics declares -> the label names its samples carry, None while it has
    none. A counter `x` is `x_total`, a histogram `x_bucket`, `x_sum` and `x_count`, as Prometheus stores them."""
    suffixes = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_sum", "_count", "_created")}
    names: dict[str, set[str] | None] = {}
    for family in text_string_to_metric_families(httpx.get(f"{url}/metrics", timeout=10).text):
        for suffix in suffixes.get(family.type, ("",)):
            names.setdefault(family.name + suffix, None)
        for sample in family.samples:
            names[sample.name] = (names.get(sample.name) or set()) | set(sample.labels)
    return names


def dashboard_queries() -> list[dict[str, Any]]:
    """Every query target of every panel (rows included), with the legend it draws."""
    panels = json.loads(DASHBOARD.read_text())["panels"]
    panels += [inner for panel in panels for inner in panel.get("panels", [])]
    return [target for panel in panels for target in panel.get("targets", [])]


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads: identifiers that are not functions, keywords, labels or numbers."""
    bare = re.sub(r'"[^"]*"', '""', expr)
    bare = re.sub(r"\{[^}]*\}|\[[^\]]*\]", "", bare)  # label matchers, range windows
    bare = re.sub(r"\b(?:by|without|on|ignoring)\s*\([^)]*\)", "", bare)  # grouping labels
    names = re.findall(r"(?<![\w.])([A-Za-z_:][\w:]*)\b(?!\s*\()", bare)
    return set(names) - _PROMQL_KEYWORDS


def label_names(target: dict[str, Any]) -> set[str]:
    """Labels a query groups or filters by, and those its legend shows."""
    expr = target["expr"]
    used = {label for group in re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", expr) for label in group.split(",")}
    used |= {m for matcher in re.findall(r"\{([^}]*)\}", expr) for m in re.findall(r"(\w+)\s*[=!]~?", matcher)}
    used |= set(re.findall(r"\{\{\s*(\w+)\s*\}\}", target.get("legendFormat", "")))
    return {label.strip() for label in used if label.strip()}


def test_metric_name_extraction() -> None:
    expr = 'histogram_quantile(0.95, sum by (le, task) (rate(x_bucket{endpoint=~"/a|/b"}[$__rate_interval]))) / 1e-9'
    assert metric_names(expr) == {"x_bucket"}
    assert metric_names("sum(rate(a_total[5m])) / clamp_min(sum(rate(b_total[5m])) + count(c), 1)") == {
        "a_total",
        "b_total",
        "c",
    }
    assert label_names({"expr": expr, "legendFormat": "{{task}} p95"}) == {"le", "task", "endpoint"}


def test_dashboard_reads_only_metrics_the_services_export(services: dict[str, LocalServer]) -> None:
    exports = exported(services["reward-api"].url) | exported(services["sandbox"].url)
    queries = dashboard_queries()
    read = set()
    for target in queries:
        names = metric_names(target["expr"])
        assert names, f"no metric in {target['expr']!r}"
        missing = names - exports.keys()
        assert not missing, f"{sorted(missing)} in {target['expr']!r} are not in the services' /metrics"
        read |= names
        if names & FAULT_ONLY_METRICS:
            continue
        carried = [exports[name] for name in names]
        assert None not in carried, f"{sorted(names)} have no samples after grading math and code: {target['expr']!r}"
        labels = set().union(*carried) | SCRAPE_LABELS
        unknown = label_names(target) - labels
        assert not unknown, f"{target['expr']!r} uses labels {sorted(unknown)} that {sorted(names)} do not carry"
    # What the issue asks the dashboard to show.
    for wanted in (
        "reward_items_total",
        "reward_request_seconds_bucket",
        "reward_item_grading_seconds_bucket",
        "reward_worker_restarts_total",
        "reward_cache_hits_total",
        "reward_slow_calls",
        "reward_requests_total",
        "sandbox_runs_total",
        "sandbox_runs_in_flight",
        "sandbox_runs_waiting",
        "sandbox_requests_total",
    ):
        assert wanted in read, f"the dashboard shows nothing of {wanted}"


def test_dashboard_panels_use_the_datasource_variable() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    (variable,) = [v for v in dashboard["templating"]["list"] if v["type"] == "datasource"]
    assert variable["query"] == "prometheus"
    source = {"type": "prometheus", "uid": f"${{{variable['name']}}}"}
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    assert len({p["id"] for p in dashboard["panels"]}) == len(dashboard["panels"])
    for panel in panels:
        assert panel["datasource"] == source, panel["title"]
        assert panel["targets"] and all(t["datasource"] == source for t in panel["targets"]), panel["title"]
        grid = panel["gridPos"]
        assert grid["x"] >= 0 and grid["x"] + grid["w"] <= 24, panel["title"]


def test_grafana_provisioning_points_at_the_dashboards_and_prometheus() -> None:
    compose = yaml.safe_load(COMPOSE_FILE.read_text())["services"]
    mounts = dict(volume.split(":")[:2] for volume in compose["grafana"]["volumes"])
    assert mounts["./services/grafana/provisioning"] == "/etc/grafana/provisioning"
    provisioning = GRAFANA / "provisioning"
    (provider,) = yaml.safe_load((provisioning / "dashboards" / "reward-service.yml").read_text())["providers"]
    assert mounts[f"./{DASHBOARD.parent.relative_to(REPO)}"] == provider["options"]["path"]
    (source,) = yaml.safe_load((provisioning / "datasources" / "prometheus.yml").read_text())["datasources"]
    assert source["type"] == "prometheus"
    assert source["url"] == "http://prometheus:9090" and "9090:9090" in compose["prometheus"]["ports"]


def test_prometheus_scrapes_every_replica_on_its_planned_port() -> None:
    config = yaml.safe_load(PROMETHEUS_CONFIG.read_text())
    jobs = {
        job["job_name"]: [target for group in job["static_configs"] for target in group["targets"]]
        for job in config["scrape_configs"]
    }
    assert jobs == {job: [f"{host}:{port}" for host, port in hosts.items()] for job, hosts in PORT_PLAN.items()}
    # docker-compose.yml runs each of them there.
    compose = yaml.safe_load(COMPOSE_FILE.read_text())["services"]
    for hosts in PORT_PLAN.values():
        for host, port in hosts.items():
            env = compose[host]["environment"]
            listen = env.get("REWARD_API_PORT") or env.get("SANDBOX_PORT") or env["LB_STATS_BIND"]
            assert int(str(listen).rsplit(":", 1)[-1]) == port, f"compose runs {host} on {listen}, not {port}"


# --- both pods under runc, as the manifests specify them ------------------------------------------------------


class Pod:
    """Deployment `name`'s container run by podman (runc) with the manifest's security context, volumes, resource
    limits, environment and command. Its image is this machine's root filesystem, seen through an overlay: the
    same code, interpreter and tools the image holds. Host networking, on a free port."""

    def __init__(self, name: str, storage: Path, **env: str) -> None:
        self.name = f"k8s-test-{name}-{os.getpid()}"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        pod = deployment(name)["spec"]["template"]["spec"]
        spec = container(name)
        (port_variable,) = [k for k in literal_env(name) if k.endswith("_PORT")]
        # The image's PATH starts with its virtual environment: `python3` and `reward-api` are this checkout's.
        path = f"{Path(sys.executable).parent}:/usr/bin:/bin"
        environment = literal_env(name) | env | {port_variable: str(self.port), "PATH": path}
        self.podman = ["podman", "--root", str(storage / "root"), "--runroot", str(storage / "run")]
        # No bind mount of the storage onto itself, which would outlive the test.
        self.podman.append("--storage-opt=overlay.skip_mount_home=true")
        argv = [*self.podman, "run", "--detach", "--name", self.name, "--network", "host"]
        argv += security_options(pod.get("securityContext", {}), spec.get("securityContext", {}), storage)
        argv += resource_options(spec["resources"]["limits"])
        argv += volume_options(pod["volumes"], spec["volumeMounts"])
        # The checkout and its venv, read-only and on top: a manifest's emptyDir on /tmp would hide a checkout there.
        argv += [f"--volume={REPO}:{REPO}:ro"]
        argv += [f"--env={key}={value}" for key, value in environment.items()]
        self.argv = [*argv, "--rootfs", "/:O", *spec["command"]]
        self.environ = os.environ | {"CONTAINERS_CONF": str(PODMAN_CONF)}

    def __enter__(self) -> Pod:
        started = subprocess.run(self.argv, env=self.environ, capture_output=True, text=True, timeout=120)
        assert started.returncode == 0, f"podman could not start {self.name}: {started.stderr}"
        try:
            self._wait_until_ready()
        except BaseException:
            self.__exit__()  # `with` calls it only once __enter__ has returned
            raise
        return self

    def _wait_until_ready(self) -> None:
        deadline, answer = time.monotonic() + READY_WITHIN_S, "no answer"
        while time.monotonic() < deadline:
            try:
                response = httpx.get(f"{self.url}/readyz", timeout=5)
                if response.status_code == 200:
                    return
                answer = f"{response.status_code} {response.text}"
            except httpx.TransportError as exc:
                answer = repr(exc)
            state = self._podman("inspect", "--format", "{{.State.Running}}", self.name)
            assert state.strip() == "true", f"{self.name} stopped:\n{self.logs()}"
            time.sleep(0.5)
        pytest.fail(f"{self.name} not ready in {READY_WITHIN_S:g} s, /readyz: {answer}\n{self.logs()}")

    def __exit__(self, *exc: object) -> None:
        self._podman("rm", "--force", "--time", "10", self.name)

    def logs(self) -> str:
        return self._podman("logs", self.name)[-4000:]

    def _podman(self, *args: str) -> str:
        done = subprocess.run([*self.podman, *args], env=self.environ, capture_output=True, text=True, timeout=60)
        return done.stdout + done.stderr


def security_options(pod: dict[str, Any], context: dict[str, Any], storage: Path) -> list[str]:
    """podman's equivalents of a pod's and its container's securityContext; a field without one fails the test,
    so a new field in a manifest is never silently left out of this run."""
    options, user = [], context.get("runAsUser", pod.get("runAsUser", 0))
    handled = {"runAsUser", "runAsGroup", "runAsNonRoot", "seccompProfile"}
    assert set(pod) <= handled, f"no podman equivalent for pod securityContext {sorted(set(pod) - handled)}"
    if pod.get("runAsNonRoot"):
        assert user != 0
    if user:
        options += [f"--user={user}:{pod.get('runAsGroup', user)}", *interpreter_mounts(storage)]
    # None set: the runtime's default, as podman's is (a privileged container has none either way).
    seccomp = pod.get("seccompProfile", {}).get("type", "RuntimeDefault")
    assert seccomp == "RuntimeDefault", f"no podman equivalent for seccomp profile {seccomp}"
    for key, value in context.items():
        if key == "privileged":
            options += ["--privileged"] if value else []
        elif key == "allowPrivilegeEscalation":
            options += [] if value else ["--security-opt=no-new-privileges"]
        elif key == "readOnlyRootFilesystem":
            # podman's own tmpfs for /run, /tmp, /var/tmp off: only the manifest's volumes are writable.
            options += ["--read-only", "--read-only-tmpfs=false"] if value else []
        elif key == "capabilities":
            options += [f"--cap-drop={cap}" for cap in value.get("drop", [])]
            options += [f"--cap-add={cap}" for cap in value.get("add", [])]
        elif key != "runAsUser":
            pytest.fail(f"no podman equivalent for container securityContext.{key}: add one to security_options()")
    return options


def interpreter_mounts(storage: Path) -> list[str]:
    """A non-root user reaches this interpreter even where it lives under a private directory (pyenv in /root):
    that directory is replaced by an empty public one holding only the interpreter's install, read-only. The
    image's interpreter is in public directories; this one is part of the stand-in image."""
    prefix = Path(sys.base_prefix).resolve()
    private = next((p for p in reversed(prefix.parents) if not p.stat().st_mode & 0o001), None)
    if private is None:
        return []
    public = storage / "public" / private.relative_to("/")
    (public / prefix.relative_to(private)).mkdir(parents=True, exist_ok=True)
    for directory in [public, *public.rglob("*")]:
        directory.chmod(0o755)
    return [f"--volume={public}:{private}:ro", f"--volume={prefix}:{prefix}:ro"]


def resource_options(limits: dict[str, str]) -> list[str]:
    memory = re.fullmatch(r"(\d+)Gi", limits["memory"])
    assert memory, f"extend resource_options() to memory {limits['memory']}"
    return [f"--cpus={cpus(limits['cpu'])}", f"--memory={memory[1]}g"]


def volume_options(volumes: list[dict[str, Any]], mounts: list[dict[str, Any]]) -> list[str]:
    by_name = {volume["name"]: volume for volume in volumes}
    options = []
    for mount in mounts:
        volume = by_name[mount["name"]]
        if "emptyDir" in volume:
            size = volume["emptyDir"].get("sizeLimit", "")
            options.append(f"--tmpfs={mount['mountPath']}:rw,notmpcopyup" + (f",size={size[:-1]}" if size else ""))
        elif "hostPath" in volume:
            options.append(f"--volume={volume['hostPath']['path']}:{mount['mountPath']}:rw")
        else:
            pytest.fail(f"no podman equivalent for volume {volume}: add one to volume_options()")
    return options


def podman_runs_here() -> str | None:
    """Why podman cannot run these pods on this machine, or None."""
    if shutil.which("podman") is None or shutil.which("runc") is None:
        return "podman and runc are not installed (apt-get install podman runc)"
    if os.geteuid() != 0:
        return "the sandbox pod runs privileged: rootful podman needed"
    return None


@contextlib.contextmanager
def podman_storage() -> Iterator[Path]:
    """A private podman storage and run root, removed afterwards. Under /tmp, not pytest's temporary directories:
    podman wants its run root under 50 characters."""
    storage = Path(tempfile.mkdtemp(prefix="k8s-pods-"))
    try:
        yield storage
    finally:
        # podman's exit command (`container cleanup`) may still be running for a moment after `rm`.
        deadline = time.monotonic() + 30
        while True:
            try:
                shutil.rmtree(storage)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)


def test_both_pods_run_under_runc_as_the_manifests_specify() -> None:
    assert (missing := podman_runs_here()) is None, missing  # `make test` installs them: never skipped
    with podman_storage() as storage:
        sandbox = Pod("sandbox", storage)
        with sandbox, Pod("reward-api", storage, REWARD_API_SANDBOX_URLS=sandbox.url) as api:
            check_pods(sandbox, api)


def check_pods(sandbox: Pod, api: Pod) -> None:
    ready = httpx.get(f"{sandbox.url}/readyz", timeout=10).json()
    assert ready["isolation"] == f"bwrap+cgroup{host_version()}", ready  # a cgroup per run, no node path mounted
    results = grade(api.url, [*MATH_ITEMS, CODE_ITEM])
    assert [(r["status"], r["reward"]) for r in results] == [("ok", 1.0), ("ok", 0.0), ("ok", 1.0)], results
    logs = sandbox.logs()  # the run was forked from the zygote (sandbox/zygote.py): the pod's seccomp allows it
    assert "cannot start runs here" not in logs and "with bwrap instead" not in logs, logs
    for pod, name in ((sandbox, "sandbox"), (api, "reward-api")):
        for kind in PROBES:
            failure = probe_passes(pod.url, container(name)[kind])
            assert failure is None, f"{name} {kind}: {failure}\n{pod.logs()}"

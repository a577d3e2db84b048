#!/usr/bin/env bash
# The whole stack in containers with podman, no Docker engine: builds the three images, brings
# docker-compose.yml up with podman-compose (host networking by default: services/compose.host.yml), grades math
# and code items through the load balancer, SIGKILLs one reward-api replica and one sandbox under load and checks
# that every request is still answered alike and both come back, then tears everything down. Exits non-zero on
# any failure.
#
#   sudo services/podman-smoke.sh      # 3-4 minutes on 2 cores from nothing, about 1.5 with built images
#
# Needs root (the sandbox manages cgroups; debootstrap), podman + runc, podman-compose (pip), python3, and
# ports 8000-8003, 8081-8082 and 8404 free. On a host with cgroup v1 memory and pids hierarchies it adds
# services/compose.cgroup-v1.yml. Environment:
#   BASE_IMAGE      base of every image (default localhost/debian-base:bookworm, made by
#                   services/base/make-base-image.sh when missing; debian:bookworm-slim where a registry is
#                   reachable)
#   PIP_CERT        a CA bundle pip in the build must trust (a proxy that re-signs HTTPS); passed into the builds
#   PODMAN_COMPOSE  the podman-compose command (default: .venv/bin/podman-compose, else podman-compose)
#   PYTHON          the interpreter of the checks (standard library only; default python3)
#   NETWORK         host (default: services/compose.host.yml, every service on 127.0.0.1) or bridge
#                   (docker-compose.yml alone: a compose network, only :8000 and :8404 published)
#   KEEP_UP=1       leave the stack running at the end (tear it down with the `down` command printed)
set -euo pipefail

cd "$(dirname "$0")/.."
export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/services/podman/containers.conf}"
export BUILDAH_FORMAT=docker # OCI images drop HEALTHCHECK; the docker format keeps it
base_image="${BASE_IMAGE:-localhost/debian-base:bookworm}"
project=reward-service # docker-compose.yml's `name`
python="${PYTHON:-python3}"
if [[ -n ${PODMAN_COMPOSE:-} ]]; then
    read -r -a podman_compose <<<"$PODMAN_COMPOSE"
elif [[ -x .venv/bin/podman-compose ]]; then
    podman_compose=(.venv/bin/podman-compose)
else
    podman_compose=(podman-compose)
fi
compose=("${podman_compose[@]}" -f docker-compose.yml)
case "${NETWORK:-host}" in
host) compose+=(-f services/compose.host.yml) ;;
bridge) ;;
*) echo "podman-smoke: NETWORK=${NETWORK} is neither host nor bridge" >&2 && exit 1 ;;
esac
# podman's option for a writable cgroup v2 mount (it refuses Docker's writable-cgroups=true, docker-compose.yml's
# default); on a hybrid cgroup v1 host the sandboxes get the host's hierarchies instead.
export SANDBOX_CGROUP_OPT="${SANDBOX_CGROUP_OPT:-unmask=/sys/fs/cgroup}"
if grep -Eq '^[0-9]+:([^:]*,)?memory(,[^:]*)?:' /proc/self/cgroup; then
    compose+=(-f services/compose.cgroup-v1.yml)
fi

log() { echo "podman-smoke: $*" >&2; }
fail() {
    log "FAILED: $*"
    exit 1
}

for port in 8000 8001 8002 8003 8081 8082 8404; do
    if "$python" -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1', $port)) != 0)"; then
        fail "port $port is in use on 127.0.0.1; the stack's services listen there (host networking)"
    fi
done

if ! podman image exists "$base_image"; then
    [[ $base_image == localhost/debian-base:* ]] || fail "base image $base_image not found: pull or import it"
    log "making $base_image with debootstrap"
    BASE_IMAGE="$base_image" services/base/make-base-image.sh
fi

build_args=(--build-arg "BASE_IMAGE=$base_image")
if [[ -n ${PIP_CERT:-} ]]; then
    build_args+=(--volume "$PIP_CERT:/etc/ssl/host-ca.crt:ro" --build-arg PIP_CERT=/etc/ssl/host-ca.crt)
fi
for spec in reward-lb:lb reward-api:reward-api sandbox:sandbox; do
    log "building ${spec%%:*}:0.1.0"
    podman build --quiet "${build_args[@]}" -t "${spec%%:*}:0.1.0" -f "services/${spec#*:}/Dockerfile" . >/dev/null
done
podman images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E '/(reward-lb|reward-api|sandbox):0.1.0 ' >&2

teardown() {
    local status=$?
    if [[ ${KEEP_UP:-} == 1 ]]; then
        log "left running; stop with: CONTAINERS_CONF=$CONTAINERS_CONF ${compose[*]} down"
        return
    fi
    log "tearing down"
    "${compose[@]}" down >/dev/null 2>&1 || true
    # podman-compose down leaves containers it lost track of (e.g. one restarted by its restart policy).
    podman ps -aq --filter "label=io.podman.compose.project=$project" | xargs -r podman rm -f >/dev/null 2>&1 || true
    exit "$status"
}
trap teardown EXIT

container() { # the container id of a compose service
    podman ps -aq --filter "label=io.podman.compose.project=$project" --filter "label=com.docker.compose.service=$1"
}

SECONDS=0 # times below count from here
log "bringing the stack up"
up_log="$(mktemp /tmp/podman-smoke-up.XXXXXX)"
"${compose[@]}" up -d >"$up_log" 2>&1 || { cat "$up_log" >&2; fail "podman-compose up failed (above)"; }
rm -f "$up_log"

# podman runs HEALTHCHECKs from systemd timers; without systemd they never run on their own, so run each once.
healthchecks() {
    local service
    for service in sandbox-1 sandbox-2 reward-api-1 reward-api-2 reward-api-3; do
        podman healthcheck run "$(container "$service")" >/dev/null 2>&1 || return 1
    done
}

checks() { # the functional checks against the balancer; $1: phase (up | under-load)
    "$python" - "$1" <<'PY'
import json
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

LB = "http://127.0.0.1:8000"
STATS = "http://127.0.0.1:8404"


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


RETRIED = []  # requests answered only on a retry


def post(items: list[dict]) -> list[dict]:
    """POST a batch as RewardClient does: a refused or cut connection, 502, 503 or 504 is tried again (a request
    in flight on a replica that dies is lost with it; the balancer cannot replay it)."""
    body = json.dumps({"items": items}).encode()
    for attempt in range(5):
        request = urllib.request.Request(f"{LB}/v1/rewards", body, {"content-type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                if attempt:
                    RETRIED.append(attempt)
                return json.load(response)["results"]
        except urllib.error.HTTPError as exc:
            if exc.code not in (502, 503, 504) or attempt == 4:
                raise
        except (ConnectionError, urllib.error.URLError):
            if attempt == 4:
                raise
        time.sleep(1 + attempt)
    raise AssertionError("unreachable")


DOUBLE = {"tests": [{"input": "21\n", "output": "42"}, {"input": "5\n", "output": "10"}]}
C_DOUBLE = '#include <stdio.h>\nint main(void){int x; scanf("%d", &x); printf("%d\\n", 2 * x); return 0;}'


def math(completion: str, reference: str) -> dict:
    return {"task": "math", "completion": completion, "reference": reference}


def code(language: str, source: str) -> dict:
    completion = f"<think>Double the number.</think>\n```{language}\n{source}\n```\n"
    return {"task": "code", "completion": completion, "reference": DOUBLE}


def cases(batch: int) -> list[tuple[dict, float]]:
    """(item, expected reward): math right and wrong, code right and wrong in an interpreted and a compiled
    language. `batch` makes every item new, so no replica answers it from its cache."""
    said = f"Batch {batch}: the answer is"
    return [
        (math(f"{said} $\\boxed{{4}}$.", "4"), 1.0),
        (math(f"{said} $\\boxed{{\\frac{{1}}{{2}}}}$.", "0.5"), 1.0),
        (math(f"{said} $\\boxed{{5}}$.", "4"), 0.0),
        (code("python", f"# {batch}\nprint(int(input()) * 2)"), 1.0),
        (code("python", f"# {batch}\nprint(int(input()) + 2)"), 0.0),
        (code("c", f"// {batch}\n{C_DOUBLE}"), 1.0),
    ]


def check_batch(batch: int) -> None:
    items, expected = zip(*cases(batch), strict=True)
    results = post(list(items))
    bad = [r for r in results if r["status"] != "ok"]
    assert not bad, f"batch {batch}: items not graded ok: {bad}"
    got = [r["reward"] for r in results]
    assert got == list(expected), f"batch {batch}: rewards {got}, expected {list(expected)}"


def check_up() -> None:
    status, body = get(f"{LB}/healthz")
    assert status == 200, f"GET :8000/healthz -> {status} {body}"
    status, body = get(f"{LB}/readyz")
    assert status == 200, f"GET :8000/readyz -> {status} {body}"
    check_batch(int(time.time() * 1000))
    status, metrics = get(f"{STATS}/metrics")
    assert status == 200, f"GET :8404/metrics -> {status}"
    up = [line for line in metrics.splitlines() if line.startswith("haproxy_server_status{") and 'state="UP"' in line]
    assert sum(line.endswith(" 1") for line in up) == 3, "HAProxy does not see 3 replicas UP:\n" + "\n".join(up)
    print("up: healthz, readyz, 6 items graded right through :8000, 3 replicas UP in :8404/metrics")


def check_under_load(seconds: float = 30) -> None:
    """Batches of new items, four at a time, for `seconds` (a replica and a sandbox get killed meanwhile):
    every one answered, every result as expected."""
    with ThreadPoolExecutor(4) as pool:
        start, batches = time.monotonic(), 0
        while time.monotonic() - start < seconds:
            list(pool.map(check_batch, range(batches, batches + 4)))
            batches += 4
    print(
        f"under load: {batches} batches of 6 new items in {seconds:.0f} s, every one answered as expected"
        f" ({len(RETRIED)} only on a retry)"
    )


{"up": check_up, "under-load": check_under_load}[sys.argv[1]]()
PY
}

log "waiting for every service to be ready (the reward-api replicas warm their graders up first)"
deadline=$((SECONDS + 240))
until checks up 2>/dev/null && healthchecks; do
    ((SECONDS < deadline)) || { checks up || true; fail "the stack was not ready within 240 s"; }
    sleep 5
done
log "ready after ${SECONDS} s"

# Load through the balancer; 5 s in, SIGKILL the main process of one replica and one sandbox (a crash, not a
# `podman stop`).
checks under-load &
load=$!
sleep 5
killed=()
for service in reward-api-1 sandbox-1; do
    pid=$(podman inspect --format '{{.State.Pid}}' "$(container "$service")")
    log "SIGKILL $service (pid $pid on the host)"
    kill -KILL "$pid"
    killed+=("$service")
done
wait "$load" || fail "requests failed after ${killed[*]} were killed (above)"

log "waiting for the killed containers to come back (restart: unless-stopped) and the balancer to use them again"
deadline=$((SECONDS + 120))
until healthchecks 2>/dev/null && checks up 2>/dev/null; do
    ((SECONDS < deadline)) || { checks up || true; fail "${killed[*]} did not come back within 120 s"; }
    sleep 5
done
for service in "${killed[@]}"; do
    log "$service restarted $(podman inspect --format '{{.RestartCount}}' "$(container "$service")") time(s)"
done
log "passed in ${SECONDS} s"

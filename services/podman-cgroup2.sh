#!/usr/bin/env bash
# Which container settings the sandbox needs, measured: the sandbox image under podman + runc on a cgroup-v2-only
# kernel with docker-compose.yml's least-privilege settings, with each of them left out in turn, and with the two
# Kubernetes options of services/k8s/sandbox-deployment.yaml; on a hybrid cgroup v1 host (this project's build
# machines) first the same on the host with services/compose.cgroup-v1.yml. Each row starts the image and prints the
# isolation level its /readyz reports, or why it did not start; both compose files also go through podman-compose
# and judge a program. Exits non-zero when a row differs from README "Containers and compose" / "Kubernetes".
# Not part of `make test`.
#
#   sudo services/podman-cgroup2.sh      # 8-11 minutes on 2 cores without KVM, the image's layers cached
#
# The v2 guest is tests/cgroup2_guest.py's (QEMU + virtme-ng, `cgroup_no_v1=all`; `make test` installs them), with
# AppArmor on, as on Debian and Ubuntu hosts. The guest sees this host's files read-only and keeps its own writes in
# memory, so the image reaches it as a read-only image store under /tmp, squashed to one layer. The rows in a user
# namespace run from a copy of that layer owned by the namespace's root (uid 100000), as an idmapped mount shows the
# image to a Kubernetes pod with `hostUsers: false` (podman would copy the whole image into the guest's memory).
#
# Needs root, podman + runc, podman-compose (pip) and this checkout's venv. Environment:
#   BASE_IMAGE, PIP_CERT  as for services/podman-smoke.sh (it builds the sandbox image, from cache when unchanged)
#   PODMAN_COMPOSE        the podman-compose command (default: .venv/bin/podman-compose, else podman-compose)
#   PYTHON                the interpreter that boots the guest (default .venv/bin/python)
set -euo pipefail

cd "$(dirname "$0")/.."
export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/services/podman/containers.conf}"
export BUILDAH_FORMAT=docker # OCI images drop HEALTHCHECK; the docker format keeps it
base_image="${BASE_IMAGE:-localhost/debian-base:bookworm}"
image=localhost/sandbox:0.1.0
python="${PYTHON:-.venv/bin/python}"
if [[ -n ${PODMAN_COMPOSE:-} ]]; then
    podman_compose="$PODMAN_COMPOSE"
elif [[ -x .venv/bin/podman-compose ]]; then
    podman_compose=.venv/bin/podman-compose
else
    podman_compose=podman-compose
fi

log() { echo "podman-cgroup2: $*" >&2; }
fail() {
    log "FAILED: $*"
    exit 1
}

if ! podman image exists "$base_image"; then
    [[ $base_image == localhost/debian-base:* ]] || fail "base image $base_image not found: pull or import it"
    BASE_IMAGE="$base_image" services/base/make-base-image.sh
fi
build_args=(--build-arg "BASE_IMAGE=$base_image")
if [[ -n ${PIP_CERT:-} ]]; then
    build_args+=(--volume "$PIP_CERT:/etc/ssl/host-ca.crt:ro" --build-arg PIP_CERT=/etc/ssl/host-ca.crt)
fi
log "building $image (this checkout's sandbox/)"
podman build --quiet "${build_args[@]}" -t "$image" -f services/sandbox/Dockerfile . >/dev/null

work="$(mktemp -d /tmp/podman-cgroup2.XXXXXX)"
squashed="localhost/podman-cgroup2-squashed:$(basename "$work")"
cleanup() {
    local status=$?
    podman rmi --force "$squashed" >/dev/null 2>&1 || true
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
chmod 755 "$work"

log "squashing $image into an image store for the guest"
container=$(podman create "$image")
podman commit --quiet --squash "$container" "$squashed" >/dev/null
podman rm "$container" >/dev/null
store="$work/store"
podman push --quiet "$squashed" "containers-storage:[overlay@$store+$store/run]$image"
layer=$(podman --root "$store" --runroot "$store/run" image inspect --format '{{.GraphDriver.Data.UpperDir}}' "$image")
podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$image" | grep . >"$work/image.env"
userns_rootfs="$work/userns-rootfs"
cp -a "$layer" "$userns_rootfs"
"$python" - "$userns_rootfs" <<'PY'
import os
import sys

top = sys.argv[1]
for path in [top] + [os.path.join(root, name) for root, dirs, files in os.walk(top) for name in dirs + files]:
    owner = os.lstat(path)
    os.lchown(path, owner.st_uid + 100000, owner.st_gid + 100000)
PY

# podman in the guest: no systemd (cgroupfs, events to a file), its storage in memory, the image from $store.
cat >"$work/containers.conf" <<EOF
[containers]
default_ulimits = []
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
cat >"$work/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "/run/podman-cgroup2/root"
runroot = "/run/podman-cgroup2/run"
[storage.options]
additionalimagestores = ["$store"]
EOF

# The rows, run on this host (MODE=v1) and in the guest (MODE=v2).
cat >"$work/rows.sh" <<'ROWS'
set -u -f # -f: `unmask=/proc/*` is an option, not a pattern
seccomp=services/sandbox/seccomp.json
port=9100
failures=0
# docker-compose.yml's sandbox settings as podman options, by name (SANDBOX_CGROUP_OPT=unmask=/sys/fs/cgroup for
# podman); on v1 services/compose.cgroup-v1.yml replaces `cgroupns` with the host's and the host's hierarchies.
declare -A setting=(
    [cgroupns]="--cgroupns=private" [caps]="--cap-drop ALL --cap-add SETUID --cap-add SETGID"
    [seccomp]="--security-opt seccomp=$seccomp" [apparmor]="--security-opt apparmor=unconfined"
    [systempaths]="--security-opt systempaths=unconfined" [nnp]="--security-opt no-new-privileges=true"
    [cgroup]="--security-opt unmask=/sys/fs/cgroup" [readonly]="--read-only --tmpfs /tmp"
)
names=(cgroupns caps seccomp apparmor systempaths nnp cgroup readonly)
v1_mounts="-v /sys/fs/cgroup/memory:/sys/fs/cgroup/memory -v /sys/fs/cgroup/pids:/sys/fs/cgroup/pids"
if [[ $MODE == v1 ]]; then
    setting[cgroupns]="--cgroupns=host $v1_mounts"
fi
# The image owned by uid 100000 (rows in a user namespace), with the image's environment and compose's command.
from_userns_rootfs="--env-file $IMAGE_ENV --workdir /app --rootfs $USERNS_ROOTFS python3 -m sandbox.cli serve"

settings() { # the compose settings but those named in $1 (a,b,...), then the other arguments
    local skip=",$1," name words=()
    shift
    for name in "${names[@]}"; do
        [[ $skip == *",$name,"* ]] || words+=(${setting[$name]})
    done
    echo "${words[@]}" "$@"
}

gist() { # stdin: /readyz's answer ($1 = readyz) or the logs -> the level, `refused: why`, or nothing while starting
    python3 -c 'import json, re, sys
text = sys.stdin.read()
if sys.argv[1] == "readyz":
    answer = json.loads(text)
    if answer["ready"] or answer["reason"] == "starting":
        sys.exit(print(answer["isolation"] if answer["ready"] else ""))
    text = answer["reason"]
# bubblewrap'"'"'s or setpriv'"'"'s own words, else the sandbox'"'"'s first clause
words = re.search(r"\b(?:bwrap|setpriv): [^\\\")\n]*", text) or re.search(r"no writable cgroup[^:]*: [^:;]*", text)
print("refused: " + (words[0] if words else text.strip()[-120:]))' "$1"
}

level() { # the isolation level on 127.0.0.1:$1, `refused: why`, or nothing yet; $2: the container
    local answer
    if answer=$(curl -s -m 5 "127.0.0.1:$1/readyz") && [[ -n $answer ]]; then
        gist readyz <<<"$answer"
    elif [[ $(podman inspect --format '{{.State.Running}}' "$2" 2>&1) != true ]]; then
        podman logs "$2" 2>&1 | gist logs
    fi
}

report() { # NAME EXPECTED GOT
    local verdict=ok
    [[ $3 == "$2" || ($2 == refused && $3 == refused:*) ]] || verdict=UNEXPECTED failures=$((failures + 1))
    printf '%-3s %-10s %-44s %-14s %s\n' "$MODE" "$verdict" "$1" "$2" "$3"
}

row() { # NAME EXPECTED PODMAN-RUN-ARGUMENTS...: EXPECTED is a level of /readyz, or `refused`
    local name=$1 expected=$2 got="" i
    shift 2
    port=$((port + 1))
    local container="cgroup2-row-$port"
    if ! podman run -d --name "$container" --network host -e SANDBOX_HOST=127.0.0.1 -e SANDBOX_PORT=$port "$@" \
        >/dev/null 2>/tmp/row.err; then
        got="refused: podman: $(grep -v level=error /tmp/row.err | tail -1)"
    else
        for i in $(seq 1 180); do
            got=$(level "$port" "$container") && [[ -n $got ]] && break
            sleep 1
        done
    fi
    podman rm -f "$container" >/dev/null 2>&1
    report "$name" "$expected" "${got:-no answer in 180 s}"
}

compose_row() { # NAME EXPECTED COMPOSE-FILES...: sandbox-1 through podman-compose, judging one program
    local name=$1 expected=$2 got="" files=() file i
    shift 2
    for file in "$@"; do files+=(-f "$file"); done
    local compose=($PODMAN_COMPOSE "${files[@]}")
    SANDBOX_CGROUP_OPT=unmask=/sys/fs/cgroup "${compose[@]}" up -d sandbox-1 >"/tmp/compose-up.log" 2>&1 ||
        got="refused: $(tail -1 /tmp/compose-up.log)"
    for i in $(seq 1 180); do
        [[ -z $got ]] || break
        got=$(level 8081 reward-service_sandbox-1_1) && [[ -n $got ]] && break
        sleep 1
    done
    if [[ $got == bwrap* ]]; then
        local judged
        judged=$(curl -s -m 120 127.0.0.1:8081/v1/judge -H 'content-type: application/json' -d '{"language": "python",
            "code": "print(int(input()) * 2)", "suite": {"kind": "stdio", "tests": [{"input": "21", "output": "42"}]}}')
        [[ $judged == *'"passed":1,'* ]] || got="$got, but judging failed: ${judged:0:200}"
    fi
    "${compose[@]}" down >/dev/null 2>&1
    report "$name" "$expected" "${got:-no answer in 180 s}"
}

if [[ $MODE == v1 ]]; then
    compose_row "docker-compose.yml + compose.cgroup-v1.yml" bwrap+cgroup1 \
        docker-compose.yml services/compose.host.yml services/compose.cgroup-v1.yml
    row "compose + v1 settings" bwrap+cgroup1 $(settings "") "$IMAGE"
    row "  without the host's hierarchies" refused $(settings cgroupns --cgroupns=host) "$IMAGE"
    row "  private cgroup namespace instead" refused $(settings cgroupns --cgroupns=private $v1_mounts) "$IMAGE"
    row "  without seccomp.json (podman's)" refused $(settings seccomp) "$IMAGE"
    row "  without systempaths=unconfined" refused $(settings systempaths) "$IMAGE"
    row "  without SETUID, SETGID" refused $(settings caps --cap-drop ALL) "$IMAGE"
    row "k8s A: privileged only" bwrap+cgroup1 --privileged "$IMAGE"
else
    compose_row "docker-compose.yml" bwrap+cgroup2 docker-compose.yml services/compose.host.yml
    row "compose settings" bwrap+cgroup2 $(settings "") "$IMAGE"
    row "  without seccomp.json (podman's)" refused $(settings seccomp) "$IMAGE"
    row "  without apparmor=unconfined" refused $(settings apparmor) "$IMAGE"
    row "  without systempaths=unconfined" refused $(settings systempaths) "$IMAGE"
    row "  unmask=/proc/* for systempaths" bwrap+cgroup2 $(settings systempaths --security-opt unmask=/proc/*) "$IMAGE"
    # podman's systempaths=unconfined unmasks /sys/fs/cgroup too: unmask=/proc/* stands in for it here.
    row "  without a writable cgroup" refused $(settings systempaths,cgroup --security-opt unmask=/proc/*) "$IMAGE"
    row "  ... + SANDBOX_ISOLATION=bwrap-rlimits" bwrap+rlimits \
        $(settings systempaths,cgroup --security-opt unmask=/proc/* -e SANDBOX_ISOLATION=bwrap-rlimits) "$IMAGE"
    row "  without SETUID, SETGID" refused $(settings caps --cap-drop ALL) "$IMAGE"
    row "  with the default capabilities" bwrap+cgroup2 $(settings caps) "$IMAGE"
    row "  without no-new-privileges" bwrap+cgroup2 $(settings nnp) "$IMAGE"
    row "  without read-only root" bwrap+cgroup2 $(settings readonly) "$IMAGE"
    row "  host cgroup namespace" bwrap+cgroup2 $(settings cgroupns --cgroupns=host) "$IMAGE"
    # containerd and CRI-O give privileged containers the host's cgroup namespace on v2, others a private one.
    row "k8s A: privileged only" bwrap+cgroup2 --privileged --cgroupns=host "$IMAGE"
    row "k8s A: privileged, private cgroupns" bwrap+cgroup2 --privileged --cgroupns=private "$IMAGE"
    # Kubernetes' hostUsers: false is a user namespace; procMount: Unmasked is unmask=/proc/*.
    userns="--uidmap 0:100000:65536 --gidmap 0:100000:65536 --security-opt unmask=/proc/*"
    row "k8s B: user namespace, least privilege" refused $(settings systempaths,cgroup $userns) $from_userns_rootfs
    row "k8s B + SANDBOX_ISOLATION=bwrap-rlimits" bwrap+rlimits \
        $(settings systempaths,cgroup $userns -e SANDBOX_ISOLATION=bwrap-rlimits) $from_userns_rootfs
    # A read-write cgroup mount does not help: the cgroup belongs to the host's root, not the namespace's.
    row "k8s B + a writable cgroup mount" refused $(settings systempaths $userns) $from_userns_rootfs
fi
exit "$failures"
ROWS

if grep -Eq '^[0-9]+:([^:]*,)?memory(,[^:]*)?:' /proc/self/cgroup; then
    "$python" -c "import socket, sys; sys.exit(socket.socket().connect_ex(('127.0.0.1', 8081)) == 0)" ||
        fail "port 8081 is in use on 127.0.0.1; sandbox-1 listens there (host networking)"
    log "cgroup v1 (hybrid) on this host: its rows first"
    MODE=v1 IMAGE="$image" IMAGE_ENV="$work/image.env" USERNS_ROOTFS="$userns_rootfs" \
        PODMAN_COMPOSE="$podman_compose" bash "$work/rows.sh" || v1_failures=$?
fi

cat >"$work/guest.sh" <<EOF
export CONTAINERS_CONF=$work/containers.conf CONTAINERS_STORAGE_CONF=$work/storage.conf
export MODE=v2 IMAGE=$image IMAGE_ENV=$work/image.env USERNS_ROOTFS=$userns_rootfs PODMAN_COMPOSE="$podman_compose"
bash $work/rows.sh 2>&1 | grep -v level=error
exit \${PIPESTATUS[0]}
EOF
log "booting a cgroup-v2-only guest (tests/cgroup2_guest.py) for the v2 rows"
"$python" - "$work/guest.sh" <<'PY' || fail "v2 rows (above)"
import sys
from pathlib import Path

from tests.cgroup2_guest import run_in_guest

result = run_in_guest(Path(sys.argv[1]).read_text(), timeout_s=1800)
print(f"(guest booted in {result.boot_s:.0f} s)\n{result.output}", end="")
sys.exit(result.returncode)
PY
[[ ${v1_failures:-0} == 0 ]] || fail "v1 rows (above)"
log "passed in ${SECONDS} s"

#!/usr/bin/env bash
# Makes the base image our Dockerfiles build FROM where no container registry is reachable: a minimal Debian
# bookworm made with debootstrap (from a Debian mirror, which apt reaches anyway) and imported into podman.
#
#   sudo services/base/make-base-image.sh                 # -> localhost/debian-base:bookworm
#   sudo services/base/make-base-image.sh http://ftp.de.debian.org/debian    # from this mirror
#   services/base/make-base-image.sh --print-mirror       # only say which mirrors it would use (no root)
#   podman build --build-arg BASE_IMAGE=localhost/debian-base:bookworm -f services/sandbox/Dockerfile .
#
# The Debian mirror: the argument, else DEBIAN_MIRROR, else the one this host's apt already uses (the first
# source for bookworm main in /etc/apt/sources.list, /etc/apt/sources.list.d/*.list or, deb822,
# /etc/apt/sources.list.d/*.sources; on a Debian host of another release, the first source for its own release,
# which serves bookworm too). The security mirror: DEBIAN_SECURITY_MIRROR, else (mirror from apt's sources) the
# host's bookworm-security source, else the mirror's sibling .../debian-security.
#
# Needs root, debootstrap and podman (apt-get install debootstrap podman runc). Takes about 2 minutes.
# Environment: BASE_IMAGE (the name to import as), DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR, PODMAN (e.g.
# "podman --runtime runc"), APT_SOURCES_DIR (where apt's sources are; default /etc/apt, for tests).
set -euo pipefail

suite=bookworm
image="${BASE_IMAGE:-localhost/debian-base:$suite}"
read -r -a podman_cmd <<<"${PODMAN:-podman}"
apt_dir="${APT_SOURCES_DIR:-/etc/apt}"

# The URIs of apt's `deb` sources for suite $1 with component $2, in apt's order (sources.list, then
# sources.list.d/ by name), one a line; one-line (`deb [opts] URI suite comp...`) and deb822 stanzas
# (Types/URIs/Suites/Components, `Enabled: no` skipped) alike. Only http(s), ftp and file URIs (what
# debootstrap fetches from); trailing slashes dropped.
apt_source_uris() {
    local files=() file
    [[ -f $apt_dir/sources.list ]] && files+=("$apt_dir/sources.list")
    for file in "$apt_dir"/sources.list.d/*; do # sorted by name, as apt reads them
        [[ -f $file && ($file == *.list || $file == *.sources) ]] && files+=("$file")
    done
    ((${#files[@]})) || return 0
    awk -v want_suite="$1" -v want_comp="$2" '
        function has(list, word,    n, i, a) { n = split(list, a, /[ \t]+/); for (i = 1; i <= n; i++) if (a[i] == word) return 1; return 0 }
        function emit(uris,    n, i, a) {
            n = split(uris, a, /[ \t]+/)
            for (i = 1; i <= n; i++) if (a[i] ~ /^(https?|ftp|file):/) { sub(/\/+$/, "", a[i]); print a[i] }
        }
        function stanza_end() {
            if (has(types, "deb") && has(suites, want_suite) && has(comps, want_comp) && tolower(enabled) != "no") emit(uris)
            types = uris = suites = comps = enabled = ""
        }
        FNR == 1 { if (deb822) stanza_end(); deb822 = FILENAME ~ /\.sources$/ }
        { sub(/\r$/, "") }
        /^[ \t]*#/ { next }
        !deb822 {                                   # deb [options] URI suite component...
            line = $0; sub(/#.*/, "", line)
            if (line !~ /^[ \t]*deb[ \t]/) next
            sub(/^[ \t]*deb[ \t]+/, "", line); sub(/^\[[^]]*\][ \t]*/, "", line)
            n = split(line, f, /[ \t]+/)
            if (f[2] == want_suite) for (i = 3; i <= n; i++) if (f[i] == want_comp) { emit(f[1]); break }
            next
        }
        /^[ \t]*$/ { stanza_end(); next }             # deb822: stanzas of Field: value, blank-line separated
        /^[^ \t:]+:/ {
            key = tolower($0); sub(/:.*/, "", key)
            value = $0; sub(/^[^:]*:[ \t]*/, "", value); sub(/[ \t]+$/, "", value)
            if (key == "types") types = value; else if (key == "uris") uris = value
            else if (key == "suites") suites = value; else if (key == "components") comps = value
            else if (key == "enabled") enabled = value
        }
        END { if (deb822) stanza_end() }
    ' "${files[@]}"
}

# The first of them (all read first: `| head -n 1` could end awk with SIGPIPE, fatal under pipefail).
first_apt_source_uri() {
    local uris
    uris="$(apt_source_uris "$@")"
    echo "${uris%%$'\n'*}"
}

# This host's own Debian release (VERSION_CODENAME of /etc/os-release), if it is Debian.
host_debian_release() {
    local os_release="${OS_RELEASE:-/etc/os-release}"
    [[ -r $os_release ]] || return 0
    (
        # shellcheck disable=SC1090
        . "$os_release"
        if [[ ${ID:-} == debian ]]; then echo "${VERSION_CODENAME:-}"; fi
    )
}

print_mirror_only=0
if [[ ${1:-} == --print-mirror ]]; then
    print_mirror_only=1
    shift
fi
if (($# > 1)) || [[ ${1:-} == -* ]]; then
    echo "usage: make-base-image.sh [--print-mirror] [DEBIAN_MIRROR_URL]" >&2
    exit 2
fi

mirror="${1:-${DEBIAN_MIRROR:-}}"
mirror_from="argument"
[[ -n ${1:-} ]] || mirror_from="DEBIAN_MIRROR"
mirror_from_apt=0
if [[ -z $mirror ]]; then
    mirror="$(first_apt_source_uri "$suite" main)"
    mirror_from="$apt_dir ($suite main)"
    mirror_from_apt=1
fi
if [[ -z $mirror ]]; then
    release="$(host_debian_release)"
    if [[ -n $release && $release != "$suite" ]]; then
        mirror="$(first_apt_source_uri "$release" main)"
        mirror_from="$apt_dir ($release main: this Debian host's release; the mirror serves $suite too)"
    fi
fi
if [[ -z $mirror ]]; then
    echo "make-base-image: no Debian mirror: no http(s)/ftp/file source for '$suite main' in $apt_dir/sources.list or" \
        "$apt_dir/sources.list.d/*.{list,sources}. Name one: make-base-image.sh http://deb.debian.org/debian" \
        "(or DEBIAN_MIRROR=...), a Debian mirror or apt proxy this host can reach" >&2
    exit 1
fi
mirror="${mirror%/}"
security_mirror="${DEBIAN_SECURITY_MIRROR:-}"
security_from="DEBIAN_SECURITY_MIRROR"
if [[ -z $security_mirror ]] && ((mirror_from_apt)); then
    security_mirror="$(first_apt_source_uri "$suite-security" main)"
    security_from="$apt_dir ($suite-security main)"
fi
if [[ -z $security_mirror ]]; then
    security_mirror="${mirror%/debian}/debian-security"
    security_from="the mirror's sibling"
fi
security_mirror="${security_mirror%/}"
echo "make-base-image: mirror $mirror (from $mirror_from); security $security_mirror (from $security_from)" >&2
if ((print_mirror_only)); then
    printf '%s\n%s\n' "$mirror" "$security_mirror"
    exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
    echo "make-base-image: debootstrap needs root (it creates device nodes and chroots); run it with sudo" >&2
    exit 1
fi
for tool in debootstrap "${podman_cmd[0]}"; do
    command -v "$tool" >/dev/null || { echo "make-base-image: $tool not found: apt-get install $tool" >&2; exit 1; }
done

root="$(mktemp -d /tmp/debian-base.XXXXXX)"
trap 'rm -rf "$root"' EXIT

# minbase: dpkg, apt and the essential packages only (about 100 MB before the clean-up below), like the
# official debian:bookworm-slim image. Python and everything else come from each Dockerfile.
debootstrap --variant=minbase "$suite" "$root" "$mirror"

# Security fixes and point updates reach images built on this base when they apt-get install.
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb $security_mirror $suite-security main
EOF
# As in the official Debian images: no man pages, docs or apt caches in images built on top.
cat >"$root/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
EOF
# (the package lists' binary caches alone are ~70 MB per image layer that runs apt-get update)
cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
APT::Install-Recommends "false";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
    "$root"/var/log/*.log "$root"/usr/share/man/* "$root"/usr/share/locale/*
find "$root/usr/share/doc" -type f ! -name copyright -delete

tar --numeric-owner -C "$root" -c . |
    "${podman_cmd[@]}" import --change 'CMD ["/bin/bash"]' \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$image"
echo "make-base-image: imported $image"

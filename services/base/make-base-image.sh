#!/usr/bin/env bash
# Makes the base image our Dockerfiles build FROM where no container registry is reachable: a minimal Debian
# bookworm made with debootstrap (from a Debian mirror, which apt reaches anyway) and imported into podman.
#
#   sudo services/base/make-base-image.sh                 # -> localhost/debian-base:bookworm
#   podman build --build-arg BASE_IMAGE=localhost/debian-base:bookworm -f services/sandbox/Dockerfile .
#
# Needs root, debootstrap and podman (apt-get install debootstrap podman runc). Takes about 2 minutes.
# Environment: BASE_IMAGE (the name to import as), DEBIAN_MIRROR, PODMAN (e.g. "podman --runtime runc").
set -euo pipefail

image="${BASE_IMAGE:-localhost/debian-base:bookworm}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
read -r -a podman_cmd <<<"${PODMAN:-podman}"

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
debootstrap --variant=minbase bookworm "$root" "$mirror"

# Security fixes and point updates reach images built on this base when they apt-get install.
security_mirror="${DEBIAN_SECURITY_MIRROR:-${mirror%/debian}/debian-security}"
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security_mirror bookworm-security main
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

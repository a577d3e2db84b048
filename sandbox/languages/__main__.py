"""`python -m sandbox.languages packages|programs|setup SPEC`: what the toolchains of the languages SPEC names need.
`packages`: the Debian packages, checked with dpkg (with `all`, the full runtime libraries too); `programs`:
`package:program` pairs for toolchains a machine image may ship outside dpkg (installed when the program is
missing). The Makefile installs both, then runs `setup`: each language's own install steps (npm packages, prebuilt
libraries), where its toolchain still misses something. Standard library only: it runs before the virtual
environment exists."""

from __future__ import annotations

import subprocess
import sys

from sandbox.languages import parse_languages


def apt_entries(spec: str, pairs: bool) -> list[str]:
    """The packages of the toolchains `spec` names; with `all`, their full runtime libraries too."""
    full = "all" in (part.strip() for part in spec.split(","))
    languages = parse_languages(spec)
    entries = [entry for lang in languages for entry in (*lang.apt, *(lang.full_runtime if full else ()))]
    return list(dict.fromkeys(entry for entry in entries if (":" in entry) == pairs))


def set_up(spec: str) -> None:
    """Runs the setup steps of each language whose toolchain lacks a program or file; exits on a failing step."""
    for lang in parse_languages(spec):
        if not lang.setup or lang.missing_tool() is None:
            continue
        for command in lang.setup:
            print(f"setting up {lang.name}: {command}", flush=True)
            if subprocess.run(["/bin/sh", "-c", command]).returncode != 0:
                sys.exit(f"setting up {lang.name} failed: {command}")
        if (missing := lang.missing_tool()) is not None:
            sys.exit(f"setting up {lang.name} did not provide {missing}")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("packages", "programs", "setup"):
        sys.exit("usage: python -m sandbox.languages packages|programs|setup SPEC  (SPEC: default, all, or ids)")
    if sys.argv[1] == "setup":
        set_up(sys.argv[2])
    else:
        print(" ".join(apt_entries(sys.argv[2], pairs=sys.argv[1] == "programs")))

"""`python -m sandbox.languages packages|programs SPEC`: what the toolchains of the languages SPEC names need from
Debian. `packages`: the packages checked with dpkg; `programs`: `package:program` pairs for toolchains a machine
image may ship outside dpkg (installed when the program is missing). The Makefile installs both. Standard library
only: it runs before the virtual environment exists."""

from __future__ import annotations

import sys

from sandbox.languages import parse_languages


def apt_entries(spec: str, pairs: bool) -> list[str]:
    entries = [entry for lang in parse_languages(spec) for entry in lang.apt if (":" in entry) == pairs]
    return list(dict.fromkeys(entries))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("packages", "programs"):
        sys.exit("usage: python -m sandbox.languages packages|programs SPEC  (SPEC: default, all, or ids)")
    print(" ".join(apt_entries(sys.argv[2], pairs=sys.argv[1] == "programs")))

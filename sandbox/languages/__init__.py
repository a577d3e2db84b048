"""The languages the sandbox runs, one module each; `get_language` resolves names and aliases.

A sandbox serves the languages `SANDBOX_LANGUAGES` names (comma-separated ids or aliases, `default`
for DEFAULT_LANGUAGES, `all` for every one), for the sandbox service and in-process grading alike;
`python -m sandbox.languages packages SPEC` prints the Debian packages their toolchains need
(the Makefile installs them). Languages SandboxFusion names that no toolchain here can run are
CANNOT_RUN, each with the reason a request for it gets.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from typing import Any

from sandbox.languages.base import Language
from sandbox.languages.bash import BASH
from sandbox.languages.c import C
from sandbox.languages.clojure import CLOJURE
from sandbox.languages.cpp import CPP
from sandbox.languages.csharp import CSHARP
from sandbox.languages.d import D
from sandbox.languages.d_ut import D_UT
from sandbox.languages.elixir import ELIXIR
from sandbox.languages.fortran import FORTRAN
from sandbox.languages.go import GO
from sandbox.languages.go_test import GO_TEST
from sandbox.languages.gtest import GTEST
from sandbox.languages.haskell import HASKELL
from sandbox.languages.java import JAVA
from sandbox.languages.javascript import JAVASCRIPT
from sandbox.languages.jest import JEST, REACT
from sandbox.languages.junit import JUNIT
from sandbox.languages.kotlin import KOTLIN_SCRIPT
from sandbox.languages.lua import LUA
from sandbox.languages.ocaml import OCAML
from sandbox.languages.perl import PERL
from sandbox.languages.php import PHP
from sandbox.languages.pytest import PYTEST
from sandbox.languages.python import PYTHON
from sandbox.languages.r import R
from sandbox.languages.racket import RACKET
from sandbox.languages.ruby import RUBY
from sandbox.languages.rust import RUST
from sandbox.languages.scala import SCALA
from sandbox.languages.sql import SQL
from sandbox.languages.typescript import TYPESCRIPT
from sandbox.languages.verilog import VERILOG

LANGUAGES: dict[str, Language] = {
    lang.name: lang
    for lang in (
        PYTHON, C, CPP, JAVA, JAVASCRIPT, GO, RUST,
        BASH, PHP, PERL, RUBY, LUA, R, CSHARP, D, SCALA, KOTLIN_SCRIPT, RACKET, VERILOG,
        HASKELL, OCAML, ELIXIR, CLOJURE, FORTRAN, TYPESCRIPT, SQL,
        PYTEST, GO_TEST, JUNIT, GTEST, D_UT, JEST, REACT,
    )
}  # fmt: skip
DEFAULT_LANGUAGES = ("python", "c", "cpp", "java", "javascript", "go", "rust")
_BY_ALIAS = {alias: lang for lang in LANGUAGES.values() for alias in (lang.name, *lang.aliases)}
# SandboxFusion's ids that nothing installable here runs, and why.
CANNOT_RUN = {
    "python2": "Python 2 reached its end of life in 2020 and Debian 12 no longer packages it",
    "julia": "Julia has no package in Debian 12, and PyPI and npm do not provide it",
    "swift": "Swift has no package in Debian 12, and PyPI and npm do not provide it",
    "lean": "Lean 4 has no package in Debian 12 (its elan installer downloads from GitHub, unreachable here)",
    "cuda": "CUDA programs need an NVIDIA GPU, and sandbox machines have none",
    "python_gpu": "python_gpu needs an NVIDIA GPU, and sandbox machines have none",
}


class LanguageError(ValueError):
    """A program in a language the sandbox cannot run; the message says why."""


class UnknownLanguage(LanguageError):
    pass


class LanguageUnavailable(LanguageError):
    """A language this sandbox does not serve: not enabled, its toolchain missing, or not runnable here."""


def get_language(name: str) -> Language:
    try:
        return _BY_ALIAS[name.strip().lower()]
    except KeyError:
        if name.strip() in CANNOT_RUN:
            raise LanguageUnavailable(f"language {name!r} cannot run here: {CANNOT_RUN[name.strip()]}") from None
        raise UnknownLanguage(f"unknown language {name!r}; supported: {sorted(LANGUAGES)}") from None


def parse_languages(spec: str) -> tuple[Language, ...]:
    """`default`, `all`, or comma-separated ids and aliases (ValueError naming an unknown one)."""
    names: list[str] = []
    for part in filter(None, (part.strip() for part in spec.split(","))):
        if part == "all":
            names += LANGUAGES
        elif part == "default":
            names += DEFAULT_LANGUAGES
        else:
            try:
                names.append(get_language(part).name)
            except ValueError as exc:
                raise ValueError(f"SANDBOX_LANGUAGES: {exc}") from None
    return tuple(LANGUAGES[name] for name in dict.fromkeys(names))


def enabled_languages(spec: str | None = None) -> tuple[Language, ...]:
    """The languages `spec` names, by default from the environment's SANDBOX_LANGUAGES (else `default`)."""
    return parse_languages(os.environ.get("SANDBOX_LANGUAGES", "default") if spec is None else spec)


def why_unavailable(lang: Language, enabled: Collection[str]) -> str | None:
    """Why a sandbox serving `enabled` (names) cannot run `lang`, and what to do; None when it can."""
    if lang.name not in enabled:
        return (
            f"language {lang.name!r} is not enabled on this sandbox (it serves {', '.join(enabled)}): "
            "add it to SANDBOX_LANGUAGES and install its toolchain (make languages)"
        )
    if (tool := lang.missing_tool()) is not None:
        return (
            f"language {lang.name!r} is enabled but its toolchain is not installed ({tool} is missing): "
            f"make languages, or apt-get install {' '.join(lang.apt)}"
        )
    return None


def missing_toolchains(enabled: Collection[str]) -> dict[str, str]:
    """Enabled languages whose toolchain is missing, each with what to do (logged at start, in /readyz)."""
    return {name: reason for name in enabled if (reason := why_unavailable(LANGUAGES[name], enabled)) is not None}


def catalog(enabled: Collection[str]) -> list[dict[str, Any]]:
    """GET /v1/languages: every language, whether it runs here and why not, its toolchain's version, its test
    modes and what its toolchain gets beyond a request's limits (Language.fit); then the ids nothing here runs."""
    entries: list[dict[str, Any]] = []
    for lang in LANGUAGES.values():
        reason = why_unavailable(lang, enabled)
        entries.append({
            "id": lang.name, "aliases": list(lang.aliases), "enabled": lang.name in enabled,
            "available": reason is None, "reason": reason or "",
            "version": lang.toolchain_version if reason is None else "", "compiled": lang.compile is not None,
            "modes": ["stdio", "call", "assert", "program"] if lang.python_zygote else ["stdio", "program"],
            "per_test_report": lang.report or None, "tests_run_as": lang.tests_run_as or lang.name,
            "limits": {
                "start_s": lang.start_s, "memory_floor_mb": lang.memory_floor_mb,
                "compile_memory_floor_mb": lang.compile_memory_floor_mb, "compile_floor_s": lang.compile_floor_s,
                "open_files_floor": lang.open_files_floor,
            },
        })  # fmt: skip
    for name, why in CANNOT_RUN.items():
        entries.append({"id": name, "enabled": False, "available": False, "reason": f"cannot run here: {why}"})
    return entries

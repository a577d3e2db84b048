"""What a language needs to run a program suite's tests apart from the program (sandbox/runner.py run_suite_apart):
its two scripts in sandbox/runtimes/apart/, and the preloaded library that keeps the tests' process out of the
program's reach."""

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

APART = Path(__file__).resolve().parent.parent / "runtimes" / "apart"
BUILT = "/usr/local/lib/reward-sandbox"  # what `make languages` builds from sandbox/runtimes/apart/


def from_root(path: Path) -> str:
    """`path` as a set-up command names it: from the repository's root, where `make languages` runs them."""
    return str(path.relative_to(APART.parent.parent.parent))


def built_from(source: Path, stem: str, suffix: str) -> str:
    """Where `make languages` builds `source` to: named by the source's digest, so a changed source is built again (a
    language needs the library its runner speaks to)."""
    return f"{BUILT}/{stem}-{hashlib.sha256(source.read_bytes()).hexdigest()[:12]}{suffix}"


# Makes the tests' process non-dumpable before its runtime starts (nondumpable.c).
NONDUMPABLE = built_from(APART / "nondumpable.c", "nondumpable", ".so")
BUILD_NONDUMPABLE = f"mkdir -p {BUILT} && gcc -O2 -shared -fPIC -o {NONDUMPABLE} {from_root(APART / 'nondumpable.c')}"
# The tests' environment: the library preloaded, and a HOME no program can write (node looks for modules under
# $HOME/.node_modules, RubyGems for gems under ~/.gem; the usual HOME, /sandbox, is the program's).
TESTS_ENV = {"LD_PRELOAD": NONDUMPABLE, "HOME": "/usr/lib/judge"}


def installed_scripts(extension: str) -> tuple[tuple[str, str], str]:
    """scripts(extension) as two files `make languages` writes (the setup command it runs, from the repository's root),
    for a runtime that starts slower from code on its command line (Rscript -e), each named by its text's digest."""
    names = ("serve_program", "run_tests")
    serve, run = (
        f"{BUILT}/judge-{name}-{hashlib.sha256(text.encode()).hexdigest()[:12]}.{extension}"
        for name, text in zip(names, scripts(extension), strict=True)
    )
    messages, *sources = (from_root(APART / f"{name}.{extension}") for name in ("plain_data", *names))
    setup = f"mkdir -p {BUILT} && cat {messages} {sources[0]} > {serve} && cat {messages} {sources[1]} > {run}"
    return (serve, run), setup


def scripts(extension: str) -> tuple[str, str]:
    """(the program's server, the tests' runner) of one language, each after the language's plain-data messages."""
    messages = (APART / f"plain_data.{extension}").read_text()
    serve, run = ((APART / f"{name}.{extension}").read_text() for name in ("serve_program", "run_tests"))
    return messages + serve, messages + run


def split_parameters(text: str) -> list[str]:
    """A parameter list's parameters (compiled languages' tests apart read them from the prompt's signature): split at
    the commas outside brackets of any kind (`std::map<std::string, long>`, Rust's `Vec<(isize, isize)>`)."""
    parts, depth, start = [], 0, 0
    for at, char in enumerate(text):
        depth += 1 if char in "<([" else -1 if char in ">)]" else 0
        if char == "," and depth == 0:
            parts.append(text[start:at])
            start = at + 1
    parts.append(text[start:])
    return [part.strip() for part in parts if part.strip()]


# The tokens a C-family brace count must see or skip: strings, character literals and comments, then braces.
BRACE_TOKENS = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])\'|//[^\n]*|/\*.*?\*/|[{}]', re.DOTALL)


def open_braces(code: str) -> int:
    """How many of the braces C-family `code` opens it leaves open (strings, characters and comments skipped)."""
    depth = 0
    for token in BRACE_TOKENS.finditer(code):
        depth += {"{": 1, "}": -1}.get(token.group(), 0)
    return depth


C_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)  # C++'s and Rust's


def blanked(text: str, pattern: re.Pattern[str] = C_COMMENTS) -> str:
    """`text` with what `pattern` matches (its comments) made spaces, lines kept: a position in it is the text's."""
    return pattern.sub(lambda found: re.sub(r"[^\n]", " ", found.group()), text)


Signature = TypeVar("Signature")


@dataclass(frozen=True)
class OpenFunction:
    """The function a prompt leaves open, as its language writes it (OCaml's, Haskell's signatures)."""

    name: str
    parameters: tuple[tuple[str, str], ...]  # (name, type as the prompt writes it)
    returns: str


class Unplain(ValueError):
    """A type with no codec of the language's plain data (sandbox/runtimes/apart/): its function is not served."""


def type_tokens(token: re.Pattern[str], type_text: str) -> list[re.Match[str]]:
    """The tokens (`token`: spaces, then one) that make up `type_text`; Unplain where anything else is in it."""
    found = list(token.finditer(type_text))
    if "".join(match.group() for match in found).strip() != type_text.strip():
        raise Unplain(type_text)
    return found


def split_by(
    entry_signature: Callable[[str], Signature | None],
    program_unit: Callable[[str, Signature], str],
    tests_unit: Callable[[str, str, Signature], str | None],
) -> Callable[[str, str, str], tuple[str, str] | None]:
    """A compiled language's Language.apart_split from its three steps: `split(prompt, program, tests)` is (the
    program's source with a server of the prompt's entry point, the tests' source with a stub of it), or None when the
    prompt leaves no function of plain types open, or the tests have no place to run from (tests_unit gave None)."""

    def split(prompt: str, program: str, tests: str) -> tuple[str, str] | None:
        signature = entry_signature(prompt)
        if signature is None:
            return None
        tests_source = tests_unit(prompt, tests, signature)
        return None if tests_source is None else (program_unit(program, signature), tests_source)

    return split

"""Rust program suites (MultiPL-E's `rs`) run apart from the program, as two binaries, the way C++'s do
(sandbox/languages/cpp_apart.py).

The prompt's last function, the one the completion finishes, is the program's entry point. The program compiles with
a server of it: its `main` answers each request on fd 3 on fd 4, the values as plain data (the library
`judge_codec`, sandbox/runtimes/apart/plain_data.rs). The tests compile in a sandbox of their own, from the prompt
with that function's body a stub that asks the program, their `main` renamed and called from one that says on fd 5
that they all ran. The program's `macro_rules! assert_eq`, a return type whose `PartialEq` always holds,
`include_str!` of the tests or a read of another process never reach them.

Only signatures of plain types are served: numbers, bool, char, String (and `&str`), and Vec (`&[T]`), Option,
tuples, HashMap, HashSet, BTreeMap and BTreeSet of them, each parameter by value, `&` or `&mut` (copied back); for any
other (a struct of the prompt's, a generic, a lifetime) there is no split and the tests run after the program.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sandbox.languages import apart

# The codec, the server's loop and the tests' ask: built once as the library `judge_codec` by `make languages` (named
# by its source's digest) and linked into both crates; compiled into each program they cost ~0.3 s of rustc a program.
_CODEC_SOURCE = apart.APART / "plain_data.rs"
CODEC_LIBRARY = apart.built_from(_CODEC_SOURCE, "libjudge_codec", ".rlib")
_USE_CODEC = "use judge_codec as judge_plain;\n"


def build_codec(rustc: tuple[str, ...]) -> str:
    """The shell command that builds the codec library with `rustc` (its compiler and flags: the same as the crates
    that link it)."""
    return (
        f"mkdir -p {apart.BUILT} && {' '.join(rustc)} --crate-type rlib --crate-name judge_codec "
        f"-o {CODEC_LIBRARY} {apart.from_root(_CODEC_SOURCE)}"
    )


_FN = re.compile(r"\bfn\s+(?P<name>[A-Za-z_]\w*)\s*\(")
_OPEN_BODY = re.compile(r"\s*(?:->\s*(?P<returns>[^{};]+?))?\s*\{\s*\Z")
_PLAIN_WORDS = frozenset({  # the words of the types served
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "f32", "f64", "bool",
    "char", "String", "str", "Vec", "Option", "HashMap", "HashSet", "BTreeMap", "BTreeSet", "std", "collections",
})  # fmt: skip
_TESTS_MAIN = re.compile(r"\bfn\s+main\s*\(\s*\)")


@dataclass(frozen=True)
class Parameter:
    name: str
    type: str  # as the prompt writes it: `Vec<isize>`, `&str`, `&mut Vec<isize>`

    @property
    def passed_as(self) -> str:
        """How the function takes it: "" (by value), "&" or "&mut "."""
        return "&mut " if self.type.startswith("&mut ") else "&" if self.type.startswith("&") else ""

    @property
    def owned(self) -> str:
        """The type the server decodes it as: the referenced type, a slice as a Vec, `str` as String."""
        owned = self.type.removeprefix(self.passed_as).strip()
        if owned == "str":
            return "String"
        return f"Vec<{owned[1:-1]}>" if owned.startswith("[") else owned


@dataclass(frozen=True)
class Signature:
    name: str
    parameters: tuple[Parameter, ...]
    returns: str  # "" for ()


def entry_signature(prompt: str) -> Signature | None:
    """The signature of the function the prompt leaves open, when every type in it is plain; else None."""
    bare = apart.blanked(prompt)
    header = next(reversed(list(_FN.finditer(bare))), None)
    if header is None:
        return None
    closing = _closing_paren(bare, header.end())
    body = None if closing is None else _OPEN_BODY.match(bare, closing + 1)
    if body is None:
        return None
    parameters = []
    for text in apart.split_parameters(bare[header.end() : closing]):
        named = re.fullmatch(r"(?:mut\s+)?(?P<name>[A-Za-z_]\w*)\s*:\s*(?P<type>.+)", text, re.DOTALL)
        if named is None:
            return None
        parameters.append(Parameter(named["name"], " ".join(named["type"].split())))
    returns = " ".join((body["returns"] or "").split())
    if returns == "()":
        returns = ""
    plain = all(_plain(p.owned) and not p.type.startswith("&mut [") for p in parameters)
    if not plain or (returns and not _plain(returns)):
        return None
    return Signature(header["name"], tuple(parameters), returns)


def _closing_paren(text: str, start: int) -> int | None:
    """Where the parenthesis open before `start` closes."""
    depth = 1
    for at in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[at], 0)
        if depth == 0:
            return at
    return None


def _plain(type_text: str) -> bool:
    words = re.findall(r"[A-Za-z_]\w*", type_text)
    return set(words) <= _PLAIN_WORDS and re.fullmatch(r"[\w\s:<>,()\[\]]+", type_text) is not None


def program_unit(program: str, signature: Signature) -> str:
    """The program's crate: the program, then the server of its entry point and the codec."""
    taken = "".join(
        f"    let mut judge_arg_{i}: {p.owned} =\n"
        "        judge_plain::Take::take(&mut judge_in).unwrap_or_else(|_| judge_plain::refused());\n"
        for i, p in enumerate(signature.parameters)
    )
    call = f"{signature.name}({', '.join(f'{p.passed_as}judge_arg_{i}' for i, p in enumerate(signature.parameters))})"
    copied_back = "".join(
        f"    judge_plain::Put::put(&judge_arg_{i}, &mut judge_out);\n"
        for i, p in enumerate(signature.parameters)
        if p.passed_as == "&mut "
    )
    return (
        f"{program}\n{_USE_CODEC}"
        "#[allow(unused_mut, unused_variables)]\n"
        "fn judge_answer(judge_request: &[u8]) -> Vec<u8> {\n"
        "    let mut judge_in = judge_plain::Reader::new(judge_request);\n"
        f"{taken}"
        "    judge_in.finish().unwrap_or_else(|_| judge_plain::refused());\n"
        f"    let judge_result: {signature.returns or '()'} = {call};\n"
        "    let mut judge_out = vec![0u8];\n"
        "    judge_plain::Put::put(&judge_result, &mut judge_out);\n"
        f"{copied_back}    judge_out\n}}\n{_SERVE}"
    )


_SERVE = """
fn main() {
    judge_plain::serve(judge_answer);
}
"""


def tests_unit(prompt: str, tests: str, signature: Signature) -> str | None:
    """The tests' crate: the prompt, its open function's body a stub that asks the program, then the tests, their
    `main` renamed and called from one that says on fd 5 that they all ran (None: the tests have no `main`)."""
    if len(_TESTS_MAIN.findall(tests)) != 1:
        return None
    sent = "".join(f"    judge_plain::Put::put(&{p.name}, &mut judge_args);\n" for p in signature.parameters)
    copied_back = "".join(
        f"    *{p.name} = judge_plain::Take::take(&mut judge_in).unwrap_or_else(|_| judge_plain::refuse());\n"
        for p in signature.parameters
        if p.passed_as == "&mut "
    )
    stub = (
        "    let mut judge_args = Vec::new();\n"
        f"{sent}"
        "    let judge_reply = judge_plain::ask(&judge_args);\n"
        "    let mut judge_in = judge_plain::Reader::new(&judge_reply);\n"
        f"    let judge_result: {signature.returns or '()'} =\n"
        "        judge_plain::Take::take(&mut judge_in).unwrap_or_else(|_| judge_plain::refuse());\n"
        f"{copied_back}"
        "    judge_in.finish().unwrap_or_else(|_| judge_plain::refuse());\n"
        "    judge_result\n}\n"
    )
    renamed = _TESTS_MAIN.sub("fn judge_tests_main()", tests)
    return f"{prompt}{stub}{renamed}\n{_USE_CODEC}{_MAIN}"


_MAIN = """
fn main() {
    judge_tests_main();
    judge_plain::tests_done();
}
"""


split = apart.split_by(entry_signature, program_unit, tests_unit)

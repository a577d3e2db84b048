"""Scala program suites (MultiPL-E's `scala`) run apart from the program, in two JVMs, the way Java's do
(sandbox/languages/java_apart.py).

The prompt's last method, the one the completion finishes (a method of MultiPL-E's `object Problem`), is the program's
entry point. The program compiles with a server of it, `JudgeServer`, which answers each request on fd 3 on fd 4, the
values as plain data (`judge.Plain`, sandbox/runtimes/apart/judge/Plain.scala, built once as a jar by `make languages`):
each declared type becomes a codec built of Plain's (`List[Float]` -> `Plain.list(Plain.float)`), the same on both
sides. The tests compile in a sandbox of their own, from the prompt with that method's body a stub that asks the
program, then the tests (MultiPL-E's `main` inside `Problem`), called from `JudgeTests`, which says on fd 5 that they
all ran; their classes come to the run as a jar in memory. An `assert` of the program's own that the tests' calls would
resolve to, an `equals` that always holds or a read of the tests' classes never reach them.

Only signatures of plain types are served: the numeric primitives, Boolean, Char, String, Unit, and List, Map, Option,
Either and tuples (to four) of them; a mutable map the method changed is copied back. For any other (an Array, Any, a
class of the prompt's, a generic method) there is no split and the tests run after the program.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sandbox.languages import apart

CODEC_SOURCE = apart.APART / "judge" / "Plain.scala"
CODEC_JAR = apart.built_from(CODEC_SOURCE, "judge-plain-scala", ".jar")
_PLAIN = "_root_.judge.Plain"

# The open header the prompt ends with: name, parameters (a tuple type's parentheses inside), return type.
_OPEN_METHOD = re.compile(
    r"\bdef\s+(?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^()]*(?:\([^()]*\)[^()]*)*)\)\s*:\s*(?P<returns>[^={}]+?)\s*="
    r"\s*\{\s*\Z"
)
_OWNER = re.compile(r"\b(?P<kind>object|class|trait)\s+(?P<name>[A-Za-z_]\w*)")
_SCALARS = {
    "Long": "long", "Int": "int", "Short": "short", "Byte": "byte", "Double": "double", "Float": "float",
    "Char": "char", "Boolean": "boolean", "String": "string", "Unit": "unit",
}  # fmt: skip
_GENERIC = {"List": ("list", 1), "Option": ("option", 1), "Either": ("either", 2), "Map": ("map", 2)}
_GENERIC |= {f"Tuple{n}": (f"tuple{n}", n) for n in (2, 3, 4)}
_TOKEN = re.compile(r"\s*(?:(?P<name>[A-Za-z_]\w*)|(?P<mark>[\[\](),]))")
_TESTS_MAIN = re.compile(r"\bdef\s+main\s*\(")


@dataclass(frozen=True)
class Parameter:
    type: str  # as the prompt writes it: `List[Float]`, `(Long, Long)`
    name: str


@dataclass(frozen=True)
class Signature:
    owner: str  # the object the method is declared in
    returns: str
    name: str
    parameters: tuple[Parameter, ...]


def codec(type_text: str) -> str:
    """The Scala expression of `type_text`'s codec (`Plain.list(Plain.float)`); apart.Unplain when Plain has none."""
    tokens = [(token["name"], token["mark"]) for token in apart.type_tokens(_TOKEN, type_text)]
    expression, rest = _codec(tokens)
    if rest:
        raise apart.Unplain(type_text)
    return expression


def _codec(tokens: list[tuple[str | None, str | None]]) -> tuple[str, list]:
    """The codec of the type `tokens` start with, and the tokens after it."""
    if not tokens:
        raise apart.Unplain("a type ends early")
    (name, mark), rest = tokens[0], tokens[1:]
    if mark == "(":  # a tuple type, (A, B)
        items, rest = _arguments(rest, ")")
        return _generic(f"Tuple{len(items)}", items), rest
    if name in _SCALARS:
        return f"{_PLAIN}.{_SCALARS[name]}", rest
    if name in _GENERIC and rest and rest[0][1] == "[":
        items, rest = _arguments(rest[1:], "]")
        return _generic(name, items), rest
    raise apart.Unplain(str(name or mark))


def _arguments(tokens: list, closer: str) -> tuple[list[tuple[str, str]], list]:
    """The (codec, type text) of each type argument up to `closer`, and the tokens after it."""
    items = []
    while True:
        start = tokens
        expression, tokens = _codec(tokens)
        items.append((expression, _text(start[: len(start) - len(tokens)])))
        if not tokens or tokens[0][1] not in (",", closer):
            raise apart.Unplain("a type argument list")
        if tokens.pop(0)[1] == closer:
            return items, tokens


def _text(tokens: list) -> str:
    return "".join(name or (f"{mark} " if mark == "," else mark) for name, mark in tokens)


def _generic(name: str, items: list[tuple[str, str]]) -> str:
    function, arity = _GENERIC.get(name, ("", -1))
    if len(items) != arity:
        raise apart.Unplain(name)
    codecs = ", ".join(expression for expression, _ in items)
    if function == "map":  # made by the companion the prompt's imports call `Map` (mutable under MultiPL-E's)
        key, value = (text for _, text in items)
        make = f"(pairs: _root_.scala.collection.Seq[({key}, {value})]) => Map[{key}, {value}](pairs: _*)"
        return f"{_PLAIN}.map({codecs}, {make})"
    return f"{_PLAIN}.{function}({codecs})"


def entry_signature(prompt: str) -> Signature | None:
    """The signature of the method the prompt's object leaves open, when every type in it is plain; else None."""
    bare = apart.blanked(prompt)
    found = _OPEN_METHOD.search(bare)
    owner = list(_OWNER.finditer(bare, 0, found.start() if found else 0))
    if found is None or not owner or owner[-1]["kind"] != "object":
        return None
    parameters = []
    for text in apart.split_parameters(found["params"]):
        named = re.fullmatch(r"(?P<name>[A-Za-z_]\w*)\s*:\s*(?P<type>.+)", text, re.DOTALL)
        if named is None:
            return None
        parameters.append(Parameter(" ".join(named["type"].split()), named["name"]))
    signature = Signature(owner[-1]["name"], " ".join(found["returns"].split()), found["name"], tuple(parameters))
    try:
        for type_text in (signature.returns, *(p.type for p in parameters)):
            codec(type_text)
    except apart.Unplain:
        return None
    return signature


def _changes_in_place(type_text: str) -> bool:
    """Whether the tests may see an argument of this type changed: a map (mutable under MultiPL-E's imports)."""
    return type_text.startswith("Map[")


def program_unit(program: str, signature: Signature) -> str:
    """The program's source: the program, its objects closed, then `JudgeServer`, whose main answers the tests."""
    taken = "".join(
        f"      val judge_arg_{i} = call.next({codec(p.type)})\n" for i, p in enumerate(signature.parameters)
    )
    arguments = ", ".join(f"judge_arg_{i}" for i in range(len(signature.parameters)))
    call = f"{signature.owner}.{signature.name}({arguments})"
    changed = "".join(
        f".changed({codec(p.type)}, judge_arg_{i})"
        for i, p in enumerate(signature.parameters)
        if _changes_in_place(p.type)
    )
    return (
        f"{program}\n{'}' * max(0, apart.open_braces(program))}\n"
        "object JudgeServer {\n  def main(args: Array[String]): Unit = {\n"
        f"    {_PLAIN}.serve {{ call =>\n{taken}      call.done()\n"
        f"      call.returned({codec(signature.returns)}, {call}){changed}\n    }}\n  }}\n}}\n"
    )


def tests_unit(prompt: str, tests: str, signature: Signature) -> str | None:
    """The tests' source: the prompt, its open method's body a stub that asks the program, then the tests and
    `JudgeTests`, which runs them (None: the tests have no main in the object the prompt leaves open)."""
    if _TESTS_MAIN.search(tests) is None or apart.open_braces(tests) >= 0:  # MultiPL-E's main, then the object closed
        return None
    arguments = "".join(
        f", {_PLAIN}.Arg({codec(p.type)}, {p.name}{', copiedBack = true' if _changes_in_place(p.type) else ''})"
        for p in signature.parameters
    )
    return (
        f"{prompt}        {_PLAIN}.ask({codec(signature.returns)}{arguments})\n    }}\n{tests}\n"
        "object JudgeTests {\n"
        f"  def main(args: Array[String]): Unit = {_PLAIN}.runTests(() => {signature.owner}.main(args))\n}}\n"
    )


split = apart.split_by(entry_signature, program_unit, tests_unit)

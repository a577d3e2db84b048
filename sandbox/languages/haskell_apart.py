"""Haskell program suites (MultiPL-E's `hs`) run apart from the program, as two binaries, the way C++'s do
(sandbox/languages/cpp_apart.py).

The prompt's last signature, the function whose equation the completion finishes, is the program's entry point
(`hasCloseElements :: [Float] -> Float -> Bool`, then `hasCloseElements numbers threshold =`), and each type in it
becomes a codec of sandbox/runtimes/apart/plain_data.hs (`judgeList judgeFloat`). The program compiles with the
codec and a server of that function as its `main` (a `main` of its own is renamed), which answers each request on
fd 3 on fd 4. The tests compile in a sandbox of their own: the codec, then the prompt with that equation's body a
stub that asks the program, then the tests with their `main` renamed, run by a `main` that then says on fd 5 that
they all ran; their binary runs from memory. An `==` or `error` of the program's own, a pragma of its, or a read of
the tests never reaches them.

Only signatures of plain types are served: Int, Integer, Float, Double, Bool, Char, String, (), and lists, Maybe and
tuples (of two or three) of them. For any other (a data type of the prompt's, a function, a type variable or a class
constraint) there is no split and the tests run after the program.
"""

from __future__ import annotations

import re

from sandbox.languages import apart

_IMPORTS, _DECLARATIONS = (apart.APART / "plain_data.hs").read_text().split("-- judge: declarations\n")
_COMMENTS = re.compile(r"\{-(?!#).*?-\}|--(?![!#$%&*+./<=>?@\\^|~:])[^\n]*", re.DOTALL)  # (not `-->`, an operator)
_OPEN_EQUATION = re.compile(
    r"^(?P<name>[a-z_][\w']*)[ \t]*::(?P<type>[^\n]*(?:\n[ \t]+[^\n]*)*)\n"
    r"(?P=name)(?P<params>(?:[ \t]+[a-z_][\w']*)*)[ \t]*=\s*\Z",
    re.MULTILINE,
)
# A module's head: what must come before its declarations (pragmas, the module line, imports), one item a line and
# the lines indented under it.
_HEAD_ITEM = re.compile(r"\{-#|module\b|import\b")
_MODULE_LINE = re.compile(r"^module\b.*?\bwhere\b", re.MULTILINE | re.DOTALL)
_MAIN = re.compile(r"^main\b(?!')", re.MULTILINE)
_SCALARS = {"Int": "judgeInt", "Integer": "judgeInteger", "Float": "judgeFloat", "Double": "judgeDouble"}
_SCALARS |= {"Bool": "judgeBool", "Char": "judgeChar", "String": "judgeString"}
_TOKEN = re.compile(r"\s*(?:(?P<name>[A-Za-z_][\w']*)|(?P<mark>->|[()\[\],]))")


def codec(type_text: str) -> str:
    """The Haskell expression of `type_text`'s codec; apart.Unplain when plain_data.hs has none."""
    expression, rest = _type(_tokens(type_text))
    if rest:
        raise apart.Unplain(type_text)
    return expression


def _tokens(type_text: str) -> list[str]:
    return [text for text, _ in _spans(type_text)]


def _spans(type_text: str) -> list[tuple[str, int]]:
    """Each token of `type_text` with where it starts; apart.Unplain where something else is in it."""
    found = apart.type_tokens(_TOKEN, type_text)
    return [(token["name"] or token["mark"], token.start(token.lastindex or 0)) for token in found]


def _type(tokens: list[str]) -> tuple[str, list[str]]:
    """A type: `Maybe` applied to an atom, or an atom."""
    if tokens[:1] == ["Maybe"]:
        item, tokens = _atom(tokens[1:])
        return f"(judgeMaybe {item})", tokens
    return _atom(tokens)


def _atom(tokens: list[str]) -> tuple[str, list[str]]:
    """A named type, a list, (), a parenthesised type or a tuple of two or three."""
    if not tokens:
        raise apart.Unplain("a type ends early")
    first, tokens = tokens[0], tokens[1:]
    if first in _SCALARS:
        return _SCALARS[first], tokens
    if first == "[":
        item, tokens = _type(tokens)
        if tokens[:1] != ["]"]:
            raise apart.Unplain("an unclosed bracket")
        return f"(judgeList {item})", tokens[1:]
    if first != "(":
        raise apart.Unplain(first)
    if tokens[:1] == [")"]:
        return "judgeUnit", tokens[1:]
    items = []
    while True:
        item, tokens = _type(tokens)
        items.append(item)
        if tokens[:1] != [","]:
            break
        tokens = tokens[1:]
    if tokens[:1] != [")"] or len(items) > 3:
        raise apart.Unplain("a tuple of more than three, or an unclosed parenthesis")
    expression = items[0] if len(items) == 1 else f"(judgeTuple{len(items)} {' '.join(items)})"
    return expression, tokens[1:]


def _arrow_parts(type_text: str) -> list[str]:
    """The types between the arrows at the top level of a signature (in brackets an arrow is a function's type)."""
    parts, depth, start = [], 0, 0
    for token, at in _spans(type_text):
        depth += (token in "([") - (token in ")]")
        if token == "->" and depth == 0:
            parts.append(" ".join(type_text[start:at].split()))
            start = at + 2
    return [*parts, " ".join(type_text[start:].split())]


def entry_signature(prompt: str) -> apart.OpenFunction | None:
    """The signature of the function whose equation the prompt ends by opening, when every type in it is plain."""
    found = _OPEN_EQUATION.search(apart.blanked(prompt, _COMMENTS))
    if found is None:
        return None
    names = found["params"].split()
    try:
        *taken, returns = _arrow_parts(found["type"])
        if not names or len(names) != len(taken):  # a value, or a function left point-free: nothing to call
            return None
        for type_text in (returns, *taken):
            codec(type_text)
    except apart.Unplain:
        return None
    return apart.OpenFunction(found["name"], tuple(zip(names, taken, strict=True)), returns)


def _head_and_body(source: str) -> tuple[str, str]:
    """(the module's head without its module line, its declarations): imports must come first in a module."""
    blank, cut, at, in_item = apart.blanked(source, _COMMENTS), 0, 0, False
    for line in blank.splitlines(keepends=True):
        at += len(line)
        if _HEAD_ITEM.match(line):
            cut, in_item = at, True
        elif line.strip() and line[0].isspace() and in_item:  # the item's indented continuation
            cut = at
        elif line.strip():
            break
    head = source[:cut]
    module = _MODULE_LINE.search(blank[:cut])  # (blanked keeps every position)
    if module is not None:
        head = head[: module.start()] + head[module.end() :]
    return head, source[cut:]


def program_unit(program: str, signature: apart.OpenFunction) -> str:
    """The program's source: its head, the codec's imports, the program (its own `main` renamed), the codec, then the
    server as `main`."""
    head, body = _head_and_body(program)
    names = [f"judgeArg{i}" for i in range(len(signature.parameters))]
    rests = [f"judgeAfter{i}" for i in range(len(names))]
    befores = ["judgeRequest", *rests[:-1]]
    taken = "".join(
        f"    ({name}, {rest}) <- judgeGet ({codec(t)}) {before}\n"
        for name, rest, before, (_, t) in zip(names, rests, befores, signature.parameters, strict=True)
    )
    return (
        f"{head}\n{_IMPORTS}\n{_MAIN.sub('judgeProgramMain', body)}\n\n{_DECLARATIONS}\n"
        "main :: IO ()\nmain = judgeServe (\\judgeRequest -> do\n"
        f"{taken}"
        f"    if JudgeB.null {rests[-1]}\n"
        f"      then Just (judgePut ({codec(signature.returns)}) ({signature.name} {' '.join(names)}))\n"
        "      else Nothing)\n"
    )


def tests_unit(prompt: str, tests: str, signature: apart.OpenFunction) -> str | None:
    """The tests' source: the prompt's head, the codec, the prompt with its open equation's body a stub that asks the
    program, the tests (their `main` renamed), then a `main` that runs them and says they all ran."""
    if _MAIN.search(apart.blanked(tests, _COMMENTS)) is None:
        return None  # no `main`: nothing runs them
    head, body = _head_and_body(prompt)
    put = " <> ".join(f"judgePut ({codec(t)}) {name}" for name, t in signature.parameters)
    stub = f" judgeAsk ({put}) ({codec(signature.returns)})\n"
    return (
        f"{head}\n{_IMPORTS}\n{_DECLARATIONS}\n{body.rstrip()}{stub}\n{_MAIN.sub('judgeTestsMain', tests)}\n\n"
        "main :: IO ()\nmain = judgeTestsMain >> judgeDone\n"
    )


split = apart.split_by(entry_signature, program_unit, tests_unit)

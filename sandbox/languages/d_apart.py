"""D program suites (MultiPL-E's `d`) run apart from the program, as two binaries, the way C++'s do
(sandbox/languages/cpp_apart.py).

The prompt's last function, the one the completion gives a body, is the program's entry point. The program compiles
with a server of it, whose `main` answers each request on fd 3 on fd 4, the values as plain data
(sandbox/runtimes/apart/plain_data.d, put after each side's code). The tests compile in a sandbox of their own, from
the prompt with that function's body a stub that asks the program, then the tests (MultiPL-E's `unittest` block and
empty `main`), the last unittest block saying on fd 5 that they all ran; their binary runs from memory. The program's
`opEquals`, operators, assert handler (`core.exception.assertHandler`), module constructors or a read of the tests
never reach them.

Only signatures of plain types are served: booleans, characters, integers, floats, strings, and arrays, associative
arrays, Tuples and Nullables of them; an array's elements or an associative array the function changed are copied
back. For any other (a class or struct of the prompt's, a pointer, a `ref` or `out` parameter, a template) there is
no split and the tests run after the program.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sandbox.languages import apart
from sandbox.languages.base import end_of_block

_CODEC = (apart.APART / "plain_data.d").read_text()
# The declaration the prompt ends with: return type, name, parameters (a Tuple!(...)'s parentheses inside), and the
# brace that opens the body, where the prompt has it (MultiPL-E's leave it to the completion).
_OPEN_FUNCTION = re.compile(
    r"(?P<returns>[\w\[\]!(),. \t]+?)[ \t]+(?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^()]*(?:\([^()]*\)[^()]*)*)\)\s*"
    r"(?P<brace>\{)?\s*\Z"
)
_NUMBERS = ("byte", "ubyte", "short", "ushort", "int", "uint", "long", "ulong", "float", "double", "real")
_PLAIN_WORDS = frozenset(("bool", *_NUMBERS, "char", "wchar", "dchar", "string", "Tuple", "Nullable", "const"))
_D_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/|/\+.*?\+/", re.DOTALL)


@dataclass(frozen=True)
class Signature:
    returns: str  # "void" for none
    name: str
    parameters: tuple[tuple[str, str], ...]  # (type as the prompt writes it, name)
    opens_body: bool  # the prompt has the body's `{`


def _plain(type_text: str) -> bool:
    words = re.findall(r"[A-Za-z_]\w*", type_text)
    return bool(words) and set(words) <= _PLAIN_WORDS and re.fullmatch(r"[\w\s\[\]!(),]+", type_text) is not None


def entry_signature(prompt: str) -> Signature | None:
    """The signature of the function the prompt leaves without a body, when every type in it is plain; else None."""
    found = _OPEN_FUNCTION.search(apart.blanked(prompt, _D_COMMENTS))
    if found is None:
        return None
    parameters = []
    for text in apart.split_parameters(found["params"]):
        type_text, _, name = text.rpartition(" ")
        if not _plain(type_text) or re.fullmatch(r"[A-Za-z_]\w*", name) is None:
            return None
        parameters.append((" ".join(type_text.split()), name))
    returns = " ".join(found["returns"].split())
    if not (returns == "void" or _plain(returns)):
        return None
    return Signature(returns, found["name"], tuple(parameters), found["brace"] is not None)


def program_unit(program: str, signature: Signature) -> str:
    """The program's module: the program, the codec, then the server's main."""
    arguments = [f"judge_arg_{i}" for i in range(len(signature.parameters))]
    taken = "".join(
        f"        auto {name} = request.get!({type_text})();\n"
        for name, (type_text, _) in zip(arguments, signature.parameters, strict=True)
    )
    call = f"{signature.name}({', '.join(arguments)})"
    answered = f"{call};" if signature.returns == "void" else f"judgePut(reply, {call});"
    return (
        f"{program}\n{_CODEC}\nvoid main() {{\n    judgeServe(delegate(ref JudgeReader request, ref ubyte[] reply) {{\n"
        f"{taken}        request.done();\n        {answered}\n"
        f"        judgeGiveBack({', '.join(['reply', *arguments])});\n    }});\n}}\n"
    )


def tests_unit(prompt: str, tests: str, signature: Signature) -> str | None:
    """The tests' module: the prompt, the body of its open function a stub that asks the program, the tests with
    judgeDone() last in their last unittest block, then the codec (None: the tests have no unittest block)."""
    done_at = end_of_block(tests, r"\bunittest\b")
    if done_at is None:
        return None
    arguments = ", ".join(name for _, name in signature.parameters)
    asked = f"judgeAsk!({signature.returns})({arguments})"
    body = f"    {asked};\n" if signature.returns == "void" else f"    return {asked};\n"
    opened = "" if signature.opens_body else "{\n"
    return f"{prompt}{opened}{body}}}\n{tests[:done_at]}\n    judgeDone();\n{tests[done_at:]}\n{_CODEC}"


split = apart.split_by(entry_signature, program_unit, tests_unit)

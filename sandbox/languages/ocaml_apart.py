"""OCaml program suites (MultiPL-E's `ml`) run apart from the program, as two binaries, the way C++'s do
(sandbox/languages/cpp_apart.py).

The prompt's last `let`, the function the completion gives a body, is the program's entry point: its parameters and
result are typed in the prompt (`let f (numbers : float list) (threshold : float) : bool =`), and each type becomes a
codec of sandbox/runtimes/apart/plain_data.ml (`judge_list judge_float`). The program compiles with the codec and a
server of that function after it, which answers each request on fd 3 on fd 4. The tests compile in a sandbox of their
own: the codec, then the prompt with that function's body a stub that asks the program, then the tests, then a word on
fd 5 that they all ran; their binary runs from memory. An `(=)` of the program's own, a shadowed `List` or
`assert`-raising helper, or a read of the tests never reaches them.

Only signatures of plain types are served: int, float, bool, char, string, unit, and lists, arrays, options and
tuples (of two or three) of them. For any other (a record or variant of the prompt's, a function, a type variable)
there is no split and the tests run after the program.
"""

from __future__ import annotations

import re

from sandbox.languages import apart

_CODEC = (apart.APART / "plain_data.ml").read_text()
_COMMENTS = re.compile(r"\(\*.*?\*\)", re.DOTALL)  # (nested comments are rare in prompts: no split where they break)
_OPEN_LET = re.compile(
    r"\blet\s+(?:rec\s+)?(?P<name>[a-z_]\w*)\s*(?P<params>(?:\(\s*[a-z_]\w*\s*:[^()]*(?:\([^()]*\)[^()]*)*\)\s*)*)"
    r":\s*(?P<returns>[^=]+?)\s*=\s*\Z"
)
_PARAMETER = re.compile(r"\(\s*(?P<name>[a-z_]\w*)\s*:(?P<type>[^()]*(?:\([^()]*\)[^()]*)*)\)")
_SCALARS = {"int": "judge_int", "float": "judge_float", "bool": "judge_bool", "char": "judge_char"}
_SCALARS |= {"string": "judge_string", "unit": "judge_unit"}
_POSTFIX = {"list": "judge_list", "array": "judge_array", "option": "judge_option"}
_TOKEN = re.compile(r"\s*(?:(?P<name>[a-z_]\w*)|(?P<mark>[()*]))")


def codec(type_text: str) -> str:
    """The OCaml expression of `type_text`'s codec; apart.Unplain when plain_data.ml has none."""
    tokens = [token["name"] or token["mark"] for token in apart.type_tokens(_TOKEN, type_text)]
    expression, rest = _tuple(tokens)
    if rest:
        raise apart.Unplain(type_text)
    return expression


def _tuple(tokens: list[str]) -> tuple[str, list[str]]:
    """A type: applications joined by `*` (a tuple)."""
    items = []
    while True:
        item, tokens = _application(tokens)
        items.append(item)
        if not tokens or tokens[0] != "*":
            break
        tokens = tokens[1:]
    if len(items) == 1:
        return items[0], tokens
    if len(items) > 3:
        raise apart.Unplain("a tuple of more than three")
    return f"(judge_tuple{len(items)} {' '.join(items)})", tokens


def _application(tokens: list[str]) -> tuple[str, list[str]]:
    """An atom, then the type constructors applied to it (`int list option`)."""
    if not tokens:
        raise apart.Unplain("a type ends early")
    if tokens[0] == "(":
        expression, tokens = _tuple(tokens[1:])
        if not tokens or tokens[0] != ")":
            raise apart.Unplain("an unclosed parenthesis")
        tokens = tokens[1:]
    elif tokens[0] in _SCALARS:
        expression, tokens = _SCALARS[tokens[0]], tokens[1:]
    else:
        raise apart.Unplain(tokens[0])
    while tokens and tokens[0] in _POSTFIX:
        expression, tokens = f"({_POSTFIX[tokens[0]]} {expression})", tokens[1:]
    return expression, tokens


def entry_signature(prompt: str) -> apart.OpenFunction | None:
    """The signature of the function the prompt's last `let` leaves without a body, when every type in it is plain."""
    found = _OPEN_LET.search(apart.blanked(prompt, _COMMENTS))
    if found is None:
        return None
    parameters = tuple(
        (parameter["name"], " ".join(parameter["type"].split())) for parameter in _PARAMETER.finditer(found["params"])
    )
    signature = apart.OpenFunction(found["name"], parameters, " ".join(found["returns"].split()))
    try:
        for type_text in (signature.returns, *(t for _, t in parameters)):
            codec(type_text)
    except apart.Unplain:
        return None
    return None if not parameters else signature  # a value, not a function: nothing to call


def program_unit(program: str, signature: apart.OpenFunction) -> str:
    """The program's source: the program, the codec, then the server."""
    names = [f"judge_arg_{i}" for i in range(len(signature.parameters))]
    taken = "".join(
        f"    let {name} = ({codec(t)}).judge_get request in\n"
        for name, (_, t) in zip(names, signature.parameters, strict=True)
    )
    return (
        f"{program}\n\n{_CODEC}\nlet () =\n  judge_serve (fun request reply ->\n{taken}"
        "    if request.judge_at <> String.length request.judge_bytes then raise Judge_malformed;\n"
        f"    ({codec(signature.returns)}).judge_put reply ({signature.name} {' '.join(names)}))\n"
    )


def tests_unit(prompt: str, tests: str, signature: apart.OpenFunction) -> str:
    """The tests' source: the codec, the prompt with its open function's body a stub that asks the program, the
    tests, then the word that they all ran."""
    put = "; ".join(f"({codec(t)}).judge_put request {name}" for name, t in signature.parameters)
    stub = f"\n  judge_ask (fun request -> {put}) ({codec(signature.returns)})\n"
    return f"{_CODEC}\n{prompt}{stub}{tests}\n\nlet () = judge_done ()\n"


split = apart.split_by(entry_signature, program_unit, tests_unit)

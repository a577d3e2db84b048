"""C# program suites (MultiPL-E's `cs`) run apart from the program, in two Mono processes, the way Java's run in two
JVMs (sandbox/languages/java_apart.py).

The prompt's last method, the one the completion finishes (a static method of MultiPL-E's `class Problem`), is the
program's entry point. The program compiles with a server of it, `JudgeServer`, which answers each request on fd 3 on
fd 4, the values as plain data (`Judge.Plain`, sandbox/runtimes/apart/judge/Plain.cs, built once as a library by
`make languages`). The tests compile in a sandbox of their own, from the prompt with that method's body a stub that
asks the program, then the tests (MultiPL-E's `Main` inside `Problem`), called from `JudgeTests`, which registers the
assert listener that ends a failed run and says on fd 5 that the tests all ran; their assembly comes to the run in
memory. The program's `operator ==` or `Equals` that always holds, its `#define`s, a listener it clears or a read of
the tests' assembly never reach them.

Only signatures of plain types are served: the numeric primitives, bool, char, string, and List, HashSet,
Dictionary, Tuple and Nullable of them (`long?` too); a list, set or dictionary the method changed is copied back.
For any other (an array, `object`, a class of the prompt's, `ref` or `out` parameters) there is no split and the tests
run after the program.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from sandbox.languages import apart

_CODEC_SOURCE = apart.APART / "judge" / "Plain.cs"
CODEC_DLL = apart.built_from(_CODEC_SOURCE, "judge-plain", ".dll")
BUILD_CODEC = (
    f"mkdir -p {os.path.dirname(CODEC_DLL)} && /usr/bin/mcs -target:library -optimize+ -out:{CODEC_DLL} "
    f"{_CODEC_SOURCE.relative_to(apart.APART.parent.parent.parent)}"
)

# The open header the prompt ends with: modifiers and return type (`head`), name, parameters.
_OPEN_METHOD = re.compile(
    r"(?P<head>[\w<>,?\s]+?)\s+(?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^()]*)\)\s*(?P<brace>\{)\s*\Z"
)
_MODIFIERS = frozenset({"public", "private", "protected", "internal", "static"})
_CLASS = re.compile(r"\bclass\s+(?P<name>[A-Za-z_]\w*)")
_PLAIN_WORDS = frozenset(
    {"long", "int", "short", "byte", "double", "float", "bool", "char", "string"}
    | {"List", "HashSet", "Dictionary", "Tuple", "Nullable"}
)
_CHANGED_IN_PLACE = re.compile(r"(?:List|HashSet|Dictionary)\b")  # as Plain.ChangesInPlace tells
_TESTS_MAIN = re.compile(r"\bstatic\s+void\s+Main\s*\((?P<args>[^()]*)\)")


@dataclass(frozen=True)
class Parameter:
    type: str  # as the prompt writes it: `List<long>`, `float`
    name: str


@dataclass(frozen=True)
class Signature:
    owner: str  # the class the method is declared in
    static: bool
    returns: str  # "void" for none
    name: str
    parameters: tuple[Parameter, ...]


def entry_signature(prompt: str) -> Signature | None:
    """The signature of the method the prompt leaves open, when every type in it is plain; else None."""
    bare = apart.blanked(prompt)
    found = _OPEN_METHOD.search(bare)
    owner = list(_CLASS.finditer(bare, 0, found.start() if found else 0))
    if found is None or not owner:
        return None
    parameters = []
    for text in apart.split_parameters(found["params"]):
        named = re.fullmatch(r"(?P<type>.+?)\s+(?P<name>[A-Za-z_]\w*)", text, re.DOTALL)
        if named is None:
            return None
        parameters.append(Parameter(" ".join(named["type"].split()), named["name"]))
    head = found["head"].split()
    typed_at = next((i for i, word in enumerate(head) if word not in _MODIFIERS), len(head))
    returns = " ".join(head[typed_at:])
    if not all(_plain(p.type) for p in parameters) or not (returns == "void" or _plain(returns)):
        return None
    return Signature(owner[-1]["name"], "static" in head[:typed_at], returns, found["name"], tuple(parameters))


def _plain(type_text: str) -> bool:
    words = re.findall(r"[A-Za-z_]\w*", type_text)
    return bool(words) and set(words) <= _PLAIN_WORDS and re.fullmatch(r"[\w\s<>,?]+", type_text) is not None


def program_unit(program: str, signature: Signature) -> str:
    """The program's source: the program, its classes closed, then `JudgeServer`, whose Main answers the tests."""
    taken = "".join(
        f"            var judge_arg_{i} = call.Next<{p.type}>();\n" for i, p in enumerate(signature.parameters)
    )
    target = signature.owner if signature.static else f"new {signature.owner}()"
    call = f"{target}.{signature.name}({', '.join(f'judge_arg_{i}' for i in range(len(signature.parameters)))})"
    answered = (
        f"            {call};\n            return call"
        if signature.returns == "void"
        else f"            return call.Returned<{signature.returns}>({call})"
    )
    changed = "".join(
        f".Changed<{p.type}>(judge_arg_{i})"
        for i, p in enumerate(signature.parameters)
        if _CHANGED_IN_PLACE.match(p.type)
    )
    return (
        f"{program}\n{'}' * max(0, apart.open_braces(program))}\n"
        "class JudgeServer {\n    public static void Main(string[] args) {\n"
        "        global::Judge.Plain.Serve(call => {\n"
        f"{taken}            call.Done();\n{answered}{changed};\n        }});\n    }}\n}}\n"
    )


def tests_unit(prompt: str, tests: str, signature: Signature) -> str | None:
    """The tests' source: the prompt, its open method's body a stub that asks the program, then the tests and
    `JudgeTests`, which runs them (None: the tests have no Main in the class the prompt leaves open)."""
    main = _TESTS_MAIN.search(tests)
    if main is None or apart.open_braces(tests) >= 0:  # MultiPL-E's Main, closing the class after it
        return None
    arguments = ", ".join(p.name for p in signature.parameters)
    types = "".join(f", typeof({p.type})" for p in signature.parameters)
    exchange = f"(new object[] {{{arguments}}}{types})"
    body = (
        f"        global::Judge.Plain.Tell{exchange};\n"
        if signature.returns == "void"
        else f"        return global::Judge.Plain.Ask<{signature.returns}>{exchange};\n"
    )
    tests_main = f"{signature.owner}.Main({'args' if main['args'].strip() else ''})"
    return (
        f"{prompt}{body}    }}\n{tests}\n"
        "class JudgeTests {\n    public static void Main(string[] args) {\n"
        "        global::System.Diagnostics.Trace.Listeners.Add(new global::SandboxRuntime.AssertListener());\n"
        f"        global::Judge.Plain.RunTests(() => {tests_main});\n    }}\n}}\n"
    )


def split(prompt: str, program: str, tests: str) -> tuple[str, str] | None:
    """(the program's source, the tests' source) of a program suite whose prompt leaves a plain method open; None when
    it does not, or the tests have no Main."""
    signature = entry_signature(prompt)
    if signature is None:
        return None
    tests_source = tests_unit(prompt, tests, signature)
    return None if tests_source is None else (program_unit(program, signature), tests_source)

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

import re

from sandbox.languages import apart
from sandbox.languages.class_methods import MethodSyntax, Signature

_CODEC_SOURCE = apart.APART / "judge" / "Plain.cs"
CODEC_DLL = apart.built_from(_CODEC_SOURCE, "judge-plain", ".dll")
BUILD_CODEC = (
    f"mkdir -p {apart.BUILT} && /usr/bin/mcs -target:library -optimize+ -out:{CODEC_DLL} "
    f"{apart.from_root(_CODEC_SOURCE)}"
)

# The open header the prompt ends with: modifiers and return type (`head`), name, parameters.
_OPEN_METHOD = re.compile(
    r"(?P<head>[\w<>,?\s]+?)\s+(?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^()]*)\)\s*(?P<brace>\{)\s*\Z"
)
_MODIFIERS = frozenset({"public", "private", "protected", "internal", "static"})
_PLAIN_WORDS = frozenset(
    {"long", "int", "short", "byte", "double", "float", "bool", "char", "string"}
    | {"List", "HashSet", "Dictionary", "Tuple", "Nullable"}
)
_CHANGED_IN_PLACE = re.compile(r"(?:List|HashSet|Dictionary)\b")  # as Plain.ChangesInPlace tells
_TESTS_MAIN = re.compile(r"\bstatic\s+void\s+Main\s*\((?P<args>[^()]*)\)")
_SYNTAX = MethodSyntax(
    _OPEN_METHOD,
    _MODIFIERS,
    re.compile(r"(?P<type>.+?)\s+(?P<name>[A-Za-z_]\w*)", re.DOTALL),
    _PLAIN_WORDS,
    re.compile(r"[\w\s<>,?]+"),
)
entry_signature = _SYNTAX.open_method


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


split = apart.split_by(entry_signature, program_unit, tests_unit)

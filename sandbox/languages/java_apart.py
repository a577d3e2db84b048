"""Java program suites (MultiPL-E's `java`, HumanEval-X's) run apart from the program, in two JVMs, the way C++'s run
as two binaries (sandbox/languages/cpp_apart.py).

The prompt's last method, the one the completion finishes, is the program's entry point: a static method of
MultiPL-E's `class Problem` or an instance method of HumanEval-X's `class Solution`. The program compiles with a
server of it, `JudgeServer`, which answers each request on fd 3 on fd 4, the values as plain data (`judge.Plain`,
sandbox/runtimes/apart/judge/Plain.java, built once as a jar by `make languages`). The tests compile in a sandbox of
their own, from the prompt with that method's body a stub that asks the program, then the tests (MultiPL-E's `main`
inside `Problem`, HumanEval-X's `class Main`), called from `JudgeTests`, which says on fd 5 that they all ran; their
classes come to the run as a jar in memory. The program's `equals` that always holds, a class of its own that turns
the tests' assertions off or a read of the tests' classes never reach them.

Only signatures of plain types are served: primitives and their boxes, String, and ArrayList (List), HashMap (Map),
HashSet (Set), Optional and javatuples' Pair to Decade of them; a collection or map the method changed is copied back.
For any other (an array, a class of the prompt's, a generic method) there is no split and the tests run after the
program.
"""

from __future__ import annotations

import re

from sandbox.languages import apart
from sandbox.languages.class_methods import MethodSyntax, Signature

CODEC_SOURCE = apart.APART / "judge" / "Plain.java"
CODEC_JAR = apart.built_from(CODEC_SOURCE, "judge-plain", ".jar")


# The open header the prompt ends with: modifiers and return type (`head`), name, parameters.
_OPEN_METHOD = re.compile(
    r"(?P<head>[\w<>,\s]+?)\s+(?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^()]*)\)\s*"
    r"(?:throws\s+[\w.,\s]+?)?\s*(?P<brace>\{)\s*\Z"
)
_MODIFIERS = frozenset({"public", "private", "protected", "static", "final", "synchronized"})
_CLASS = re.compile(r"\bclass\s+(?P<name>[A-Za-z_]\w*)")  # the tests' classes
_BOXED = {
    "long": "Long", "int": "Integer", "short": "Short", "byte": "Byte", "double": "Double", "float": "Float",
    "boolean": "Boolean", "char": "Character",
}  # fmt: skip
_TUPLES = ("Pair", "Triplet", "Quartet", "Quintet", "Sextet", "Septet", "Octet", "Ennead", "Decade")
_PLAIN_WORDS = frozenset(
    {*_BOXED, *_BOXED.values(), *_TUPLES, "String", "ArrayList", "List", "HashMap", "Map", "HashSet", "Set", "Optional"}
)
_CHANGED_IN_PLACE = re.compile(r"(?:ArrayList|List|HashMap|Map|HashSet|Set)\b")
_TESTS_MAIN = re.compile(r"\bstatic\s+void\s+main\s*\(")
_SYNTAX = MethodSyntax(
    _OPEN_METHOD,
    _MODIFIERS,
    re.compile(r"(?:final\s+)?(?P<type>.+?)\s+(?P<name>[A-Za-z_]\w*)", re.DOTALL),
    _PLAIN_WORDS,
    re.compile(r"[\w\s<>,]+"),
)
entry_signature = _SYNTAX.open_method


def boxed(type_text: str) -> str:
    """The type as a type argument may name it (`float` -> `Float`)."""
    return _BOXED.get(type_text, type_text)


def _changes_in_place(type_text: str) -> bool:
    """Whether the tests may see an argument of this type changed (as Plain.changesInPlace tells)."""
    return _CHANGED_IN_PLACE.match(type_text) is not None


def program_unit(program: str, signature: Signature) -> str:
    """The program's source: the program, its classes closed, then `JudgeServer`, whose main answers the tests."""
    of = "new judge.Plain.Of<{}>() {{}}"
    taken = "".join(
        f"            {boxed(p.type)} judge_arg_{i} = call.next({of.format(boxed(p.type))});\n"
        for i, p in enumerate(signature.parameters)
    )
    target = signature.owner if signature.static else f"new {signature.owner}()"
    call = f"{target}.{signature.name}({', '.join(f'judge_arg_{i}' for i in range(len(signature.parameters)))})"
    answered = (
        f"            {call};\n            return call"
        if signature.returns == "void"
        else f"            return call.returned({of.format(boxed(signature.returns))}, {call})"
    )
    changed = "".join(
        f"\n                .changed({of.format(p.type)}, judge_arg_{i})"
        for i, p in enumerate(signature.parameters)
        if _changes_in_place(p.type)
    )
    return (
        f"{program}\n{'}' * max(0, apart.open_braces(program))}\n"
        "class JudgeServer {\n    public static void main(String[] args) throws Exception {\n"
        "        judge.Plain.serve(call -> {\n"
        f"{taken}            call.done();\n{answered}{changed};\n        }});\n    }}\n}}\n"
    )


def tests_unit(prompt: str, tests: str, signature: Signature) -> str | None:
    """The tests' source: the prompt, its open method's body a stub that asks the program, the classes the tests do
    not close themselves closed before them, then the tests and `JudgeTests`, which runs them (None: no main)."""
    mains = [found for found in _CLASS.finditer(tests) if _TESTS_MAIN.search(tests, found.end())]
    within = _TESTS_MAIN.search(tests) is not None and apart.open_braces(tests) < 0  # MultiPL-E's main, in the class
    if not within and not mains:
        return None
    arguments = "".join(f", {p.name}" for p in signature.parameters)
    asked = f'judge.Plain.ask({signature.owner}.class, "{signature.name}"{arguments})'
    body = (
        f"        {asked};\n"
        if signature.returns == "void"
        else f"        return ({boxed(signature.returns)}) {asked};\n"
    )
    still_open = apart.open_braces(prompt) - 1  # the classes around the stub
    closed = "}\n" * max(0, still_open + min(0, apart.open_braces(tests)))
    tests_class = signature.owner if within else mains[-1]["name"]
    return (
        f"{prompt}{body}    }}\n{closed}{tests}\n"
        "class JudgeTests {\n    public static void main(String[] args) throws Throwable {\n"
        f"        judge.Plain.runTests(() -> {tests_class}.main(args));\n    }}\n}}\n"
    )


split = apart.split_by(entry_signature, program_unit, tests_unit)

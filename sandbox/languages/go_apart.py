"""Go program suites (MultiPL-E's `go_test.go`) run apart from the program, as two binaries, the way C++'s do
(sandbox/languages/cpp_apart.py).

The prompt's open function, the one the completion finishes, is the program's entry point. The program builds as a
`main` package (its `main`, if it has one, renamed: the tests never call it) with a server of that function in a file
of its own, whose `main` answers each request on fd 3 on fd 4, the values as plain data
(sandbox/runtimes/apart/plain_data.go). The tests build with `go test -c` in a sandbox of their own, from the prompt
with that function's body a stub that asks the program, then the tests, beside a file with the codec and a `TestMain`
that says on fd 5 that they all passed; their binary runs from memory, reporting each test (`-test.v`). A `TestMain`,
`init` or test of the program's own, an assertion helper it redefines or a read of the tests never reaches them.

Only signatures of plain types are served: booleans, integers, floats, strings, and slices, arrays and maps of them;
a slice's elements or a map the function changed are copied back. For any other (`interface{}`, a pointer, a struct,
a function, a variadic parameter) there is no split and the tests run after the program.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sandbox.languages import apart

_CODEC = (apart.APART / "plain_data.go").read_text()
_CODEC_IMPORTS = ("bytes", "encoding/binary", "errors", "fmt", "io", "math", "os", "reflect")
# Ends the first file of a unit: what follows is a second file of the same package (go_test.py's apart_compile and
# apart_build split them).
SPLIT = "// judge: another file of this package follows"

_TOKENS = re.compile(r'"(?:\\.|[^"\\\n])*"|`[^`]*`|\'(?:\\.|[^\'\\\n])+\'|//[^\n]*|/\*.*?\*/', re.DOTALL)
_PACKAGE = re.compile(r"^package\s+(?P<name>[A-Za-z_]\w*)", re.MULTILINE)
_IMPORTS = re.compile(r"\bimport\s*(?:\((?P<group>[^()]*)\)|(?P<single>(?:[A-Za-z_.]\w*\s+)?\"[^\"\n]*\"))")
_IMPORT_SPEC = re.compile(r'(?:(?P<alias>[A-Za-z_.]\w*)\s+)?"(?P<path>[^"\n]*)"')
_OPEN_FUNC = re.compile(
    r"\bfunc\s+(?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^()]*)\)\s*(?P<results>\([^()]*\)|[^{}()\n]*?)\s*\{\s*\Z"
)
_MAIN = re.compile(r"\bfunc\s+main\s*\(")
_INTEGERS = ("int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr")
_SCALARS = frozenset(("bool", "string", "byte", "rune", *_INTEGERS, "float32", "float64"))


@dataclass(frozen=True)
class Signature:
    name: str
    parameters: tuple[tuple[str, str], ...]  # (name, type as the prompt writes it)
    results: tuple[str, ...]


def _plain(type_text: str) -> bool:
    """Whether values of this type are plain data (plain_data.go's kinds)."""
    type_text = type_text.strip()
    if type_text in _SCALARS:
        return True
    if (element := re.fullmatch(r"\[\d*\](.+)", type_text)) is not None:
        return _plain(element[1])
    if type_text.startswith("map["):
        depth = 0
        for at, char in enumerate(type_text[3:], start=3):  # from the key's bracket to the one that closes it
            depth += 1 if char == "[" else -1 if char == "]" else 0
            if depth == 0:
                return _plain(type_text[4:at]) and _plain(type_text[at + 1 :])
    return False


def _named(parts: list[str]) -> list[tuple[str, str]] | None:
    """(name, type) of each of a parameter list's parts, Go's `a, b int` grouping undone; None when unnamed."""
    named, pending = [], []
    for part in parts:
        words = part.split(None, 1)
        if len(words) == 1:
            pending.append(words[0])
            continue
        for name in (*pending, words[0]):
            named.append((name, " ".join(words[1].split())))
        pending = []
    if pending or not all(re.fullmatch(r"[A-Za-z_]\w*", name) and name != "_" for name, _ in named):
        return None
    return named


def _results(text: str) -> list[str] | None:
    """The result types of a function's result list (`bool`, `(int, int)`, `(low, high int)`, or none)."""
    text = text.strip()
    if not text.startswith("("):
        return [text] if text else []
    parts = apart.split_parameters(text[1:-1])
    if all(len(part.split()) == 1 for part in parts):
        return parts
    named = _named(parts)
    return None if named is None else [type_text for _, type_text in named]


def entry_signature(prompt: str) -> Signature | None:
    """The signature of the function the prompt leaves open, when every type in it is plain; else None."""
    bare = apart.blanked(prompt, _TOKENS)
    found = _OPEN_FUNC.search(bare)
    if found is None or _PACKAGE.search(bare) is None:
        return None
    parameters = _named(apart.split_parameters(found["params"]))
    results = _results(found["results"])
    if parameters is None or results is None:
        return None
    if not all(_plain(type_text) for type_text in (*results, *(t for _, t in parameters))):
        return None
    return Signature(found["name"], tuple(parameters), tuple(results))


def _imports_used(code: str) -> str:
    """`code` with each import it never uses made a blank import (`_ "math"`): Go refuses an unused import, and a unit
    holds only part of what the prompt's imports served (the program no tests, the tests no solution)."""
    bare = apart.blanked(code, _TOKENS)
    declarations = list(_IMPORTS.finditer(bare))
    body = _IMPORTS.sub(" ", bare)
    for declaration in reversed(declarations):
        for spec in reversed(list(_IMPORT_SPEC.finditer(code, declaration.start(), declaration.end()))):
            name = spec["alias"] or spec["path"].rsplit("/", 1)[-1]
            if name in ("_", ".") or re.search(rf"\b{re.escape(name)}\s*\.", body):
                continue
            code = f'{code[: spec.start()]}_ "{spec["path"]}"{code[spec.end() :]}'
    return code


def _header(package: str, *also: str) -> str:
    """A file of the codec in `package`, importing what it needs and `also`."""
    imports = "".join(f'\t"{path}"\n' for path in (*_CODEC_IMPORTS, *also))
    return f"package {package}\n\nimport (\n{imports})\n\n{_CODEC}\n"


def program_unit(program: str, signature: Signature) -> str:
    """The program's two files: the program as package main (its own `main` renamed), then the server."""
    bare = apart.blanked(program, _TOKENS)
    package = _PACKAGE.search(bare)
    if package is not None:
        program = f"{program[: package.start()]}package main{program[package.end() :]}"
    for found in reversed(list(_MAIN.finditer(apart.blanked(program, _TOKENS)))):
        program = f"{program[: found.start()]}func judgeProgramMain({program[found.end() :]}"
    arguments = [f"judgeArg{i}" for i in range(len(signature.parameters))]
    results = [f"judgeResult{i}" for i in range(len(signature.results))]
    declared = "".join(f"\t\tvar {name} {t}\n" for name, (_, t) in zip(arguments, signature.parameters, strict=True))
    call = f"{signature.name}({', '.join(arguments)})"
    changed = [name for name, (_, t) in zip(arguments, signature.parameters, strict=True) if re.match(r"\[\]|map\[", t)]
    taken = ", ".join(["in", *(f"&{name}" for name in arguments)])
    assigned = f"{', '.join(results)} := " if results else ""
    given = ", ".join(["out", *results, *changed])
    return (
        f"{_imports_used(program)}\n{SPLIT}\n{_header('main')}"
        "func main() {\n\tjudgeServe(func(in *bytes.Reader, out *bytes.Buffer) error {\n"
        f"{declared}\t\tif err := judgeTake({taken}); err != nil {{\n\t\t\treturn err\n\t\t}}\n"
        f"\t\t{assigned}{call}\n\t\tjudgeGive({given})\n\t\treturn nil\n\t}})\n}}\n"
    )


# Go binaries are static: the preloaded library (nondumpable.c) never runs in the tests' process, so this does its work
# before any test runs. The program starts only once it has said so.
_OUT_OF_REACH = """// Non-dumpable before any test runs, so that the program cannot read this process's memory or files.
func init() {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); errno != 0 {
		os.Exit(126)
	}
	fd, err := strconv.Atoi(os.Getenv("JUDGE_READY_FD"))
	if err == nil && os.Getenv("JUDGE_READY_PID") == strconv.Itoa(os.Getpid()) {
		_, _ = syscall.Write(fd, []byte("r"))
	}
}

"""


def tests_unit(prompt: str, tests: str, signature: Signature) -> str:
    """The tests' two files: the prompt, its open function's body a stub that asks the program, then the tests; then
    the codec and the TestMain that says they all passed."""
    results = [f"judgeResult{i}" for i in range(len(signature.results))]
    declared = "".join(f"\tvar {name} {t}\n" for name, t in zip(results, signature.results, strict=True))
    pointers = ", ".join(f"&{name}" for name in results)
    asked = ", ".join([f"[]interface{{}}{{{pointers}}}", *(name for name, _ in signature.parameters)])
    returned = f"\treturn {', '.join(results)}\n" if results else ""
    package = _PACKAGE.search(apart.blanked(prompt, _TOKENS))
    assert package is not None  # entry_signature found it
    tests_file = _imports_used(f"{prompt}{declared}\tjudgeAsk({asked})\n{returned}}}\n{tests}")
    return (
        f"{tests_file}\n{SPLIT}\n{_header(package['name'], 'strconv', 'syscall', 'testing')}{_OUT_OF_REACH}"
        "func TestMain(m *testing.M) {\n\tcode := m.Run()\n\tif code == 0 {\n\t\tjudgeDone()\n\t}\n\tos.Exit(code)\n}\n"
    )


split = apart.split_by(entry_signature, program_unit, tests_unit)

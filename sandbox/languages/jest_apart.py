"""Which Jest suites run apart from the program (sandbox/languages/jest.py's Language.apart_when).

Apart, the tests reach the program's process only as plain data: they call its functions with values and get values
back, and read its constants (sandbox/runtimes/apart/run_jest.js). Tests that use more of the program (construct its
classes, call methods of its objects, hand it callbacks, check `instanceof` its classes) or of Jest (mocks, spies,
fake timers, all under `jest.`) would fail a right answer there: they run after the program in one test file, as
before. The choice is read from the reference's tests alone, so no program can make its own tests run the other way.

    runs_apart("test('adds', () => { expect(add(1, 2)).toBe(3); });")  -> True
    runs_apart("test('pops', () => { const s = new Stack(); s.push(1); expect(s.pop()).toBe(1); });")  -> False
"""

from __future__ import annotations

import re

# Strings, template literals and comments: blanked before the code is read (a test's title says anything).
_TEXT = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`", re.DOTALL)
_JEST_API = frozenset({
    "describe", "fdescribe", "xdescribe", "test", "it", "fit", "xit", "xtest", "expect",
    "beforeAll", "beforeEach", "afterAll", "afterEach", "require", "module", "exports", "this", "super", "arguments",
})  # fmt: skip
_BUILTINS = frozenset({
    "Array", "ArrayBuffer", "BigInt", "Boolean", "DataView", "Date", "Error", "EvalError", "Float32Array",
    "Float64Array", "Infinity", "Int8Array", "Int16Array", "Int32Array", "JSON", "Map", "Math", "NaN", "Number",
    "Object", "Promise", "RangeError", "ReferenceError", "RegExp", "Set", "String", "Symbol", "SyntaxError",
    "TypeError", "Uint8Array", "Uint16Array", "Uint32Array", "URIError", "WeakMap", "WeakSet", "console",
    "Buffer", "globalThis", "isFinite", "isNaN", "parseFloat", "parseInt", "process", "structuredClone", "undefined",
})  # fmt: skip
_NAME = r"[A-Za-z_$][\w$]*"
_DECLARED = re.compile(rf"\b(?:var|let|const|function\*?|class)\s+({_NAME})")
_DESTRUCTURED = re.compile(r"\b(?:var|let|const)\s*[{\[]([^=]*)[}\]]\s*=")
_IMPORTED = re.compile(r"\bimport\s+([^;]*?)\s+from\b")
_FUNCTIONS = re.compile(
    rf"\bfunction\*?\s+({_NAME})|\b(?:var|let|const)\s+({_NAME})\s*=\s*(?:async\s*)?(?:function\b|\(|{_NAME}\s*=>)"
)
_PARAMETERS = re.compile(rf"\(([^()]*)\)\s*=>|\b({_NAME})\s*=>|\bfunction\b[^(]*\(([^()]*)\)")


def runs_apart(tests: str) -> bool:
    """Whether Jest tests `tests` reach the program only by calling its functions with plain data (and reading its
    values): no `jest.` (mocks, spies, timers), no `new`, `extends`, `instanceof` or member of a name they neither
    declare nor find in JavaScript, no function handed to one."""
    code = _TEXT.sub(lambda found: re.sub(r"[^\n]", " ", found.group()), tests)
    if re.search(r"\bjest\s*\.", code):
        return False
    known = _declared(code) | _JEST_API | _BUILTINS
    used_as_object = re.finditer(
        rf"\b(?:new|extends|instanceof)\s+({_NAME})|toBeInstanceOf\s*\(\s*({_NAME})|(?<![\w$.])({_NAME})\s*\??\.(?!\.)",
        code,
    )
    if any(name not in known for found in used_as_object for name in found.groups() if name):
        return False
    functions = {name for found in _FUNCTIONS.finditer(code) for name in found.groups() if name}
    for call in re.finditer(rf"(?<![\w$.])({_NAME})\s*\(", code):
        if call[1] not in known and _hands_a_function(_arguments(code, call.end()), functions):
            return False
    return True


def _declared(code: str) -> set[str]:
    """The names the tests declare or import, their functions' parameters included."""
    names = {found[1] for found in _DECLARED.finditer(code)}
    for pattern in (_DESTRUCTURED, _IMPORTED, _PARAMETERS):
        for found in pattern.finditer(code):
            names.update(re.findall(_NAME, " ".join(filter(None, found.groups()))))
    return names - {"as", "from", "async"}


def _arguments(code: str, start: int) -> str:
    """The text of a call's arguments, from just after its `(` to the `)` that closes it."""
    depth = 1
    for at in range(start, len(code)):
        depth += {"(": 1, ")": -1}.get(code[at], 0)
        if depth == 0:
            return code[start:at]
    return code[start:]


def _hands_a_function(arguments: str, functions: set[str]) -> bool:
    """Whether a call's arguments hold a function: written there, or one the tests declared, named."""
    if re.search(r"=>|\bfunction\b", arguments):
        return True
    return any(name in functions for name in re.findall(_NAME, arguments))

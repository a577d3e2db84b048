"""C++ program suites (MultiPL-E's and HumanEval-X's `cpp`) run apart from the program, as two binaries.

The prompt's last function, the one the completion finishes, is the program's entry point. Its signature gives:
- the program's binary: the program, then a server that answers the tests' calls of that function on fds 3 and 4
  (sandbox/runtimes/apart/plain_data.hpp: the values as plain data). Whatever the program's macros, operators or
  types do to that server changes only what the program answers;
- the tests' binary: the prompt (its includes and helpers, the reference's own code) with the entry point as a stub
  that sends its arguments to the program and returns the value it gets back, then the tests. It is compiled in a
  sandbox of its own, where no program runs, and runs from memory (sandbox/runner.py run_suite_apart): the
  program's `#define assert`, `operator==` or `main` never reaches it, nor can the program read it.

Only signatures of plain types are served (numbers, bool, char, std::string, and vectors, tuples, pairs, optionals,
maps and sets of them); for any other (std::any, pointers, a struct of the prompt's) there is no split and the tests
run after the program as before (sandbox/judge.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sandbox.languages import apart

CODEC = (apart.APART / "plain_data.hpp").read_text()

_PREPROCESSOR = re.compile(r"^[ \t]*#[^\n]*", re.MULTILINE)
# The open header the prompt ends with: `return-type name(parameters) {`.
_OPEN_HEADER = re.compile(
    r"(?P<head>[^;{}()]*?)\b(?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^(){};]*)\)\s*(?P<brace>\{)\s*\Z"
)
_PLAIN_WORDS = frozenset({  # the words of the types served: std's containers of numbers and strings
    "std", "const", "unsigned", "signed", "long", "int", "short", "char", "bool", "float", "double", "size_t",
    "int64_t", "int32_t", "uint64_t", "uint32_t", "string", "vector", "tuple", "pair", "optional", "map",
    "unordered_map", "set", "unordered_set",
})  # fmt: skip
_SPECIFIERS = re.compile(r"\b(?:static|inline|constexpr)\b")


@dataclass(frozen=True)
class Parameter:
    type: str  # as the prompt writes it, e.g. `const std::vector<long>&`
    name: str

    @property
    def changed_in_place(self) -> bool:
        """A non-const reference: the function may change the caller's value, which is copied back."""
        return "&" in self.type and not re.search(r"\bconst\b", self.type)


@dataclass(frozen=True)
class Signature:
    returns: str
    name: str
    parameters: tuple[Parameter, ...]
    opens_at: int = field(default=0, compare=False)  # where the prompt's open header's `{` is


def entry_signature(prompt: str) -> Signature | None:
    """The signature of the function the prompt leaves open, when every type in it is plain; else None."""
    found = _open_header(prompt)
    if found is None:
        return None
    returns = " ".join(_SPECIFIERS.sub("", found["head"]).split())
    texts = apart.split_parameters(found["params"])
    parameters = tuple(filter(None, map(_parameter, texts)))
    if len(parameters) != len(texts):
        return None
    if (not _plain(returns) and returns != "void") or not all(_plain(p.type) for p in parameters):
        return None
    return Signature(returns, found["name"], parameters, found.start("brace"))


def _open_header(prompt: str) -> re.Match[str] | None:
    """The header the prompt ends with, found past its comments and preprocessor lines (HumanEval-X's prompts end
    with a comment inside the open body); its positions are the prompt's."""
    return _OPEN_HEADER.search(apart.blanked(apart.blanked(prompt), _PREPROCESSOR))


def _parameter(text: str) -> Parameter | None:
    found = re.fullmatch(r"(?P<type>.*?[\s&>])(?P<name>[A-Za-z_]\w*)", text.strip(), re.DOTALL)
    if found is None or "=" in text:
        return None
    return Parameter(" ".join(found["type"].split()), found["name"])


def _plain(type_text: str) -> bool:
    words = re.findall(r"[A-Za-z_]\w*", type_text)
    return bool(words) and set(words) <= _PLAIN_WORDS and re.fullmatch(r"[\w\s:<>,&]+", type_text) is not None


def program_unit(program: str, signature: Signature) -> str:
    """The program's translation unit: the program, then the server of its entry point (main: answers each
    request on fd 3 with a reply on fd 4, until the tests close their end)."""
    arguments = "\n".join(
        f"    judge_plain::value_t<{p.type}> judge_arg_{i};\n    judge_plain::get(judge_in, judge_arg_{i});"
        for i, p in enumerate(signature.parameters)
    )
    call = f"{signature.name}({', '.join(f'judge_arg_{i}' for i in range(len(signature.parameters)))})"
    result = (
        f"    {call};"
        if signature.returns == "void"
        else f"    judge_plain::value_t<{signature.returns}> judge_result = {call};\n"
        "    judge_plain::put(judge_out, judge_result);"
    )
    copied_back = "".join(
        f"\n    judge_plain::put(judge_out, judge_arg_{i});"
        for i, p in enumerate(signature.parameters)
        if p.changed_in_place
    )
    return (
        f'{CODEC}\n#line 1 "main.cpp"\n{program}\n#line 1 "judge_server.cpp"\n'
        "static void judge_answer(judge_plain::Reader &judge_in, judge_plain::Writer &judge_out) {\n"
        "    using namespace std;\n"
        f"{arguments}\n    judge_in.finish();\n{result}{copied_back}\n}}\n"
        f"{_SERVE}"
    )


_SERVE = """
int main() {
    std::string judge_request;
    while (judge_plain::read_message(3, judge_request)) {
        judge_plain::Reader judge_in(judge_request);
        judge_plain::Writer judge_out(1, '\\0');
        try {
            judge_answer(judge_in, judge_out);
        } catch (const std::exception &judge_error) {
            judge_out.assign(1, '\\1');
            judge_plain::put(judge_out, std::string(judge_error.what()));
        } catch (...) {
            judge_out.assign(1, '\\1');
            judge_plain::put(judge_out, std::string("an exception that is not a std::exception"));
        }
        std::fflush(stdout);
        judge_plain::write_message(4, judge_out);
    }
    return 0;
}
"""


def tests_unit(prompt: str, tests: str, signature: Signature) -> str:
    """The tests' translation unit: the prompt, its open header made a declaration and defined as the stub that
    asks the program, then the tests. They say on fd 5 that they all ran once their main has returned."""
    declaration = prompt[: signature.opens_at] + ";"
    sent = "".join(f"    judge_plain::put(judge_args, {p.name});\n" for p in signature.parameters)
    copied_back = "".join(
        f"        judge_plain::get(judge_in, {p.name});\n" for p in signature.parameters if p.changed_in_place
    )
    parameters = ", ".join(f"{p.type} {p.name}" for p in signature.parameters)
    returns, returned = (
        ("", "")
        if signature.returns == "void"
        else (
            "        judge_plain::get(judge_in, judge_result);\n",
            "    return judge_result;\n",
        )
    )
    result = "" if signature.returns == "void" else f"    judge_plain::value_t<{signature.returns}> judge_result;\n"
    return (
        f'{CODEC}{_ASK}\n#line 1 "prompt.cpp"\n{declaration}\n'
        f"{signature.returns} {signature.name}({parameters}) {{\n"
        f"    judge_plain::Writer judge_args;\n{sent}"
        "    std::string judge_reply = judge_tests::ask(judge_args);\n"
        f"{result}"
        "    try {\n        judge_plain::Reader judge_in(judge_reply);\n"
        f"{returns}{copied_back}        judge_in.finish();\n"
        "    } catch (const judge_plain::Malformed &judge_error) {\n"
        "        judge_tests::refuse(judge_error.what());\n    }\n"
        f'{returned}}}\n#line 1 "tests.cpp"\n{tests}\n'
    )


_ASK = """
#include <csignal>
namespace judge_tests {
[[noreturn]] inline void refuse(const char *why) {
    std::fprintf(stderr, "%s\\n", why);
    std::fflush(stdout);
    _exit(1);
}
// The program's reply to a call: its value's bytes; what it threw is thrown here.
inline std::string ask(const judge_plain::Writer &arguments) {
    judge_plain::write_message(4, arguments);
    std::string reply;
    if (!judge_plain::read_message(3, reply) || reply.empty()) refuse("the program ended before its tests did");
    if (reply[0] == 1) {
        std::string what;
        try {
            judge_plain::Reader in(reply);
            in.at++;
            judge_plain::get(in, what);
        } catch (const judge_plain::Malformed &) {
        }
        throw std::runtime_error("the program threw: " + what);
    }
    if (reply[0] != 0) refuse("the program's reply is not a value of the declared type");
    return reply.substr(1);
}
// Once the tests' main has returned: they all ran.
inline const int said_at_exit = (std::signal(SIGPIPE, SIG_IGN), std::atexit([] {
    std::fflush(stdout);
    if (::write(5, "done", 4) != 4) _exit(1);
}));
}  // namespace judge_tests
"""


split = apart.split_by(entry_signature, program_unit, tests_unit)

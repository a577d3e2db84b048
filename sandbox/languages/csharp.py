"""C# on Mono, made to judge like SandboxFusion's `dotnet run`: a failed Debug.Assert ends the program, and .NET 6's
implicit usings hold.

Mono's DefaultTraceListener prints a failed assert and goes on (exit 0), where .NET calls Environment.FailFast:
the compile step adds ASSERT_LISTENER to the program and registers it in main.exe.config, which Mono reads when
Debug/Trace start; it exits with 134, the status a shell reports for .NET's abort. mcs (C# 7) has no `global using`:
the compile step compiles a copy of the program with IMPLICIT_USINGS put before its first token (after its
`#define`s, which must come first), `#line` directives keeping the program's own file name and line numbers.
MultiPL-E's suites run apart from the program, in two Mono processes (csharp_apart.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sandbox.languages import apart, csharp_apart
from sandbox.languages.base import Language, literal

# .NET 6's implicit usings but System.Net.Http, which Mono's packages here lack (and programs have no network).
IMPLICIT_USINGS = (
    "using System; using System.IO; using System.Collections.Generic; using System.Linq; using System.Threading; "
    "using System.Threading.Tasks;"
)
ASSERT_EXIT_CODE = 134
ASSERT_LISTENER = f"""namespace SandboxRuntime {{
    // A failed Debug.Assert, Trace.Assert or Debug.Fail ends the program, as .NET's FailFast does.
    public sealed class AssertListener : global::System.Diagnostics.TraceListener {{
        public override void Write(string message) {{ }}
        public override void WriteLine(string message) {{ }}
        public override void Fail(string message, string detail) {{
            try {{ global::System.Console.Out.Flush(); }} catch (global::System.Exception) {{ }}
            global::System.Console.Error.WriteLine("Process terminated. Assertion failed.");
            global::System.Console.Error.WriteLine(message);
            if (!string.IsNullOrEmpty(detail)) global::System.Console.Error.WriteLine(detail);
            global::System.Console.Error.Flush();
            global::System.Environment.Exit({ASSERT_EXIT_CODE});
        }}
    }}
}}
"""
# Added after Mono's DefaultTraceListener, which still prints the failure and its stack trace (failure_pattern).
APP_CONFIG = (
    '<?xml version="1.0"?>\n<configuration><system.diagnostics><trace><listeners>'
    '<add name="sandbox" type="SandboxRuntime.AssertListener, main"/>'
    "</listeners></trace></system.diagnostics></configuration>\n"
)
# What programs and the tests run apart compile against and load: System.Numerics, and the codec (csharp_apart.py).
_REFERENCES = f"-r:System.Numerics.dll -r:{csharp_apart.CODEC_DLL}"


def _compile_script(flags: str) -> str:
    """The compile step ($1: the listener, $2: the config, $3: the program, $4: how many of its lines go before
    IMPLICIT_USINGS), mcs given `flags` (its output, its entry point)."""
    return f"""src=$3 k=$4 usings='{IMPLICIT_USINGS}'
{{ printf '#line 1 "%s"\\n' "$src"; head -n "$k" "$src"; printf '\\n%s\\n#line %d "%s"\\n' "$usings" $((k + 1)) "$src"
  tail -n "+$((k + 1))" "$src"; }} > .program.cs
printf '%s' "$1" > .assert.cs && printf '%s' "$2" > main.exe.config || exit 1
/usr/bin/mcs -optimize+ -d:DEBUG -d:TRACE {_REFERENCES} -nowarn:105,168,219 {flags} .program.cs .assert.cs
status=$?
rm -f .program.cs .assert.cs
exit $status
"""


# What may come before a C# file's first token: whitespace, comments and preprocessor lines.
# (A directive is first on its line: tried before the blanks that may start it.)
_BEFORE_CODE = re.compile(r"(?m:^[ \t]*#[^\n]*)|\n|[^\S\n]+|//[^\n]*|/\*.*?\*/", re.DOTALL)
_DEFINE = re.compile(r"[ \t]*#[ \t]*(define|undef)\b")


def lines_before_usings(code: str) -> int:
    """How many lines of `code` come before the implicit usings: through its last `#define` or `#undef`, which
    C# allows only before the first token."""
    code, position, lines = code.removeprefix("\ufeff"), 0, 0  # a byte order mark is no token
    while (found := _BEFORE_CODE.match(code, position)) and found.end() > position:
        if _DEFINE.match(found.group()):
            lines = code.count("\n", 0, found.end()) + 1
        position = found.end()
    return lines


def _compile_with(flags: str) -> tuple[str, ...]:
    """The compile step's argv but the program's source (its last argument)."""
    script = literal(_compile_script(flags))
    return ("/bin/sh", "-c", script, "csharp", literal(ASSERT_LISTENER), literal(APP_CONFIG))


@dataclass(frozen=True)
class CSharpLanguage(Language):
    def commands(self, code: str, memory_mb: int) -> tuple[str, list[str] | None, list[str]]:
        """The compile step also gets where the implicit usings go in this program."""
        source, compile_argv, run_argv = super().commands(code, memory_mb)
        return source, [*(compile_argv or []), str(lines_before_usings(code))], run_argv


# Mono: mcs compiles, the runtime JITs; it reserves address space up front, so the run's cgroup bounds memory.
CSHARP = CSharpLanguage(
    name="csharp",
    source_file="main.cs",
    # DEBUG and TRACE as `dotnet run` has them: Debug.Assert and Trace.Assert count (MultiPL-E's C# tests).
    compile=(*_compile_with("-out:main.exe"), "{source}"),
    run=("/usr/bin/mono", "main.exe"),
    address_space_limit=False,
    compile_address_space_limit=False,
    apt=("mono-mcs", "mono-runtime", "libmono-system-numerics4.0-cil"),
    version=("/usr/bin/mono", "--version"),
    binds=("/etc/mono",),
    start_s=0.2,
    # MONO_PATH: where both sides of tests run apart find the codec.
    # MONO_LOG_DEST: Mono logs to stdout, where its warnings (a thread at SCHED_IDLE, sandbox/runner.py) would
    # become part of the answer.
    env={"MONO_TRACE_LISTENER": "Console.Error", "MONO_PATH": apart.BUILT, "MONO_LOG_DEST": "/dev/stderr"},
    failure_pattern=r"DefaultTraceListener\.Fail|^Unhandled Exception",
    needs=("/usr/bin/mcs", csharp_apart.CODEC_DLL),
    setup=(csharp_apart.BUILD_CODEC,),
    aliases=("cs", "c#"),
    tests_done='System.Console.WriteLine("{marker}");',
    tests_done_at="block",
    apart_split=csharp_apart.split,
    # The tests' assembly, `tests`, which their Mono reads from memory (sandbox/runner.py run_suite_apart).
    apart_build=(*_compile_with("-out:tests -main:JudgeTests"), "{source}"),
    apart_program=("/usr/bin/mono", "main.exe"),
    apart_tests=("/usr/bin/mono", "/dev/fd/6"),
)

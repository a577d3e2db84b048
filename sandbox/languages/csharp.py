from sandbox.languages.base import Language

# Mono: mcs compiles, the runtime JITs; it reserves address space up front, so the run's cgroup bounds memory.
CSHARP = Language(
    name="csharp",
    source_file="main.cs",
    # DEBUG keeps Debug.Assert (MultiPL-E's C# tests), whose failures Mono reports on stderr without exiting.
    compile=(
        "/usr/bin/mcs",
        "-optimize+",
        "-d:DEBUG",
        "-r:System.Numerics.dll",
        "-nowarn:168,219",
        "-out:main.exe",
        "{source}",
    ),
    run=("/usr/bin/mono", "main.exe"),
    address_space_limit=False,
    compile_address_space_limit=False,
    apt=("mono-mcs", "mono-runtime", "libmono-system-numerics4.0-cil"),
    version=("/usr/bin/mono", "--version"),
    binds=("/etc/mono",),
    start_s=0.2,
    env={"MONO_TRACE_LISTENER": "Console.Error"},
    failure_pattern=r"DefaultTraceListener\.Fail|^Unhandled Exception",
    aliases=("cs", "c#"),
    tests_done='System.Console.WriteLine("{marker}");',
    tests_done_at="block",
)

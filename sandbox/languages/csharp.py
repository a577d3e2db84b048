from sandbox.languages.base import Language

# Mono: mcs compiles, the runtime JITs; it reserves address space up front, so the run's cgroup bounds memory.
CSHARP = Language(
    name="csharp",
    source_file="main.cs",
    compile=("/usr/bin/mcs", "-optimize+", "-nowarn:168,219", "-out:main.exe", "{source}"),
    run=("/usr/bin/mono", "main.exe"),
    address_space_limit=False,
    compile_address_space_limit=False,
    apt=("mono-mcs", "mono-runtime"),
    version=("/usr/bin/mono", "--version"),
    binds=("/etc/mono",),
    start_s=0.2,
    aliases=("cs", "c#"),
)

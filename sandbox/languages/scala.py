from sandbox.languages.base import Language
from sandbox.languages.java import JVM_FAST_START

_LIB = "/usr/share/scala/lib"
_JVM = (*JVM_FAST_START, "-Xss64m")


# The JVM straight, not Debian's `scala`/`scalac` shell scripts: a time limit must kill the JVM itself (the
# runner reads its signal), not leave a script exiting 152.
SCALA = Language(
    name="scala",
    source_file="main.scala",
    main_pattern=(r"\bobject\s+([A-Za-z_][A-Za-z0-9_]*)",),  # scala runs an object: the first the program defines
    compile=(
        "/usr/bin/java", "-Xmx1024m", *_JVM, "-Dscala.usejavacp=true",
        "-cp", f"{_LIB}/scala-compiler.jar:{_LIB}/scala-library.jar:{_LIB}/scala-reflect.jar",
        "scala.tools.nsc.Main", "-nowarn", "-d", ".", "{source}",
    ),
    run=("/usr/bin/java", "-Xmx{memory_mb}m", *_JVM, "-cp", f"{_LIB}/scala-library.jar:.", "{main}"),
    address_space_limit=False,
    compile_address_space_limit=False,
    apt=("scala",),
    version=("/usr/bin/scala", "-version"),
    start_s=0.5,
    compile_memory_floor_mb=1536,
    compile_floor_s=30.0,
    stderr_fails=True,  # as MultiPL-E judges Scala's test programs
    tests_done='println("{marker}")',
    tests_done_at="block",
)  # fmt: skip

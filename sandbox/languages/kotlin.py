from sandbox.languages.base import Language
from sandbox.languages.java import JVM_FAST_START, archive_setup, archived, class_archive

_HOME = "/usr/share/kotlin/kotlinc"
# The script's compiler and runner: the script's file follows.
_SCRIPT_RUNNER = (
    "/usr/bin/java", "-Xmx{memory_mb}m", "-Xss64m", *JVM_FAST_START, f"-Dkotlin.home={_HOME}",
    "-cp", f"{_HOME}/lib/kotlin-preloader.jar", "org.jetbrains.kotlin.preloading.Preloader",
    "-cp", f"{_HOME}/lib/kotlin-compiler.jar", "org.jetbrains.kotlin.cli.jvm.K2JVMCompiler", "-script",
)  # fmt: skip
_ARCHIVE = class_archive("kotlin")
_SAMPLE = 'println(listOf(1, 2).map { it * 2 }.joinToString(" "))\n'

# Compiled and run by one JVM per test (kotlinc -script), started straight rather than through Debian's
# `kotlinc` shell script: a time limit must kill the JVM itself (the runner reads its signal). Compiling the
# script takes ~2 s of each test's time: start_s.
KOTLIN_SCRIPT = Language(
    name="kotlin_script",
    source_file="main.kts",
    run=(*archived(_SCRIPT_RUNNER, _ARCHIVE), "{source}"),
    address_space_limit=False,
    apt=("kotlin",),
    version=("/usr/bin/kotlinc", "-version"),
    start_s=5.0,
    memory_floor_mb=768,
    aliases=("kts",),
    needs=(_ARCHIVE,),
    setup=(archive_setup(_SCRIPT_RUNNER, _ARCHIVE, "main.kts", _SAMPLE),),
    tests_done='print("{marker}"); System.out.flush()',  # a script runs top to bottom: after exitProcess, nothing
)  # fmt: skip

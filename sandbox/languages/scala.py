import os

from sandbox.languages import scala_apart
from sandbox.languages.base import Language
from sandbox.languages.java import JVM_FAST_START, archive_setup, archived, class_archive, codec_jar, tests_jar

_LIB = "/usr/share/scala/lib"
_JVM = (*JVM_FAST_START, "-Xss64m")
# scalac on the JVM's class path (-Dscala.usejavacp), with the codec of tests run apart (scala_apart.py)
_PLAIN_SCALAC = (
    "/usr/bin/java", "-Xmx1024m", *_JVM, "-Dscala.usejavacp=true",
    "-cp", f"{_LIB}/scala-compiler.jar:{_LIB}/scala-library.jar:{_LIB}/scala-reflect.jar:{scala_apart.CODEC_JAR}",
    "scala.tools.nsc.Main", "-nowarn",
)  # fmt: skip
_ARCHIVE = class_archive("scalac")
_SCALAC = archived(_PLAIN_SCALAC, _ARCHIVE)
_SAMPLE = 'object Main { def main(a: Array[String]): Unit = println(List(1, 2).map(_ * 2).mkString(" ")) }\n'
_CLASS_PATH = f"{_LIB}/scala-library.jar:.:{scala_apart.CODEC_JAR}"


# The JVM straight, not Debian's `scala`/`scalac` shell scripts: a time limit must kill the JVM itself (the
# runner reads its signal), not leave a script exiting 152.
SCALA = Language(
    name="scala",
    source_file="main.scala",
    main_pattern=(r"\bobject\s+([A-Za-z_][A-Za-z0-9_]*)",),  # scala runs an object: the first the program defines
    compile=(*_SCALAC, "-d", ".", "{source}"),
    run=("/usr/bin/java", "-Xmx{memory_mb}m", *_JVM, "-cp", _CLASS_PATH, "{main}"),
    address_space_limit=False,
    compile_address_space_limit=False,
    apt=("scala", "default-jdk-headless:/usr/bin/jar"),
    needs=(scala_apart.CODEC_JAR, _ARCHIVE),
    setup=(
        codec_jar(_SCALAC, scala_apart.CODEC_SOURCE, scala_apart.CODEC_JAR),
        # After the codec, which is on scalac's class path.
        archive_setup((*_PLAIN_SCALAC, "-d", "."), _ARCHIVE, "main.scala", _SAMPLE),
    ),
    version=("/usr/bin/scala", "-version"),
    start_s=0.5,
    compile_memory_floor_mb=1536,
    compile_floor_s=30.0,
    stderr_fails=True,  # as MultiPL-E judges Scala's test programs
    tests_done='println("{marker}")',
    tests_done_at="block",
    apart_split=scala_apart.split,
    apart_build=tests_jar(_SCALAC),
    apart_program=("/usr/bin/java", "-Xmx{memory_mb}m", *_JVM, "-cp", _CLASS_PATH, "JudgeServer"),
    apart_tests=("/usr/bin/java", "-Xmx{memory_mb}m", *_JVM, "-cp", f"/dev/fd/6:{_CLASS_PATH}", "JudgeTests"),
    apart_tests_env={"JUDGE_READY_EXE": os.path.realpath("/usr/bin/java")},
)  # fmt: skip

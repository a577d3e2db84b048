import os
import shlex
from pathlib import Path

from sandbox.languages import apart, java_apart
from sandbox.languages.base import Language

# JVM start-up flags for short programs (scala and kotlin_script start the JVM the same way).
JVM_FAST_START = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData")
JAVATUPLES = "/usr/share/java/javatuples.jar"  # org.javatuples, which MultiPL-E's Java prompts import
# What programs compile and run against: javatuples, and the codec of tests run apart (java_apart.py)
CLASS_PATH = f".:{JAVATUPLES}:{java_apart.CODEC_JAR}"


def class_archive(tool: str) -> str:
    """Where `make languages` keeps the class-data archive of a JVM tool (scalac, javac, clojure, kotlin)."""
    return f"{apart.BUILT}/{tool}.jsa"


def archived(argv: tuple[str, ...], archive: str, flag_prefix: str = "") -> tuple[str, ...]:
    """`argv` (a JVM launcher's: java, or javac with `flag_prefix` "-J") mapping `archive` at start.

    Class-data sharing: the classes a tool loads, parsed once by `make languages` (archive_setup) and mapped at each
    start (bench/jvm_archives.py: javac 0.96 s -> 0.57 s, scalac 3.87 s -> 2.52 s, Clojure 0.88 s -> 0.53 s).
    An archive that is missing or stale (another JDK, a changed jar) is not used, and the JVM's notes about it, which
    it would print on stdout, are off: the tool just starts as it would without."""
    flags = (f"-XX:SharedArchiveFile={archive}", "-Xlog:cds=off", "-Xlog:cds+dynamic=off")
    return (argv[0], *(flag_prefix + flag for flag in flags), *argv[1:])


def archive_setup(argv: tuple[str, ...], archive: str, file_name: str, sample: str, flag_prefix: str = "") -> str:
    """The set-up command that runs `argv` once on `sample` (written to `file_name`, its last argument) in a scratch
    directory, and saves the classes it loaded to `archive`. A run's memory bound ({memory_mb}) is 512 MB there."""
    argv = tuple(arg.replace("{memory_mb}", "512") for arg in argv)
    dump = (argv[0], f"{flag_prefix}-XX:ArchiveClassesAtExit={archive}", *argv[1:], file_name)
    return (
        f"mkdir -p {apart.BUILT} && scratch=$(mktemp -d) && cd $scratch && printf '%s' {shlex.quote(sample)} > "
        f"{file_name} && {shlex.join(dump)} > /dev/null && cd / && rm -rf $scratch && test -s {archive}"
    )


JAVAC_ARCHIVE = class_archive("javac")
_PLAIN_JAVAC = ("/usr/bin/javac", "-J-Xmx512m", *(f"-J{flag}" for flag in JVM_FAST_START), "-nowarn")
JAVAC = archived(_PLAIN_JAVAC, JAVAC_ARCHIVE, "-J")
JVM = ("/usr/bin/java", "-Xmx{memory_mb}m", "-Xss64m", *JVM_FAST_START)
_CLASSES = "/tmp/judge-classes"  # where the tests' classes compile, in their own sandbox, before they are a jar


def codec_jar(compiler: tuple[str, ...], source: Path, jar: str) -> str:
    """The set-up command that compiles a JVM language's codec `source` with `compiler` (its argv, class path
    included) into `jar` (java_apart.py's, scala_apart.py's), built once by `make languages`."""
    return (
        f"mkdir -p {apart.BUILT} && classes=$(mktemp -d) && {' '.join(compiler)} -d $classes {apart.from_root(source)} "
        f"&& /usr/bin/jar cf {jar} -C $classes . && rm -rf $classes"
    )


def tests_jar(compiler: tuple[str, ...]) -> tuple[str, ...]:
    """A JVM language's Language.apart_build: the tests' classes compiled by `compiler` (its argv, class path
    included) into one jar, `tests`, which their JVM reads from memory (sandbox/runner.py run_suite_apart)."""
    script = f'mkdir -p {_CLASSES} && "$@" -d {_CLASSES} && /usr/bin/jar cf tests -C {_CLASSES} .'
    return ("/bin/sh", "-c", script, "tests_jar", *compiler, "{source}")


JAVA = Language(
    name="java",
    source_file="{main}.java",
    # javac wants the file named after the public class, and java runs that class.
    # The public class; else the class whose body has `static void main` (MultiPL-E's `class Problem`).
    main_pattern=(
        r"public\s+(?:final\s+)?class\s+([A-Za-z_]\w*)",
        r"\bclass\s+([A-Za-z_]\w*)(?=(?:(?!\bclass\b)[\s\S])*?\bstatic\s+void\s+main\s*\()",
    ),
    compile=(*JAVAC, "-cp", CLASS_PATH, "-d", ".", "{source}"),
    # -ea: a failing `assert` fails (MultiPL-E's Java tests are asserts in main).
    run=(JVM[0], "-ea", *JVM[1:], "-cp", CLASS_PATH, "{main}"),
    address_space_limit=False,
    compile_address_space_limit=False,
    apt=("default-jdk-headless:/usr/bin/javac", "libjavatuples-java"),
    needs=(JAVATUPLES, java_apart.CODEC_JAR, JAVAC_ARCHIVE),
    setup=(
        codec_jar((*JAVAC, "-cp", JAVATUPLES), java_apart.CODEC_SOURCE, java_apart.CODEC_JAR),
        archive_setup(
            (*_PLAIN_JAVAC, "-cp", CLASS_PATH, "-d", "."),
            JAVAC_ARCHIVE,
            "Main.java",
            "import java.util.*;\npublic class Main { public static void main(String[] a) { "
            "System.out.println(new ArrayList<>(List.of(1, 2))); } }\n",
            "-J",
        ),
    ),
    version=("/usr/bin/java", "-version"),
    tests_done='System.out.println("{marker}"); System.out.flush();',
    tests_done_at="block",
    apart_split=java_apart.split,
    apart_build=tests_jar((*JAVAC, "-cp", CLASS_PATH)),
    apart_program=(*JVM, "-cp", CLASS_PATH, "JudgeServer"),
    apart_tests=(JVM[0], "-ea", *JVM[1:], "-cp", f"/dev/fd/6:{CLASS_PATH}", "JudgeTests"),
    apart_tests_env={"JUDGE_READY_EXE": os.path.realpath("/usr/bin/java")},
)

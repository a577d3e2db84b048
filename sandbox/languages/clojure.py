import os

from sandbox.languages import apart
from sandbox.languages.base import Language, literal
from sandbox.languages.java import JVM_FAST_START, archive_setup, archived, class_archive

# A program suite's tests run apart from the program, each in a JVM of its own (sandbox/languages/apart.py); the
# tests' process says it is ready from the JVM's own binary (/usr/bin/java is a link to it).
SERVE_PROGRAM, RUN_TESTS = apart.scripts("clj")
_JAR = "/usr/share/java/clojure-1.11.jar"
_ARCHIVE = class_archive("clojure")
_PLAIN_JVM = ("/usr/bin/java", "-Xmx{memory_mb}m", "-Xss64m", *JVM_FAST_START, "-cp", _JAR)
_JVM = archived(_PLAIN_JVM, _ARCHIVE)
_SAMPLE = '(require (quote clojure.string)) (println (clojure.string/join " " (map inc [1 2])))\n'

# Started straight, as Debian's `clojure` script does (java -cp clojure.jar clojure.main), but with a heap bound
# under the run's memory: the script's JVM sized its heap from the host and, under load, died in native malloc.
CLOJURE = Language(
    name="clojure",
    source_file="main.clj",
    run=(*_JVM, "clojure.main", "{source}"),
    address_space_limit=False,
    apt=("clojure",),
    version=("/usr/bin/clojure", "-e", "(println (clojure-version))"),
    start_s=2.0,
    memory_floor_mb=512,
    aliases=("clj",),
    needs=(_ARCHIVE,),
    setup=(archive_setup((*_PLAIN_JVM, "clojure.main"), _ARCHIVE, "main.clj", _SAMPLE),),
    failure_pattern=r"^(FAIL|ERROR) in ",  # clojure.test's report of a failed `is`; the run still exits 0
    tests_done='(print "{marker}") (flush)',
    apart_program=(*_JVM, "-Djudge.program={source}", "clojure.main", "-e", literal(SERVE_PROGRAM)),
    apart_tests=(*_JVM, "clojure.main", "-e", literal(RUN_TESTS)),
    apart_tests_env={"JUDGE_READY_EXE": os.path.realpath("/usr/bin/java")},
)

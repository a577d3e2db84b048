from sandbox.languages.base import Language
from sandbox.languages.java import JVM_FAST_START

# Started straight, as Debian's `clojure` script does (java -cp clojure.jar clojure.main), but with a heap bound
# under the run's memory: the script's JVM sized its heap from the host and, under load, died in native malloc.
CLOJURE = Language(
    name="clojure",
    source_file="main.clj",
    run=(
        "/usr/bin/java", "-Xmx{memory_mb}m", "-Xss64m", *JVM_FAST_START,
        "-cp", "/usr/share/java/clojure-1.11.jar", "clojure.main", "{source}",
    ),
    address_space_limit=False,
    apt=("clojure",),
    version=("/usr/bin/clojure", "-e", "(println (clojure-version))"),
    start_s=2.0,
    memory_floor_mb=512,
    aliases=("clj",),
    failure_pattern=r"^(FAIL|ERROR) in ",  # clojure.test's report of a failed `is`; the run still exits 0
    tests_done='(print "{marker}") (flush)',
)  # fmt: skip

from sandbox.languages.base import Language

CLOJURE = Language(
    name="clojure",
    source_file="main.clj",
    run=("/usr/bin/clojure", "{source}"),
    address_space_limit=False,
    apt=("clojure",),
    version=("/usr/bin/clojure", "-e", "(println (clojure-version))"),
    start_s=2.0,
    memory_floor_mb=512,
    aliases=("clj",),
    failure_pattern=r"^(FAIL|ERROR) in ",  # clojure.test's report of a failed `is`; the run still exits 0
    tests_done='(print "{marker}") (flush)',
)

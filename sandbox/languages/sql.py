from sandbox.languages.base import Language

# SQLite: the program's statements run on an in-memory database; -bail stops at the first error (exit 1).
SQL = Language(
    name="sql",
    source_file="main.sql",
    run=("/usr/bin/sqlite3", "-bail", ":memory:", ".read {source}"),
    apt=("sqlite3",),
    version=("/usr/bin/sqlite3", "--version"),
    aliases=("sqlite",),
    tests_done="SELECT '{marker}';",  # after the tests' statements: `.exit 0` in the program skips it
)

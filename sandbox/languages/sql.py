from sandbox.languages.base import Language, literal

_SQLITE = "/usr/bin/sqlite3 -safe -bail -init /dev/null"  # no files, shell, extensions or ATTACH; no ~/.sqliterc

# A program suite's tests run apart from the program, one after the other (sandbox/runner.py run_suite_apart): the
# program's statements build a database file, and once its process has ended (its end of fd 4 closed) the tests'
# statements, on the pipe that is their stdin, run on that database in a sqlite3 of their own. The program never
# sees the tests: they are in neither its source nor its process, and nothing of it runs while they do.
_SERVE_PROGRAM = f'exec {_SQLITE} judge.db < "$0"'  # exec: no fork, one process (the file is on /sandbox's tmpfs)
_RUN_TESTS = f"cat <&3 > /dev/null; {_SQLITE} judge.db && printf done >&5"  # its stdin: the tests, on a pipe

# SQLite: the program's statements run on an in-memory database; -bail stops at the first error (exit 1).
SQL = Language(
    name="sql",
    source_file="main.sql",
    run=("/usr/bin/sqlite3", "-bail", ":memory:", ".read {source}"),
    apt=("sqlite3",),
    version=("/usr/bin/sqlite3", "--version"),
    aliases=("sqlite",),
    apart_program=("/usr/bin/bash", "-c", literal(_SERVE_PROGRAM), "{source}"),
    apart_tests=("/usr/bin/bash", "-c", literal(_RUN_TESTS)),
)

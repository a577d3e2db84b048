from sandbox.languages.base import Language

RUBY = Language(
    name="ruby",
    source_file="main.rb",
    run=("/usr/bin/ruby", "{source}"),
    apt=("ruby",),
    version=("/usr/bin/ruby", "--version"),
    aliases=("rb",),
    tests_summary=("Test::Unit", r"\b\d+ tests, \d+ assertions, 0 failures, 0 errors\b"),
    memory_floor_mb=384,  # below it Ruby's start-up segfaults under the runner's 256 MB stack limit
)

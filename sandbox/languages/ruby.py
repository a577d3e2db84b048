from sandbox.languages import apart
from sandbox.languages.base import Language, literal

# A program suite's tests run apart from the program, each in a Ruby of its own (sandbox/languages/apart.py).
SERVE_PROGRAM, RUN_TESTS = apart.scripts("rb")

RUBY = Language(
    name="ruby",
    source_file="main.rb",
    run=("/usr/bin/ruby", "{source}"),
    apt=("ruby",),
    version=("/usr/bin/ruby", "--version"),
    aliases=("rb",),
    # test/unit runs its tests at exit (which `exit!` skips): run them here instead, the marker once all have passed
    tests_done=(
        "if defined?(Test::Unit::AutoRunner)\n  Test::Unit::AutoRunner.need_auto_run = false\n"
        '  judge_passed = Test::Unit::AutoRunner.run\n  print "{marker}" if judge_passed\n'
        "  exit(judge_passed ? 0 : 1)\n"
        'else\n  print "{marker}"\nend'
    ),
    memory_floor_mb=384,  # below it Ruby's start-up segfaults under the runner's 256 MB stack limit
    apart_program=("/usr/bin/ruby", "-e", literal(SERVE_PROGRAM), "{source}"),
    apart_tests=("/usr/bin/ruby", "-e", literal(RUN_TESTS)),
)

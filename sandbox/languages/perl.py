from sandbox.languages import apart
from sandbox.languages.base import Language, literal

# A program suite's tests run apart from the program, each in a Perl of its own (sandbox/languages/apart.py).
SERVE_PROGRAM, RUN_TESTS = apart.scripts("pl")

PERL = Language(
    name="perl",
    source_file="main.pl",
    run=("/usr/bin/perl", "{source}"),
    # Test::Deep, Data::Compare: MultiPL-E's tests
    apt=("perl", "libtest-deep-perl", "libdata-compare-perl"),
    version=("/usr/bin/perl", "-e", "print qq(perl $^V\\n)"),
    aliases=("pl",),
    tests_done='print "{marker}";',
    apart_program=("/usr/bin/perl", "-e", literal(SERVE_PROGRAM), "{source}"),
    apart_tests=("/usr/bin/perl", "-e", literal(RUN_TESTS)),
)

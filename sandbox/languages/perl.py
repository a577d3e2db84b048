from sandbox.languages.base import Language

PERL = Language(
    name="perl",
    source_file="main.pl",
    run=("/usr/bin/perl", "{source}"),
    apt=("perl", "libtest-deep-perl", "libdata-compare-perl"),  # Test::Deep, Data::Compare: MultiPL-E's tests
    version=("/usr/bin/perl", "-e", "print qq(perl $^V\\n)"),
    aliases=("pl",),
    tests_done='print "{marker}";',
)

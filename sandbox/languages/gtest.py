from sandbox.languages.base import Language
from sandbox.languages.cpp import CPP

# GoogleTest: the program holds TEST() cases (and may define main; gtest_main's is linked only when it does not).
GTEST = Language(
    name="gtest",
    source_file="main.cpp",
    compile=(*CPP.compile, "-lgtest_main", "-lgtest", "-pthread"),
    run=("./main", "--gtest_color=no"),
    apt=(*CPP.apt, "libgtest-dev"),
    version=CPP.version,
    needs=("/usr/include/gtest/gtest.h",),
    report="gtest",
    # GoogleTest runs a file's tests in order
    tests_done='TEST(JudgeDone, Last) { __builtin_printf("%s", "{marker}"); }',
)

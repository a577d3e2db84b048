from sandbox.languages import apart
from sandbox.languages.base import Language, literal

# A program suite's tests run apart from the program, each in a PHP of its own (sandbox/languages/apart.py); the
# tests include only from PHP's own library directory.
SERVE_PROGRAM, RUN_TESTS = apart.scripts("php")
PHP_CLI = ("/usr/bin/php", "-d", "memory_limit=-1", "-d", "display_errors=stderr", "-d", "log_errors=0")

PHP = Language(
    name="php",
    source_file="main.php",
    run=(*PHP_CLI, "{source}"),
    apt=("php-cli",),
    version=("/usr/bin/php", "--version"),
    binds=("/etc/php",),
    tests_done='echo "{marker}";',
    apart_program=(*PHP_CLI, "-r", literal(SERVE_PROGRAM), "{source}"),
    apart_tests=(*PHP_CLI, "-d", "include_path=/usr/share/php", "-r", literal(RUN_TESTS)),
)

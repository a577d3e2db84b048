from sandbox.languages.base import Language

PHP = Language(
    name="php",
    source_file="main.php",
    run=("/usr/bin/php", "-d", "memory_limit=-1", "-d", "display_errors=stderr", "-d", "log_errors=0", "{source}"),
    apt=("php-cli",),
    version=("/usr/bin/php", "--version"),
    binds=("/etc/php",),
    tests_done='echo "{marker}";',
)

from sandbox.languages.base import Language

RACKET = Language(
    name="racket",
    source_file="main.rkt",
    run=("/usr/bin/racket", "{source}"),
    address_space_limit=False,
    apt=("racket",),
    version=("/usr/bin/racket", "--version"),
    binds=("/etc/racket",),
    start_s=0.5,
    aliases=("rkt",),
    stderr_fails=True,  # rackunit reports a failed check on stderr and exits 0
    tests_done='(display "{marker}")',
)

# Messages between a program suite's tests and the program, each in a process of its own (sandbox/runner.py
# run_suite_apart): fields ending in a NUL byte, strings all (what shell functions take and print). A request: `names`,
# their count and the names, or `call`, the function, its argument count and the arguments; a reply to a call: the
# function's exit status and everything it printed. Synchronous: a test's call waits for its reply.
judge_field() { IFS= read -r -d '' "$1"; }

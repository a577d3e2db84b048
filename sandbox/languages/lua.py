from sandbox.languages import apart
from sandbox.languages.base import Language, literal

# A program suite's tests run apart from the program, each in a Lua of its own (sandbox/languages/apart.py).
# (Each after a line end: lua refuses an `-e` statement that starts with `-`, as a comment does.)
SERVE_PROGRAM, RUN_TESTS = ("\n" + script for script in apart.scripts("lua"))

LUA = Language(
    name="lua",
    source_file="main.lua",
    run=("/usr/bin/lua5.4", "{source}"),
    apt=("lua5.4", "lua-unit"),  # luaunit: MultiPL-E's Lua tests
    version=("/usr/bin/lua5.4", "-v"),
    # MultiPL-E's tests end in `os.exit(lu.LuaUnit.run())`: the marker once LuaUnit has run them all, and passed
    tests_done='local judge_status = {run}\nif judge_status == 0 then io.write("{marker}") end\nos.exit(judge_status)',
    tests_done_at="wrap",
    tests_block=r"os\.exit\(\s*(lu\.LuaUnit\.run\([^()]*\))\s*\)",
    # and, whatever they end with, LuaUnit's summary of at least one test, all passed (a run of none passes LuaUnit)
    tests_summary=("LuaUnit.run", r"(?m)^Ran [1-9]\d* tests? in .*\n\s*OK\s*$"),
    apart_program=("/usr/bin/lua5.4", "-e", literal(SERVE_PROGRAM), "{source}"),
    apart_tests=("/usr/bin/lua5.4", "-e", literal(RUN_TESTS)),
)

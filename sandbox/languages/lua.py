from sandbox.languages.base import Language

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
)

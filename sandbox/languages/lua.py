from sandbox.languages.base import Language

LUA = Language(
    name="lua",
    source_file="main.lua",
    run=("/usr/bin/lua5.4", "{source}"),
    apt=("lua5.4", "lua-unit"),  # luaunit: MultiPL-E's Lua tests
    version=("/usr/bin/lua5.4", "-v"),
    tests_summary=("LuaUnit.run", r"(?m)^Ran [1-9]\d* tests? in .*\n\s*OK\s*$"),
)

from sandbox.languages.base import Language

LUA = Language(
    name="lua",
    source_file="main.lua",
    run=("/usr/bin/lua5.4", "{source}"),
    apt=("lua5.4",),
    version=("/usr/bin/lua5.4", "-v"),
)

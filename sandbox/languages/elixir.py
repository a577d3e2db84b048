from sandbox.languages.base import Language

ELIXIR = Language(
    name="elixir",
    source_file="main.exs",
    run=("/usr/bin/elixir", "{source}"),
    address_space_limit=False,
    apt=("elixir",),
    version=("/usr/bin/elixir", "--short-version"),
    start_s=0.5,
    aliases=("ex", "exs"),
    forks=True,  # /usr/bin/elixir is a shell script, and the BEAM starts a helper process
    tests_done='ExUnit.after_suite(fn _ -> IO.write("{marker}") end)',
)

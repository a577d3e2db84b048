from sandbox.languages.base import Language

RUBY = Language(
    name="ruby",
    source_file="main.rb",
    run=("/usr/bin/ruby", "{source}"),
    apt=("ruby",),
    version=("/usr/bin/ruby", "--version"),
    aliases=("rb",),
)

from sandbox.languages.base import Language

JAVASCRIPT = Language(
    name="javascript",
    source_file="main.js",
    run=("/usr/bin/node", "--max-old-space-size={memory_mb}", "--stack-size=65500", "{source}"),
    address_space_limit=False,
    apt=("nodejs:/usr/bin/node",),
    version=("/usr/bin/node", "--version"),
    aliases=("js", "node", "nodejs"),
    tests_done='process.stdout.write("{marker}");',
)

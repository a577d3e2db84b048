from sandbox.languages.base import Language

# R_HOME's etc/ is a link into /etc/R (Renviron, Rprofile.site); R starts in ~0.2 s. R refuses to start unless
# the open-files limit holds its DLL table (100 entries) at 60%.
R = Language(
    name="r",
    source_file="main.R",
    run=("/usr/bin/Rscript", "--vanilla", "{source}"),
    apt=("r-base-core",),
    version=("/usr/bin/Rscript", "--version"),
    binds=("/etc/R",),
    open_files_floor=256,
    start_s=0.5,
    address_space_limit=False,
    tests_done='cat("{marker}")',
    forks=True,  # /usr/bin/R is a shell script that starts the interpreter
)

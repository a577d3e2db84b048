from sandbox.languages.base import Language

# The full runtime set: SandboxFusion's (its runtime/python/requirements.txt) where Debian packages it, first what
# BigCodeBench imports most (README "Languages", bench/runtime_coverage.py). Left out: opencv and torch (a gigabyte of
# dependencies), wordcloud (500 MB of TeX fonts); tensorflow, faker and jsonlines are not in Debian.
FULL_RUNTIME = (
    "python3-pandas", "python3-matplotlib", "python3-sklearn", "python3-scipy", "python3-seaborn", "python3-requests",
    "python3-nltk", "python3-tz", "python3-bs4", "python3-pil", "python3-dateutil", "python3-statsmodels",
    "python3-django", "python3-flask", "python3-rsa", "python3-regex", "python3-psutil", "python3-cryptography",
    "python3-sympy", "python3-openpyxl", "python3-lxml", "python3-yaml", "python3-xlwt", "python3-xlrd",
    "python3-networkx", "python3-skimage", "python3-docx", "python3-shapely", "python3-plotly", "python3-tabulate",
    "python3-folium", "python3-geopy", "python3-xmltodict", "python3-texttable", "python3-natsort",
    "python3-prettytable", "python3-werkzeug", "python3-flask-restful", "python3-flask-login", "python3-wtforms",
    "python3-flaskext.wtf", "python3-flask-mail", "python3-holidays", "python3-mechanize", "python3-pyquery",
    "python3-levenshtein", "python3-pycryptodome", "python3-requests-mock", "python3-pyfakefs", "python3-xarray",
    "python3-soundfile",
)  # fmt: skip

# Run by the runner's own interpreter (/usr/bin/python3), forked per test: no start-up cost.
PYTHON = Language(
    name="python",
    source_file="main.py",
    run=("/usr/bin/python3", "-S", "{source}"),
    python_zygote=True,
    # The runtime libraries (the default set): numpy and sortedcontainers, what competitive and LeetCode-style
    # solutions import beyond the standard library; the sandbox sees Debian's packages read-only (sandbox/runner.py
    # puts their directory on the path).
    apt=("python3", "python3-numpy", "python3-sortedcontainers"),
    full_runtime=FULL_RUNTIME,
    # matplotlib draws into files and buffers (no display), with Debian's settings from under /usr (not /etc).
    env={"MPLBACKEND": "Agg", "MATPLOTLIBRC": "/usr/share/matplotlib/mpl-data/matplotlibrc"},
    version=("/usr/bin/python3", "--version"),
    aliases=("python3", "py", "py3"),
)

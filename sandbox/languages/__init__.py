"""The languages the sandbox runs, one module each; `get_language` resolves names and aliases."""

from __future__ import annotations

from sandbox.languages.base import Language
from sandbox.languages.c import C
from sandbox.languages.cpp import CPP
from sandbox.languages.go import GO
from sandbox.languages.java import JAVA
from sandbox.languages.javascript import JAVASCRIPT
from sandbox.languages.python import PYTHON
from sandbox.languages.rust import RUST

LANGUAGES: dict[str, Language] = {lang.name: lang for lang in (PYTHON, C, CPP, JAVA, JAVASCRIPT, GO, RUST)}
_BY_ALIAS = {alias: lang for lang in LANGUAGES.values() for alias in (lang.name, *lang.aliases)}


class UnknownLanguage(ValueError):
    pass


def get_language(name: str) -> Language:
    try:
        return _BY_ALIAS[name.strip().lower()]
    except KeyError:
        raise UnknownLanguage(f"unknown language {name!r}; supported: {sorted(LANGUAGES)}") from None

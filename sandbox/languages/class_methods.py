"""The method a class-based prompt leaves open, read for its tests run apart (java_apart.py, csharp_apart.py): the
class it is declared in, whether it is static, its return type, name and parameters, each type checked plain."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sandbox.languages import apart

_CLASS = re.compile(r"\bclass\s+(?P<name>[A-Za-z_]\w*)")


@dataclass(frozen=True)
class Parameter:
    type: str  # as the prompt writes it: `ArrayList<Long>`, `List<float>`
    name: str


@dataclass(frozen=True)
class Signature:
    owner: str  # the class the method is declared in
    static: bool
    returns: str  # "void" for none
    name: str
    parameters: tuple[Parameter, ...]


@dataclass(frozen=True)
class MethodSyntax:
    """How a language writes a method's header, and which types are plain data there."""

    header: re.Pattern[str]  # the open header the prompt ends with: `head` (modifiers, return type), `name`, `params`
    modifiers: frozenset[str]
    parameter: re.Pattern[str]  # one parameter: its `type` and `name`
    plain_words: frozenset[str]  # the names a plain type is made of
    type_characters: re.Pattern[str]  # and the characters

    def plain(self, type_text: str) -> bool:
        words = re.findall(r"[A-Za-z_]\w*", type_text)
        return bool(words) and set(words) <= self.plain_words and self.type_characters.fullmatch(type_text) is not None

    def open_method(self, prompt: str) -> Signature | None:
        """The signature of the method `prompt` leaves open, when every type in it is plain; else None."""
        bare = apart.blanked(prompt)
        found = self.header.search(bare)
        owner = list(_CLASS.finditer(bare, 0, found.start() if found else 0))
        if found is None or not owner:
            return None
        parameters = []
        for text in apart.split_parameters(found["params"]):
            named = self.parameter.fullmatch(text)
            if named is None:
                return None
            parameters.append(Parameter(" ".join(named["type"].split()), named["name"]))
        head = found["head"].split()
        typed_at = next((i for i, word in enumerate(head) if word not in self.modifiers), len(head))
        returns = " ".join(head[typed_at:])
        if not all(self.plain(p.type) for p in parameters) or not (returns == "void" or self.plain(returns)):
            return None
        return Signature(owner[-1]["name"], "static" in head[:typed_at], returns, found["name"], tuple(parameters))

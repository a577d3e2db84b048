"""What the sandbox needs to know about a language: its source file, compile and run commands."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Language:
    name: str
    source_file: str
    run: tuple[str, ...]
    compile: tuple[str, ...] | None = None
    # RLIMIT_AS works for runtimes that do not reserve huge virtual ranges up front; the
    # JVM, V8, Go and rustc do, so their memory is bounded by the run's cgroup (and flags).
    address_space_limit: bool = True
    compile_address_space_limit: bool = True
    python_zygote: bool = False  # run by forking the runner instead of exec'ing an interpreter
    env: dict[str, str] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()

    def main_name(self, code: str) -> str:
        """The program's name, `{main}` in the templates (Java: the public class)."""
        return "main"

    def commands(self, code: str, memory_mb: int) -> tuple[str, list[str] | None, list[str]]:
        """Source file name, compile argv (None: interpreted) and run argv for this code."""
        fields = {"main": self.main_name(code), "memory_mb": memory_mb}
        source = self.source_file.format(**fields)
        fields["source"] = source
        compile_argv = [part.format(**fields) for part in self.compile] if self.compile else None
        return source, compile_argv, [part.format(**fields) for part in self.run]

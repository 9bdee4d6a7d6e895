"""Reading fio job files: a small INI reader that sees them as fio does, for sizing and checks.

Separate from building job files (:mod:`kubectl_storage.core.fio.profile_render`) and from what
is computed from a parsed file (:mod:`kubectl_storage.core.fio.job_sizes`,
:mod:`kubectl_storage.core.fio.job_checks`).

It understands what is needed to check a job file before anything is created: ``[global]`` and
job sections (a ``[global]`` applies to the jobs after it), comments (``;`` and ``#``),
``include`` lines, and the options that decide disk space (``size``, ``filesize``, ``nrfiles``,
``numjobs``, ``filename``, ``directory``, ``kb_base``). Real validation with ``fio
--parse-only`` happens elsewhere, where fio is available.

Pure module: text in, dataclasses out; included files are read through a callback the caller
supplies.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

# Options whose bare presence means "on" in fio job files.
_FLAG_VALUE = "1"


@dataclass(frozen=True)
class FioJobSection:
    """One job of a parsed job file, with the ``[global]`` options in force applied.

    Attributes:
        name: section name (the job name).
        options: effective options, lower-case keys; bare flags have the value ``"1"``.
        line: 1-based line number of the section header.
    """

    name: str
    options: Mapping[str, str]
    line: int


@dataclass(frozen=True)
class FioJobFile:
    """A parsed fio job file.

    Attributes:
        jobs: the job sections in file order.
        global_options: every option set in any ``[global]`` section (later ones win).
        includes: ``include`` targets that were not resolved (no resolver, or it failed).
        problems: (line number, message) for lines fio would reject.
    """

    jobs: tuple[FioJobSection, ...]
    global_options: Mapping[str, str]
    includes: tuple[str, ...] = ()
    problems: tuple[tuple[int, str], ...] = field(default=())


_SECTION = re.compile(r"^\[(?P<name>[^\]]*)\]\s*$")
_INLINE_COMMENT = re.compile(r"\s[;#].*$")


def parse_job_file(text: str, *, resolve_include: Callable[[str], str] | None = None) -> FioJobFile:
    """Read fio job-file text the way fio does, as far as sizing and validation need.

    Args:
        text: the job file.
        resolve_include: returns the text of a file named on an ``include`` line; when absent,
            or when it raises ``OSError``/``KeyError``, the include is listed as unresolved.

    Returns:
        The parsed job file; it never raises for bad content, which lands in ``problems``.
    """
    state = _ParseState()
    _parse_into(state, text, resolve_include, depth=0)
    state.close_job()
    return FioJobFile(
        jobs=tuple(state.jobs),
        global_options=dict(state.all_globals),
        includes=tuple(state.unresolved),
        problems=tuple(state.problems),
    )


@dataclass
class _ParseState:
    globals_now: dict[str, str] = field(default_factory=dict)
    all_globals: dict[str, str] = field(default_factory=dict)
    jobs: list[FioJobSection] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)
    section: str | None = None
    section_line: int = 0
    section_options: dict[str, str] = field(default_factory=dict)

    def close_job(self) -> None:
        if self.section is not None and self.section != "global":
            merged = {**self.globals_now, **self.section_options}
            self.jobs.append(FioJobSection(self.section, merged, self.section_line))
        self.section = None
        self.section_options = {}

    def set_option(self, key: str, value: str, line: int, raw: str) -> None:
        if self.section is None:
            self.problems.append((line, f"option {raw!r} is outside of any [section]"))
        elif self.section == "global":
            self.globals_now[key] = value
            self.all_globals[key] = value
        else:
            self.section_options[key] = value


_MAX_INCLUDE_DEPTH = 8


def _parse_into(
    state: _ParseState,
    text: str,
    resolve_include: Callable[[str], str] | None,
    *,
    depth: int,
) -> None:
    for number, raw_line in enumerate(text.splitlines(), start=1):
        line = _INLINE_COMMENT.sub("", raw_line).strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("include ") or line == "include":
            target = line[len("include") :].strip()
            _include(state, target, resolve_include, depth=depth)
            continue
        header = _SECTION.match(line)
        if header:
            state.close_job()
            name = header.group("name").strip()
            if not name:
                state.problems.append((number, "empty section name []"))
            state.section = name
            state.section_line = number
            continue
        if line.startswith("["):
            state.problems.append((number, f"malformed section header {line!r}"))
            continue
        key, sep, value = line.partition("=")
        key = key.strip().lower()
        state.set_option(key, value.strip() if sep else _FLAG_VALUE, number, line)


def _include(
    state: _ParseState,
    target: str,
    resolve_include: Callable[[str], str] | None,
    *,
    depth: int,
) -> None:
    if not target:
        return
    if resolve_include is None or depth >= _MAX_INCLUDE_DEPTH:
        state.unresolved.append(target)
        return
    try:
        included = resolve_include(target)
    except (OSError, KeyError):
        state.unresolved.append(target)
        return
    _parse_into(state, included, resolve_include, depth=depth + 1)

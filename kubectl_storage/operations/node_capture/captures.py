"""One node's raw texts (a debug pod's sections or ``--from-file`` captures) and how files
become nodes: one node unless ``NODE=FILE`` says otherwise."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kubectl_storage.core.nodes.paste import LineNote, unquote_mail
from kubectl_storage.errors import UsageError
from kubectl_storage.kube.api import JsonDict
from kubectl_storage.operations.node_capture.kubectl_files import (
    count_kinds,
    kubernetes_items,
    volume_objects_from_items,
)
from kubectl_storage.operations.node_capture.objects import VolumeObjects
from kubectl_storage.operations.node_inspection import NodeOutput

# ---------------------------------------------------------------------------------------------
# Inputs: what one node gave us, from a debug pod or from files
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeCapture:
    """The raw texts of one node, by kind (a live section name or a detected file format).

    Several files of one kind (two multipath captures, say) stay separate texts. Offline,
    ``sources`` names the file of each text (same order as ``texts``) and ``warnings`` holds
    what reading the files changed (an e-mail quote prefix removed); live both are empty.
    """

    node: str
    texts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    error: str | None = None
    inputs: tuple[str, ...] = ()
    sources: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def all(self, kind: str) -> tuple[str, ...]:
        """Every non-blank text of one kind."""
        return tuple(text for text in self.texts.get(kind, ()) if text.strip())

    def first(self, kind: str) -> str:
        """The first non-blank text of one kind, or ``""``."""
        texts = self.all(kind)
        return texts[0] if texts else ""

    def labelled(self, kind: str) -> tuple[tuple[str, str], ...]:
        """``(file, text)`` for every non-blank text of one kind (the kind's name for live
        sections)."""
        texts = self.texts.get(kind, ())
        labels = self.sources.get(kind, ())
        return tuple(
            (labels[index] if index < len(labels) else kind, text)
            for index, text in enumerate(texts)
            if text.strip()
        )

    @property
    def from_files(self) -> bool:
        """Whether the texts came from ``--from-file`` (line notes become warnings then)."""
        return bool(self.sources)

    @classmethod
    def from_output(cls, output: NodeOutput) -> NodeCapture:
        """A live node's sections, one text each."""
        return cls(
            node=output.node,
            texts={name: (text,) for name, text in output.sections.items()},
            error=output.error,
            inputs=tuple(output.sections),
        )


def line_warnings(capture: NodeCapture, label: str, notes: Iterable[LineNote]) -> list[str]:
    """One warning per skipped or rejoined line of a captured file, in line order; none for a
    live node (the kernel's and the tools' own output is not pasted text)."""
    if not capture.from_files:
        return []
    return [note.describe(label) for note in sorted(notes, key=lambda note: note.line)]


#: The node's name when files are given without --node-name or NODE=.
DEFAULT_NODE = "node"

# A Kubernetes node name (RFC 1123 subdomain; capitals allowed, as hostnames are often typed).
_NODE_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$")


def split_node_assignment(argument: str | Path) -> tuple[str | None, Path]:
    """``--from-file NODE=FILE`` → ``(NODE, FILE)``; any other argument → ``(None, path)``.

    A path that exists as given is a path, ``=`` or not; otherwise the part before the first
    ``=`` must read as a node name (letters, digits, ``-`` and ``.``), or the whole argument is
    taken as a path (``./a=b/mountinfo`` stays a path).
    """
    text = str(argument)
    path = Path(text)
    if path.exists():
        return None, path
    node, sep, rest = text.partition("=")
    if sep and rest and _NODE_NAME.match(node):
        return node, Path(rest)
    return None, path


@dataclass(frozen=True)
class CaptureFiles:
    """What ``--from-file`` gave: one capture per node, and the cluster's objects if any file
    was a ``kubectl get -o json|yaml`` capture (None otherwise)."""

    nodes: list[NodeCapture]
    objects: VolumeObjects | None = None


def read_capture_files(
    paths: Sequence[str | Path], node_name: str | None, classify: Callable[[Path, str], str]
) -> CaptureFiles:
    """Read ``--from-file`` inputs and group them by node.

    Args:
        paths: the arguments, in the order given: ``FILE`` or ``NODE=FILE``
            (:func:`split_node_assignment`).
        node_name: the node of every file given without ``NODE=`` (default
            :data:`DEFAULT_NODE`).
        classify: ``classify(path, text) -> kind``, raising :class:`UsageError` for a file it
            cannot place. Kubernetes object captures are recognised before it is asked.

    Raises:
        UsageError: a file cannot be read or its format is not recognised; ``--node-name`` is
            given though every file names its node; only Kubernetes objects were given.
    """
    grouped: dict[str, dict[str, list[str]]] = {}
    sources: dict[str, dict[str, list[str]]] = {}
    inputs: dict[str, list[str]] = defaultdict(list)
    warnings: dict[str, list[str]] = defaultdict(list)
    items: list[JsonDict] = []
    unassigned = 0
    for argument in paths:
        node, path = split_node_assignment(argument)
        text = _read(argument, path)
        found = kubernetes_items(text)
        if found is not None:
            items.extend(found)
            continue
        text, levels = unquote_mail(text)
        kind = classify(path, text)
        if node is None:
            unassigned += 1
            node = node_name or DEFAULT_NODE
        grouped.setdefault(node, {}).setdefault(kind, []).append(text)
        sources.setdefault(node, {}).setdefault(kind, []).append(str(path))
        inputs[node].append(f"{path} ({kind})")
        if levels:
            warnings[node].append(
                f"{path}: the e-mail quote prefix ({'>' * levels}) was removed from every line"
            )
    if node_name and not unassigned and grouped:
        raise UsageError(
            f"--node-name {node_name}: every --from-file names its node (NODE=FILE)",
            "Drop --node-name, or give the files of that node without NODE=.",
        )
    if not grouped:
        raise UsageError(
            "--from-file: only Kubernetes objects were given, no node's capture",
            "Add the node's files (mountinfo, mountstats, multipath -ll, iscsiadm ...).",
        )
    objects = volume_objects_from_items(items) if items else None
    if objects is not None:
        for node in inputs:
            inputs[node].append(f"kubernetes objects ({count_kinds(items)})")
    return CaptureFiles(
        nodes=[
            NodeCapture(
                node=node,
                texts={kind: tuple(texts) for kind, texts in by_kind.items()},
                inputs=tuple(inputs[node]),
                sources={kind: tuple(names) for kind, names in sources[node].items()},
                warnings=tuple(warnings[node]),
            )
            for node, by_kind in grouped.items()
        ],
        objects=objects,
    )


def _read(argument: str | Path, path: Path) -> str:
    shown = str(argument)
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except IsADirectoryError as exc:
        raise UsageError(f"--from-file {shown}: is a directory", "Give files.") from exc
    except OSError as exc:
        what = str(path) if shown != str(path) else "it"
        raise UsageError(f"--from-file {shown}: cannot read {what}: {exc.strerror}", "") from exc


def first_line(text: str) -> str:
    """The first non-blank line of ``text`` (for messages about unreadable output)."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""

"""One node's raw texts (a debug pod's sections or ``--from-file`` captures) and how read files
become nodes: one node unless ``NODE=FILE`` says otherwise.

Offline, the files given together are one node's, named by ``--node-name`` or else
:data:`DEFAULT_NODE`; ``--from-file NODE=FILE`` puts a file on a named node, so one run can hold
several nodes. ``kubectl get … -o json`` (or ``-o yaml``) captures among them are not node files:
they are the cluster's objects, as the live path reads them, for every node. Reading the files
and refusing wrong ones is operations' part (``operations.node_capture``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kubectl_storage.core.k8s.objects import JsonDict
from kubectl_storage.core.nodes.kubectl_objects import count_kinds, volume_objects_from_items
from kubectl_storage.core.nodes.paste import LineNote
from kubectl_storage.core.nodes.volume_objects import VolumeObjects

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
    def from_sections(
        cls, node: str, sections: Mapping[str, str], error: str | None = None
    ) -> NodeCapture:
        """A live node's sections (what its debug pod printed), one text each."""
        return cls(
            node=node,
            texts={name: (text,) for name, text in sections.items()},
            error=error,
            inputs=tuple(sections),
        )


def line_warnings(capture: NodeCapture, label: str, notes: Iterable[LineNote]) -> list[str]:
    """One warning per skipped or rejoined line of a captured file, in line order; none for a
    live node (the kernel's and the tools' own output is not pasted text)."""
    if not capture.from_files:
        return []
    return [note.describe(label) for note in sorted(notes, key=lambda note: note.line)]


#: The node's name when files are given without --node-name or NODE=.
DEFAULT_NODE = "node"


@dataclass(frozen=True)
class CaptureInput:
    """One ``--from-file`` node file, read and classified: its node (None when not given with
    ``NODE=``), its name, its kind, its text (e-mail quoting removed) and how many quote levels
    were removed."""

    node: str | None
    path: str
    kind: str
    text: str
    quote_levels: int = 0


@dataclass(frozen=True)
class CaptureFiles:
    """What ``--from-file`` gave: one capture per node, and the cluster's objects if any file
    was a ``kubectl get -o json|yaml`` capture (None otherwise)."""

    nodes: list[NodeCapture]
    objects: VolumeObjects | None = None


def group_captures(
    inputs: Iterable[CaptureInput], node_name: str | None, items: Sequence[JsonDict] = ()
) -> CaptureFiles:
    """The node files grouped by node, and the cluster's objects from ``items`` (the objects of
    the ``kubectl get`` captures among the files; None when there were none).

    Args:
        inputs: the node files, in the order given.
        node_name: the node of every file given without ``NODE=`` (default
            :data:`DEFAULT_NODE`).
        items: Kubernetes objects, for every node.
    """
    grouped: dict[str, dict[str, list[str]]] = {}
    sources: dict[str, dict[str, list[str]]] = {}
    names: dict[str, list[str]] = defaultdict(list)
    warnings: dict[str, list[str]] = defaultdict(list)
    for given in inputs:
        node = given.node if given.node is not None else node_name or DEFAULT_NODE
        grouped.setdefault(node, {}).setdefault(given.kind, []).append(given.text)
        sources.setdefault(node, {}).setdefault(given.kind, []).append(given.path)
        names[node].append(f"{given.path} ({given.kind})")
        if given.quote_levels:
            warnings[node].append(
                f"{given.path}: the e-mail quote prefix ({'>' * given.quote_levels}) was "
                "removed from every line"
            )
    objects = volume_objects_from_items(items) if items else None
    if objects is not None:
        for node in names:
            names[node].append(f"kubernetes objects ({count_kinds(items)})")
    return CaptureFiles(
        nodes=[
            NodeCapture(
                node=node,
                texts={kind: tuple(texts) for kind, texts in by_kind.items()},
                inputs=tuple(names[node]),
                sources={kind: tuple(paths) for kind, paths in sources[node].items()},
                warnings=tuple(warnings[node]),
            )
            for node, by_kind in grouped.items()
        ],
        objects=objects,
    )


def first_line(text: str) -> str:
    """The first non-blank line of ``text`` (for messages about unreadable output)."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""

"""``kubectl get … -o json|yaml`` captures among the ``--from-file`` inputs: the cluster's
objects, offline.

YAML is decoded by the caller's ``load_yaml`` (core imports the standard library only); the rest
(JSON documents, Lists unpacked, the objects the node commands use) is here."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.objects import JsonDict
from kubectl_storage.core.nodes.volume_objects import VolumeObjects

#: ``load_yaml(text)``: the YAML documents of a text, or None when it is not YAML.
YamlLoader = Callable[[str], list[Any] | None]

# ---------------------------------------------------------------------------------------------
# kubectl get -o json|yaml captures
# ---------------------------------------------------------------------------------------------

_OBJECT_FIELDS: Mapping[str, str] = {
    kinds.POD.kind: "pods",
    kinds.PV.kind: "pvs",
    kinds.PVC.kind: "pvcs",
    kinds.STORAGE_CLASS.kind: "storage_classes",
    kinds.EVENT.kind: "events",
}


def kubernetes_items(text: str, load_yaml: YamlLoader) -> list[JsonDict] | None:
    """The objects of a ``kubectl get … -o json`` (or ``-o yaml``) capture, Lists unpacked
    (``kubectl get pv,pvc,sc``), several documents one after another allowed; None when the
    text is not Kubernetes objects (multipathd JSON, any node file). A text that looks like
    YAML objects is decoded with ``load_yaml``.
    """
    stripped = text.strip()
    documents: list[Any] | None = None
    if stripped.startswith(("{", "[")):
        documents = _json_documents(stripped)
    elif re.search(r"^apiVersion:", stripped, re.M) and re.search(r"^kind:", stripped, re.M):
        documents = load_yaml(stripped)
    if not documents:
        return None
    items: list[JsonDict] = []
    for document in documents:
        found = _objects_of(document)
        if found is None:
            return None
        items.extend(found)
    return items


def _json_documents(text: str) -> list[Any] | None:
    decoder = json.JSONDecoder()
    documents: list[Any] = []
    index = 0
    while index < len(text):
        try:
            document, index = decoder.raw_decode(text, index)
        except json.JSONDecodeError:
            return None
        documents.append(document)
        while index < len(text) and text[index].isspace():
            index += 1
    return documents


def _objects_of(document: Any) -> list[JsonDict] | None:
    """A document's objects: a List's items (their kind from the List's when missing), an
    object, or a JSON array of either; None when it is none of them."""
    if isinstance(document, list):
        objects: list[JsonDict] = []
        for element in document:
            found = _objects_of(element)
            if found is None:
                return None
            objects.extend(found)
        return objects
    if not isinstance(document, dict) or not document.get("apiVersion"):
        return None
    kind = str(document.get("kind") or "")
    if isinstance(document.get("items"), list) and kind.endswith("List"):
        item_kind = kind[: -len("List")] or None
        return [
            item if item.get("kind") or not item_kind else {**item, "kind": item_kind}
            for item in document["items"]
            if isinstance(item, dict)
        ]
    return [document] if kind and isinstance(document.get("metadata"), dict) else None


def volume_objects_from_items(items: Iterable[JsonDict]) -> VolumeObjects:
    """Pods, PVs, PVCs, StorageClasses and FailedMount events out of any objects (the rest is
    left out), as the live path lists them."""
    found: dict[str, list[JsonDict]] = defaultdict(list)
    for item in items:
        name = _OBJECT_FIELDS.get(str(item.get("kind")))
        if name == "events" and item.get("reason") != "FailedMount":
            continue
        if name:
            found[name].append(item)
    return VolumeObjects(**{name: tuple(objects) for name, objects in found.items()})


def count_kinds(items: Iterable[JsonDict]) -> str:
    counts = Counter(str(item.get("kind") or "?") for item in items)
    return ", ".join(f"{count} {kind}" for kind, count in sorted(counts.items()))

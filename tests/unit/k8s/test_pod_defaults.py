"""The pod defaults every command shares (core/k8s/pod_defaults.py): image and identity."""

from __future__ import annotations

import pytest

from kubectl_storage.core.k8s.manifests import PodIdentity
from kubectl_storage.core.k8s.pod_defaults import (
    MYSQL_IMAGE,
    TOOLBOX_IMAGE,
    image_from_flags,
    with_registry,
)


@pytest.mark.parametrize(
    ("image", "registry", "expected"),
    [
        (
            "ghcr.io/kubectl-storage/toolbox:1",
            "mirror.local:5000",
            "mirror.local:5000/kubectl-storage/toolbox:1",
        ),
        ("docker.io/library/mysql:8.4", "mirror.local/", "mirror.local/library/mysql:8.4"),
        ("busybox:1.36", "mirror.local", "mirror.local/busybox:1.36"),
        ("localhost/fio:1", "mirror.local", "mirror.local/fio:1"),
        ("ghcr.io/x/y:1", None, "ghcr.io/x/y:1"),
    ],
)
def test_a_registry_replaces_only_the_host(image: str, registry: str | None, expected: str) -> None:
    assert with_registry(image, registry) == expected


def test_the_image_flag_wins_over_the_registry() -> None:
    assert image_from_flags("my/fio:2", "mirror.local") == "my/fio:2"
    assert image_from_flags(None, None) == TOOLBOX_IMAGE
    assert image_from_flags(None, "mirror.local", MYSQL_IMAGE) == "mirror.local/library/mysql:8.4"


def test_no_identity_flag_leaves_the_decision_to_preflight() -> None:
    assert PodIdentity.from_flags(None, None) is None


def test_an_identity_flag_fills_in_the_default_uid_only() -> None:
    assert PodIdentity.from_flags(None, 2000) == PodIdentity(1000, 2000)
    assert PodIdentity.from_flags(4242, None) == PodIdentity(4242, None)
    assert PodIdentity() == PodIdentity(1000, 1000)

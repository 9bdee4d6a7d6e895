"""Default images, pinned to the plugin version; every one can be overridden (--image)."""

from __future__ import annotations

from kubectl_storage import __version__

#: fio, coreutils, util-linux, tree, procps and a MySQL client; non-root user 1000.
#: Built from build/images/toolbox/Dockerfile; the local test cluster builds the same package set.
TOOLBOX_IMAGE = f"ghcr.io/kubectl-storage/toolbox:{__version__}"
#: The official server image for persistence checks (MySQL 8.4 LTS).
MYSQL_IMAGE = "docker.io/library/mysql:8.4"


def with_registry(image: str, registry: str | None) -> str:
    """Swap the registry host of ``image`` for ``registry`` (air-gapped mirrors)."""
    if not registry:
        return image
    first, _, rest = image.partition("/")
    has_host = "." in first or ":" in first or first == "localhost"
    path = rest if has_host and rest else image
    return f"{registry.rstrip('/')}/{path}"

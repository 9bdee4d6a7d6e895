"""What every pod we create gets unless the user says otherwise: its image and its UID and
fsGroup. Decided here once, so the commands cannot drift apart; each can be overridden
(--image, --registry, --run-as-user, --fs-group)."""

from __future__ import annotations

from kubectl_storage import __version__

#: fio, coreutils, util-linux, tree, procps and a MySQL client; non-root user 1000.
#: Built from build/images/toolbox/Dockerfile; the local test cluster builds the same package set.
TOOLBOX_IMAGE = f"ghcr.io/kubectl-storage/toolbox:{__version__}"
#: The official server image for persistence checks (MySQL 8.4 LTS).
MYSQL_IMAGE = "docker.io/library/mysql:8.4"

#: The toolbox image's non-root user, and the fsGroup that makes a fresh volume writable by it.
#: Left unset where the namespace assigns UIDs (OpenShift), which preflight finds out.
DEFAULT_UID = 1000
DEFAULT_FS_GROUP = 1000


def with_registry(image: str, registry: str | None) -> str:
    """Swap the registry host of ``image`` for ``registry`` (air-gapped mirrors)."""
    if not registry:
        return image
    first, _, rest = image.partition("/")
    has_host = "." in first or ":" in first or first == "localhost"
    path = rest if has_host and rest else image
    return f"{registry.rstrip('/')}/{path}"


def image_from_flags(image: str | None, registry: str | None, default: str = TOOLBOX_IMAGE) -> str:
    """--image as given, else ``default`` pulled from --registry when one is given."""
    return image or with_registry(default, registry)

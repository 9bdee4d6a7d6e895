"""Mount options as the rules compare them: the kernel's spellings, the defaults it does not
print, what only mount helpers read, and requested against effective."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from kubectl_storage.core.nodes.mount_model import OptionValue

# Options that never reach the kernel (mount(8), mount.nfs(8) and fstab options, S8) or that the
# kernel accepts but never prints (K2). They are not "requested but missing".
USERSPACE_ONLY = frozenset(
    {
        "bg",
        "fg",
        "retry",
        "_netdev",
        "nofail",
        "auto",
        "noauto",
        "user",
        "nouser",
        "users",
        "owner",
        "group",
        "defaults",
        "comment",
        "sloppy",
        "intr",
        "nointr",
        "mounthost",
        "trunkdiscovery",
        "notrunkdiscovery",
    }
)
ATIME_OPTIONS = frozenset({"noatime", "nodiratime", "relatime", "strictatime", "atime"})
# Values the kernel does not print when they are in force (S2, K2).
_DEFAULTS_NOT_PRINTED: dict[str, OptionValue] = {
    "async": True,
    "lock": True,
    "cto": True,
    "ac": True,
    "sharecache": True,
    "resvport": True,
    "rdirplus": True,
    "acl": True,
    "exec": True,
    "suid": True,
    "dev": True,
    "nosoftreval": True,
    "noposix": True,
    "nofsc": True,
    "nomigration": True,
    "alignwrite": True,
    "port": "2049",
    "nconnect": "1",
    "max_connect": "1",
    "lookupcache": "all",
    "write": "lazy",
    "rw": True,
}
ATTRIBUTE_CACHE_DEFAULTS = {"acregmin": 3, "acregmax": 60, "acdirmin": 30, "acdirmax": 60}
# Option values the kernel spells its own way (S2, K2).
_SPELLINGS: dict[str, dict[str, str]] = {"lookupcache": {"positive": "pos"}}


def normalize_options(options: Mapping[str, OptionValue]) -> dict[str, OptionValue]:
    """Rewrite option spellings to the kernel's (rules.md C.1 "requested options").

    ``nfsvers``→``vers``, ``vers=4,minorversion=1``→``vers=4.1``, ``tcp``/``udp``/``rdma``→
    ``proto=``, ``lookupcache=positive``→``pos``, ``actimeo=N``→the four ``ac*`` values.
    """
    result: dict[str, OptionValue] = {}
    for key, value in options.items():
        if key == "nfsvers":
            result["vers"] = value
        elif key in ("tcp", "udp", "rdma") and value is True:
            result["proto"] = key
        elif key == "minorversion":
            continue
        elif isinstance(value, str) and value in _SPELLINGS.get(key, {}):
            result[key] = _SPELLINGS[key][value]
        else:
            result[key] = value
    minor = options.get("minorversion")
    if isinstance(minor, str) and str(result.get("vers")) == "4":
        result["vers"] = f"4.{minor}"
    if isinstance(result.get("actimeo"), str):
        for name in ATTRIBUTE_CACHE_DEFAULTS:
            result.setdefault(name, result["actimeo"])
    return result


def nfs_version(options: Mapping[str, OptionValue], fstype: str = "nfs") -> str | None:
    """The NFS version as the kernel prints it, from ``vers``/``nfsvers`` (+ ``minorversion``)."""
    normalized = normalize_options(options)
    version = normalized.get("vers")
    if isinstance(version, str):
        return version
    del fstype  # nfsstat -m and friends always print vers=; no guessing from the fstype
    return None


def requested_vs_effective(
    requested: Mapping[str, OptionValue],
    effective: Mapping[str, OptionValue],
    *,
    helper_options: Iterable[str] = (),
) -> list[str]:
    """Requested options that are missing from, or differ in, the effective options.

    Both sides are normalized. Not differences: options only mount helpers read (``sloppy``,
    ``_netdev``, ``noauto``... and the vendor helper's ``helper_options``, e.g. efs-utils'
    ``tls``), atime options (NFS091), defaults the kernel does not print (``lookupcache=all``,
    ``port=2049``, ``lock``...), the kernel's spellings (``positive`` shown as ``pos``) and the
    address family of the transport (``tcp`` shown as ``tcp6`` on IPv6).

    Returns:
        Human-readable differences such as ``"nconnect: requested 8, effective absent"``.
    """
    wanted = normalize_options(requested)
    actual = normalize_options(effective)
    skip = USERSPACE_ONLY | ATIME_OPTIONS | frozenset(helper_options)
    differences: list[str] = []
    for key, value in wanted.items():
        if key in skip or key.startswith("x-"):
            continue
        if key in ("hard",) and "soft" not in actual and "softerr" not in actual:
            continue  # hard is the default and older kernels do not print it
        if _DEFAULTS_NOT_PRINTED.get(key) == value and key not in actual:
            continue
        if key == "vers" and _version_matches(str(value), actual.get("vers")):
            continue
        if key == "actimeo":
            continue  # expanded into the four ac* values, which the kernel prints instead
        have = actual.get(key)
        if have is None and key in ATTRIBUTE_CACHE_DEFAULTS:
            have = str(ATTRIBUTE_CACHE_DEFAULTS[key])  # printed only when not the default
        if have is None:
            differences.append(f"{key}: requested {show_value(value)}, effective absent")
            continue
        if key in ("proto", "mountproto") and netid(value) == netid(have):
            continue  # the kernel prints tcp6/udp6/rdma6 for an IPv6 server
        both_numbers = as_int(have) is not None and as_int(value) is not None
        differ = (
            as_int(have) != as_int(value) if both_numbers else show_value(have) != show_value(value)
        )
        if differ:
            differences.append(
                f"{key}: requested {show_value(value)}, effective {show_value(have)}"
            )
    return differences


def kernel_version(release: str | None) -> tuple[int, int] | None:
    """``(major, minor)`` from a kernel release string such as ``"5.3.0-18-generic"``."""
    if not release:
        return None
    match = re.match(r"^(\d+)\.(\d+)", release)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _version_matches(requested: str, effective: OptionValue | None) -> bool:
    if not isinstance(effective, str):
        return False
    if requested == effective:
        return True
    # "vers=4" asks for any 4.x; "4.0" is how the kernel prints plain v4.
    return requested == "4" and effective.startswith("4")


def netid(value: OptionValue | None) -> str | None:
    """A transport without its address family: ``tcp6``→``tcp``, ``udp6``→``udp``."""
    if not isinstance(value, str):
        return None
    return value[:-1] if value.endswith("6") else value


def is_soft(options: Mapping[str, OptionValue]) -> bool:
    return "soft" in options or "softerr" in options


def sizes_where(options: Mapping[str, OptionValue], test: Callable[[int], bool]) -> str:
    hits = [
        f"{name}={options[name]}"
        for name in ("rsize", "wsize")
        if (size := as_int(options.get(name))) is not None and test(size)
    ]
    return ",".join(hits)


def as_int(value: OptionValue | None) -> int | None:
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def as_text(value: OptionValue | None) -> str | None:
    return value if isinstance(value, str) else None


def show_value(value: OptionValue) -> str:
    return "set" if value is True else str(value)

"""multipathd and multipath.conf (MP000-MP004, MP022, MP023, MP030-MP032)."""

from __future__ import annotations

from collections.abc import Sequence

from kubectl_storage.core.iscsi.multipath import (
    MultipathMap,
)
from kubectl_storage.core.iscsi.multipath_conf import MultipathConf, setting, setting_in_force
from kubectl_storage.core.iscsi.rules.catalogue import ISCSI_RULES
from kubectl_storage.core.iscsi.rules.health import effective_value
from kubectl_storage.core.iscsi.vendors import ArrayVendor, array_for
from kubectl_storage.core.report.findings import Finding, Severity

# --- daemon and configuration (MP000-MP004, MP022, MP030-MP032) ---------------------------------


def check_multipathd_presence(
    *,
    iscsi_in_use: bool,
    multipathd_running: bool | None,
    multipath_installed: bool | None = None,
    conf_present: bool | None = None,
) -> list[Finding]:
    """MP000 (multipathd not installed or not running) and MP001 (no /etc/multipath.conf while
    multipathd does not run: RHEL's unit does not start without the file, S62). A multipathd
    that runs without the file uses its built-in configuration (Debian and Ubuntu ship no file,
    S51) and is not reported. ``iscsi_in_use`` counts SAN sessions only (not Longhorn's local
    tgt, S78). ``None`` means "not known" and never fires.
    """
    if not iscsi_in_use:
        return []
    findings = []
    if multipath_installed is False or multipathd_running is False:
        what = "not installed" if multipath_installed is False else "not running"
        findings.append(
            ISCSI_RULES.cite(
                "MP000",
                Severity.ERROR,
                f"iSCSI sessions exist but multipathd is {what}: no failover",
                "Install multipath-tools/device-mapper-multipath; "
                "`systemctl enable --now multipathd`",
            )
        )
    if conf_present is False and multipathd_running is not True:
        findings.append(
            ISCSI_RULES.cite(
                "MP001",
                Severity.ERROR,
                "/etc/multipath.conf is missing; the multipath daemon needs it to start",
                "`touch /etc/multipath.conf` (ONTAP built-ins suffice) or `mpathconf --enable`",
            )
        )
    return findings


_MP002_KEYS = (
    "path_grouping_policy",
    "failback",
    "no_path_retry",
    "path_checker",
    "prio",
    "hardware_handler",
    "features",
    "dev_loss_tmo",
    "fast_io_fail_tmo",
)

#: find_multipaths values that multipath every path, even a LUN's only one (multipath.conf(5):
#: ``greedy``; ``no``/``off``: multipathd behaves like greedy).
_FIND_MULTIPATHS_ALL = {"no", "off", "greedy"}


def _unbounded_queueing(conf: MultipathConf, maps: Sequence[MultipathMap] = ()) -> list[str]:
    """Where the files configure queueing that never stops: ``no_path_retry queue``, or the
    deprecated ``features queue_if_no_path`` in a section that does not set ``no_path_retry``
    (which takes precedence over the feature, multipath.conf(5)); overrides beat both. In merged
    output (built-in table included) only the device entries of the node's maps count."""
    where: list[str] = []
    override_retry = conf.overrides.get("no_path_retry")
    devices = conf.devices
    if conf.merged:
        found = (conf.device_for(m.vendor, m.product) for m in maps)
        devices = tuple(dict.fromkeys(stanza for stanza in found if stanza is not None))
    sections = [("defaults", conf.defaults), ("overrides", conf.overrides)] + [
        (f"device {stanza.get('vendor') or '?'}", stanza) for stanza in devices
    ]
    for label, section in sections:
        retry = section.get("no_path_retry")
        if label != "overrides" and override_retry is not None:
            retry = override_retry
        if retry == "queue" or (
            retry is None and "queue_if_no_path" in (section.get("features") or "")
        ):
            where.append(label)
    return where


def check_multipath_conf(
    conf: MultipathConf,
    maps: Sequence[MultipathMap] = (),
    *,
    trident: bool = False,
    effective: MultipathConf | None = None,
) -> list[Finding]:
    """Configuration rules MP002, MP003, MP004, MP022, MP030 (config side), MP031, MP032.

    MP004, MP022 and MP030 judge the value multipathd uses for each array present
    (:func:`~kubectl_storage.core.iscsi.multipath_conf.setting`, propsel.c order): from the merged
    configuration (``multipathd show config`` / ``multipath -t``) when given, whose device entries
    include the built-in hardware table; from the file alone otherwise, where only what it sets in
    ``overrides`` or a matching devices stanza is judged (a ``defaults`` value loses to a built-in
    device entry the file does not show; :func:`unjudged_defaults` names what was left out).
    MP003 reads find_multipaths from the merged configuration when given (the built-in default
    when the file is silent); MP002, MP031 and MP032 judge what the file says.

    Args:
        conf: parsed /etc/multipath.conf (or the merged configuration, if that is all there is).
        maps: the node's maps (to know which vendors are present).
        trident: the node runs Trident (MP003 becomes a warning).
        effective: the merged configuration, when collected.
    """
    findings: list[Finding] = []
    source = effective if effective is not None else conf
    present = {(m.vendor, m.product): array_for(m.vendor, m.product) for m in maps}
    alua = {(m.vendor, m.product) for m in maps if "alua" in (m.hwhandler or "").lower()}
    builtin = {array.name for array in present.values() if array is not None}
    # multipath.conf(5): overrides apply to all devices, above the devices entries; defaults sit
    # below them, so a built-in vendor entry keeps its values against defaults (propsel.c).
    overridden = [key for key in _MP002_KEYS if conf.overrides.get(key) is not None]
    if overridden and builtin:
        findings.append(
            ISCSI_RULES.cite(
                "MP002",
                Severity.INFO,
                f"multipath.conf overrides sets {', '.join(overridden)}, which win over the "
                f"built-in entries of {', '.join(sorted(builtin))} whose LUNs are present",
                "Move these settings into a devices { device { vendor … product … } } stanza",
            )
        )
    # The merged configuration carries the built-in default (strict in 0.9) when the file is silent.
    find_multipaths = source.defaults.get("find_multipaths") or conf.defaults.get("find_multipaths")
    if find_multipaths is not None and find_multipaths not in _FIND_MULTIPATHS_ALL:
        findings.append(
            ISCSI_RULES.cite(
                "MP003",
                Severity.WARN if trident else Severity.INFO,
                f"find_multipaths is {find_multipaths!r}: a new LUN with one path at attach "
                "time may be used as a bare sdX",
                "Trident: `find_multipaths no` under defaults; others: the vendor value",
            )
        )
    for (vendor, product), array in present.items():
        if array is None:
            continue
        ufn, where = setting_in_force(source, "user_friendly_names", vendor, product)
        if array.user_friendly_names_no and ufn is not None and ufn.strip('"') == "yes":
            findings.append(
                ISCSI_RULES.cite(
                    "MP004",
                    Severity.INFO,
                    f"user_friendly_names yes applies to {vendor},{product} (from {where}); "
                    f"{array.name} requires no",
                    "Set `user_friendly_names no` in the device stanza",
                    array.source("user_friendly_names_no") or ISCSI_RULES["MP004"].sources,
                )
            )
        findings.extend(
            _check_checker(source, array, vendor, product, alua=(vendor, product) in alua)
        )
        value, where = setting_in_force(source, "no_path_retry", vendor, product)
        value = value.strip('"') if value is not None else None
        if (
            array.no_path_retry_wanted is not None
            and value is not None
            and value not in array.no_path_retry_allowed
        ):
            findings.append(
                ISCSI_RULES.cite(
                    "MP030",
                    Severity.WARN,
                    f"no_path_retry {value} for {vendor},{product} (from {where}); "
                    f"{array.name} guidance is {array.no_path_retry_wanted}",
                    f"no_path_retry {array.no_path_retry_wanted} in a devices stanza for {vendor}",
                    array.source("no_path_retry"),
                )
            )
    queueing = _unbounded_queueing(conf, maps)
    # multipath.conf(5): queue_without_daemon "The default is: no"; only an explicit yes keeps
    # queueing on once multipathd has stopped.
    if queueing and (conf.defaults.get("queue_without_daemon") or "no").lower() == "yes":
        findings.append(
            ISCSI_RULES.cite(
                "MP031",
                Severity.WARN,
                f"unbounded queueing ({', '.join(queueing)}) with queue_without_daemon yes: "
                "processes can hang unkillable when all paths are down and multipathd has stopped",
                "queue_without_daemon no (the default); prefer a bounded no_path_retry N "
                "unless the vendor requires queue",
            )
        )
    feature_sections = [
        name
        for name, section in (("defaults", conf.defaults), ("overrides", conf.overrides))
        if "queue_if_no_path" in (section.get("features") or "")
    ]
    feature_sections += [
        "devices"
        for stanza in (() if conf.merged else conf.devices)
        if "queue_if_no_path" in (stanza.get("features") or "")
    ][:1]
    if feature_sections:
        findings.append(
            ISCSI_RULES.cite(
                "MP032",
                Severity.INFO,
                f"features queue_if_no_path set in {', '.join(feature_sections)}: "
                "deprecated, superseded "
                "by no_path_retry",
                "Use no_path_retry instead",
            )
        )
    return findings


def _check_checker(
    conf: MultipathConf, array: ArrayVendor, vendor: str, product: str, *, alua: bool
) -> list[Finding]:
    """MP022: the path checker multipathd picks for this array is not the vendor's.

    propsel.c select_checker(): with ``detect_checker yes`` (the built-in default,
    multipath.conf(5)) a device that supports ALUA gets ``tur`` before overrides, device entries
    and defaults are read. ALUA support is read off the map (hardware handler ``1 alua``).
    """
    checker, where = setting_in_force(conf, "path_checker", vendor, product)
    if not array.path_checker or checker is None:
        return []
    checker = checker.strip('"')
    detect, _ = setting(conf, "detect_checker", vendor, product)
    if alua and (detect or "yes").strip('"').lower() in {"yes", "on"}:
        checker, where = "tur", "detect_checker yes on an ALUA device"
    if checker == array.path_checker:
        return []
    return [
        ISCSI_RULES.cite(
            "MP022",
            Severity.INFO,
            f"path_checker {checker} for {vendor},{product} (from {where}); {array.path_checker} "
            f"is the {array.name} checker (asynchronous)",
            f"path_checker {array.path_checker}",
            array.source("path_checker") or ISCSI_RULES["MP022"].sources,
        )
    ]


#: Keys MP004, MP022 and MP030 judge per array.
_ARRAY_KEYS = ("user_friendly_names", "path_checker", "no_path_retry")


def unjudged_defaults(conf: MultipathConf, maps: Sequence[MultipathMap] = ()) -> list[str]:
    """What a file-only audit (no ``multipathd show config``) leaves unjudged: values only the
    file's ``defaults`` give for an array with a built-in device entry, which may win over them
    (multipath.conf(5), propsel.c). One sentence per array, for the report's warnings."""
    if conf.merged:
        return []
    notes = []
    seen: set[str] = set()
    for mpath in maps:
        array = array_for(mpath.vendor, mpath.product)
        if array is None or array.key in seen:
            continue
        seen.add(array.key)
        keys = [
            key
            for key in _ARRAY_KEYS
            if setting(conf, key, mpath.vendor, mpath.product)[1] == "defaults"
        ]
        if keys:
            notes.append(
                f"judged from /etc/multipath.conf only: {', '.join(keys)} set in its defaults "
                f"were not judged for {mpath.vendor},{mpath.product}, because multipathd's "
                "built-in device entry wins over defaults; `multipathd show config` (or "
                "`multipath -t`) shows the values in force"
            )
    return notes


def check_map_queueing(mpath: MultipathMap) -> list[Finding]:
    """MP030 from the live map (multipathd JSON ``queueing``)."""
    array = array_for(mpath.vendor, mpath.product)
    if array is None or array.live_queueing is None or mpath.queueing is None:
        return []
    if mpath.queueing == array.live_queueing:
        return []
    return [
        ISCSI_RULES.cite(
            "MP030",
            Severity.WARN,
            f"{mpath.name} ({mpath.vendor},{mpath.product}): queueing {mpath.queueing}; "
            "vendor guidance is "
            f"no_path_retry {array.no_path_retry_wanted} (queueing {array.live_queueing})",
            "Use the vendor no_path_retry in a devices stanza",
            array.source("no_path_retry"),
        )
    ]


def check_pure_detect_prio(conf: MultipathConf, maps: Sequence[MultipathMap] = ()) -> list[Finding]:
    """MP023: a map of an array that requires ``detect_prio no`` (Pure FlashArray) while
    multipath.conf turns it on.

    Limitation: :mod:`.multipath_conf` knows only the files, not the built-in hwtable, so the
    value is resolved as overrides > matching device stanza > defaults (:func:`effective_value`). A
    value the files leave unset is not judged (older built-ins inherit the upstream default yes,
    newer PURE entries set it off; ``multipathd show config`` tells which). A ``defaults``-only
    yes is reported with that caveat, because a newer built-in PURE entry would win over it.
    """
    findings = []
    seen: set[tuple[str, str]] = set()
    for mpath in maps:
        key = (mpath.vendor, mpath.product)
        array = array_for(*key)
        if array is None or not array.detect_prio_no or key in seen:
            continue
        seen.add(key)
        value = effective_value(conf, "detect_prio", *key)
        if value is None or value.lower() not in {"yes", "on"}:
            continue
        device = conf.device_for(*key)
        if conf.overrides.get("detect_prio") is not None:
            where = "overrides"
        elif device is not None and device.get("detect_prio") is not None:
            where = "its devices stanza"
        else:
            where = "defaults (a newer built-in PURE entry, which sets it off, would win)"
        findings.append(
            ISCSI_RULES.cite(
                "MP023",
                Severity.INFO,
                f"detect_prio {value} for {mpath.vendor},{mpath.product} from {where}; "
                f"{array.name} requires no, otherwise the sysfs prioritizer replaces alua and "
                "array firmware updates can go wrong",
                f'detect_prio "no" in the {array.vendor} device stanza',
                array.source("detect_prio_no"),
            )
        )
    return findings

"""dm-multipath topology: parsers for ``multipath -ll`` / ``multipath -l`` and multipathd JSON.

Both kinds of input become the same frozen dataclasses (:class:`MultipathMap`, :class:`PathGroup`,
:class:`MultipathPath`), whose ``to_dict()`` is the JSON contract of the ``IscsiReport``.

Text grammar (reference/rules.md B.1). Handled on purpose:

* the current format (``size=… features='…' hwhandler='…' wp=rw``, ``|-+- policy='…' prio=N
  status=…``, ``| |- H:C:T:L sdX M:m dm chk online``) and the old bracket format of
  multipath-tools < 0.4.9 (``[size=10G][features=1 queue_if_no_path][hwhandler=0][rw]``,
  ``\\_ round-robin 0 [prio=50][active]``, ``\\_ 3:0:0:1 sdb 8:16 [active][ready]``);
* maps with and without an alias, an ``create:``/``reload:`` action prefix, WWIDs with spaces,
  vendor/product padded with blanks (``PURE    ,FlashArray``), maps printed without path groups;
* two-word checker states (``i/o pending``, ``i/o timeout``), ``undef`` from ``multipath -l``,
  placeholder paths (``#:#:#:# - #:#``, a path the kernel table has but sysfs lost);
* tree prefixes drawn with `````, ``'`` or nothing (text copied out of PDFs loses indentation);
* noise mixed in by ``-v3``/stderr: ``Dec 01 10:00:00 | …``, ``4735.224337 | …``, the
  ``===== paths list =====`` table, ``params = …``, ``multipathd>`` prompts. It is skipped.

JSON (rules.md B.2): ``multipathd show maps json`` (``"maps": [...]``) and ``multipathd show map X
json`` (``"map": {...}``). Text around the JSON document (an interactive prompt) is ignored.
JSON has no HCTL and no size, so those fields are ``None`` for JSON input.

:func:`merge_multipath_views` makes the node's one view of its maps: multipathd JSON completed
with ``multipath -ll`` (size, H:C:T:L), and the kernel's SCSI device state where dm-multipath
still sends I/O to a path whose device services none (see there).

Pure: text in, dataclasses out; no I/O.

The package: :mod:`.model` (the dataclasses), :mod:`.text`, :mod:`.multipathd_json` and
:mod:`.merge`.
"""

from kubectl_storage.core.iscsi.multipath.merge import merge_multipath_views
from kubectl_storage.core.iscsi.multipath.model import (
    SCSI_STATES_WITHOUT_IO,
    MultipathMap,
    MultipathParseError,
    MultipathPath,
    PathGroup,
)
from kubectl_storage.core.iscsi.multipath.multipathd_json import parse_multipathd_json
from kubectl_storage.core.iscsi.multipath.text import parse_multipath_ll

__all__ = [
    "SCSI_STATES_WITHOUT_IO",
    "MultipathMap",
    "MultipathParseError",
    "MultipathPath",
    "PathGroup",
    "merge_multipath_views",
    "parse_multipath_ll",
    "parse_multipathd_json",
]

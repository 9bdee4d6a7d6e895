"""iSCSI / dm-multipath rules (reference/rules.md B.3), as pure functions returning Findings.

Each check takes parsed data (:mod:`.multipath`, :mod:`.sessions`, :mod:`.multipath_conf`,
:mod:`.iscsid_conf`, :mod:`.sanlun`) and returns ``list[Finding]``; an empty list means the rule
did not fire. Rule ids are the ones of rules.md (plus MP016, this project's); the catalogue
:data:`.catalogue.ISCSI_RULES` names each rule's sources, and every finding's ``source`` cites
them. Array thresholds live in one table per array family (:mod:`.vendors`). The lead calls
:func:`evaluate_iscsi_node` once per node, and :func:`check_unique_initiator_names` once across
them.

One module per rule family: :mod:`.maps` (maps and sanlun paths), :mod:`.config` (multipathd
and multipath.conf), :mod:`.sessions`, :mod:`.timeouts` (recovery timeouts), :mod:`.iscsid`
(iscsid.conf); :mod:`.health` has what they read off paths and sessions, :mod:`.catalogue`
the rules and sources, :mod:`.node` the entry point.

Implemented: MP000 MP001 MP002 MP003 MP004 MP010 MP011 MP012 MP013 MP014 MP015 MP016 MP017 MP020
MP021 MP022 MP023 MP030 MP031 MP032, ISCSI001 ISCSI002 ISCSI003 ISCSI004 ISCSI005 ISCSI006 ISCSI007
ISCSI008 ISCSI009 ISCSI010 ISCSI011 ISCSI012 ISCSI013 ISCSI014 ISCSI015 ISCSI016 ISCSI017
ISCSI018.
ISCSI006, ISCSI012, ISCSI014 and ISCSI016 read /etc/iscsi/iscsid.conf (:mod:`.iscsid_conf`), which
only seeds new node records; ISCSI004 and ISCSI014 judge its ``replacement_timeout`` next to the
live sessions' ``recovery_tmo``, knowing that multipathd writes its ``fast_io_fail_tmo`` into the
recovery timeout of every session it maps (S75). ``sanlun lun show -p`` (NetApp) path states and
types feed MP010, MP011, MP016, MP020 and MP021. Not implemented (need sysfs timeouts we do not
collect yet): MP033 MP034.
"""

from kubectl_storage.core.iscsi.rules.node import evaluate_iscsi_node
from kubectl_storage.core.iscsi.rules.sessions import check_unique_initiator_names

__all__ = ["check_unique_initiator_names", "evaluate_iscsi_node"]

"""The ``node-crash`` disruption's decisions: whether a node may be crashed, the pod that crashes
it, and how its reboot shows.

The crash is the kernel's emergency reboot, ``echo b > /proc/sysrq-trigger`` (the kernel's
Documentation/admin-guide/sysrq.rst: "Will immediately reboot the system without syncing or
unmounting your disks"), written by a privileged pod on the node. Nothing is synced first, on
purpose: what the node's page cache held and the storage had not made durable is lost, as at a
power cut. Writing to /proc/sysrq-trigger works whatever ``kernel.sysrq`` says (that setting
governs the keyboard); a privileged container may write it because the runtime then leaves /proc
unmasked.

A node whose kernel other nodes share must never be crashed: kind, k3d and this project's test
cluster run several kubelets as processes of one machine, and a sysrq there reboots the machine
and every node on it, the machine running this command included when it is the same. The
kubelet reports its kernel's boot ID (``status.nodeInfo.bootID``, from
/proc/sys/kernel/random/boot_id, new at every boot), so two nodes with one boot ID share a
kernel, and a node whose boot ID is this machine's is this machine. A node that reports none
cannot be told apart and is refused too.

Pure module.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubectl_storage.core.k8s.objects import JsonDict, dig, name_of

#: The boot ID of the kernel a container runs on (not namespaced: the node's own).
BOOT_ID_PATH = "/proc/sys/kernel/random/boot_id"
#: The observed tag of a phase whose node came back with a new boot ID.
NODE_REBOOTED = "node-rebooted"
#: The crash pod's lifetime bound: it either crashes its node at once or fails.
CRASH_POD_DEADLINE_S = 120


def boot_id(node: JsonDict | None) -> str | None:
    """The node's kernel boot ID as its kubelet reports it, ``None`` when it reports none."""
    value = dig(node or {}, "status", "nodeInfo", "bootID")
    return str(value) if value else None


def node_ready(node: JsonDict | None) -> bool:
    """The node's Ready condition is True."""
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in dig(node or {}, "status", "conditions") or []
    )


def crash_refusal(name: str, nodes: Iterable[JsonDict], local_boot_id: str | None) -> str | None:
    """Why node ``name`` must not be crashed, or ``None`` when it may.

    ``local_boot_id`` is the boot ID of the machine this command runs on (``None`` when it
    could not be read: then only the other nodes are compared).
    """
    listed = list(nodes)
    node = next((n for n in listed if name_of(n) == name), None)
    if node is None:
        return f"node {name} does not exist"
    own = boot_id(node)
    if own is None:
        return (
            f"node {name} reports no boot ID (status.nodeInfo.bootID), so nothing tells whether "
            "other nodes or this machine share its kernel"
        )
    if local_boot_id is not None and own == local_boot_id:
        return (
            f"node {name} runs on the kernel of the machine this command runs on (boot ID "
            f"{own}): crashing it would reboot this machine"
        )
    sharing = sorted(name_of(n) for n in listed if name_of(n) != name and boot_id(n) == own)
    if sharing:
        return (
            f"node {name} shares its kernel with {', '.join(sharing)} (boot ID {own}): they are "
            "processes of one machine (kind, k3d, a test cluster), and crashing one reboots "
            "that machine and all of them"
        )
    return None


def crash_script(boot_id_before: str) -> str:
    """The crash, only on the kernel that was running when it was planned.

    No sync before it: the point is to lose what was not made durable. The boot ID test keeps
    the node from crashing again after its reboot: the kernel may die before the kubelet has
    reported the container as started, and a kubelet that comes back to a ``restartPolicy:
    Never`` pod that never started starts it.
    """
    if not boot_id_before or any(c not in "0123456789abcdef-" for c in boot_id_before):
        raise ValueError(f"not a boot ID: {boot_id_before!r}")
    return (
        f'if [ "$(cat {BOOT_ID_PATH})" = "{boot_id_before}" ]; then '
        "echo b > /proc/sysrq-trigger; "
        f'else echo "the node has rebooted since (boot ID $(cat {BOOT_ID_PATH})): not again"; fi'
    )


def build_crash_pod(
    name: str, namespace: str, node: str, image: str, boot_id_before: str
) -> JsonDict:
    """The privileged pod that crashes ``node`` as soon as it starts (:func:`crash_script`).

    It tolerates every taint (a cordoned or tainted node is still the one the user named),
    never restarts, and shares nothing of the host but the kernel every container already
    shares: /proc/sysrq-trigger is not namespaced.
    """
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "nodeName": node,
            "restartPolicy": "Never",
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "terminationGracePeriodSeconds": 0,
            "activeDeadlineSeconds": CRASH_POD_DEADLINE_S,
            "tolerations": [{"operator": "Exists"}],
            "containers": [
                {
                    "name": "crash",
                    "image": image,
                    "imagePullPolicy": "IfNotPresent",
                    "command": ["sh", "-c", crash_script(boot_id_before)],
                    "securityContext": {"privileged": True, "runAsUser": 0, "runAsNonRoot": False},
                }
            ],
        },
    }

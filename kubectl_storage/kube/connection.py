"""Connect to the cluster as kubectl would: --kubeconfig, KUBECONFIG (several files), --context.

This module and the rest of kube/ are the only code that imports the kubernetes client.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubectl_storage.errors import ClusterError, UsageError

NO_CLUSTER_HINT = (
    "Point --kubeconfig or KUBECONFIG at a kubeconfig file, or pick a context with --context. "
    "To try the tool on a local test cluster, run tests/cluster/up from the repository and use "
    "the KUBECONFIG path it prints."
)


@dataclass(frozen=True)
class ConnectionSettings:
    """What the user chose on the command line (all optional, kubectl semantics)."""

    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None
    request_timeout_s: float | None = None


@dataclass
class Connection:
    """A configured API client and the namespace commands default to."""

    api_client: Any  # kubernetes.client.ApiClient; typed loosely to keep the client contained
    namespace: str
    context: str | None
    server: str
    request_timeout_s: float | None


def kubeconfig_paths(settings: ConnectionSettings) -> list[str]:
    """Files kubectl would read: --kubeconfig, else all of KUBECONFIG, else ~/.kube/config."""
    if settings.kubeconfig:
        return [settings.kubeconfig]
    env = os.environ.get("KUBECONFIG", "")
    if env:
        return [p for p in env.split(os.pathsep) if p]
    return [str(Path("~/.kube/config").expanduser())]


SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


def resolve_namespace(settings: ConnectionSettings) -> str:
    """The namespace a command works in, decided as kubectl does, without any network call.

    ``-n`` wins; then the namespace of the chosen context (``--context``, else the kubeconfig's
    current-context; with several KUBECONFIG files the first that sets a value wins, as in
    kubectl's merge); then the service account's namespace inside a pod; else ``default``.
    An unknown ``--context`` is left for :func:`connect` to report.
    """
    if settings.namespace:
        return settings.namespace
    import yaml  # noqa: PLC0415 - only commands that resolve a namespace need it

    current: str | None = settings.context
    contexts: dict[str, Any] = {}
    found_file = False
    for path in kubeconfig_paths(settings):
        try:
            document = yaml.safe_load(Path(path).read_text())
        except (OSError, yaml.YAMLError):
            continue
        found_file = True
        if not isinstance(document, dict):
            continue
        if current is None and document.get("current-context"):
            current = str(document["current-context"])
        for entry in document.get("contexts") or []:
            if isinstance(entry, dict) and entry.get("name") not in contexts:
                contexts[str(entry.get("name"))] = entry.get("context") or {}
    if not found_file and os.environ.get("KUBERNETES_SERVICE_HOST"):
        try:
            return SERVICE_ACCOUNT_NAMESPACE.read_text().strip() or "default"
        except OSError:
            return "default"
    context = contexts.get(current or "")
    if isinstance(context, dict) and context.get("namespace"):
        return str(context["namespace"])
    return "default"


def connect(settings: ConnectionSettings) -> Connection:
    """Load configuration and build an API client, or explain why there is no cluster to talk to.

    Raises:
        UsageError: no kubeconfig, an unknown context, or an unreadable file.
    """
    from kubernetes import client, config  # noqa: PLC0415 - heavy import, only for cluster commands
    from kubernetes.config.config_exception import ConfigException  # noqa: PLC0415 - runtime only

    paths = kubeconfig_paths(settings)
    existing = [p for p in paths if Path(p).is_file()]
    in_cluster = bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and not existing
    if settings.kubeconfig and not existing:
        raise UsageError(
            f"the kubeconfig file {settings.kubeconfig} does not exist", NO_CLUSTER_HINT
        )
    if not existing and not in_cluster:
        raise UsageError(
            "no cluster is configured (no kubeconfig at " + ", ".join(paths) + ")", NO_CLUSTER_HINT
        )

    configuration = client.Configuration()
    context_name = settings.context
    try:
        if in_cluster:
            config.load_incluster_config(client_configuration=configuration)
        else:
            joined = os.pathsep.join(existing)
            contexts, active = config.list_kube_config_contexts(config_file=joined)
            chosen = active
            if settings.context:
                matches = [c for c in contexts if c.get("name") == settings.context]
                if not matches:
                    names = ", ".join(sorted(c.get("name", "") for c in contexts)) or "none"
                    raise UsageError(
                        f'context "{settings.context}" is not in the kubeconfig',
                        f"Known contexts: {names}.",
                    )
                chosen = matches[0]
            if chosen:
                context_name = chosen.get("name")
            config.load_kube_config(
                config_file=joined, context=settings.context, client_configuration=configuration
            )
    except ConfigException as exc:
        raise UsageError(f"cannot use the kubeconfig: {exc}", NO_CLUSTER_HINT) from exc
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the kubeconfig: {exc}", NO_CLUSTER_HINT) from exc

    api_client = client.ApiClient(configuration)
    namespace = resolve_namespace(settings)  # the one namespace decision, shared with complete()
    return Connection(
        api_client=api_client,
        namespace=namespace,
        context=context_name,
        server=str(configuration.host),
        request_timeout_s=settings.request_timeout_s,
    )


def describe_unreachable(connection: Connection, exc: BaseException) -> ClusterError:
    """An error for a cluster that does not answer, naming the server and context."""
    where = f"{connection.server}" + (
        f' (context "{connection.context}")' if connection.context else ""
    )
    return ClusterError(
        f"cannot reach the Kubernetes API at {where}: {exc}",
        "Check that the cluster is running and that the kubeconfig points at it "
        "(kubectl cluster-info). For the local test cluster run tests/cluster/up.",
    )

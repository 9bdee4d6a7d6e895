"""What every command shares: the global options, the connection, and writing the result."""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO, TypeVar

import typer

from kubectl_storage.render.output import OutputFormat, Report, write_report

if TYPE_CHECKING:
    from collections.abc import Callable

    from kubectl_storage.kube.api import KubeApi
    from kubectl_storage.kube.connection import ConnectionSettings
    from kubectl_storage.operations.pipeline import Command, Plan, Session

RequestT = TypeVar("RequestT")
GatheredT = TypeVar("GatheredT")
OutT = TypeVar("OutT", bound="Report")
PlanT = TypeVar("PlanT", bound="Plan")
ReportT = TypeVar("ReportT")
log = logging.getLogger(__name__)


@dataclass
class GlobalOptions:
    """kubectl's global flags, as given before or after the subcommand."""

    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None
    output: OutputFormat = OutputFormat.TABLE
    verbosity: int = 0
    request_timeout_s: float | None = None
    stdout: TextIO = sys.stdout

    def _settings(self) -> ConnectionSettings:
        from kubectl_storage.kube.connection import ConnectionSettings  # noqa: PLC0415 - runtime only

        return ConnectionSettings(
            kubeconfig=self.kubeconfig,
            context=self.context,
            namespace=self.namespace,
            request_timeout_s=self.request_timeout_s,
        )

    def connect(self) -> KubeApi:
        """Open the API connection the options describe (imports the client lazily)."""
        from kubectl_storage.kube.api import KubeApi  # noqa: PLC0415 - keep --help fast
        from kubectl_storage.kube.connection import connect  # noqa: PLC0415 - same

        return KubeApi(connect(self._settings()))

    def resolved_namespace(self) -> str:
        """The namespace this invocation works in: -n, else the context's, else default.

        Read from the kubeconfig without any network call (the one namespace decision; the
        connection uses the same function).
        """
        from kubectl_storage.kube.connection import resolve_namespace  # noqa: PLC0415 - runtime only

        return resolve_namespace(self._settings())

    def session(
        self, *, dry_run: bool = False, keep: bool = False, cleanup_timeout_s: float = 120
    ) -> Session:
        """complete(): everything the pipeline needs that comes from the global options."""
        from kubectl_storage.operations.pipeline import Progress, Session  # noqa: PLC0415 - runtime only

        return Session(
            namespace=self.resolved_namespace(),
            connect=self.connect,
            progress=Progress.to_log(),
            dry_run=dry_run,
            keep=keep,
            cleanup_timeout_s=cleanup_timeout_s,
        )

    def execute(
        self,
        command: Command[RequestT, GatheredT, PlanT, ReportT],
        request: RequestT,
        *,
        dry_run: bool = False,
        keep: bool = False,
        cleanup_timeout_s: float = 120,
    ) -> ReportT | None:
        """Run the pipeline; for --dry-run print the plan as YAML and return None."""
        from kubectl_storage.operations.pipeline import execute  # noqa: PLC0415 - runtime only
        from kubectl_storage.render.structured import write_yaml_documents  # noqa: PLC0415 - runtime only

        session = self.session(dry_run=dry_run, keep=keep, cleanup_timeout_s=cleanup_timeout_s)
        outcome = execute(command, request, session)
        if outcome.report is None:
            if not outcome.read_cluster:
                log.info(
                    "planned from the flags alone, without reading the cluster: on a namespace "
                    "that assigns pod UIDs (OpenShift) the live run leaves runAsUser unset"
                )
            write_yaml_documents(outcome.plan.manifests(), self.stdout)
            self.stdout.flush()
        return outcome.report

    def emit(self, report: OutT, table: Callable[[OutT, TextIO, bool], None]) -> None:
        """Write the result to stdout in the chosen format (the table draws ``report``)."""
        write_report(report, self.output, self.stdout, table)
        self.stdout.flush()


def options_of(ctx: typer.Context) -> GlobalOptions:
    """The global options stored on the root context."""
    root = ctx.find_root()
    if not isinstance(root.obj, GlobalOptions):
        root.obj = GlobalOptions()
    return root.obj

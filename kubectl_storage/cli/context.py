"""What every command shares: the global options, the connection, and writing the result."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

import typer

from kubectl_storage.render.output import OutputFormat, write_report

if TYPE_CHECKING:
    from collections.abc import Callable

    from kubectl_storage.kube.api import KubeApi


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

    def connect(self) -> KubeApi:
        """Open the API connection the options describe (imports the client lazily)."""
        from kubectl_storage.kube.api import KubeApi  # noqa: PLC0415 - keep --help fast
        from kubectl_storage.kube.connection import ConnectionSettings, connect  # noqa: PLC0415

        return KubeApi(
            connect(
                ConnectionSettings(
                    kubeconfig=self.kubeconfig,
                    context=self.context,
                    namespace=self.namespace,
                    request_timeout_s=self.request_timeout_s,
                )
            )
        )

    def emit(
        self, report: dict[str, Any], table: Callable[[dict[str, Any], TextIO, bool], None]
    ) -> None:
        """Write the result to stdout in the chosen format."""
        write_report(report, self.output, self.stdout, table)
        self.stdout.flush()


def options_of(ctx: typer.Context) -> GlobalOptions:
    """The global options stored on the root context."""
    root = ctx.find_root()
    if not isinstance(root.obj, GlobalOptions):
        root.obj = GlobalOptions()
    return root.obj

"""A FioReport from a file fio wrote (``--from-json``): plain fio output or client/server output.

``fio --output-format=json[+] job.fio`` prints one document with a ``jobs`` list.
``fio --client=HOST[,PORT] job.fio …`` prints one with a ``client_stats`` list instead: every
client's jobs, each carrying the ``hostname`` it was given, then fio's ``All clients`` sum. That
second shape is read with the same code as the ``--clients`` driver's runs
(:func:`kubectl_storage.core.fio.clients.parse_client_output`): each job added up over the
clients as fio adds up ``numjobs`` clones, each client's own jobs kept for its row and its
guards. The clients are known by the address fio was given; there is no pod or node to name.

Pure module: text in, a report out.
"""

from __future__ import annotations

from kubectl_storage.core.fio.clients import ClientRuns, FioClient, parse_client_output
from kubectl_storage.core.fio.fio_json import parse_fio_output
from kubectl_storage.core.fio.report import FioReport
from kubectl_storage.core.fio.results import FioOutputError
from kubectl_storage.core.fio.stats import build_fio_report

#: The profile name of a report made from a file.
OFFLINE_PROFILE = "from-file"


def report_from_fio_output(text: str, *, name: str, source: str) -> FioReport:
    """The report of one fio run saved as text.

    Args:
        text: fio's stdout (a client/server run's or a plain run's), maybe with text around
            the JSON.
        name: what to call the result (the file's name stands for the class).
        source: where the text came from, kept as the report's ``source``.

    Returns:
        The report; for a client/server run, with one client row per address fio was given.

    Raises:
        FioOutputError: when the text holds no fio JSON document of either shape.
    """
    context: dict[str, object] = {"source": source}
    try:
        run = parse_client_output(text, ())
    except FioOutputError:
        result = parse_fio_output(text)
        return build_fio_report({name: [result]}, profile=OFFLINE_PROFILE, context=context)
    clients = tuple(
        FioClient(index=index, pod=part.address, address=part.address)
        for index, part in enumerate(run.clients)
    )
    context["clients"] = len(clients)
    return build_fio_report(
        {name: [run.combined]},
        profile=OFFLINE_PROFILE,
        context=context,
        client_runs={name: ClientRuns(clients, (run,))},
    )

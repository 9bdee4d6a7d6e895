"""`kubectl storage validate-persistence`: does committed MySQL data survive pod loss?

One module per concern: request.py (inputs, plan, disruptions to run), pod.py (the MySQL pod:
SQL by exec, waits, durability settings, the fsync probe), phases.py (seed, restart, crash),
moves.py (reschedule and node-drain, with the node cordoned), command.py (the pipeline stages
and the run).
"""

from kubectl_storage.operations.validate_persistence.command import (
    PERSISTENCE_COMMAND,
    read_node_facts,
    run_persistence,
)
from kubectl_storage.operations.validate_persistence.request import (
    NodeFacts,
    PersistencePlan,
    PersistenceRequest,
    deployment_for,
    new_password,
    plan_disruptions,
    validate_request,
)

__all__ = [
    "PERSISTENCE_COMMAND",
    "NodeFacts",
    "PersistencePlan",
    "PersistenceRequest",
    "deployment_for",
    "new_password",
    "plan_disruptions",
    "read_node_facts",
    "run_persistence",
    "validate_request",
]

"""kubectl-storage: check that a Kubernetes cluster's storage can be trusted.

The version lives here and only here; packaging, the binary and the toolbox image tag read it.
"""

__version__ = "0.1.0"

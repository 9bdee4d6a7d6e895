"""Entry point for ``python -m kubectl_storage``."""

from kubectl_storage.cli.fastpath import main

main()

"""`kubectl storage validate-persistence`, the pure half: mysql.py (disruptions, manifests, the
in-pod client), rows.py (seed rows, dump, checksums, comparison), writer.py (the crash writer
and its acknowledged commits), durability.py (the server's settings judged), probe.py (the
fsync probe), nodes.py (where the pod and its volume may go), report.py (PersistenceReport)."""

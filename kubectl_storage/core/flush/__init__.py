"""What a flush measured: one classification of fsync/fdatasync timings, shared by the fio
command's ``fio.cache-sync-latency`` guard and validate-persistence's fsync probe (issues 23
and 26). A shared core module: it imports no feature."""

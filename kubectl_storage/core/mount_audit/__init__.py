"""`kubectl storage mount-audit`: NFS mount statistics and the NFS rule catalogue."""

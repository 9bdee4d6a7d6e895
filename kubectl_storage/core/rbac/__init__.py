"""`kubectl storage rbac`: the permissions each command needs, and the manifests granting them."""

"""Shared Kubernetes knowledge: kinds, run labels, manifest builders, quantities, images, and
the helpers that read plain-dict objects. Every feature may import it; it imports no feature."""

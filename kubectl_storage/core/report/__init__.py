"""What every report shares: the apiVersion/kind envelope and the Finding/Severity model."""

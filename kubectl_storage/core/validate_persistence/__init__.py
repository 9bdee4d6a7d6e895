"""`kubectl storage validate-persistence`: the MySQL deployment, disruptions and the row
accounting that decides PASS or FAIL."""

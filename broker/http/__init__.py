"""The node's HTTP endpoint: health and readiness probes, Prometheus metrics and a read-only
web console (docs/operations.md). Everything here only reads node state; nothing changes it."""

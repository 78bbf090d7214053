"""The root of every error the chaos harness raises itself (not the cluster's errors)."""

from __future__ import annotations


class ChaosError(Exception):
    """The harness could not do what it was asked: a bad run directory, a proxy that failed."""

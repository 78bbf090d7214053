"""Exception root of the metadata quorum package."""

from __future__ import annotations


class MetadataError(Exception):
    """Root of every error raised by ``rillet.metadata_quorum``."""


class MetadataRecordError(MetadataError):
    """Bytes in the metadata log are not a record this build understands."""


class SnapshotError(MetadataError):
    """A metadata snapshot cannot be restored."""

"""What a controller decision returns: records to commit as one Raft entry, and the answer."""

from __future__ import annotations

from dataclasses import dataclass

from rillet.metadata_quorum.records import MetadataRecord
from rillet.wire.error_codes import ErrorCode


@dataclass(frozen=True, slots=True)
class Decision:
    """Records to propose, and the error to answer with (NONE when accepted)."""

    records: list[MetadataRecord]
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None

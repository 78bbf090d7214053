"""The controller's feature-level decisions: raising the level, and what it hears of nodes.

Kept apart from ``controller.py``: the rules are in ``features.py``, this module holds the
leader-only memory they need and turns them into :class:`Decision` s.
"""

from __future__ import annotations

from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.features import (
    FEATURE_NAME,
    LATEST_LEVEL,
    FeatureLevel,
    broker_supports,
    refusal_to_raise,
)
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.error_codes import ErrorCode


class FeatureSupport:
    """What the brokers said in heartbeats to this controller (leader-only, no records).

    A broker registered through a controller of the previous release has no level in its
    registration; its heartbeats to this controller state it, for its current broker epoch
    (a restart on an older release registers again, with a new epoch, and counts as the
    base level until it says otherwise).
    """

    def __init__(self) -> None:
        self.heard: dict[int, tuple[int, int]] = {}  # broker id -> (broker epoch, level)

    def heartbeat(self, broker_id: int, broker_epoch: int, max_level: int) -> None:
        if max_level > 0:
            self.heard[broker_id] = (broker_epoch, max_level)

    def levels(self, state: MetadataState) -> dict[int, int]:
        """Per registered broker, the highest level it is known to support."""
        return {b: broker_supports(state, b, self.heard) for b in sorted(state.brokers)}

    def raise_level(
        self, state: MetadataState, name: str, level: int, validate_only: bool = False
    ) -> Decision:
        """Set ``name`` to ``level``: one FeatureLevel record, or the reason it may not."""
        if name != FEATURE_NAME:
            return Decision([], ErrorCode.INVALID_REQUEST, f"unknown feature {name!r}")
        why = refusal_to_raise(state, level, self.heard, LATEST_LEVEL)
        if why is not None:
            return Decision([], ErrorCode.INVALID_REQUEST, why)
        if level == state.feature_level or validate_only:
            return Decision([])
        return Decision([FeatureLevel(name, level)])

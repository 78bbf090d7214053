"""What the active controller notes around one broker heartbeat: its arrival, before the
decision it asks for, and the stamp its answer carries, after.

Why a module of its own: the controller's trio driver
(:class:`~rillet.metadata_quorum.controller_service.ControllerService`) and the
replication simulation (tests), which decides on the same :class:`Controller` without the
driver, both note a heartbeat this way, so a lease runs from the same moment and the same
answers count as heard in both. Leader-only state: no records.
"""

from __future__ import annotations

from rillet.metadata_quorum.broker_leases import HeardAnswer
from rillet.metadata_quorum.controller import Controller
from rillet.metadata_quorum.state import MetadataState


def heartbeat_arrived(
    controller: Controller,
    state: MetadataState,
    broker_id: int,
    broker_epoch: int,
    now_ms: int,
    heard: HeardAnswer,
    max_feature_level: int,
) -> None:
    """The broker's lease runs from now (from the last exchange that went both ways),
    whatever the wait for the decision; the feature level it supports is noted for raising
    the cluster's level."""
    controller.heartbeat_arrived(state, broker_id, broker_epoch, now_ms, heard)
    controller.features.heartbeat(broker_id, broker_epoch, max_feature_level)


def answer_stamp(
    controller: Controller, broker_id: int, now_ms: int, arrived_ms: int | None
) -> HeardAnswer:
    """What the answer to ``broker_id``'s heartbeat (arrived at ``arrived_ms``) carries for
    it to echo; noted as the latest answer that broker was given, if timely."""
    controller.answered(broker_id, now_ms, arrived_ms)
    return HeardAnswer(controller.answer_key, now_ms)

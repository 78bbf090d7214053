"""The cluster's feature level (native api 57, Kafka's UpdateFeatures number).

One request both describes and raises: ``level`` 0 only describes; a higher level asks the
controller to raise the level to it (``validate_only``: only check that it could). A node
that is not the controller forwards a raise (``forwarded``: it was, so it is not forwarded
again); a description is answered from the node's own metadata view.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rillet.wire.forwarding import ForwardedFor
from rillet.wire.request import Request


@dataclass(frozen=True, slots=True)
class UpdateFeaturesRequest(Request["UpdateFeaturesResponse"]):
    name: str = ""  # "" names rillet's own feature (rillet.metadata.version)
    level: int = 0  # 0: describe only
    validate_only: bool = False
    forwarded: bool = False
    forwarded_for: ForwardedFor | None = None  # set by the node that forwards it


@dataclass(frozen=True, slots=True)
class NodeFeatureLevel:
    """The highest level a registered node is known to support (``-1``: not known here,
    only the controller hears it from heartbeats)."""

    node_id: int
    max_level: int


@dataclass(frozen=True, slots=True)
class UpdateFeaturesResponse:
    error_code: int
    error_message: str | None = None
    name: str = ""
    level: int = 0  # the level in force after the request
    min_supported: int = 0  # what the answering node supports
    max_supported: int = 0
    nodes: list[NodeFeatureLevel] = field(default_factory=list)

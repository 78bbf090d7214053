"""Who a forwarded change was sent by.

A change that needs the controller (topics, partitions, topic configs, ACLs, SCRAM
credentials) may be sent to any node; a node that is not the controller forwards it once,
over its node-authenticated connection. The controller must decide it as the client that
sent it, not as the node that carried it, so the forwarded request names that client.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ForwardedFor:
    """The principal (``User:name``) and host of the client a node forwards a request for."""

    principal: str
    host: str

"""Raft voter changes (Kafka's apis 80 AddRaftVoter and 81 RemoveRaftVoter, KIP-853).

They change the Raft configuration, which only the Raft leader (the controller) can do, so
a node that does not lead forwards them there (``forwarded``: it was, so it is not
forwarded again). A voter is named by its node id and its data directory's id; adding one
also says where its Raft port and client listener are (``host:port``), since the leader
must reach it to catch it up and every node must reach it once it votes.
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet.wire.forwarding import ForwardedFor
from rillet.wire.request import Request


@dataclass(frozen=True, slots=True)
class AddRaftVoterRequest(Request["RaftVoterResponse"]):
    voter_id: int
    voter_directory_id: str
    raft_address: str
    listener_address: str = ""
    forwarded: bool = False
    forwarded_for: ForwardedFor | None = None


@dataclass(frozen=True, slots=True)
class RemoveRaftVoterRequest(Request["RaftVoterResponse"]):
    voter_id: int
    voter_directory_id: str = ""  # "": whichever directory the voter has
    forwarded: bool = False
    forwarded_for: ForwardedFor | None = None


@dataclass(frozen=True, slots=True)
class ObserveRaftRequest(Request["RaftVoterResponse"]):
    """A node that runs a Raft replica without a vote asks the leader to send it the log
    (internal, node-authenticated; sent again every few seconds while it is an observer,
    since a new leader does not know of it)."""

    broker_id: int
    raft_address: str


@dataclass(frozen=True, slots=True)
class RaftVoterResponse:
    error_code: int
    error_message: str | None = None

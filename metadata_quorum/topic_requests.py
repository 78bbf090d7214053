"""The admin requests that recently created or deleted a topic: what makes retries idempotent.

A client resends CreateTopics or DeleteTopics when it loses the connection before the answer
(a controller that died mid-request, a network cut). Without memory the retry of a create it
already carried out would hear TOPIC_ALREADY_EXISTS, and a retried delete
UNKNOWN_TOPIC_OR_PARTITION, although the operation worked. Each request carries an id chosen
by the client; the records that carry out the change carry that id, so every node — and any
later controller — knows which (request, topic) pairs were done and answers their retries
with success.

Pure data applied from committed records, identical on every node, part of the snapshot.
Bounded: the oldest pairs are forgotten first (a retry comes within a request timeout, long
before a thousand other topic changes).
"""

from __future__ import annotations

from typing import Any

MAX_REMEMBERED_REQUESTS = 1000


class TopicRequestLog:
    def __init__(self, capacity: int = MAX_REMEMBERED_REQUESTS) -> None:
        self._capacity = capacity
        self._done: dict[tuple[str, str], None] = {}  # insertion-ordered (request id, topic)

    def note(self, request_id: str, topic: str) -> None:
        """Remember that ``request_id`` created or deleted ``topic`` (no-op without an id)."""
        if not request_id:
            return
        self._done[(request_id, topic)] = None
        while len(self._done) > self._capacity:
            del self._done[next(iter(self._done))]

    def done(self, request_id: str, topic: str) -> bool:
        """True when this request already carried out its change to ``topic``."""
        return bool(request_id) and (request_id, topic) in self._done

    def __len__(self) -> int:
        return len(self._done)

    def to_doc(self) -> list[list[str]]:
        """Oldest first: the order decides what is forgotten next, so it is part of the state."""
        return [[rid, topic] for rid, topic in self._done]

    @classmethod
    def from_doc(cls, doc: Any) -> TopicRequestLog:
        log = cls()
        for rid, topic in doc:
            log.note(str(rid), str(topic))
        return log

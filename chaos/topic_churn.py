"""Topic create/delete during faults: metadata operations that must stay linearizable.

A thread creates a small topic, waits, deletes it, and moves on to the next name, recording
each operation in the history (``f`` "create" or "delete"). Outcomes: ``ok`` once the
controller answered (an "already exists" on create, "unknown topic" on delete mean the same
thing for the topic's existence, e.g. after the admin client resent a request whose first
answer was lost); ``unknown`` for timeouts and lost connections, since the controller may
have committed the change. The checker compares what was acknowledged with the topics that
exist after healing.
"""

from __future__ import annotations

import logging
import threading

from rillet.chaos.history import HistoryWriter
from rillet.client import BlockingAdmin, NewTopic
from rillet.client.errors import RilletError, TopicAlreadyExistsError, UnknownTopicOrPartitionError

log = logging.getLogger(__name__)
PREFIX = "churn-"
TIMEOUT_MS = 5_000


class TopicChurn:
    def __init__(
        self,
        bootstrap: str,
        history: HistoryWriter,
        replication_factor: int,
        interval_s: float = 1.5,
    ) -> None:
        self._bootstrap = bootstrap
        self._history = history
        # Two copies: a create still succeeds while one node of three is down.
        self._rf = min(replication_factor, 2)
        self._interval_s = interval_s
        self._stop = threading.Event()
        self.operations = 0
        self._thread = threading.Thread(target=self._main, name="chaos-churn", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout_s: float = 60.0) -> bool:
        self._stop.set()
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    def _main(self) -> None:
        try:
            with BlockingAdmin(self._bootstrap, request_timeout_ms=TIMEOUT_MS) as admin:
                i = 0
                while not self._stop.wait(self._interval_s):
                    name = f"{PREFIX}{i}"
                    self._operate(admin, "create", name)
                    self._stop.wait(self._interval_s)
                    self._operate(admin, "delete", name)  # also after a stop request
                    i += 1
        except RilletError as exc:
            log.warning("topic churn stopped: %r", exc)

    def _operate(self, admin: BlockingAdmin, f: str, name: str) -> None:
        """One operation and its outcome, recorded."""
        op = {"f": f, "process": "admin", "value": name}
        self._history.write({"type": "invoke", **op})
        self.operations += 1
        same_as_ok = TopicAlreadyExistsError if f == "create" else UnknownTopicOrPartitionError
        try:
            if f == "create":
                admin.create_topics([NewTopic(name, 1, self._rf)], timeout_ms=TIMEOUT_MS)
            else:
                admin.delete_topics([name], timeout_ms=TIMEOUT_MS)
        except same_as_ok as exc:
            self._history.write({"type": "ok", **op, "error": type(exc).__name__})
        except RilletError as exc:
            self._history.write({"type": "unknown", **op, "error": repr(exc)[:300]})
        else:
            self._history.write({"type": "ok", **op})

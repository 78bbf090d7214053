"""A consumer in a consumer group: the coordinator assigns its partitions (docs/consumer-groups.md).

A background task heartbeats the group coordinator (the controller node, found with
FindCoordinator and followed when it moves) with the subscription and the partitions this
member owns. Each answer is the assignment it should own now: partitions no longer in it
are *revoked* first — ``poll`` stops returning their records at once, the listener's
``on_partitions_revoked`` runs, positions are committed when auto-commit is on, and fetching
stops — and only then reported released; new ones are
*assigned* — the committed offset (or ``auto_offset_reset`` when there is none, or it lies
before the log start) becomes the position and ``on_partitions_assigned`` runs. Heartbeats go
on while the application processes, so a slow poll loop does not cost the membership.

Delivery is at-least-once by default: auto-commit (every ``auto_commit_interval_ms``, on
revoke and on close) commits the position of records already returned by ``poll``; commits
and the leave on close are retried across controller changes (coordinator_link.py). For
at-most-once, turn auto-commit off and call ``commit()`` right after ``poll`` and before
processing the records.
"""

from __future__ import annotations

import inspect
import logging
import socket
import uuid
from collections.abc import Iterable
from typing import Any, Protocol, TypeVar

import trio

from rillet.client.consumer import Consumer
from rillet.client.coordinator_link import TRANSIENT, CoordinatorLink, Requester
from rillet.client.errors import RilletError, error_for
from rillet.client.transaction_state import GroupMetadata
from rillet.client.types import ConsumerRecord, TopicPartition
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode
from rillet.wire.request import Request

R = TypeVar("R")

log = logging.getLogger(__name__)

MAX_BACKOFF_S = 1.0
DEFAULT_CLOSE_TIMEOUT_MS = 30_000  # Kafka's consumer close() default


class RebalanceListener(Protocol):
    """Optional callbacks (plain or async functions) around ownership changes."""

    def on_partitions_revoked(self, partitions: set[TopicPartition]) -> Any: ...

    def on_partitions_assigned(self, partitions: set[TopicPartition]) -> Any: ...


class GroupConsumer(Consumer):
    def __init__(
        self,
        bootstrap: str,
        group_id: str,
        *,
        topics: Iterable[str] = (),
        pattern: str | None = None,
        listener: RebalanceListener | None = None,
        session_timeout_ms: int = 10_000,
        assignor: str = "",
        group_instance_id: str | None = None,
        enable_auto_commit: bool = True,
        auto_commit_interval_ms: int = 5_000,
        close_timeout_ms: int = DEFAULT_CLOSE_TIMEOUT_MS,
        **consumer_options: Any,
    ) -> None:
        super().__init__(bootstrap, **consumer_options)
        if not group_id:
            raise ValueError("group_id is required")
        if close_timeout_ms <= 0:
            raise ValueError("close_timeout_ms must be positive")
        topics = sorted(set(topics))
        if not topics and pattern is None:
            raise ValueError("subscribe to topics or a pattern")
        self.group_id = group_id
        self._topics = topics
        self._pattern = pattern
        self._listener = listener
        self._session_timeout_ms = session_timeout_ms
        self._assignor = assignor
        self._instance_id = group_instance_id
        self._auto_commit = enable_auto_commit
        self._auto_commit_s = auto_commit_interval_ms / 1000
        self.member_id = ""  # the id the coordinator answered with: "" until joined
        # The id this member joins with, made here (as Kafka's consumer does since 4.0): a
        # join sent again after its answer was lost is the same member, not a second one.
        self._join_id = uuid.uuid4().hex
        self._join_sent = False
        self.generation = -1
        self._owned: set[TopicPartition] = set()
        self._close_timeout_s = close_timeout_ms / 1000
        self._link = CoordinatorLink(
            self._find_coordinator,
            group_id,
            self._request_timeout_s,
            stopped=lambda: self._cluster.closed,
        )
        self._assignment_changed = trio.Event()
        self._stopping = False

    # -- lifecycle ----------------------------------------------------------------------------

    def _started(self, nursery: trio.Nursery) -> None:
        super()._started(nursery)
        nursery.start_soon(self._membership)
        if self._auto_commit:
            nursery.start_soon(self._auto_commit_loop)

    async def _closing(self, exc_type: type[BaseException] | None) -> None:
        """Commit (auto-commit), then leave the group so the others take over at once. A
        static member does not leave: its partitions wait for it within its session.

        Both are retried until a coordinator takes them (while no controller is known, or
        the controller changes), within ``close_timeout_ms`` in all.
        """
        self._stopping = True
        deadline = trio.current_time() + self._close_timeout_s
        try:
            with trio.move_on_at(deadline):
                if self._owned:
                    await self._revoke(set(self._owned), leaving=True, until_s=deadline)
                # Also a member whose join was sent but never answered leaves: that join
                # may have committed.
                if (self.member_id or self._join_sent) and self._instance_id is None:
                    await self._link.call(
                        gm.LeaveGroupRequest(self.group_id, self.member_id or self._join_id),
                        until_s=deadline,
                    )
        except RilletError as exc:
            log.info("leaving group %s: %s", self.group_id, exc)
        finally:
            await super()._closing(exc_type)

    # -- consuming ----------------------------------------------------------------------------

    async def poll(
        self, timeout_ms: int = 1000, max_records: int | None = None
    ) -> list[ConsumerRecord]:
        """Records of the partitions this member owns; waits for an assignment if it has
        none yet (an empty list after ``timeout_ms``)."""
        if not self.assignment():
            with trio.move_on_after(max(timeout_ms, 0) / 1000):
                while not self.assignment():
                    await self._assignment_changed.wait()
            if not self.assignment():
                self._check_open()
                return []
        return await super().poll(timeout_ms, max_records)

    async def commit(self, offsets: dict[TopicPartition, int] | None = None) -> None:
        """Commit ``offsets`` (next offset to consume per partition), by default the position
        of every owned partition. Raises the first refusal (e.g. IllegalGenerationError for
        a partition this member no longer owns).

        While no coordinator takes the commit (no controller known, a lost connection,
        NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, a timed-out decision) it is retried,
        finding the coordinator again, for up to ``request_timeout_ms``; a fenced member's
        commit (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID) is refused at once, never retried.
        """
        await self._commit(offsets, trio.current_time() + self._request_timeout_s)

    async def _commit(self, offsets: dict[TopicPartition, int] | None, until_s: float) -> None:
        if offsets is None:
            offsets = {tp: await self.position(tp) for tp in sorted(self._owned)}
        if not offsets:
            return
        request = gm.OffsetCommitRequest(
            self.group_id,
            self.member_id,
            self.generation,
            [
                gm.OffsetCommitPartition(tp.topic, tp.partition, o)
                for tp, o in sorted(offsets.items())
            ],
        )
        response = await self._link.call(request, until_s=until_s, retry_answer=_commit_in_doubt)
        if response.error_code != ErrorCode.NONE:
            raise error_for(
                response.error_code, response.error_message or f"commit for {self.group_id}"
            )
        for p in response.partitions:
            if p.error_code != ErrorCode.NONE:
                raise error_for(p.error_code, f"commit of {p.topic}-{p.partition}")

    def commit_async(self, offsets: dict[TopicPartition, int] | None = None) -> None:
        """Commit in the background; a failure is logged (the next commit supersedes it)."""

        async def run() -> None:
            try:
                await self.commit(offsets)
            except RilletError as exc:
                log.warning("asynchronous commit failed: %s", exc)

        self._cluster.nursery.start_soon(run)

    async def committed(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The group's committed offsets (-1 where none)."""
        return await self._committed(partitions, None)

    async def _committed(
        self, partitions: Iterable[TopicPartition], until_s: float | None
    ) -> dict[TopicPartition, int]:
        by_topic: dict[str, list[int]] = {}
        for tp in partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        request = gm.OffsetFetchRequest(
            self.group_id, [gm.GroupTopicPartitions(t, ps) for t, ps in sorted(by_topic.items())]
        )
        response = await self._link.call(request, until_s=until_s)
        if response.error_code != ErrorCode.NONE:
            # An empty answer read as "nothing committed" would reset the positions.
            raise error_for(response.error_code, response.error_message or "OffsetFetch")
        return {TopicPartition(o.topic, o.partition): o.offset for o in response.offsets}

    # -- membership ---------------------------------------------------------------------------

    async def _membership(self) -> None:
        backoff = 0.05
        while not self._stopping:
            try:
                request = self._heartbeat_request()
                self._join_sent = True  # from here the join may commit, answered or not
                response = await self._call(request)
            except RilletError as exc:
                log.debug("heartbeat of %s failed: %s", self.group_id, exc)
                await trio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                continue
            code = ErrorCode.from_wire(response.error_code)
            if code in TRANSIENT:
                # The controller could not commit the heartbeat in time (its Raft leadership
                # was changing) or moved: nothing is wrong with the membership. Kafka's
                # consumer retries these too; raising them from poll would end the member.
                log.debug("heartbeat of %s not taken yet: %s", self.group_id, code.name)
                await trio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                continue
            backoff = 0.05
            if code == ErrorCode.UNKNOWN_MEMBER_ID:
                if not self.member_id:
                    # A join refused as unknown: a node from before members made their own
                    # ids. Join the old way, with an empty id the node fills in.
                    self._join_id = ""
                    continue
                # Fenced (our session ended): the partitions are someone else's already.
                log.warning("member %s of %s was fenced: rejoining", self.member_id, self.group_id)
                self._lose(set(self._owned))
                self.member_id = ""
                continue
            if code != ErrorCode.NONE:
                self._fetcher.report("group", error_for(code, response.error_message or ""))
                self._wake_poll()
                await trio.sleep(MAX_BACKOFF_S)
                continue
            self.member_id = response.member_id
            self.generation = response.generation
            assigned = {
                TopicPartition(tp.topic, p) for tp in response.assignment for p in tp.partitions
            }
            revoked = self._owned - assigned
            if revoked:
                await self._revoke(revoked)
            added = assigned - self._owned
            if added and not await self._assign(added):
                continue  # not taken yet: the next heartbeat answers with them again
            if not self._stopping:
                await trio.sleep(response.heartbeat_interval_ms / 1000)

    def _heartbeat_request(self) -> gm.ConsumerGroupHeartbeatRequest:
        by_topic: dict[str, list[int]] = {}
        for tp in sorted(self._owned):
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        return gm.ConsumerGroupHeartbeatRequest(
            self.group_id,
            self.member_id or self._join_id,
            self._session_timeout_ms,
            list(self._topics),
            self._pattern,
            self._assignor,
            self._instance_id,
            socket.gethostname(),
            None
            if not self.member_id
            else [gm.GroupTopicPartitions(t, ps) for t, ps in by_topic.items()],
        )

    async def _revoke(
        self, revoked: set[TopicPartition], leaving: bool = False, until_s: float | None = None
    ) -> None:
        # poll() runs concurrently with this task: hold the revoked partitions' records back
        # before the first await, or records returned while the listener or the commit runs
        # would lie beyond the committed position and the next owner would deliver them again.
        for tp in revoked:
            state = self._sub.states.get(tp)
            if state is not None:
                state.paused = True
        await self._notify("on_partitions_revoked", revoked)
        if self._auto_commit and self.member_id:
            try:
                positions = {}
                for tp in sorted(revoked):
                    state = self._sub.states.get(tp)
                    if state is not None and state.position is not None:
                        positions[tp] = state.position
                if until_s is None:
                    until_s = trio.current_time() + self._request_timeout_s
                await self._commit(positions, until_s)
            except RilletError as exc:
                log.warning("commit on revoke failed: %s", exc)
        self._owned -= revoked
        if not leaving:
            self.assign(sorted(self._owned))
            self._assignment_changed.set()
            self._assignment_changed = trio.Event()

    def _lose(self, lost: set[TopicPartition]) -> None:
        """Partitions taken away without a chance to commit (fenced): stop fetching them."""
        self._owned -= lost
        self.assign(sorted(self._owned))

    async def _assign(self, added: set[TopicPartition]) -> bool:
        """Take ``added`` from their committed offsets; False when those could not be read.

        The offsets are asked for across coordinator changes (a new member's first
        assignment often arrives just as the controller dies). If no coordinator answers
        within the request timeout the partitions are not taken: this member does not own
        them in its next heartbeat, whose answer assigns them again. Raising instead would
        end the membership task and, with it, the consumer.
        """
        try:
            committed = await self._committed(added, trio.current_time() + self._request_timeout_s)
        except RilletError as exc:
            log.warning("offsets of newly assigned partitions of %s: %s", self.group_id, exc)
            await trio.sleep(MAX_BACKOFF_S)
            return False
        self._owned |= added
        self.assign(sorted(self._owned))
        for tp in sorted(added):
            offset = committed.get(tp, -1)
            if offset >= 0:
                self.seek(tp, offset)  # out of range (retention) -> auto_offset_reset
        await self._notify("on_partitions_assigned", added)
        self._assignment_changed.set()
        self._assignment_changed = trio.Event()
        return True

    async def _notify(self, name: str, partitions: set[TopicPartition]) -> None:
        callback = getattr(self._listener, name, None) if self._listener is not None else None
        if callback is None:
            return
        try:
            result = callback(set(partitions))
            if inspect.isawaitable(result):
                await result
        except Exception:
            log.exception("%s raised", name)

    async def _auto_commit_loop(self) -> None:
        while not self._stopping:
            await trio.sleep(self._auto_commit_s)
            if self._owned and self.member_id:
                try:
                    await self.commit()
                except RilletError as exc:
                    log.info("auto-commit failed: %s", exc)

    def group_metadata(self) -> GroupMetadata:
        """For ``Producer.send_offsets_to_transaction``: the group fences this member's
        transactional offsets once a rebalance leaves it behind (KIP-447)."""
        return GroupMetadata(self.group_id, self.generation, self.member_id, self._instance_id)

    # -- the coordinator ----------------------------------------------------------------------

    async def _call(self, request: Request[R]) -> R:
        """Send to the coordinator, finding it again (bounded) when it moved."""
        return await self._link.call(request)

    async def _find_coordinator(self) -> Requester:
        found = await self._cluster.request_any(
            gm.FindCoordinatorRequest(self.group_id), self._request_timeout_s
        )
        if found.error_code != ErrorCode.NONE:
            raise error_for(found.error_code, found.error_message or "FindCoordinator")
        return await self._cluster.coordinator_connection(found.node_id, found.host, found.port)


def _commit_in_doubt(response: Any) -> bool:
    """Some partitions' commits were not taken for a reason that passes (the coordinator
    moved or timed out): commit again (the same offsets: repeating is harmless)."""
    return any(p.error_code in TRANSIENT for p in response.partitions)

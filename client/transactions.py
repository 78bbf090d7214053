"""A transactional producer's calls to its coordinators (the I/O around transaction_state).

The transaction coordinator is found with FindCoordinator (key type 1, the transactional
id), the group coordinator of ``send_offsets_to_transaction`` with key type 0; here both are
the controller, but the client asks as Kafka's does. Every call is retried until
``max_block_ms`` while the answer says to try again (the coordinator moved or is loading,
or it is still completing the previous transaction: CONCURRENT_TRANSACTIONS) or no
coordinator is reachable; any other answer moves the state machine and is raised.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import trio

from rillet.client.cluster import ClusterClient
from rillet.client.coordinator_link import CoordinatorLink, Requester
from rillet.client.errors import error_for
from rillet.client.idempotence import IdempotenceState
from rillet.client.transaction_state import (
    TP,
    GroupMetadata,
    TransactionManager,
    TxnState,
    is_retriable,
)
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode
from rillet.wire.request import Request

R = TypeVar("R")

TRANSACTION_KEY_TYPE = 1
GROUP_KEY_TYPE = 0


def _retry_answer(response: Any) -> bool:
    """An answer, or one of its per-partition results, says "try again"."""
    if is_retriable(getattr(response, "error_code", ErrorCode.NONE)):
        return True
    return any(is_retriable(r.error_code) for r in getattr(response, "results", ()))


class TransactionDriver:
    """Runs the transactional calls of one producer (its ``TransactionManager``)."""

    def __init__(
        self,
        cluster: ClusterClient,
        manager: TransactionManager,
        idempotence: IdempotenceState,
        request_timeout_s: float,
        max_block_s: float,
    ) -> None:
        self._cluster = cluster
        self.manager = manager
        self._idem = idempotence
        self._max_block_s = max_block_s
        self._link = CoordinatorLink(
            self._finder(manager.transactional_id, TRANSACTION_KEY_TYPE),
            manager.transactional_id,
            request_timeout_s,
            stopped=lambda: cluster.closed,
        )
        self._timeout_s = request_timeout_s
        self._group_links: dict[str, CoordinatorLink] = {}
        self._lock = trio.Lock()  # one coordinator call of the transaction at a time

    def _finder(self, key: str, key_type: int) -> Callable[[], Awaitable[Requester]]:
        async def find() -> Requester:
            found = await self._cluster.request_any(
                gm.FindCoordinatorRequest(key, key_type), self._timeout_s
            )
            if found.error_code != ErrorCode.NONE:
                raise error_for(found.error_code, found.error_message or "FindCoordinator")
            return await self._cluster.coordinator_connection(found.node_id, found.host, found.port)

        return find

    async def _call(self, link: CoordinatorLink, request: Request[R]) -> R:
        until_s = trio.current_time() + self._max_block_s
        return await link.call(request, until_s=until_s, retry_answer=_retry_answer)

    async def init(self) -> None:
        """InitProducerId with the transactional id: fences earlier producers of the id."""
        async with self._lock:
            m = self.manager
            response = await self._call(self._link, m.init_request())
            m.init_answer(response)
            # New epoch: every partition's sequence starts again at 0.
            self._idem.assign(m.producer_id, m.producer_epoch)

    async def ensure_initialized(self) -> None:
        if self.manager.state in (TxnState.UNINITIALIZED, TxnState.INITIALIZING):
            await self.init()

    async def add_partitions(self, tps: list[TP]) -> None:
        async with self._lock:
            m = self.manager
            request = m.add_partitions_request(tps)
            if request is not None:
                m.add_partitions_answer(request, await self._call(self._link, request))

    async def send_offsets(self, offsets: dict[TP, int], group: GroupMetadata) -> None:
        async with self._lock:
            m = self.manager
            request = m.add_offsets_request(group)
            if request is not None:
                m.add_offsets_answer(request, await self._call(self._link, request))
            link = self._group_links.get(group.group_id)
            if link is None:
                link = self._group_links[group.group_id] = CoordinatorLink(
                    self._finder(group.group_id, GROUP_KEY_TYPE),
                    group.group_id,
                    self._timeout_s,
                    stopped=lambda: self._cluster.closed,
                )
            m.offset_commit_answer(await self._call(link, m.offset_commit_request(offsets, group)))

    async def end(self, commit: bool) -> None:
        """EndTxn; after an abort that followed a failed batch, a new epoch (the failed
        batch's sequence is in doubt, so the next transaction numbers from 0 again)."""
        async with self._lock:
            m = self.manager
            request = m.end_request(commit)
            if request is not None:
                m.end_answer(await self._call(self._link, request))
        await self.ensure_initialized()

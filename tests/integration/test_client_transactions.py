"""rillet's own transactional producer and read_committed consumer against a real node
(docs/client-transactions.md): commits and aborts interleaved across 3 partitions, each
also committing a group's offset; read_committed sees exactly the committed records,
read_uncommitted all of them; a second producer of the same transactional id fences the
first."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import trio
from node_process import NodeProcess
from test_data_path import create_topic

from rillet.client import Admin, Consumer, ConsumerRecord, Producer, TopicPartition
from rillet.client.errors import ProducerFencedError
from rillet.client.transaction_state import TransactionStateError

pytestmark = pytest.mark.integration

PARTITIONS = 3
OUTCOMES = [True, False, True, True, False]  # which transactions commit


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    """One node for the module's tests (a node start costs seconds of the default run)."""
    base = tmp_path_factory.mktemp("txn-node")
    (base / "logs").mkdir()
    process = NodeProcess(base / "data", base / "logs")
    try:
        yield process.start()
    finally:
        process.kill()


async def read_to_end(bootstrap: str, topic: str, isolation: str) -> list[ConsumerRecord]:
    """Every record of ``topic`` up to each partition's end (the LSO for read_committed)."""
    tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    out: list[ConsumerRecord] = []
    async with Consumer(bootstrap, fetch_max_wait_ms=50, isolation_level=isolation) as c:
        c.assign(tps)
        await c.seek_to_beginning(*tps)
        ends = await c.end_offsets(tps)
        with trio.fail_after(20):
            for tp, end in ends.items():
                while await c.position(tp) < end:
                    out.extend(await c.poll(timeout_ms=100))
    return out


async def test_commit_and_abort_interleaved_read_committed_sees_only_committed(
    node: NodeProcess,
) -> None:
    topic = "txn-client"
    await create_topic(node.bootstrap, topic, PARTITIONS)
    committed: list[bytes] = []
    written: list[bytes] = []
    async with Producer(node.bootstrap, transactional_id="app-1", linger_ms=1) as producer:
        await producer.init_transactions()
        for n, commit in enumerate(OUTCOMES):
            await producer.begin_transaction()
            for p in range(PARTITIONS):
                for i in range(2):
                    value = f"t{n}-p{p}-{i}".encode()
                    await producer.send(topic, value, partition=p)
                    written.append(value)
                    if commit:
                        committed.append(value)
            await producer.send_offsets_to_transaction({TopicPartition(topic, 0): n + 1}, "txn-app")
            if commit:
                await producer.commit_transaction()
            else:
                await producer.abort_transaction()
        with pytest.raises(TransactionStateError):
            await producer.send(topic, b"outside a transaction")

    read_committed = await read_to_end(node.bootstrap, topic, "read_committed")
    everything = await read_to_end(node.bootstrap, topic, "read_uncommitted")
    assert sorted(r.value for r in read_committed) == sorted(committed)
    assert sorted(r.value for r in everything) == sorted(written)
    # The group's offset is the last committed transaction's (n = 3: offset 4).
    async with Admin(node.bootstrap) as admin:
        offsets = await admin.group_offsets("txn-app")
    assert offsets[TopicPartition(topic, 0)] == 4


async def test_a_second_producer_of_the_same_id_fences_the_first(node: NodeProcess) -> None:
    topic = "txn-zombie"
    await create_topic(node.bootstrap, topic, PARTITIONS)
    async with Producer(node.bootstrap, transactional_id="zombie", linger_ms=1) as old:
        await old.begin_transaction()
        await old.send(topic, b"from the zombie", partition=0)
        await old.flush()
        async with Producer(node.bootstrap, transactional_id="zombie", linger_ms=1) as new:
            await new.init_transactions()  # fences old, aborts its open transaction
            await new.begin_transaction()
            await new.send(topic, b"from the new one", partition=1)
            await new.commit_transaction()
        with pytest.raises(ProducerFencedError):
            await old.send(topic, b"late", partition=2)
            await old.commit_transaction()
        with pytest.raises(ProducerFencedError):  # fatal: every later call too
            await old.begin_transaction()
    values = [r.value for r in await read_to_end(node.bootstrap, topic, "read_committed")]
    assert values == [b"from the new one"]

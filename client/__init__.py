"""rillet client: producer, consumer and admin on trio, plus a blocking facade.

Async::

    async with Producer("127.0.0.1:9092") as producer:
        metadata = await (await producer.send("events", b"value"))

Blocking (scripts, Spark executors)::

    with BlockingProducer("127.0.0.1:9092") as producer:
        producer.send("events", b"value").result(timeout=10)

Every error the client raises derives from ``errors.RilletError``; errors reported by a node
are ``errors.BrokerError`` subclasses carrying the protocol ``ErrorCode``.
"""

from rillet.client import errors
from rillet.client.accumulator import RecordFuture
from rillet.client.admin import Admin
from rillet.client.blocking import BlockingAdmin, BlockingConsumer, BlockingProducer
from rillet.client.consumer import Consumer
from rillet.client.errors import BrokerError, RilletError
from rillet.client.group_consumer import GroupConsumer, RebalanceListener
from rillet.client.producer import Producer
from rillet.client.transaction_state import (
    GroupMetadata,
    TransactionAbortableError,
    TransactionStateError,
)
from rillet.client.types import (
    ClusterDescription,
    ConsumerRecord,
    NewTopic,
    NodeInfo,
    OffsetAndTimestamp,
    PartitionInfo,
    RecordMetadata,
    SendCounts,
    TopicDescription,
    TopicPartition,
)

__all__ = [
    "Admin",
    "BlockingAdmin",
    "BlockingConsumer",
    "BlockingProducer",
    "BrokerError",
    "ClusterDescription",
    "Consumer",
    "ConsumerRecord",
    "GroupConsumer",
    "GroupMetadata",
    "NewTopic",
    "NodeInfo",
    "OffsetAndTimestamp",
    "PartitionInfo",
    "Producer",
    "RebalanceListener",
    "RecordFuture",
    "RecordMetadata",
    "RilletError",
    "SendCounts",
    "TopicDescription",
    "TopicPartition",
    "TransactionAbortableError",
    "TransactionStateError",
    "errors",
]

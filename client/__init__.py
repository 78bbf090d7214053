"""rillet client: producer, consumer and admin (trio), plus a blocking facade."""

from rillet.client.admin import Admin
from rillet.client.blocking import BlockingAdmin, BlockingConsumer, BlockingProducer
from rillet.client.consumer import Consumer
from rillet.client.errors import BrokerError, RilletError
from rillet.client.producer import Producer
from rillet.client.types import (
    ConsumerRecord,
    NewTopic,
    OffsetAndTimestamp,
    PartitionInfo,
    RecordMetadata,
    TopicDescription,
    TopicPartition,
)

__all__ = [
    "Admin",
    "BlockingAdmin",
    "BlockingConsumer",
    "BlockingProducer",
    "BrokerError",
    "Consumer",
    "ConsumerRecord",
    "NewTopic",
    "OffsetAndTimestamp",
    "PartitionInfo",
    "Producer",
    "RecordMetadata",
    "RilletError",
    "TopicDescription",
    "TopicPartition",
]

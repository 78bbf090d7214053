"""The Kafka front end's exceptions: one root, so the connection catches them in one place."""

from __future__ import annotations


class KafkaProtocolError(Exception):
    """Input the Kafka front end cannot serve; the connection that sent it is closed."""


class KafkaFrameTooLarge(KafkaProtocolError):
    """A frame's size prefix is above the configured limit (or negative)."""


class MalformedKafkaRequest(KafkaProtocolError):
    """A request header or body that does not decode as its api and version say."""


class UnsupportedKafkaRequest(KafkaProtocolError):
    """An api key or version this listener does not serve (Kafka closes such connections)."""


class UnknownResponseField(KafkaProtocolError):
    """A response description names a field no served version of its entity has: a
    translator's mistake, refused rather than dropped from every answer."""

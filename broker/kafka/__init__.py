"""The Kafka-protocol front end: Kafka clients speak to a node through its own listener.

Everything here but :mod:`connection` is sans-I/O: the codec cuts size-prefixed frames,
decodes request headers and bodies with ``kio`` (typed entities generated from Kafka's own
message schemas) and encodes responses; the translators turn a Kafka request into the same
internal request the native listener dispatches, and the internal response back into Kafka's
shape. No handler logic lives here. The package sits in ``broker`` rather than ``wire``
because it depends on ``kio`` and on the broker's view of registered Kafka endpoints;
``wire`` stays a leaf on the standard library, cbor2 and crc32c.
"""

"""CBOR encoding of Raft messages (never pickle: a peer's bytes must not run code here).

A message is one CBOR array ``[version, type_tag, field, ...]`` with fields in declaration
order; an entry is ``[index, term, kind, data]``, a snapshot ``[index, term, data, voters]``. Arrays
instead of maps keep the per-entry overhead to a few bytes on the replication hot path.

``decode_message`` validates every field against the schema below and raises only
``MalformedMessage``, whatever the input: truncated or trailing bytes, wrong types, negative
or oversized integers, unknown tags, absurd nesting. The transport can therefore drop a bad
frame with one ``except`` and never crash on input it does not control.

Forms. Release 0.1.0 knows a VoteRequest of 7 fields and a snapshot of 3 (no directory
ids, no voter configuration) and drops anything longer. This codec reads both forms; it
writes the old one when asked (``legacy=True``), which a member does until the cluster's
feature level says every node reads the new one (``Quorum.allow_new_message_forms``). The
old form drops what only the new one carries: the directory ids of a VoteRequest (the
recipient then checks votes by node id alone, as 0.1.0 does) and a snapshot's voter
configuration (a cluster below the level has no configuration entries: its voters are
the static ones).
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable
from dataclasses import fields
from typing import Any

import cbor2

from rillet.raft.core_errors import MalformedMessage
from rillet.raft.membership import DIRECTORY_ID_CHARS
from rillet.raft.messages import (
    MESSAGE_TYPES,
    AppendEntries,
    AppendResponse,
    EntryKind,
    Heartbeat,
    HeartbeatResponse,
    InstallSnapshot,
    LogEntry,
    Message,
    ReadIndexRequest,
    ReadIndexResponse,
    TimeoutNow,
    VoteRequest,
    VoteResponse,
)
from rillet.raft.quorum import Snapshot

CODEC_VERSION = 1
MAX_UINT = (1 << 63) - 1
_MAX_DEPTH = 6  # message array > entries array > entry array, with room to spare

_Check = Callable[[Any, str], Any]


def _uint(value: Any, path: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_UINT:
        raise MalformedMessage(f"{path}: expected an unsigned int, got {type(value).__name__}")
    return value


def _node(value: Any, path: str) -> int:
    node = _uint(value, path)
    if node == 0:
        raise MalformedMessage(f"{path}: node ids start at 1")
    return node


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise MalformedMessage(f"{path}: expected a bool, got {type(value).__name__}")
    return value


def _bytes(value: Any, path: str) -> bytes:
    if not isinstance(value, bytes):
        raise MalformedMessage(f"{path}: expected bytes, got {type(value).__name__}")
    return value


def _array(value: Any, path: str, length: int) -> list[Any]:
    if not isinstance(value, list) or len(value) != length:
        raise MalformedMessage(f"{path}: expected an array of {length} items")
    return value


def _entry(value: Any, path: str) -> LogEntry:
    index, term, kind, data = _array(value, path, 4)
    try:
        entry_kind = EntryKind(_uint(kind, f"{path}.kind"))
    except ValueError:
        raise MalformedMessage(f"{path}.kind: unknown entry kind {kind}") from None
    return LogEntry(_uint(index, f"{path}.index"), _uint(term, f"{path}.term"),
                    _bytes(data, f"{path}.data"), entry_kind)  # fmt: skip


def _entries(value: Any, path: str) -> tuple[LogEntry, ...]:
    if not isinstance(value, list):
        raise MalformedMessage(f"{path}: expected an array of entries")
    entries = tuple(_entry(item, f"{path}[{i}]") for i, item in enumerate(value))
    for before, after in itertools.pairwise(entries):
        if after.index != before.index + 1:
            raise MalformedMessage(f"{path}: entry indexes are not consecutive")
    return entries


def _directory(value: Any, path: str) -> str:
    if not isinstance(value, str) or len(value) not in (0, DIRECTORY_ID_CHARS):
        raise MalformedMessage(f"{path}: expected a directory id")
    return value


def _snapshot(value: Any, path: str) -> Snapshot:
    if isinstance(value, list) and len(value) == 3:
        value = [*value, b""]  # from a release before voter configurations
    index, term, data, voters = _array(value, path, 4)
    return Snapshot(_uint(index, f"{path}.index"), _uint(term, f"{path}.term"),
                    _bytes(data, f"{path}.data"), _bytes(voters, f"{path}.voters"))  # fmt: skip


# Per message type, the checker of each field after (term, sender, recipient).
_HEADER: tuple[_Check, ...] = (_uint, _node, _node)
_SCHEMAS: dict[type[Any], tuple[_Check, ...]] = {
    AppendEntries: (*_HEADER, _uint, _uint, _entries, _uint),
    AppendResponse: (*_HEADER, _uint, _bool, _uint, _uint),
    Heartbeat: (*_HEADER, _uint, _uint),
    HeartbeatResponse: (*_HEADER, _uint),
    VoteRequest: (*_HEADER, _uint, _uint, _bool, _bool, _directory, _directory),
    VoteResponse: (*_HEADER, _bool, _bool),
    InstallSnapshot: (*_HEADER, _snapshot),
    TimeoutNow: _HEADER,
    ReadIndexRequest: (*_HEADER, _bytes),
    ReadIndexResponse: (*_HEADER, _uint, _bytes),
}
_TAGS: dict[type[Any], int] = {cls: tag for tag, cls in enumerate(MESSAGE_TYPES, start=1)}
_BY_TAG: dict[int, type[Any]] = {tag: cls for cls, tag in _TAGS.items()}
_FIELD_NAMES: dict[type[Any], tuple[str, ...]] = {
    cls: tuple(f.name for f in fields(cls)) for cls in MESSAGE_TYPES
}


def _plain(value: Any, legacy: bool) -> Any:
    if isinstance(value, LogEntry):
        return [value.index, value.term, int(value.kind), value.data]
    if isinstance(value, Snapshot):
        if legacy:
            return [value.index, value.term, value.data]
        return [value.index, value.term, value.data, value.voters]
    if isinstance(value, tuple):
        return [_plain(v, legacy) for v in value]
    return value


# Fields the old form (release 0.1.0) lacks, at the end of the message.
_NEW_FIELDS: dict[type[Any], int] = {VoteRequest: 2}


def encode_message(message: Message, legacy: bool = False) -> bytes:
    """``legacy``: in the form of release 0.1.0 (see the module docstring)."""
    cls = type(message)
    names = _FIELD_NAMES[cls]
    if legacy:
        names = names[: len(names) - _NEW_FIELDS.get(cls, 0)]
    values = [_plain(getattr(message, name), legacy) for name in names]
    return cbor2.dumps([CODEC_VERSION, _TAGS[cls], *values])


def decode_message(data: bytes) -> Message:
    """Decode and validate one message; raises MalformedMessage and nothing else."""
    try:
        stream = io.BytesIO(data)
        value = cbor2.CBORDecoder(stream, max_depth=_MAX_DEPTH).decode()
        trailing = stream.tell() != len(data)
    except Exception as exc:  # cbor2 raises assorted types (and RecursionError) on garbage
        raise MalformedMessage(f"not valid CBOR: {type(exc).__name__}") from None
    if trailing:
        raise MalformedMessage("trailing bytes after the message")
    if not isinstance(value, list) or len(value) < 2:
        raise MalformedMessage("a message is an array [version, type, fields...]")
    version, tag, *values = value
    if version != CODEC_VERSION or isinstance(version, bool):
        raise MalformedMessage(f"unsupported codec version {version!r}")
    cls = _BY_TAG.get(tag) if isinstance(tag, int) and not isinstance(tag, bool) else None
    if cls is None:
        raise MalformedMessage(f"unknown message type {tag!r}")
    checks = _SCHEMAS[cls]
    missing = _NEW_FIELDS.get(cls, 0)
    if missing and len(values) == len(checks) - missing:
        values = [*values, "", ""]  # a VoteRequest from a release before directory ids
    if len(values) != len(checks):
        raise MalformedMessage(f"{cls.__name__}: expected {len(checks)} fields")
    names = _FIELD_NAMES[cls]
    kwargs = {
        name: check(item, f"{cls.__name__}.{name}")
        for name, check, item in zip(names, checks, values, strict=True)
    }
    message: Message = cls(**kwargs)
    return message

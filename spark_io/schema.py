"""The rows ``format("rillet")`` reads, as Spark sees them (a DDL string, so defining the
schema needs neither Spark nor Arrow).

The columns and their types are those of Spark's Kafka source: ``key`` and ``value`` as
bytes, ``timestamp`` in UTC with ``timestampType`` 0 (the producer's create time) or 1 (the
node's log-append time), and ``headers`` only with ``includeHeaders=true``. All columns are
nullable, as in Kafka's source; ``key``, ``value`` and ``headers`` are null when the record
has none.
"""

from __future__ import annotations

COLUMNS: tuple[tuple[str, str], ...] = (
    ("key", "binary"),
    ("value", "binary"),
    ("topic", "string"),
    ("partition", "int"),
    ("offset", "bigint"),
    ("timestamp", "timestamp"),
    ("timestampType", "int"),
)
HEADERS_COLUMN = ("headers", "array<struct<key: string, value: binary>>")

TIMESTAMP_CREATE_TIME = 0
TIMESTAMP_LOG_APPEND_TIME = 1


def columns(include_headers: bool) -> tuple[tuple[str, str], ...]:
    return (*COLUMNS, HEADERS_COLUMN) if include_headers else COLUMNS


def schema_ddl(include_headers: bool) -> str:
    """``key binary, value binary, ...`` for ``DataSource.schema()``."""
    return ", ".join(f"`{name}` {kind}" for name, kind in columns(include_headers))


def column_names(include_headers: bool) -> list[str]:
    return [name for name, _ in columns(include_headers)]

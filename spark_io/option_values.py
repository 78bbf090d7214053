"""Single option values of ``format("rillet")``: typed, or an OptionError naming the option.

Spark hands a data source its options as strings in a case-insensitive map. Every option is
one of a few kinds of value (a boolean, a bounded integer, a topic name, the node addresses,
JSON of per-partition numbers), and each kind is parsed here, once, so that whichever option
a user gets wrong the message reads the same way: the option's name, what it accepts and
what was given. :class:`RawOptions` is the map itself; it refuses unknown names up front,
because a misspelt option would otherwise silently change nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rillet.client.cluster import parse_bootstrap
from rillet.client.errors import RilletError
from rillet.client.security import ClientSecurity, from_settings
from rillet.client.types import TopicPartition
from rillet.spark_io.errors import OptionError


class RawOptions:
    """The raw options with case-insensitive lookup that remembers what was used."""

    def __init__(self, raw: Mapping[str, Any], known: tuple[str, ...], what: str) -> None:
        self._values: dict[str, str] = {}
        canonical = {name.lower(): name for name in known}
        unknown: list[str] = []
        for key, value in raw.items():
            lower = str(key).lower()
            if lower not in canonical:
                unknown.append(str(key))
                continue
            if value is None:
                continue
            self._values[canonical[lower]] = str(value)
        if unknown:
            raise OptionError(_unknown_message(unknown, known, what))

    def get(self, name: str) -> str | None:
        return self._values.get(name)

    def has(self, name: str) -> bool:
        return name in self._values

    def given(self, names: tuple[str, ...]) -> list[str]:
        return [n for n in names if n in self._values]


def _unknown_message(unknown: list[str], known: tuple[str, ...], what: str) -> str:
    names = ", ".join(repr(u) for u in sorted(unknown))
    hints = []
    if any(u.lower() == "path" for u in unknown):
        hints.append(
            "format('rillet') takes no path: name topics with subscribe, "
            "subscribePattern or assign (reading) or the topic option (writing)"
        )
    if any(u.lower().startswith("kafka.") for u in unknown):
        hints.append(
            "use 'bootstrap' (or 'kafka.bootstrap.servers') for the node addresses; "
            "other kafka.* client settings do not apply to rillet"
        )
    hint = ("; " + "; ".join(hints)) if hints else ""
    return f"unknown {what} option(s) {names}{hint}. Known options: {', '.join(known)}"


KAFKA_BOOTSTRAP = "kafka.bootstrap.servers"


def parse_bootstrap_option(opts: RawOptions) -> str:
    """``bootstrap``, or its alias ``kafka.bootstrap.servers`` (Spark's Kafka source's name);
    both may be given only with the same value."""
    ours, alias = opts.get("bootstrap"), opts.get(KAFKA_BOOTSTRAP)
    if ours is not None and alias is not None and ours.strip() != alias.strip():
        raise OptionError(
            f"options 'bootstrap' and {KAFKA_BOOTSTRAP!r} name different servers "
            f"({ours.strip()!r}, {alias.strip()!r}): give one"
        )
    name, text = ("bootstrap", ours) if ours is not None else (KAFKA_BOOTSTRAP, alias)
    if text is None or not text.strip():
        raise OptionError(
            "option 'bootstrap' (or 'kafka.bootstrap.servers') is required: "
            "host:port[,host:port...] of any rillet node"
        )
    try:
        parse_bootstrap(text)
    except ValueError as exc:
        raise OptionError(f"option {name!r}: {exc}") from None
    return text.strip()


def parse_bool(name: str, text: str | None, default: bool) -> bool:
    if text is None:
        return default
    lowered = text.strip().lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    raise OptionError(f"option {name!r} must be 'true' or 'false', not {text!r}")


def parse_int(name: str, text: str | None, default: int | None, minimum: int = 1) -> int | None:
    if text is None:
        return default
    try:
        value = int(text.strip())
    except ValueError:
        raise OptionError(f"option {name!r} must be an integer, not {text!r}") from None
    if value < minimum:
        raise OptionError(f"option {name!r} must be at least {minimum}, not {value}")
    return value


def parse_required_int(name: str, text: str | None, default: int, minimum: int = 1) -> int:
    value = parse_int(name, text, default, minimum)
    assert value is not None
    return value


def load_json_option(name: str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise OptionError(f"option {name!r} is not valid JSON ({exc.msg}): {text!r}") from None


def _partition_key(name: str, topic: str, key: Any) -> int:
    if not isinstance(key, str) or not key.isdigit():
        raise OptionError(
            f"option {name!r}: partition {key!r} of topic {topic!r} is not a partition number"
        )
    return int(key)


def check_topic_name(name: str, topic: Any) -> str:
    if not isinstance(topic, str) or not topic or topic != topic.strip():
        raise OptionError(f"option {name!r}: {topic!r} is not a topic name")
    return topic


def parse_partition_offsets(
    name: str, text: str, sentinels: tuple[int, ...], what: str = "offset"
) -> dict[TopicPartition, int]:
    """``{"topic": {"0": 12, "1": -2}}`` -> {TopicPartition: value}; values must be >= 0 or
    one of ``sentinels``."""
    data = load_json_option(name, text)
    example = '{"events": {"0": 23, "1": -2}}'
    if not isinstance(data, dict):
        raise OptionError(
            f"option {name!r} must be a JSON object of topics to {{partition: {what}}}, "
            f"e.g. {example}; got {text!r}"
        )
    out: dict[TopicPartition, int] = {}
    for topic, parts in data.items():
        check_topic_name(name, topic)
        if not isinstance(parts, dict):
            raise OptionError(
                f"option {name!r}: topic {topic!r} must map to an object of partition "
                f"numbers to {what}s, e.g. {example}"
            )
        for key, value in parts.items():
            partition = _partition_key(name, topic, key)
            if type(value) is not int or (value < 0 and value not in sentinels):
                allowed = " or ".join(str(s) for s in sentinels)
                extra = f" (or {allowed})" if sentinels else ""
                raise OptionError(
                    f"option {name!r}: {what} of {topic}-{partition} must be an integer >= 0"
                    f"{extra}, not {value!r}"
                )
            out[TopicPartition(topic, partition)] = value
    return out


# A secure cluster: the TLS files (PEM) and a SASL login, named like the CLI's --ssl-* and
# --sasl-* options.
SECURITY_OPTIONS = (
    "ssl.cafile",
    "ssl.certfile",
    "ssl.keyfile",
    "sasl.mechanism",
    "sasl.username",
    "sasl.password",
)


def parse_security_options(opts: RawOptions) -> ClientSecurity:
    """The TLS files and SASL login the options give (none: plaintext, anonymous). The
    files are read on the driver once, so a missing one fails before any task starts."""
    try:
        security = from_settings(
            {name.replace(".", "_"): opts.get(name) for name in SECURITY_OPTIONS}
        )
    except RilletError as exc:
        raise OptionError(f"options 'sasl.*': {exc}") from None
    try:
        security.client_options()
    except RilletError as exc:
        raise OptionError(f"options 'ssl.*': {exc}") from None
    return security

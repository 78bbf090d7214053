"""Writes broker/kafka/shapes.py: the typed descriptions of the Kafka apis the listener serves.

kio has one dataclass per api version; a translator describes a response once for every
version it serves. For each response entity this generates one ``TypedDict`` (total=False)
holding the union of its fields over the versions in broker/kafka/api_table.py, typed with
the plain values translators write (int for error codes, durations in ms and timestamps in
ms, ``Sequence`` of nested descriptions for arrays). For each request it generates the
union of the served versions' kio classes and a type guard from kio's request protocol to
that union. Run after changing the api table or upgrading kio:

    .venv/bin/python tools/kafka_shapes.py

tests/unit/broker/test_kafka_shapes.py fails when the file differs from what this writes.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import types
import typing
import uuid
from collections.abc import Iterator
from pathlib import Path

from kio.index import load_request_schema, load_response_schema
from kio.schema.errors import ErrorCode as KafkaError
from kio.static.primitive import Records, i32Timedelta, i64Timedelta

from rillet.broker.kafka.api_table import SUPPORTED, api_name

TARGET = Path(__file__).resolve().parent.parent / "broker" / "kafka" / "shapes.py"

HEAD = '''"""Typed descriptions of the served Kafka apis' requests and responses (generated).

Written by tools/kafka_shapes.py from the installed kio and broker/kafka/api_table.py: do
not edit; run the tool. A ``...Shape`` holds, for one response entity, the union of its
fields over the served versions (entities.build drops those a version lacks and refuses
keys no version has, listed in :data:`FIELDS`); a ``...Requests`` alias is the union of the
served versions' request classes, and ``is_...`` narrows kio's request protocol to it. The
types exist for the type checker only (annotations; defining them took 0.1 s at start).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeGuard

if TYPE_CHECKING:
    import uuid
    from collections.abc import Sequence
    from typing import TypeAlias, TypedDict

    from kio.static.protocol import RequestPayload
'''


def camel(api_key: int) -> str:
    return "".join(part.capitalize() for part in api_name(api_key).split("_"))


def snake(api_key: int) -> str:
    return api_name(api_key).lower()


def _nested(tp: object) -> type | None:
    return tp if isinstance(tp, type) and dataclasses.is_dataclass(tp) else None


class Generator:
    def __init__(self) -> None:
        # shape name -> field -> set of type strings; insertion order is output order
        self.shapes: dict[str, dict[str, set[str]]] = {}
        self.keys: dict[tuple[int, str], str] = {}  # (api key, kio class name) -> shape

    def shape_name(self, api_key: int, cls: type) -> str:
        prefix = camel(api_key)
        name = cls.__name__ if cls.__name__.startswith(prefix) else prefix + cls.__name__
        return name + "Shape"

    def value_type(self, api_key: int, tp: object) -> str:
        origin = typing.get_origin(tp)
        if origin in (types.UnionType, typing.Union):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            assert len(args) == 1, tp
            return self.value_type(api_key, args[0]) + " | None"
        if origin is tuple:
            return f"Sequence[{self.value_type(api_key, typing.get_args(tp)[0])}]"
        nested = _nested(tp)
        if nested is not None:
            return self.walk(api_key, nested)
        assert isinstance(tp, type), tp
        if tp in (KafkaError, i32Timedelta, i64Timedelta) or tp.__name__ == "TZAware":
            return "int"  # error codes, durations and instants in ms (entities.py converts)
        if issubclass(tp, Records):
            return "bytes"
        for plain in (bool, int, str, bytes, float):
            if issubclass(tp, plain):
                return plain.__name__
        if tp is uuid.UUID:
            return "uuid.UUID"
        raise TypeError(f"no plain type for {tp!r}")

    def walk(self, api_key: int, cls: type) -> str:
        name = self.shape_name(api_key, cls)
        self.keys[(api_key, cls.__name__)] = name
        fields = self.shapes.setdefault(name, {})
        for f in dataclasses.fields(cls):
            fields.setdefault(f.name, set()).add(self.value_type(api_key, f.type))
        return name


def _union(parts: set[str]) -> str:
    nullable = any(p.endswith(" | None") for p in parts)
    bare = sorted({p.removesuffix(" | None") for p in parts})
    return " | ".join(bare + (["None"] if nullable else []))


def _served() -> Iterator[tuple[int, range]]:
    for api_key, (low, high) in sorted(SUPPORTED.items()):
        yield api_key, range(low, high + 1)


def generate() -> str:
    gen = Generator()
    roots: list[str] = []
    requests: list[tuple[int, list[str]]] = []
    imports: list[str] = []
    for api_key, versions in _served():
        for version in versions:
            root = gen.walk(api_key, load_response_schema(api_key, version))
            if root not in roots:
                roots.append(root)
        classes = []
        for version in versions:
            cls = load_request_schema(api_key, version)
            alias = f"{camel(api_key)}V{version}"
            imports.append(f"    from {cls.__module__} import {cls.__name__} as {alias}")
            classes.append(alias)
        requests.append((api_key, classes))
    out = [HEAD, *imports]
    for api_key, classes in requests:
        out += ["", f"    {camel(api_key)}Requests: TypeAlias = ("]
        out += [f"        {'| ' if i else ''}{alias}" for i, alias in enumerate(classes)]
        out.append("    )")
    for name, fields in gen.shapes.items():
        out += ["", f"    class {name}(TypedDict, total=False):"]
        out += [f"        {field}: {_union(parts)}" for field, parts in fields.items()]
    out += ["", "    ResponseShape: TypeAlias = ("]
    out += [f"        {'| ' if i else ''}{name}" for i, name in enumerate(roots)]
    out += ["    )", ""]
    out += ["", "# The fields of each response entity's description, by (api key, kio class name)."]
    out += ["FIELDS: dict[tuple[int, str], frozenset[str]] = {"]
    for (key, cls), name in gen.keys.items():
        names = ", ".join(f'"{f}"' for f in gen.shapes[name])
        out.append(f'    ({key}, "{cls}"): frozenset(({names},)),')
    out += ["}", ""]
    for api_key, _ in requests:
        alias = camel(api_key) + "Requests"
        out += [
            "",
            f"def is_{snake(api_key)}(request: RequestPayload) -> TypeGuard[{alias}]:",
            f"    return request.__api_key__ == {int(api_key)}",
            "",
        ]
    return _formatted("\n".join(out).rstrip("\n") + "\n")


def _formatted(source: str) -> str:
    """``source`` as ``ruff`` sorts and formats it (the checks run ruff on the repository)."""
    for args in (["check", "--select", "I", "--fix-only", "--exit-zero"], ["format"]):
        source = subprocess.run(
            [sys.executable, "-m", "ruff", *args, "--stdin-filename", str(TARGET), "-"],
            input=source,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    return source


def main() -> int:
    TARGET.write_text(generate())
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The transactional workload's checker: Jepsen's transaction anomalies, from the history alone.

Sans-I/O: ``check_txn_history`` takes the history's rows (plain dicts, as written by
``txn_workload``) and returns violations; unit tests feed it hand-made histories.

Rows it reads:

- ``txn``: a transaction of a plain writer — its writes ``[[partition, value], ...]`` to the
  input topic, its outcome (``commit``: commit_transaction returned; ``abort``: the
  transaction was aborted and abort_transaction returned; ``unknown``: anything else) and
  ``t_end`` (when commit or abort was invoked).
- ``ctp``: a consume-transform-produce transaction — the input records it read
  ``[[partition, offset], ...]``, its outputs ``[[partition, value], ...]``, the offsets it
  sent in the transaction, outcome and ``t_end`` as above.
- ``reads``: records a reader consumed during the run ``[[partition, offset, value], ...]``
  with its isolation level (``committed`` or ``uncommitted``), topic and the time.
- ``offsets``: a sample of the consume-transform-produce group's committed offsets.
- ``final``: after the run, everything readable in a topic at one isolation level, with the
  end offsets reached and whether the read reached the end (``complete``).

Values: a writer's value is ``<txn>/<index>``; an output of consume-transform-produce is
``ctp|<input partition>|<input offset>|<input value>``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

COMMITTED = "committed"
UNCOMMITTED = "uncommitted"
CTP_PREFIX = "ctp|"
MAX_EXAMPLES = 5


@dataclass(slots=True)
class TxnViolation:
    check: str
    message: str
    examples: list[Any] = field(default_factory=list)


def txn_of(value: str) -> str | None:
    """The transaction a writer's value belongs to ("t1-4/2" -> "t1-4")."""
    txn, sep, index = value.rpartition("/")
    return txn if sep and index.isdigit() else None


def ctp_input(value: str) -> tuple[int, int, str] | None:
    """(input partition, input offset, input value) of a consume-transform-produce output."""
    if not value.startswith(CTP_PREFIX):
        return None
    parts = value.split("|", 3)
    if len(parts) != 4 or not parts[1].isdigit() or not parts[2].isdigit():
        return None
    return int(parts[1]), int(parts[2]), parts[3]


@dataclass(slots=True)
class _Final:
    records: list[tuple[int, int, str]]
    complete: bool
    end_offsets: dict[int, int]


class _Findings:
    def __init__(self) -> None:
        self.found: dict[str, list[Any]] = defaultdict(list)
        self.messages: dict[str, str] = {}

    def add(self, check: str, message: str, example: Any) -> None:
        self.found[check].append(example)
        self.messages.setdefault(check, message)

    def violations(self) -> list[TxnViolation]:
        return [
            TxnViolation(
                check, f"{len(ex)} x {self.messages[check]}", [str(e) for e in ex[:MAX_EXAMPLES]]
            )
            for check, ex in sorted(self.found.items())
        ]


def check_txn_history(
    rows: Iterable[Mapping[str, Any]], input_topic: str, output_topic: str
) -> list[TxnViolation]:
    txns: dict[str, Mapping[str, Any]] = {}
    ctps: list[Mapping[str, Any]] = []
    reads: list[Mapping[str, Any]] = []
    offsets: list[Mapping[str, Any]] = []
    finals: dict[tuple[str, str], _Final] = {}
    for row in rows:
        kind = row.get("type")
        if kind == "txn":
            txns[str(row["txn"])] = row
        elif kind == "ctp":
            ctps.append(row)
        elif kind == "reads":
            reads.append(row)
        elif kind == "offsets":
            offsets.append(row)
        elif kind == "final":
            finals[(str(row["topic"]), str(row["iso"]))] = _Final(
                [(int(p), int(o), str(v)) for p, o, v in row["records"]],
                bool(row["complete"]),
                {int(p): int(o) for p, o in row.get("end_offsets", {}).items()},
            )
    f = _Findings()
    committed_in = finals.get((input_topic, COMMITTED))
    all_in = finals.get((input_topic, UNCOMMITTED))
    if committed_in is None or all_in is None:
        f.add("final-read-missing", "the final reads of the input topic are missing", input_topic)
        return f.violations()
    _check_final(f, txns, committed_in, all_in)
    _check_reads(f, txns, reads, committed_in, input_topic)
    committed_out = finals.get((output_topic, COMMITTED))
    if ctps and committed_out is None:
        f.add("final-read-missing", "the final read of the output topic is missing", output_topic)
    elif committed_out is not None:
        _check_ctp(f, committed_in, committed_out, offsets)
    _check_offsets(f, offsets)
    return f.violations()


def _check_final(
    f: _Findings, txns: Mapping[str, Mapping[str, Any]], committed: _Final, everything: _Final
) -> None:
    """Aborted reads, lost, duplicated and partly visible transactions (a last stable offset
    stuck below an open transaction shows as committed writes missing)."""
    for name, final in (("read_committed", committed), ("read_uncommitted", everything)):
        if not final.complete:
            f.add("final-read-incomplete", f"a final {name} read did not reach the end", name)
    seen = Counter(v for _, _, v in committed.records)
    for v, n in seen.items():
        if n > 1:
            f.add("duplicate", "committed value(s) read more than once", v)
    all_seen = {v for _, _, v in everything.records}
    for name, row in txns.items():
        values = [str(v) for _, v in row["writes"]]
        present = [v for v in values if v in seen]
        outcome = row["outcome"]
        if outcome == "abort" and present:
            f.add("aborted-read", "aborted write(s) visible to read_committed", present[0])
        if outcome == "commit" and committed.complete and len(present) < len(values):
            missing = [v for v in values if v not in seen]
            f.add("lost-write", "committed write(s) missing from read_committed", missing[0])
        if outcome == "commit" and everything.complete:
            for v in values:
                if v not in all_seen:
                    f.add("lost-write", "committed write(s) missing from read_uncommitted", v)
        if outcome != "abort" and committed.complete and 0 < len(present) < len(values):
            f.add(
                "non-atomic",
                "transaction(s) partly visible to read_committed",
                f"{name}: {len(present)} of {len(values)}",
            )


def _check_reads(
    f: _Findings,
    txns: Mapping[str, Mapping[str, Any]],
    reads: list[Mapping[str, Any]],
    committed: _Final,
    topic: str,
) -> None:
    """Reads under read_committed during the run: nothing before its commit was asked for,
    nothing that never committed, and a transaction seen whole once the reader is past it."""
    final_at = {v: (p, o) for p, o, v in committed.records}
    final_values = set(final_at)
    by_reader: dict[str, list[tuple[int, int, str, float]]] = defaultdict(list)
    for row in reads:
        if row["topic"] != topic or row["iso"] != COMMITTED:
            continue
        t = float(row["t"])
        by_reader[str(row["reader"])] += [(int(p), int(o), str(v), t) for p, o, v in row["records"]]
    for reader, records in by_reader.items():
        seen_values = {v for _, _, v, _ in records}
        furthest: dict[int, int] = {}
        for p, o, _, _ in records:
            furthest[p] = max(furthest.get(p, -1), o)
        for _, _, v, t in records:
            name = txn_of(v)
            found = txns.get(name) if name is not None else None
            if found is None:
                continue
            row = found
            if row["outcome"] == "abort":
                f.add(
                    "aborted-read", "aborted write(s) read under read_committed", f"{reader}: {v}"
                )
            elif v not in final_values and committed.complete:
                f.add(
                    "uncommitted-read",
                    "write(s) read under read_committed that never committed",
                    f"{reader}: {v}",
                )
            elif row.get("t_end") is None or t < float(row["t_end"]):
                f.add(
                    "uncommitted-read",
                    "write(s) read under read_committed before their commit was asked for "
                    "(a read past the last stable offset)",
                    f"{reader}: {v} at {t:.3f}s, commit at {row.get('t_end')}",
                )
        for name in {txn_of(v) for v in seen_values} - {None}:
            seen_txn = txns.get(str(name))
            if seen_txn is None or seen_txn["outcome"] == "abort":
                continue
            for _, v in seen_txn["writes"]:
                at = final_at.get(str(v))
                if at is not None and str(v) not in seen_values and furthest.get(at[0], -1) > at[1]:
                    f.add(
                        "non-atomic-read",
                        "reader(s) past a transaction's record without having seen it, though "
                        "they saw the rest of the transaction",
                        f"{reader}: {name} missing {v} at {at}",
                    )


def _check_ctp(
    f: _Findings,
    committed_in: _Final,
    committed_out: _Final,
    offsets: list[Mapping[str, Any]],
) -> None:
    """Each committed input offset below the group's committed offset is processed into
    exactly one committed output, with the input's value."""
    inputs = {(p, o): v for p, o, v in committed_in.records}
    outputs: dict[tuple[int, int], int] = Counter()
    for _, _, value in committed_out.records:
        parsed = ctp_input(value)
        if parsed is None:
            f.add("ctp-foreign", "output record(s) the workload did not write", value)
            continue
        p, o, v = parsed
        outputs[(p, o)] += 1
        if inputs.get((p, o)) != v and (committed_in.complete or (p, o) in inputs):
            f.add(
                "ctp-mismatch",
                "output(s) naming an input that read_committed does not hold",
                f"{(p, o)}: {v!r} vs {inputs.get((p, o))!r}",
            )
    for key, n in outputs.items():
        if n > 1:
            f.add("ctp-duplicate", "input offset(s) processed into several committed outputs", key)
    final_offsets = [row for row in offsets if row.get("final")]
    if not final_offsets or not committed_out.complete:
        return
    group = {int(p): int(o) for p, o in final_offsets[-1]["offsets"].items()}
    for (p, o), _ in sorted(inputs.items()):
        if o < group.get(p, 0) and outputs.get((p, o), 0) == 0:
            f.add(
                "ctp-lost",
                "committed input(s) below the group's committed offset with no output",
                (p, o),
            )


def _check_offsets(f: _Findings, offsets: list[Mapping[str, Any]]) -> None:
    last: dict[int, int] = {}
    for row in offsets:
        for p_raw, o_raw in row["offsets"].items():
            p, o = int(p_raw), int(o_raw)
            if o < 0:
                continue
            if o < last.get(p, -1):
                f.add(
                    "offsets-backwards",
                    "committed offset(s) that went backwards",
                    f"partition {p}: {last[p]} -> {o} at {row.get('t')}",
                )
            last[p] = max(last.get(p, -1), o)

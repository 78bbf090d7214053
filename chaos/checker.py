"""The checks: pure functions of a History and the FinalState, each returning violations.

Each check states one guarantee of docs/guarantees.md in terms of what was recorded, and is
careful about what the history cannot know: a write with an ``unknown`` outcome may or may
not be in the log, so it is never counted as lost, but if it is there it must be there once
and in order. A check that cannot judge (the final read did not reach the end of a
partition) judges what it can and the gap itself is reported by ``final_read``.

Availability is a measurement, not a violation: see availability.py.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rillet.chaos.final_state import FinalState
from rillet.chaos.history import History, parse_value
from rillet.chaos.power_promise import partitions_with_excused_loss, power_loss_excused

MAX_EXAMPLES = 5  # per violation: enough to debug, short enough to print


@dataclass(frozen=True, slots=True)
class Violation:
    check: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, "message": self.message, "details": self.details}


def _final_index(final: FinalState) -> dict[str, list[tuple[int, int]]]:
    """value -> every (partition, offset) it was read at."""
    where: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for p, records in final.records.items():
        for offset, value in records:
            where[value].append((p, offset))
    return where


def acknowledged_not_lost(history: History, final: FinalState) -> list[Violation]:
    """Every acknowledged write is in the final read, at the offset it was acknowledged
    with (acks=all: the high watermark had passed it on every ISR member)."""
    where = _final_index(final)
    lost: list[str] = []
    moved: list[str] = []
    excused = power_loss_excused(history)  # what docs/guarantees.md allows power cuts
    for w in history.acknowledged():
        found = where.get(w.value)
        if not found and excused(w):
            continue
        if not found:
            complete = final.read_complete(w.partition)
            if complete or (
                w.offset is not None and w.offset < final.read_upto.get(w.partition, 0)
            ):
                lost.append(f"{w.value}@{w.partition}/{w.offset}")
        elif (w.partition, w.offset) not in found:
            moved.append(f"{w.value} acked at {w.partition}/{w.offset}, read at {found[0]}")
    out = []
    if lost:
        out.append(
            Violation(
                "acknowledged-lost",
                f"{len(lost)} acknowledged writes are missing from the final read",
                {"count": len(lost), "examples": lost[:MAX_EXAMPLES]},
            )
        )
    if moved:
        out.append(
            Violation(
                "acknowledged-moved",
                f"{len(moved)} acknowledged writes were read at another offset",
                {"count": len(moved), "examples": moved[:MAX_EXAMPLES]},
            )
        )
    return out


def producer_order(history: History, final: FinalState) -> list[Violation]:
    """In each partition a producer's records appear in the order it sent them (one batch
    in flight per partition, sequence numbers): sequence numbers increase with offsets."""
    bad: list[str] = []
    for p, records in sorted(final.records.items()):
        last: dict[str, tuple[int, int]] = {}
        for offset, value in sorted(records):
            parsed = parse_value(value)
            if parsed is None:
                continue
            process, seq = parsed
            prev = last.get(process)
            if prev is not None and seq <= prev[1]:
                bad.append(
                    f"partition {p}: {process}:{seq} at {offset} after seq {prev[1]} at {prev[0]}"
                )
            last[process] = (offset, seq)
    if not bad:
        return []
    return [
        Violation(
            "producer-order",
            f"{len(bad)} records out of their producer's order",
            {"count": len(bad), "examples": bad[:MAX_EXAMPLES]},
        )
    ]


def duplicates(history: History, final: FinalState) -> list[Violation]:
    """With idempotence on, no value is in the log twice (retries are deduplicated)."""
    twice = {v: ps for v, ps in _final_index(final).items() if len(ps) > 1}
    if not twice or not final.idempotent:
        return []
    examples = [f"{v} at {ps}" for v, ps in sorted(twice.items())[:MAX_EXAMPLES]]
    return [
        Violation(
            "duplicates",
            f"{len(twice)} values written more than once with idempotence on",
            {"count": len(twice), "examples": examples},
        )
    ]


def unexpected_records(history: History, final: FinalState) -> list[Violation]:
    """Nothing is read that was never written, nor a write that certainly failed."""
    outcome = {w.value: w.outcome for w in history.writes}
    phantom = [v for v in _final_index(final) if v not in outcome]
    failed = [v for v, o in outcome.items() if o == "fail" and v in _final_index(final)]
    out = []
    if phantom:
        out.append(
            Violation(
                "phantom-records",
                f"{len(phantom)} records read that no producer invoked",
                {"count": len(phantom), "examples": sorted(phantom)[:MAX_EXAMPLES]},
            )
        )
    if failed:
        out.append(
            Violation(
                "failed-write-visible",
                f"{len(failed)} writes reported as failed are in the log",
                {"count": len(failed), "examples": sorted(failed)[:MAX_EXAMPLES]},
            )
        )
    return out


def replicas_identical(history: History, final: FinalState) -> list[Violation]:
    """After healing, every replica holds the same bytes up to the high watermark."""
    out = []
    for p, copies in sorted(final.replicas.items()):
        end = final.end_offsets.get(p)
        problems = [f"node {c.node}: {c.error}" for c in copies if c.error]
        if end is not None:
            problems += [
                f"node {c.node} ends at offset {c.log_end_offset} < high watermark {end}"
                for c in copies
                if not c.error and c.log_end_offset < end
            ]
        digests = {(c.prefix_bytes, c.prefix_sha256) for c in copies if not c.error}
        if len(digests) > 1:
            problems.append(
                "copies differ below the high watermark: "
                + ", ".join(
                    f"node {c.node} {c.prefix_bytes} B {c.prefix_sha256[:12]}" for c in copies
                )
            )
        if problems:
            out.append(
                Violation(
                    "replicas-diverge",
                    f"partition {p}: replicas are not identical up to the high watermark",
                    {"partition": p, "problems": problems[:MAX_EXAMPLES]},
                )
            )
    return out


def committed_offsets(history: History, final: FinalState) -> list[Violation]:
    """A group's committed offsets never go backwards, and never pass the log's end."""
    out = []
    last: dict[int, tuple[float, int]] = {}
    where = _final_index(final)
    lost_from = partitions_with_excused_loss(history, lambda w: w.value in where)
    samples = sorted(history.offsets, key=lambda s: s.t)
    for sample in samples:
        for p, offset in sorted(sample.offsets.items()):
            prev = last.get(p)
            # A step back is excused only when the partition lost acknowledged records (within
            # the power promise) below the earlier commit: its members were past the new end.
            if prev is not None and offset < prev[1] and lost_from.get(p, prev[1]) >= prev[1]:
                out.append(
                    Violation(
                        "committed-offset-regressed",
                        f"partition {p}: committed offset went from {prev[1]} "
                        f"(t={prev[0]:.2f}s) back to {offset} (t={sample.t:.2f}s)",
                        {"partition": p, "from": prev[1], "to": offset, "t": sample.t},
                    )
                )
            last[p] = (sample.t, offset)
    for p, offset in sorted(final.committed.items()):
        end = final.end_offsets.get(p)
        if end is not None and offset > end:
            out.append(
                Violation(
                    "committed-beyond-end",
                    f"partition {p}: committed offset {offset} is past the log end {end}",
                    {"partition": p, "committed": offset, "end": end},
                )
            )
    return out[: MAX_EXAMPLES * 2]


def single_owner(history: History, final: FinalState) -> list[Violation]:
    """In every sample of the group, no partition is owned by two members at once."""
    out = []
    for sample in history.groups:
        owners: dict[int, list[str]] = defaultdict(list)
        for member, partitions in sample.owned.items():
            for p in partitions:
                owners[p].append(member)
        shared = {p: ms for p, ms in owners.items() if len(ms) > 1}
        if shared:
            out.append(
                Violation(
                    "two-owners",
                    f"generation {sample.generation} at t={sample.t:.2f}s: partitions "
                    f"{sorted(shared)} have two owners",
                    {
                        "generation": sample.generation,
                        "t": sample.t,
                        "owners": {str(p): ms for p, ms in shared.items()},
                    },
                )
            )
    return out[:MAX_EXAMPLES]


def consumer_reads(history: History, final: FinalState) -> list[Violation]:
    """Members saw only committed records (each is in the final log where they saw it), and
    every record below the group's final committed offset reached some member."""
    out = []
    at = {(p, o): v for p, records in final.records.items() for o, v in records}
    # A record every copy of which a power cut may have taken (guarantees.md) is excused
    # when it is gone: members read it before the cut, the log was written anew after.
    excused = power_loss_excused(history)
    lost_ok = {w.value for w in history.writes if excused(w)}
    wrong = [
        f"{r.member} saw {r.value} at {r.partition}/{r.offset}, "
        f"log has {at.get((r.partition, r.offset))}"
        for r in final.received
        if (r.partition, r.offset) in at or final.read_complete(r.partition)
        if at.get((r.partition, r.offset)) != r.value and r.value not in lost_ok
    ]
    if wrong:
        out.append(
            Violation(
                "consumer-saw-uncommitted",
                f"{len(wrong)} records delivered to members are not in the final log there",
                {"count": len(wrong), "examples": wrong[:MAX_EXAMPLES]},
            )
        )
    seen = {(r.partition, r.offset) for r in final.received}
    missed = [
        f"{p}/{o}"
        for p, records in sorted(final.records.items())
        for o, _ in records
        if o < final.committed.get(p, -1) and (p, o) not in seen
    ]
    if missed:
        out.append(
            Violation(
                "consumer-missed",
                f"{len(missed)} records below the committed offsets never reached a member",
                {"count": len(missed), "examples": missed[:MAX_EXAMPLES]},
            )
        )
    return out


def nodes_and_recovery(history: History, final: FinalState) -> list[Violation]:
    """No node exits on its own, the cluster recovers after healing, the final read ends."""
    out = [
        Violation(
            "node-crashed",
            f"node {c.node} exited with status {c.status} at t={c.t:.2f}s",
            {"node": c.node, "log_tail": c.log_tail[-2000:]},
        )
        for c in history.crashes
    ]
    if not final.recovered:
        out.append(
            Violation(
                "not-recovered", "the cluster did not recover in time", {"notes": final.notes}
            )
        )
    short = [
        f"partition {p}: read to {final.read_upto.get(p, 0)} of {final.end_offsets.get(p, '?')}"
        for p in range(final.partitions)
        if not final.read_complete(p)
    ]
    if short:
        out.append(Violation("final-read-incomplete", "; ".join(short), {"partitions": short}))
    return out


def topic_operations(history: History, final: FinalState) -> list[Violation]:
    """After healing, a topic exists exactly when its last acknowledged operation was a
    create. A topic with an operation of unknown outcome is not judged: that operation may
    take effect at any time after it was invoked."""
    if final.topics is None:
        return []
    existing = set(final.topics)
    ops: dict[str, list[str]] = defaultdict(list)
    for op in sorted(history.admin, key=lambda o: o.invoke_t):
        ops[op.value].append(f"{op.f}:{op.outcome}")
    wrong = []
    for name, done in sorted(ops.items()):
        if any(d.endswith(":unknown") for d in done):
            continue
        acked = [d.split(":")[0] for d in done if d.endswith(":ok")]
        if not acked:
            continue
        if acked[-1] == "create" and name not in existing:
            wrong.append(f"{name}: created ({', '.join(done)}) but missing")
        elif acked[-1] == "delete" and name in existing:
            wrong.append(f"{name}: deleted ({', '.join(done)}) but exists")
    if not wrong:
        return []
    return [
        Violation(
            "topic-operations",
            f"{len(wrong)} topics disagree with their acknowledged create/delete",
            {"count": len(wrong), "examples": wrong[:MAX_EXAMPLES]},
        )
    ]


CHECKS: dict[str, Callable[[History, FinalState], list[Violation]]] = {
    "acknowledged-not-lost": acknowledged_not_lost,
    "producer-order": producer_order,
    "duplicates": duplicates,
    "unexpected-records": unexpected_records,
    "replicas-identical": replicas_identical,
    "committed-offsets": committed_offsets,
    "single-owner": single_owner,
    "consumer-reads": consumer_reads,
    "nodes-and-recovery": nodes_and_recovery,
    "topic-operations": topic_operations,
}


def check_all(history: History, final: FinalState) -> list[Violation]:
    return [v for check in CHECKS.values() for v in check(history, final)]


def duplicate_count(final: FinalState) -> int:
    """Values read more than once (reported also when idempotence is off)."""
    return sum(len(ps) - 1 for ps in _final_index(final).values() if len(ps) > 1)

"""``rillet produce`` (stdin lines -> records) and ``rillet consume`` (records -> stdout).

The console pair is how people poke at a topic and how shell pipelines feed one, so both
stream: ``produce`` reads stdin in chunks on a worker thread (the event loop keeps sending
while a person types, and lines reach the node as they are entered), and ``consume`` writes
and flushes each poll's records as they arrive.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, TextIO

import trio

from rillet.cli.common import (
    add_bootstrap,
    client_options,
    key_value_arg,
    non_negative_int,
    positive_int,
    run_async,
    timestamp_ms_arg,
    write_all,
)
from rillet.cli.produce_line import BadLineError, Headers, LineFormat
from rillet.cli.progress import CLEAR_LINE, ProgressLine, input_size_bytes, wanted
from rillet.cli.record_output import RecordFormat
from rillet.cli.topic_watch import deleted_error, topic_exists
from rillet.client import (
    Admin,
    Consumer,
    GroupConsumer,
    Producer,
    RecordFuture,
    TopicPartition,
)
from rillet.client.errors import MessageTooLargeError, UnknownTopicOrPartitionError

READ_CHUNK_BYTES = 64 * 1024
POLL_MS = 1000  # how long one poll waits when no --timeout-ms bounds the wait
EXIT_USAGE = 2


def register(sub: Any) -> None:
    produce = sub.add_parser("produce", help="send stdin lines as records, one per line")
    produce.add_argument("topic")
    produce.add_argument(
        "--key-separator", help="split each line at the first SEP into KEY and VALUE"
    )
    produce.add_argument(
        "--header-separator",
        help="each line starts with its headers k=v,k=v, ended by SEP (after the timestamp)",
    )
    produce.add_argument(
        "--timestamp-separator",
        help="each line starts with its timestamp (epoch ms or ISO 8601), ended by SEP",
    )
    produce.add_argument("--acks", default="all", choices=["all", "-1", "0", "1"])
    produce.add_argument("--partition", type=non_negative_int, help="default: by key, or sticky")
    produce.add_argument(
        "--header",
        dest="headers",
        type=key_value_arg,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="add this header to every record (repeatable; before a line's own headers)",
    )
    produce.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress line (default: one on stderr when it is a terminal and stdin is not)",
    )
    produce.add_argument("--linger-ms", type=non_negative_int, default=5)
    produce.add_argument(
        "--max-block-ms",
        type=positive_int,
        default=10_000,
        help="give up when the topic is unknown or the buffer stays full this long",
    )
    add_bootstrap(produce)
    produce.set_defaults(run=run_produce)

    consume = sub.add_parser("consume", help="print records to stdout")
    consume.add_argument("topic")
    start = consume.add_mutually_exclusive_group()
    start.add_argument(
        "--from-beginning", action="store_true", help="start at the log start (default: the end)"
    )
    start.add_argument("--offset", type=non_negative_int, help="start offset (needs --partition)")
    start.add_argument(
        "--from-time",
        type=timestamp_ms_arg,
        metavar="T",
        help="start at the first record at or after T (ISO 8601, no zone = UTC, or epoch ms)",
    )
    consume.add_argument("--partition", type=non_negative_int, help="only this partition")
    consume.add_argument(
        "--group",
        help="consume as a member of this group: partitions shared with its other members, "
        "offsets committed (starts at the group's committed offsets)",
    )
    consume.add_argument("--max-messages", type=positive_int, help="exit after this many records")
    consume.add_argument(
        "--timeout-ms",
        type=non_negative_int,
        help="exit after this long without a new record (default: run until Ctrl-C)",
    )
    consume.add_argument("--print-key", action="store_true")
    consume.add_argument(
        "--print-headers", action="store_true", help="print headers as k=v,k=v (before the key)"
    )
    consume.add_argument("--print-offset", action="store_true", help="print PARTITION:OFFSET")
    consume.add_argument("--print-timestamp", action="store_true", help="print the timestamp (ms)")
    consume.add_argument(
        "--key-separator", default="\t", help="between printed fields (default: a tab)"
    )
    consume.add_argument(
        "--output",
        choices=["text", "json"],
        default="text",
        help="text lines (default) or one JSON object per record (the --print-* options "
        "do not apply)",
    )
    add_bootstrap(consume)
    consume.set_defaults(run=run_consume)


# -- produce ----------------------------------------------------------------------------


def split_lines(rest: bytes, chunk: bytes) -> tuple[list[bytes], bytes]:
    """Complete lines (without "\\n" or "\\r\\n") in ``rest + chunk``, and what follows them."""
    lines = (rest + chunk).split(b"\n")
    tail = lines.pop()
    return [line.removesuffix(b"\r") for line in lines], tail


@dataclass
class DeliveryTally:
    """Counts acknowledgements as they come back (callbacks run in the producer's task)."""

    sent: int = 0
    acked: int = 0
    failed: int = 0
    first_error: BaseException | None = field(default=None, repr=False)

    def on_done(self, future: RecordFuture) -> None:
        error = future.exception()
        if error is None:
            self.acked += 1
            return
        self.refused(error)

    def refused(self, error: BaseException) -> None:
        self.failed += 1
        if self.first_error is None:
            self.first_error = error


def run_produce(args: argparse.Namespace) -> int:
    headers: Headers = [(k, v.encode()) for k, v in args.headers]
    return run_async(
        lambda: produce_lines(args, sys.stdin.fileno(), headers, LineFormat.from_args(args))
    )


async def produce_lines(
    args: argparse.Namespace, fd: int, headers: Headers, line_format: LineFormat
) -> int:
    tally = DeliveryTally()
    started = time.perf_counter()
    progress = None
    if wanted(args.no_progress, os.isatty(fd), sys.stderr.isatty()):
        progress = ProgressLine(started, input_size_bytes(fd))
    read_bytes = 0
    async with Producer(
        args.bootstrap,
        acks=args.acks,
        linger_ms=args.linger_ms,
        max_block_ms=args.max_block_ms,
        **client_options(args),
    ) as producer:
        # Learn the topic before reading stdin: a missing one fails after --max-block-ms.
        await producer.partitions_for(args.topic)
        rest = b""
        eof = False
        while not eof:  # ends at EOF on stdin
            # One read(2) on a worker thread: a terminal hands over each line as it is typed.
            chunk = await trio.to_thread.run_sync(
                os.read, fd, READ_CHUNK_BYTES, abandon_on_cancel=True
            )
            eof = not chunk
            read_bytes += len(chunk)
            lines, rest = split_lines(rest, chunk)
            if eof and rest:
                lines.append(rest.removesuffix(b"\r"))
            for line in lines:
                tally.sent += 1
                try:
                    record = line_format.parse(line)
                    future = await producer.send(
                        args.topic,
                        record.value,
                        key=record.key,
                        headers=headers + record.headers if record.headers else headers or None,
                        partition=args.partition,
                        timestamp_ms=record.timestamp_ms,
                    )
                except (MessageTooLargeError, BadLineError) as exc:  # this line only
                    tally.refused(exc)
                    continue
                future.add_done_callback(tally.on_done)
            now = time.perf_counter()
            if progress is not None and progress.due(now):
                shown = progress.text(now, read_bytes, tally.sent, tally.acked, tally.failed)
                sys.stderr.write(CLEAR_LINE + shown)
                sys.stderr.flush()
        await producer.flush()
    if progress is not None:
        sys.stderr.write(CLEAR_LINE)  # the summary takes the progress line's place
    elapsed = time.perf_counter() - started
    summary = f"produced {tally.acked} of {tally.sent} records to {args.topic} in {elapsed:.2f}s"
    if tally.failed:
        error = tally.first_error
        first = f"{type(error).__name__}: {error}"
        print(f"{summary}; {tally.failed} failed, first error: {first}", file=sys.stderr)
        return 1
    print(summary, file=sys.stderr)
    return 0


# -- consume ----------------------------------------------------------------------------


def consume_usage_problem(args: argparse.Namespace) -> str | None:
    """Option combinations argparse cannot express, or None."""
    if args.offset is not None and args.partition is None:
        return "--offset needs --partition"
    if args.group is not None:
        for given, option in (
            (args.partition is not None, "--partition"),
            (args.offset is not None, "--offset"),
            (args.from_time is not None, "--from-time"),
        ):
            if given:
                return f"--group cannot be combined with {option} (the group assigns partitions)"
    return None


def run_consume(args: argparse.Namespace) -> int:
    problem = consume_usage_problem(args)
    if problem is not None:
        print(f"rillet consume: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if args.group is not None:
        return run_async(lambda: consume_as_group(args, sys.stdout))
    return run_async(lambda: consume_records(args, sys.stdout))


async def consume_as_group(args: argparse.Namespace, out: TextIO) -> int:
    """Consume as a group member: the group's committed offsets are the start (the log start
    with --from-beginning, else the end, where it has none) and what was printed is committed
    on the way out (and every few seconds meanwhile)."""
    reset = "earliest" if args.from_beginning else "latest"
    async with Admin(args.bootstrap, **client_options(args)) as admin:
        await admin.describe_topics([args.topic])  # an unknown topic: one error line, at once
        async with GroupConsumer(
            args.bootstrap,
            args.group,
            topics=[args.topic],
            auto_offset_reset=reset,
            **client_options(args),
        ) as consumer:
            seen = await print_records(args, admin, consumer, out)
            await consumer.commit()
    print(f"consumed {seen} records (group {args.group})", file=sys.stderr)
    return 0


async def consume_records(args: argparse.Namespace, out: TextIO) -> int:
    async with Admin(args.bootstrap, **client_options(args)) as admin:
        (description,) = await admin.describe_topics([args.topic])
        partitions = [p.partition for p in description.partitions]
        if args.partition is not None:
            if args.partition not in partitions:
                raise UnknownTopicOrPartitionError(
                    f"topic {args.topic!r} has no partition {args.partition}"
                )
            partitions = [args.partition]
        tps = [TopicPartition(args.topic, p) for p in partitions]
        # An explicit --offset never silently jumps elsewhere (reset "none").
        reset = "none" if args.offset is not None else "earliest"
        async with Consumer(
            args.bootstrap, auto_offset_reset=reset, **client_options(args)
        ) as consumer:
            consumer.assign(tps)
            if args.offset is not None:
                problem = await offset_problem(consumer, tps[0], args.offset)
                if problem is not None:
                    print(f"error: {problem}", file=sys.stderr)
                    return 1
                consumer.seek(tps[0], args.offset)
            elif args.from_time is not None:
                await seek_to_time(consumer, tps, args.from_time)
            elif args.from_beginning:
                await consumer.seek_to_beginning(*tps)
            else:
                await consumer.seek_to_end(*tps)
            seen = await print_records(args, admin, consumer, out)
    print(f"consumed {seen} records", file=sys.stderr)
    return 0


async def seek_to_time(consumer: Consumer, tps: list[TopicPartition], when_ms: int) -> None:
    """Each partition at its first record stamped at or after ``when_ms`` (ListOffsets by
    timestamp); a partition with no such record waits at its end for new ones."""
    found = await consumer.offsets_for_times({tp: when_ms for tp in tps})
    late = []
    for tp in tps:
        hit = found.get(tp)
        if hit is None:
            late.append(tp)
        else:
            consumer.seek(tp, hit.offset)
    if late:
        await consumer.seek_to_end(*late)


async def offset_problem(consumer: Consumer, tp: TopicPartition, offset: int) -> str | None:
    """Why consuming ``tp`` from ``offset`` cannot start there, or None when it can.

    At the end offset the command waits for new records, as Kafka's console consumer does;
    beyond it, or below the log start (deleted by retention), it says so instead of reading
    from somewhere else.
    """
    end = (await consumer.end_offsets([tp]))[tp]
    if offset > end:
        return f"offset {offset} is beyond the end of {tp.topic}-{tp.partition} (end offset {end})"
    start = (await consumer.beginning_offsets([tp]))[tp]
    if offset < start:
        return (
            f"offset {offset} is below the start of {tp.topic}-{tp.partition} "
            f"(log start offset {start}: older records were deleted)"
        )
    return None


async def print_records(
    args: argparse.Namespace, admin: Admin, consumer: Consumer, out: TextIO
) -> int:
    """Print records until --max-messages, --timeout-ms without a record, or Ctrl-C; raises
    UnknownTopicOrPartitionError when the topic is deleted meanwhile. Returns the count."""
    fmt = RecordFormat.from_args(args)
    seen = 0
    idle_s = None if args.timeout_ms is None else args.timeout_ms / 1000
    idle_deadline = math.inf if idle_s is None else trio.current_time() + idle_s
    next_check = trio.current_time() + POLL_MS / 1000
    while args.max_messages is None or seen < args.max_messages:
        left_s = idle_deadline - trio.current_time()
        if left_s <= 0:
            break
        wait_ms = POLL_MS if idle_s is None else min(POLL_MS, math.ceil(left_s * 1000))
        wanted = None if args.max_messages is None else args.max_messages - seen
        records = await consumer.poll(timeout_ms=wait_ms, max_records=wanted)
        if not records:
            # Consumers retry an unknown topic quietly (it may be new): ask the metadata,
            # at most once per poll interval, so a deleted topic ends the command.
            if trio.current_time() >= next_check or trio.current_time() >= idle_deadline:
                next_check = trio.current_time() + POLL_MS / 1000
                if await topic_exists(admin, args.topic) is False:
                    raise deleted_error(args.topic)
            continue
        write_all(out, "".join(fmt.line(r) + "\n" for r in records))
        seen += len(records)
        if idle_s is not None:
            idle_deadline = trio.current_time() + idle_s
    return seen

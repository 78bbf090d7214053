"""One partition's log on disk: segments, sparse indexes, recovery, retention, flushing.

Start at :class:`rillet.partition_store.log.PartitionLog`; docs/storage-format.md describes
the files for operators. Pure storage: no network, no threads, no clock (time comes in as
``now_ms`` arguments); fsync happens only in a :class:`~.flush_plan.FlushPlan` that the
caller runs wherever it likes.
"""

"""rillet for Apache Spark: the ``format("rillet")`` data source and the backfill job.

Needs ``pip install 'rillet[spark]'`` (PySpark 4, pyarrow) and Java 17; see docs/spark.md::

    from rillet.spark_io import register
    register(spark)  # once per SparkSession
    df = spark.read.format("rillet").option("bootstrap", "...").option("subscribe", "t").load()

Importing this package needs neither PySpark nor pyarrow (the CLI and option checks work
without them); the names below load the modules that do on first use.
"""

from __future__ import annotations

from typing import Any

_LAZY = {
    "RilletDataSource": "rillet.spark_io.datasource",
    "register": "rillet.spark_io.datasource",
    "backfill": "rillet.spark_io.backfill_job",
    "BackfillResult": "rillet.spark_io.backfill_job",
    "local_session": "rillet.spark_io.session",
}

__all__ = ["BackfillResult", "RilletDataSource", "backfill", "local_session", "register"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'rillet.spark_io' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)

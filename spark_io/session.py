"""A quiet SparkSession for scripts, tests, benchmarks and the backfill command.

Spark's defaults suit a cluster, not a laptop or a CI runner: a web UI, progress bars on the
console, 200 shuffle partitions and INFO logging. ``local_session`` starts (or returns the
running) session with those turned down, the driver's Python as the workers' Python, the
rillet format registered, and everything on 127.0.0.1. Java 17 must be on PATH.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

QUIET_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.driver.memory": "1g",
    "spark.sql.session.timeZone": "UTC",
    # A data source error then reads "...: rillet.spark_io.errors.OptionError: topic 't'
    # does not exist" on its first line, instead of a Python traceback inside the message.
    "spark.sql.execution.pyspark.udf.hideTraceback.enabled": "true",
}

_LOG4J2 = """\
status = error
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss.SSS} %p %c{1}: %m%n
rootLogger.level = {level}
rootLogger.appenderRef.console.ref = console
"""


def _log4j2_file(level: str) -> Path:
    path = Path(tempfile.gettempdir()) / f"rillet-spark-log4j2-{level}.properties"
    text = _LOG4J2.replace("{level}", level)
    if not path.exists() or path.read_text() != text:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return path


def local_session(
    master: str = "local[2]",
    app_name: str = "rillet",
    conf: Mapping[str, str] | None = None,
    log_level: str = "error",
) -> Any:
    """Start (or get) a SparkSession with quiet local settings; registers format("rillet").

    Environment set here unless already set: ``PYSPARK_PYTHON`` and
    ``PYSPARK_DRIVER_PYTHON`` (this interpreter, so workers import the same rillet) and
    ``SPARK_LOCAL_IP=127.0.0.1``.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from rillet.spark_io.datasource import register

    log4j = _log4j2_file(log_level.lower())
    java_opts = f"-XX:TieredStopAtLevel=1 -Dlog4j2.configurationFile=file:{log4j}"
    builder = SparkSession.builder.master(master).appName(app_name)
    settings = {**QUIET_CONF, "spark.driver.extraJavaOptions": java_opts, **(conf or {})}
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(log_level.upper())
    register(spark)
    return spark

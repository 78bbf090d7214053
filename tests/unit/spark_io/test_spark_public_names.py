"""The names docs/spark.md tells users to import are the functions, whatever ran first.

``rillet.spark_io`` loads its public names lazily. A submodule named like one of them
(``backfill``) replaced the function on the package as soon as anything imported the
submodule, so ``from rillet.spark_io import backfill`` could hand out a module.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import rillet.spark_io


def test_public_names_are_what_the_docs_promise_after_every_submodule_is_imported() -> None:
    for name in ("backfill_job", "backfill_cli", "backfill_manifest", "backfill_output"):
        importlib.import_module(f"rillet.spark_io.{name}")
    from rillet.spark_io import BackfillResult, backfill

    assert inspect.isfunction(backfill) and backfill.__name__ == "backfill"
    assert inspect.isclass(BackfillResult)
    assert set(rillet.spark_io.__all__) == {
        "BackfillResult",
        "RilletDataSource",
        "backfill",
        "local_session",
        "register",
    }


def test_no_submodule_is_named_like_a_lazily_loaded_name() -> None:
    submodules = {m.name for m in pkgutil.iter_modules(rillet.spark_io.__path__)}
    assert not submodules & set(rillet.spark_io.__all__)

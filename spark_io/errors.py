"""Errors of the Spark data source.

Option mistakes are ``OptionError`` (a ``ValueError``): raised on the driver while Spark plans
the query, before any task runs, with a message that names the option and says what would be
accepted. Failures while reading derive from the client's ``RilletError`` so that code which
already catches client errors catches these too.
"""

from __future__ import annotations

from rillet.client.errors import RilletError


class OptionError(ValueError):
    """An option of ``format("rillet")`` is missing, unknown or malformed."""


class DataLossError(RilletError):
    """Records the query planned to read are gone (retention, or an unclean leader change).

    Raised only with ``failOnDataLoss=true`` (the default); with ``false`` the missing records
    are skipped and a warning is logged.
    """


class FetchFailedError(RilletError):
    """A partition could not be read within the retry budget (no leader, node unreachable)."""


class BackfillError(RilletError):
    """The backfill job found its output or its offsets in a state it will not guess about."""

"""Command-line options for a client's TLS files and SASL login: ``--ssl-cafile``,
``--ssl-certfile``, ``--ssl-keyfile``, ``--sasl-mechanism``, ``--sasl-username`` and
``--sasl-password``, each defaulting to its ``RILLET_SSL_*`` / ``RILLET_SASL_*`` environment
variable (the password is best given that way: a command line is visible to the machine's
users). Shared by the ``rillet`` commands and ``rillet spark backfill``.
"""

from __future__ import annotations

import argparse
import os

from rillet.client.security import SETTINGS, ClientSecurity, from_settings


def add_security_arguments(parser: argparse.ArgumentParser) -> None:
    for name, (env, what) in SETTINGS.items():
        parser.add_argument(
            f"--{name.replace('_', '-')}",
            dest=name,
            default=os.environ.get(env) or None,
            metavar="PEM" if name.startswith("ssl_") else name.rpartition("_")[2].upper(),
            help=f"{what} (env {env})",
        )


def security_of(args: argparse.Namespace) -> ClientSecurity:
    """The ClientSecurity the parsed options give (RilletError for an unusable login)."""
    return from_settings({name: getattr(args, name, None) for name in SETTINGS})

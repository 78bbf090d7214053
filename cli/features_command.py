"""``rillet cluster features``: show the cluster's feature level, or raise it.

The level says which formats every node may write (docs/upgrades.md). It is raised once,
after every node runs the new release: ``--upgrade`` raises it to the highest level this
release supports (``--level N`` for another), ``--dry-run`` only checks that it could be.
The controller refuses while a registered node does not support the level; the command
then names those nodes and exits 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rillet.cli.common import add_bootstrap, client_options, positive_int, run_async
from rillet.client import Admin
from rillet.client.errors import BrokerError, RilletError
from rillet.metadata_quorum.features import BASE_LEVEL, FEATURE_NAME, LATEST_LEVEL, LEVELS
from rillet.wire.error_codes import ErrorCode
from rillet.wire.feature_messages import UpdateFeaturesResponse

OLD_CONTROLLER = "a release without feature levels (0.1.0)"


def register(actions: Any) -> None:
    p = actions.add_parser(
        "features", help="show the cluster's feature level, or raise it after an upgrade"
    )
    p.add_argument(
        "--upgrade",
        action="store_true",
        help=f"raise the level (to {LATEST_LEVEL}, this release's, unless --level says)",
    )
    p.add_argument("--level", type=positive_int, help="the level --upgrade raises to")
    p.add_argument("--dry-run", action="store_true", help="with --upgrade: only check")
    add_bootstrap(p)
    p.set_defaults(run=run_features)


def run_features(args: argparse.Namespace) -> int:
    if (args.level is not None or args.dry_run) and not args.upgrade:
        print("error: --level and --dry-run go with --upgrade", file=sys.stderr)
        return 2
    return run_async(lambda: _features(args))


async def _features(args: argparse.Namespace) -> int:
    async with Admin(args.bootstrap, **client_options(args)) as admin:
        try:
            if not args.upgrade:
                print_features(await admin.features())
                return 0
            level = args.level or LATEST_LEVEL
            answer = await admin.upgrade_features(level, validate_only=args.dry_run)
        except BrokerError as exc:
            if exc.code != ErrorCode.INVALID_REQUEST or "unknown api" not in str(exc):
                print(f"error: {exc}", file=sys.stderr)
                return 1
            # The controller runs release 0.1.0, which has no feature levels: the cluster
            # is at the base level, and cannot be raised while that node is in it.
            if args.upgrade:
                print(f"error: {OLD_CONTROLLER}: upgrade and restart it first", file=sys.stderr)
                return 1
            print(f"{FEATURE_NAME}: level {BASE_LEVEL} ({LEVELS[BASE_LEVEL]})")
            print(f"the controller runs {OLD_CONTROLLER}")
            return 0
        except RilletError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        if args.dry_run:
            print(f"{answer.name} can be raised to {level} (dry run: nothing changed)")
        else:
            print(f"{answer.name} is now at {answer.level}")
        return 0


def print_features(answer: UpdateFeaturesResponse) -> None:
    """The level in force first (``NAME: level L``), then what each node supports."""
    print(f"{answer.name}: level {answer.level} ({LEVELS.get(answer.level, 'unknown')})")
    print(f"this node supports levels {answer.min_supported}-{answer.max_supported}")
    for node in answer.nodes:
        behind = "" if node.max_level >= answer.max_supported else " (upgrade it)"
        print(f"node {node.node_id}: supports up to {node.max_level}{behind}")

"""``rillet users create|delete|list``: users' SCRAM credentials for SASL authentication.

``create`` sets (or changes) a user's password for SCRAM-SHA-256 and SCRAM-SHA-512 (and so
for PLAIN, which is checked against them). The password is read from stdin with
``--password-stdin``, asked for at a terminal otherwise, or given with ``--password``
(visible to other users of the machine: for tests and throwaway clusters). It is salted on
this machine; the cluster never sees it.

``create NAME --cert`` is for a local ``rillet cluster up --secure`` cluster (``--data-dir``):
it also issues the user a client certificate from that cluster's CA and writes the user's
client files (librdkafka, Java, rillet's CLI) into ``tls/users/NAME``, all 0600 in 0700
directories; the password is random unless one is given. It acts as the cluster's admin
(the files in ``tls/admin``). The user starts with no ACLs: it can do nothing until
``rillet acls add`` grants it something.
"""

from __future__ import annotations

import argparse
import getpass
import secrets
import sys
from pathlib import Path
from typing import Any

from rillet.cli.client_files import ClientFiles, SaslLoginFiles
from rillet.cli.common import (
    add_bootstrap,
    add_output,
    client_options,
    print_json,
    run_async,
)
from rillet.cli.secure_cluster import plan_ssl_context, user_dir, write_user_files
from rillet.client import Admin
from rillet.launcher.local_cluster import CLUSTER_FILE, ClusterPlan, load_plan

MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
DEFAULT_CLUSTER_DIR = Path("rillet-cluster")  # rillet cluster up's


def register(sub: Any) -> None:
    users = sub.add_parser("users", help="create, delete and list SASL/SCRAM users")
    usub = users.add_subparsers(dest="users_command", required=True, metavar="ACTION")
    create = usub.add_parser("create", help="create a user, or change its password")
    create.add_argument("name")
    given = create.add_mutually_exclusive_group()
    given.add_argument("--password", help="the password (visible in the process list)")
    given.add_argument(
        "--password-stdin", action="store_true", help="read the password from stdin's first line"
    )
    create.add_argument(
        "--mechanism",
        dest="mechanisms",
        action="append",
        choices=MECHANISMS,
        help="only this mechanism (repeatable; default both)",
    )
    create.add_argument(
        "--cert",
        action="store_true",
        help="also a client certificate and client files from --data-dir's local secure cluster",
    )
    create.add_argument(
        "--data-dir",
        type=Path,
        default=DEFAULT_CLUSTER_DIR,
        help=f"with --cert: the cluster's directory (default {DEFAULT_CLUSTER_DIR})",
    )
    create.set_defaults(run=run_create)
    delete = usub.add_parser("delete", help="remove a user's credentials")
    delete.add_argument("name")
    delete.set_defaults(run=run_delete)
    lst = usub.add_parser("list", help="users and their SCRAM mechanisms")
    lst.set_defaults(run=run_list)
    for p in (create, delete, lst):
        add_bootstrap(p)
    add_output(lst)


def _password(args: argparse.Namespace) -> str | None:
    if args.password is not None:
        return str(args.password)
    if args.password_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    if args.cert:
        return secrets.token_urlsafe(24)  # kept in the user's client files
    if sys.stdin.isatty():
        first = getpass.getpass(f"password for {args.name}: ")
        if getpass.getpass("again: ") != first:
            print("error: the passwords differ", file=sys.stderr)
            return None
        return first
    print("error: give --password, --password-stdin or run at a terminal", file=sys.stderr)
    return None


def run_create(args: argparse.Namespace) -> int:
    plan = None
    if args.cert:
        plan = _secure_plan(args.data_dir.resolve())
        if plan is None:
            return 1
    password = _password(args)
    if password is None:
        return 2
    if not password:
        print("error: the password is empty", file=sys.stderr)
        return 2
    mechanisms = tuple(args.mechanisms or MECHANISMS)

    async def main() -> int:
        if plan is None:
            async with Admin(args.bootstrap, **client_options(args)) as admin:
                await admin.set_user_password(args.name, password, mechanisms)
            print(f"user {args.name}: {', '.join(mechanisms)}")
            return 0
        user_dir(plan, args.name)  # a name that cannot be a certificate's: before any change
        async with Admin(plan.bootstrap, ssl_context=plan_ssl_context(plan)) as admin:
            await admin.set_user_password(args.name, password, mechanisms)
        mechanism = "SCRAM-SHA-512" if "SCRAM-SHA-512" in mechanisms else mechanisms[0]
        files = write_user_files(plan, args.name, SaslLoginFiles(args.name, password, mechanism))
        print(f"user {args.name}: {', '.join(mechanisms)}")
        _print_files(args.name, files)
        return 0

    return run_async(main)


def _secure_plan(base: Path) -> ClusterPlan | None:
    """The local secure cluster in ``base``, or None (and one line on stderr)."""
    if not (base / CLUSTER_FILE).exists():
        print(f"error: --cert: no cluster in {base} (give --data-dir)", file=sys.stderr)
        return None
    plan = load_plan(base)
    if plan.tls is None:
        print(f"error: --cert: the cluster in {base} was made without --secure", file=sys.stderr)
        return None
    return plan


def _print_files(name: str, files: ClientFiles) -> None:
    print(f"certificate and client files of {name} in {files.env.parent} (hand it that directory)")
    print(f"  librdkafka (kcat -F, confluent-kafka): {files.properties}")
    print(f"  Java clients (--command-config):       {files.java}")
    print(f"  rillet CLI:                            source {files.env}")
    print(
        f"it may do what ACLs grant User:{name}: nothing until "
        f"`rillet acls add --principal User:{name} ...`"
    )


def run_delete(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with Admin(args.bootstrap, **client_options(args)) as admin:
            await admin.delete_user(args.name)
        print(f"deleted user {args.name}")
        return 0

    return run_async(main)


def run_list(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with Admin(args.bootstrap, **client_options(args)) as admin:
            users = await admin.describe_users()
        if args.output == "json":
            print_json(
                [
                    {"name": n, "mechanisms": [{"mechanism": m, "iterations": i} for m, i in c]}
                    for n, c in users.items()
                ]
            )
            return 0
        for name, credentials in users.items():
            print(f"{name}  {', '.join(m for m, _ in credentials)}")
        return 0

    return run_async(main)

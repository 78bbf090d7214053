"""``rillet users create|delete|list``: users' SCRAM credentials for SASL authentication.

``create`` sets (or changes) a user's password for SCRAM-SHA-256 and SCRAM-SHA-512 (and so
for PLAIN, which is checked against them). The password is read from stdin with
``--password-stdin``, asked for at a terminal otherwise, or given with ``--password``
(visible to other users of the machine: for tests and throwaway clusters). It is salted on
this machine; the cluster never sees it.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from rillet.cli.common import (
    add_bootstrap,
    add_output,
    client_options,
    print_json,
    run_async,
)
from rillet.client import Admin

MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")


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
    if sys.stdin.isatty():
        first = getpass.getpass(f"password for {args.name}: ")
        if getpass.getpass("again: ") != first:
            print("error: the passwords differ", file=sys.stderr)
            return None
        return first
    print("error: give --password, --password-stdin or run at a terminal", file=sys.stderr)
    return None


def run_create(args: argparse.Namespace) -> int:
    password = _password(args)
    if password is None:
        return 2
    if not password:
        print("error: the password is empty", file=sys.stderr)
        return 2
    mechanisms = tuple(args.mechanisms or MECHANISMS)

    async def main() -> int:
        async with Admin(args.bootstrap, **client_options(args)) as admin:
            await admin.set_user_password(args.name, password, mechanisms)
        print(f"user {args.name}: {', '.join(mechanisms)}")
        return 0

    return run_async(main)


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

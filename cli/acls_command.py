"""``rillet acls add|remove|list``: who may do what, for a cluster with an authorizer.

One resource per call: ``--topic NAME``, ``--group NAME`` or ``--cluster`` (``--prefixed``
makes a topic or group name a prefix; ``*`` is every name). ``add`` grants (or, with
``--deny``, refuses) each ``--operation`` to ``--principal`` from ``--host`` (default any).
``remove`` and ``list`` take the same options as a filter: what is not given matches
everything (``remove`` with no option at all is refused, so that every ACL is never removed
by a slip).
"""

from __future__ import annotations

import argparse
import sys

from rillet.cli.common import (
    add_bootstrap,
    add_output,
    client_options,
    print_json,
    run_async,
)
from rillet.client import Admin
from rillet.wire.acls import (
    CLUSTER_NAME,
    AclBinding,
    AclFilter,
    Operation,
    PatternType,
    Permission,
    ResourceType,
)

OPERATIONS = [o.name.lower() for o in Operation if o != Operation.ANY]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    acls = sub.add_parser("acls", help="add, remove and list ACLs (with [authorizer] on)")
    asub = acls.add_subparsers(dest="acls_command", required=True, metavar="ACTION")
    add = asub.add_parser("add", help="grant (or --deny) operations on a resource")
    remove = asub.add_parser("remove", help="remove the ACLs the options select")
    lst = asub.add_parser("list", help="the ACLs the options select (all without options)")
    for p in (add, remove, lst):
        resource = p.add_mutually_exclusive_group(required=p is add)
        resource.add_argument("--topic", metavar="NAME")
        resource.add_argument("--group", metavar="NAME")
        resource.add_argument("--cluster", action="store_true", help="the cluster itself")
        p.add_argument("--prefixed", action="store_true", help="the name is a prefix")
        p.add_argument("--principal", required=p is add, help="User:<name>, or User:* for all")
        p.add_argument("--host", default=None, help="client address (default: any)")
        p.add_argument(
            "--operation",
            dest="operations",
            action="append",
            choices=OPERATIONS,
            required=p is add,
            metavar="OP",
            help=f"{', '.join(OPERATIONS)} (repeatable)",
        )
        p.add_argument("--deny", action="store_true", help="a DENY (wins over any ALLOW)")
        add_bootstrap(p)
    add_output(lst)
    add.set_defaults(run=run_add)
    remove.set_defaults(run=run_remove)
    lst.set_defaults(run=run_list)


def _resource(args: argparse.Namespace) -> tuple[ResourceType, str | None]:
    if args.topic is not None:
        return ResourceType.TOPIC, args.topic
    if args.group is not None:
        return ResourceType.GROUP, args.group
    if args.cluster:
        return ResourceType.CLUSTER, CLUSTER_NAME
    return ResourceType.ANY, None


def _pattern(args: argparse.Namespace, default: PatternType) -> PatternType:
    return PatternType.PREFIXED if args.prefixed else default


def _filters(args: argparse.Namespace) -> list[AclFilter]:
    rtype, name = _resource(args)
    pattern = _pattern(args, PatternType.LITERAL if name is not None else PatternType.ANY)
    permission = Permission.DENY if args.deny else Permission.ANY
    operations = [Operation[o.upper()] for o in args.operations or ()] or [Operation.ANY]
    return [
        AclFilter(rtype, name, pattern, args.principal, args.host, op, permission)
        for op in operations
    ]


def describe(b: AclBinding) -> str:
    pattern = " (prefix)" if b.pattern_type == PatternType.PREFIXED else ""
    return (
        f"{b.permission.name} {b.principal} from {b.host} {b.operation.name} "
        f"{b.resource_type.name.lower()} {b.resource_name}{pattern}"
    )


def run_add(args: argparse.Namespace) -> int:
    rtype, name = _resource(args)
    assert name is not None  # add requires a resource
    bindings = [
        AclBinding(
            rtype,
            name,
            _pattern(args, PatternType.LITERAL),
            args.principal,
            args.host or "*",
            Operation[o.upper()],
            Permission.DENY if args.deny else Permission.ALLOW,
        )
        for o in dict.fromkeys(args.operations)
    ]
    for b in bindings:
        why = b.invalid_reason()
        if why is not None:
            print(f"error: {why}", file=sys.stderr)
            return 2

    async def main() -> int:
        async with Admin(args.bootstrap, **client_options(args)) as admin:
            await admin.create_acls(bindings)
        for b in bindings:
            print(f"added {describe(b)}")
        return 0

    return run_async(main)


def run_remove(args: argparse.Namespace) -> int:
    given = (args.topic, args.group, args.principal, args.host, args.operations)
    if all(v is None for v in given) and not (args.cluster or args.deny):
        print(
            "error: name what to remove (--topic, --group, --cluster, --principal, ...)",
            file=sys.stderr,
        )
        return 2
    filters = _filters(args)

    async def main() -> int:
        async with Admin(args.bootstrap, **client_options(args)) as admin:
            removed = await admin.delete_acls(filters)
        for b in removed:
            print(f"removed {describe(b)}")
        if not removed:
            print("no ACL matched")
        return 0

    return run_async(main)


def run_list(args: argparse.Namespace) -> int:
    filters = _filters(args)

    async def main() -> int:
        async with Admin(args.bootstrap, **client_options(args)) as admin:
            found: dict[AclBinding, None] = {}
            for f in filters:
                found.update(dict.fromkeys(await admin.describe_acls(f)))
        bindings = sorted(
            found,
            key=lambda b: (b.resource_type, b.resource_name, b.principal, b.operation),
        )
        if args.output == "json":
            print_json(
                [
                    {
                        "resource_type": b.resource_type.name,
                        "resource_name": b.resource_name,
                        "pattern_type": b.pattern_type.name,
                        "principal": b.principal,
                        "host": b.host,
                        "operation": b.operation.name,
                        "permission": b.permission.name,
                    }
                    for b in bindings
                ]
            )
            return 0
        for b in bindings:
            print(describe(b))
        return 0

    return run_async(main)

"""Shared plumbing for bench scripts: a node to run against and the JSON line to print."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
from collections.abc import Iterator
from typing import Any

from rillet.broker.cli.local_node import local_node


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--bootstrap", help="an existing node; default: start a local one")
    return p


@contextlib.contextmanager
def target(bootstrap: str | None) -> Iterator[str]:
    if bootstrap:
        yield bootstrap
    else:
        with local_node() as started:
            yield started


def emit(result: dict[str, Any]) -> None:
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        rev = ""
    result = {
        **result,
        "git_rev": rev or None,
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
    }
    print(json.dumps(result))

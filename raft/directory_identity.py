"""The identity of a Raft data directory: a random UUID drawn when it is first used.

Votes and voter configurations name a voter by node id *and* directory id (as Kafka's
KIP-853 does), so a node whose directory was wiped -- and with it the record of the votes it
cast -- comes back as a new identity that cannot vote under the old one. The id is stored in
``directory-id`` as 32 hex digits and a newline, written atomically and durably before the
node takes part in anything; a file that holds anything else stops the node.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from rillet.raft.errors import RaftError
from rillet.wire.atomic_file import fsync_dir, write_atomically

DIRECTORY_ID_FILE = "directory-id"
_DIRECTORY_ID = re.compile(r"[0-9a-f]{32}\n")


class BadDirectoryId(RaftError):
    """``directory-id`` exists but does not hold a directory id."""


def load_directory_id(directory: Path) -> str:
    """Read the directory's id, or draw and store one if the directory has none yet."""
    path = directory / DIRECTORY_ID_FILE
    try:
        text = path.read_text("ascii")
    except FileNotFoundError:
        directory_id = uuid.uuid4().hex
        write_atomically(path, f"{directory_id}\n".encode("ascii"))
        fsync_dir(directory)
        return directory_id
    except (UnicodeDecodeError, OSError) as exc:
        raise BadDirectoryId(f"{path}: unreadable ({exc})") from None
    if not _DIRECTORY_ID.fullmatch(text):
        raise BadDirectoryId(f"{path}: not a directory id (32 hex digits)")
    return text[:32]

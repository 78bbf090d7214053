"""Where a node's cluster secret comes from when none is configured.

The secret is the root of node identity: whoever holds it may run the node handshake and
call the internal apis, and pysyncobj decrypts (then unpickles) only what it sealed. A key
derived from no secret would be one anybody can compute (the cluster id it is bound to is
served to any client), so a node never runs without one:

- configured (``quorum.secret_file``, ``RILLET_CLUSTER_SECRET`` or ``quorum.secret``): used;
- otherwise, on the only voter of a cluster of one: the node makes a random secret the first
  time it starts and keeps it in ``<data_dir>/cluster.secret`` (mode 0600, created
  atomically and never overwritten), so it is the same after a restart; a broker-only node
  joining that voter names that file as its ``quorum.secret_file``;
- otherwise (several voters, or a broker-only node) there is nobody to share a generated
  secret with: start-up is refused with one line saying what to set.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from rillet.broker.config.quorum_config import MIN_SECRET_CHARS, QuorumConfig
from rillet.broker.errors import ConfigError
from rillet.wire.atomic_file import fsync_dir, write_all

GENERATED_SECRET_FILE = "cluster.secret"
GENERATED_SECRET_BYTES = 32  # 256 random bits, as text: token_urlsafe gives 43 characters


def generated_secret_allowed(quorum: QuorumConfig, node_id: int) -> str | None:
    """None when ``node_id`` may make its own secret (it is the only voter, so no other node
    needs it to start); otherwise the one-line reason it needs a configured one."""
    voters = [v.id for v in quorum.voters]
    if not voters or voters == [node_id]:
        return None
    role = "a multi-node quorum" if len(voters) > 1 else f"broker-only node {node_id}"
    return (
        f"{role} needs a cluster secret shared by every node: set quorum.secret_file or the "
        "RILLET_CLUSTER_SECRET environment variable"
    )


def node_secret(quorum: QuorumConfig, node_id: int, data_dir: Path) -> str:
    """The secret this node runs with (see the module docstring). Raises ConfigError."""
    configured = quorum.load_secret()
    if configured:
        return configured
    refusal = generated_secret_allowed(quorum, node_id)
    if refusal is not None:
        raise ConfigError(refusal)
    path = data_dir / GENERATED_SECRET_FILE
    try:
        return read_or_create_secret(path)
    except OSError as exc:
        raise ConfigError(f"cannot keep the generated cluster secret in {path}: {exc}") from exc


def read_or_create_secret(path: Path) -> str:
    """The secret kept at ``path``, made first if the file does not exist. Written to a
    private temporary file and linked into place (a link never replaces an existing file),
    so a reader finds the whole secret or no file, and a node that lost a race to create
    it reads the winner's."""
    if not path.exists():
        secret = secrets.token_urlsafe(GENERATED_SECRET_BYTES)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.unlink(missing_ok=True)  # left by a crash of an earlier process with our pid
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            write_all(fd, f"{secret}\n".encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # made by another process meanwhile: read theirs
        finally:
            tmp.unlink()
        fsync_dir(path.parent)
    return _read_private(path)


def _read_private(path: Path) -> str:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise ConfigError(
            f"{path} holds the cluster secret but other users may access it "
            f"(mode {mode:04o}): chmod 600 it"
        )
    text = path.read_text(encoding="utf-8").strip()
    if len(text) < MIN_SECRET_CHARS:
        raise ConfigError(
            f"{path} holds no usable cluster secret (under {MIN_SECRET_CHARS} characters)"
        )
    return text

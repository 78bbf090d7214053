"""Kernel-level networking for chaos runs: every node on its own address in its own network
namespace, partitions by taking links down, degraded links by ``tc netem``.

Layout (all of it inside namespaces this run creates, named ``<run id>-...``; the machine's
own network namespace gets no interface, address or route, so nothing can leave the
machine):

- ``<id>-sw``: a switch namespace holding one bridge, ``br0``.
- ``<id>-n<i>`` for each node: ``eth0`` with address ``10.231.0.<i>/24``, a veth pair whose
  other end, ``p<i>``, is a port of the bridge.
- ``<id>-cl``: the clients' namespace (``10.231.0.200``), joined the same way. The harness
  thread moves itself into it for the run (``entered``), so producers, probes and group
  members (threads and processes it starts) reach the nodes at their addresses like clients
  on another machine would. No namespace has a default route.

A partition takes a node's bridge port down (``ip link set p<i> down``): its cable is
pulled. Packets in either direction are dropped silently and nobody is told, like a real
link failure; the node's clients lose it too. A degraded link gets a ``netem`` qdisc on both
ends (loss and delay both ways); kernels built without ``sch_netem`` cannot do that, which
``netem_missing`` says (the nemesis then skips such steps with that reason).

Everything is removed on exit, also after a failure: deleting a namespace deletes its
interfaces and so both ends of its veth pairs.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

from rillet.chaos.errors import ChaosError

SUBNET_PREFIX = "10.231.0."
PREFIX_LEN = 24
CLIENT_HOST = 200
IP_TIMEOUT_S = 10.0
NETNS_DIR = Path("/run/netns")
CLONE_NEWNET = 0x40000000


class KernelNetworkError(ChaosError):
    """An ``ip`` or ``tc`` command failed, or namespaces cannot be made here."""


def unavailable_reason() -> str | None:
    """Why this machine cannot run the kernel network mode (None when it can): it needs root,
    iproute2, and the right to make a network namespace (tried and removed at once)."""
    if shutil.which("ip") is None:
        return "iproute2's `ip` is not installed"
    if os.geteuid() != 0:
        return "network namespaces need root"
    probe = f"rlprobe-{secrets.token_hex(3)}"
    try:
        _ip(["netns", "add", probe])
    except KernelNetworkError as exc:
        return f"`ip netns add` failed: {exc}"
    with contextlib.suppress(KernelNetworkError):
        _ip(["netns", "del", probe])
    return None


def node_address(node_id: int) -> str:
    return f"{SUBNET_PREFIX}{node_id}"


class KernelNetwork:
    """The namespaces, bridge and links of one run; a context manager that always cleans up.

    Link state is tracked per node with a count of the faults holding it down, so two
    overlapping partitions that both cut a node bring it back only when both have healed.
    """

    def __init__(self, node_ids: Sequence[int], run_id: str | None = None) -> None:
        if any(not 1 <= i < CLIENT_HOST for i in node_ids):
            raise ValueError(f"node ids must lie in 1..{CLIENT_HOST - 1}")
        self.node_ids = list(node_ids)
        self.run_id = run_id or f"rl{secrets.token_hex(3)}"
        self._made: list[str] = []
        self._down: dict[int, int] = {}
        self._degraded: set[int] = set()
        self.netem_missing: str | None = None

    # -- names and addresses ----------------------------------------------------------------

    @property
    def switch_ns(self) -> str:
        return f"{self.run_id}-sw"

    @property
    def client_ns(self) -> str:
        return f"{self.run_id}-cl"

    def node_ns(self, node_id: int) -> str:
        return f"{self.run_id}-n{node_id}"

    @property
    def hosts(self) -> list[str]:
        return [node_address(i) for i in self.node_ids]

    def wrap(self, node_id: int, argv: list[str]) -> list[str]:
        """The argv that runs a node's process inside its namespace (``ip netns exec``
        execs the command in place: signals sent to the pid reach the node itself)."""
        return ["ip", "netns", "exec", self.node_ns(node_id), *argv]

    # -- life cycle -------------------------------------------------------------------------

    def __enter__(self) -> KernelNetwork:
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _build(self) -> None:
        sw = self.switch_ns
        self._add_ns(sw)
        _ip(["-n", sw, "link", "add", "br0", "type", "bridge"])
        _ip(["-n", sw, "link", "set", "br0", "up"])
        members = [(i, self.node_ns(i)) for i in self.node_ids]
        for host, ns in [*members, (CLIENT_HOST, self.client_ns)]:
            self._add_ns(ns)
            port = f"p{host}"
            _ip(
                ["-n", sw, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns]
            )
            _ip(["-n", sw, "link", "set", port, "master", "br0"])
            _ip(["-n", sw, "link", "set", port, "up"])
            _ip(["-n", ns, "addr", "add", f"{SUBNET_PREFIX}{host}/{PREFIX_LEN}", "dev", "eth0"])
            _ip(["-n", ns, "link", "set", "eth0", "up"])
        self.netem_missing = self._probe_netem()

    def _add_ns(self, name: str) -> None:
        _ip(["netns", "add", name])
        self._made.append(name)
        _ip(["-n", name, "link", "set", "lo", "up"])

    def _probe_netem(self) -> str | None:
        """None if this kernel has the netem qdisc, else why not (tried on the client's
        link, which carries no traffic yet, and removed again)."""
        try:
            _tc(self.client_ns, ["qdisc", "add", "dev", "eth0", "root", "netem", "delay", "1ms"])
        except KernelNetworkError as exc:
            return f"this kernel has no netem qdisc (sch_netem): {exc}"
        _tc(self.client_ns, ["qdisc", "del", "dev", "eth0", "root"])
        return None

    def close(self) -> None:
        """Delete every namespace this run made (idempotent; errors are not raised, the
        remaining namespaces are still tried)."""
        for name in reversed(self._made):
            with contextlib.suppress(KernelNetworkError):
                _ip(["netns", "del", name])
        self._made.clear()

    @contextlib.contextmanager
    def entered(self) -> Iterator[None]:
        """Move the calling thread into the clients' namespace for the block, and back.

        Threads and processes it starts inside the block begin in that namespace too."""
        home_path = Path("/proc/thread-self/ns/net")
        with open(home_path, "rb") as home, open(NETNS_DIR / self.client_ns, "rb") as client:
            _setns(client.fileno())
            try:
                yield
            finally:
                _setns(home.fileno())

    # -- faults -----------------------------------------------------------------------------

    def link_down(self, node_id: int) -> None:
        """Pull node ``node_id``'s cable (held down until as many ``link_up`` calls)."""
        self._down[node_id] = self._down.get(node_id, 0) + 1
        if self._down[node_id] == 1:
            _ip(["-n", self.switch_ns, "link", "set", f"p{node_id}", "down"])

    def link_up(self, node_id: int) -> None:
        count = self._down.get(node_id, 0)
        if count == 0:
            return
        self._down[node_id] = count - 1
        if count == 1:
            _ip(["-n", self.switch_ns, "link", "set", f"p{node_id}", "up"])

    def degrade(self, node_id: int, loss_pct: float, delay_ms: int) -> None:
        """Loss and delay both ways on the node's link (netem on both ends)."""
        if self.netem_missing is not None:
            raise KernelNetworkError(self.netem_missing)
        for ns, dev in self._ends(node_id):
            _tc(ns, netem_args(dev, loss_pct, delay_ms))
        self._degraded.add(node_id)

    def restore(self, node_id: int) -> None:
        if node_id not in self._degraded:
            return
        self._degraded.discard(node_id)
        for ns, dev in self._ends(node_id):
            with contextlib.suppress(KernelNetworkError):
                _tc(ns, ["qdisc", "del", "dev", dev, "root"])

    def _ends(self, node_id: int) -> list[tuple[str, str]]:
        return [(self.switch_ns, f"p{node_id}"), (self.node_ns(node_id), "eth0")]


def netem_args(dev: str, loss_pct: float, delay_ms: int) -> list[str]:
    """``tc`` arguments for a netem qdisc with this loss and delay (jitter a tenth of it)."""
    args = ["qdisc", "replace", "dev", dev, "root", "netem"]
    if delay_ms > 0:
        args += ["delay", f"{delay_ms}ms", f"{max(1, delay_ms // 10)}ms"]
    if loss_pct > 0:
        args += ["loss", f"{loss_pct:g}%"]
    return args


def _ip(args: list[str]) -> None:
    _run(["ip", *args])


def _tc(ns: str, args: list[str]) -> None:
    _run(["ip", "netns", "exec", ns, "tc", *args])


def _run(argv: list[str]) -> None:
    try:
        done = subprocess.run(
            argv, check=False, capture_output=True, text=True, timeout=IP_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise KernelNetworkError(f"{' '.join(argv)}: {exc}") from None
    if done.returncode != 0:
        raise KernelNetworkError(f"{' '.join(argv)}: {done.stderr.strip()}")


def _setns(fd: int) -> None:
    """Move the calling thread into the network namespace behind ``fd`` (os.setns exists
    from Python 3.12 on; libc's setns before that)."""
    setns = getattr(os, "setns", None)
    if setns is not None:
        setns(fd, CLONE_NEWNET)
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise KernelNetworkError(f"setns: {os.strerror(err)}")

"""Golden-file (datadriven) tests of the Raft core's tricky paths.

Each file in testdata/ is a script of blocks::

    # comments and blank lines between blocks are ignored
    <command> <args...>
    ----
    <expected output lines>

The commands drive a ``LockstepCluster`` (messages move only when told to) and the output is
everything that happened: messages delivered or dropped, role changes, entries applied,
reads released. Set ``RILLET_REWRITE_GOLDEN=1`` to rewrite the expected output from the
current behaviour (then review the diff: it *is* the behaviour change).

Commands::

    cluster voters=N [nodes=M] [directories=B] [seed=S] [pre-vote=B] [check-quorum=B]
            [election=T] [heartbeat=T] [max-append-entries=N] [max-inflight=N]
            [fault=NAME (a deliberately broken core)]
    campaign N          tick N [xK]          tick-all [xK]       propose N DATA
    run [xK] [quiet]    (K rounds of: tick every live node, deliver until quiet)
    process             deliver [rounds=K]   drop                duplicate
    partition A B | C   isolate N            cut A B             heal
    crash N             restart N            compact N INDEX     read-index N CTX
    transfer N TARGET   status               log N
    leader-down N PEER  (N's transport reports PEER's process gone)
    add-voter N ID      remove-voter N ID [any-directory|old-directory]
    wipe N              (N's disk is replaced: empty, under a new directory id)

``cluster ... nodes=M`` runs nodes 1..M, those beyond the voters as observers;
``directories=true`` gives each node a directory id (shown by its first 8 digits).
"""

from __future__ import annotations

from pathlib import Path

from golden_script import check_golden, each_golden_file, golden_files, parse, render
from raft_simulation.lockstep import LockstepCluster
from raft_simulation.mutants import CoreFault, core_type

from rillet.raft.core_config import Config
from rillet.raft.errors import RaftError
from rillet.raft.quorum import Snapshot

TESTDATA = Path(__file__).parent / "testdata"


def _flag(value: str) -> bool:
    if value not in ("true", "false"):
        raise ValueError(f"expected true or false, got {value!r}")
    return value == "true"


class Script:
    def __init__(self) -> None:
        self.cluster: LockstepCluster | None = None

    def run(self, command: str) -> list[str]:
        name, *args = command.split()
        try:
            lines = self._run(name, args)
        except RaftError as exc:
            lines = [f"error: {type(exc).__name__}: {exc}"]
        return lines or ["ok"]

    def _c(self) -> LockstepCluster:
        if self.cluster is None:
            raise ValueError("start with a 'cluster' command")
        return self.cluster

    def _run(self, name: str, args: list[str]) -> list[str]:
        if name == "cluster":
            return self._cluster(dict(a.split("=", 1) for a in args))
        c = self._c()
        nums = [int(a) for a in args if a.isdigit()]
        times = next((int(a[1:]) for a in args if a[:1] == "x" and a[1:].isdigit()), 1)
        if name == "campaign":
            c.core(nums[0]).campaign()
            c.process()
        elif name == "tick":
            c.tick(nums[0], times)
        elif name == "tick-all":
            for _ in range(times):
                for node in c.nodes:
                    if c.up(node):
                        c.tick(node)
        elif name == "propose":
            entry = c.core(nums[0]).propose(args[1].encode())
            c.process()
            return [f"proposed at {entry.index}/t{entry.term}", *c.take_output()]
        elif name == "run":
            c.log_messages = "quiet" not in args
            try:
                c.run(times)
            finally:
                c.log_messages = True
        elif name == "process":
            c.process()
        elif name == "deliver":
            rounds = next((int(a.split("=")[1]) for a in args if a.startswith("rounds=")), None)
            if rounds is None:
                c.deliver()
            else:
                for _ in range(rounds):
                    c.deliver_round()
        elif name == "drop":
            return [f"dropped {c.drop_queued()} queued messages"]
        elif name == "duplicate":
            c.queue = [m for m in c.queue for _ in range(2)]
        elif name == "partition":
            groups = " ".join(args).split("|")
            c.partition(*[[int(n) for n in g.split()] for g in groups])
        elif name == "isolate":
            c.partition(*[[n] for n in c.nodes])
        elif name == "cut":
            c.cut(nums[0], nums[1])
        elif name == "heal":
            c.heal()
        elif name == "crash":
            c.crash(nums[0])
        elif name == "restart":
            c.restart(nums[0])
        elif name == "compact":
            node, index = nums
            term = c.core(node).raft_log.term(index) or 0
            c.core(node).compact(Snapshot(index, term, f"state@{index}".encode()))
            c.process()
        elif name == "read-index":
            c.core(nums[0]).read_index(args[1].encode())
            c.process()
        elif name == "leader-down":
            c.core(nums[0]).report_leader_down(nums[1])
            c.process()
        elif name == "add-voter":
            c.core(nums[0]).add_voter(nums[1], c.directory_id(nums[1]))
            c.process()
        elif name == "remove-voter":
            directory = "" if "any-directory" in args else c.directory_id(nums[1])
            if "old-directory" in args:
                directory = f"{nums[1]:04x}{c.wipes[nums[1]] - 1:04x}".ljust(32, "0")
            c.core(nums[0]).remove_voter(nums[1], directory)
            c.process()
        elif name == "wipe":
            c.wipe(nums[0])
        elif name == "transfer":
            c.core(nums[0]).transfer_leadership(nums[1])
            c.process()
        elif name == "status":
            return c.take_output() + c.status_lines()
        elif name == "log":
            return c.take_output() + c.log_lines(nums[0])
        else:
            raise ValueError(f"unknown command {name!r}")
        return c.take_output()

    def _cluster(self, opts: dict[str, str]) -> list[str]:
        config = Config(
            pre_vote=_flag(opts.get("pre-vote", "true")),
            check_quorum=_flag(opts.get("check-quorum", "true")),
            election_timeout_ticks=int(opts.get("election", "10")),
            heartbeat_interval_ticks=int(opts.get("heartbeat", "1")),
            max_append_entries=int(opts.get("max-append-entries", "256")),
            max_inflight_appends=int(opts.get("max-inflight", "64")),
        )
        voters = range(1, int(opts["voters"]) + 1)
        core = core_type(CoreFault(opts.get("fault", "none")))
        seed = int(opts.get("seed", "0"))
        nodes = int(opts.get("nodes", "0")) or None
        self.cluster = LockstepCluster(
            voters,
            config,
            seed=seed,
            core_type=core,
            nodes=nodes,
            directories=_flag(opts.get("directories", "false")),
        )
        observers = f" and {nodes - len(voters)} observers" if nodes else ""
        return [f"{len(voters)} voters{observers}, {config.election_timeout_ticks}-tick elections"]


@each_golden_file(TESTDATA)
def test_golden(path: Path) -> None:
    check_golden(path, Script().run)


def test_the_golden_files_exist() -> None:
    names = {p.stem for p in golden_files(TESTDATA)}
    assert {"elections", "prevote_rejoin", "figure8", "snapshot_install"} <= names


def test_parse_and_render_round_trip() -> None:
    text = "# note\ncampaign 1\n----\nold\n\nstatus\n----\na\nb\n"
    blocks = parse(text)
    assert [b.command for b in blocks] == ["campaign 1", "status"]
    assert render(text, [["new"], ["c"]]) == "# note\ncampaign 1\n----\nnew\n\nstatus\n----\nc\n"

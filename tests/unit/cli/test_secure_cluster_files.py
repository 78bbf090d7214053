"""What ``rillet cluster up --secure`` and ``rillet users create NAME --cert`` write, without
starting nodes: every secret 0600 in a 0700 directory, an admin separate from application
users, and a user's directory holding its own credentials and nobody else's."""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path

import pytest
from cryptography import x509

from rillet.cli import main as cli_main
from rillet.cli.client_files import SaslLoginFiles
from rillet.cli.secure_cluster import (
    admin_dir,
    admin_password,
    plan_local_cluster,
    user_dir,
    write_client_configs,
    write_user_files,
)
from rillet.client.errors import RilletError
from rillet.launcher.local_cluster import ClusterPlan


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def plan(tmp_path: Path) -> ClusterPlan:
    plan = plan_local_cluster(tmp_path / "cluster", 3, secure=True)
    write_client_configs(plan)
    write_user_files(plan, "etl", SaslLoginFiles("etl", "etl-password"))
    return plan


def test_every_secret_is_0600_in_a_0700_directory(plan: ClusterPlan) -> None:
    base = Path(plan.base_dir)
    tls = base / "tls"
    secrets = [base / "cluster.secret", *(p for p in tls.rglob("*") if p.is_file())]
    assert len(secrets) > 15
    assert {str(p.relative_to(base)): mode(p) for p in secrets} == {
        str(p.relative_to(base)): 0o600 for p in secrets
    }
    directories = [base, tls, *(p for p in base.rglob("*") if p.is_dir())]
    assert {str(p): mode(p) for p in directories} == {str(p): 0o700 for p in directories}


def test_the_admin_is_the_only_super_user_and_clients_log_in(plan: ClusterPlan) -> None:
    node = tomllib.loads((Path(plan.nodes[0].work_dir) / "node.toml").read_text())
    assert node["authorizer"]["super_users"] == "User:CN=admin"
    assert node["tls"]["client_auth"] == "requested"  # a certificate is not the only way in
    assert node["listener"]["sasl_mechanisms"] == "SCRAM-SHA-512,SCRAM-SHA-256"
    assert "SCRAM-SHA-512" in node["kafka_listener"]["sasl_mechanisms"]
    assert admin_dir(plan) == Path(plan.base_dir) / "tls" / "admin"
    assert Path(plan.tls.client_certfile).parent == admin_dir(plan)  # type: ignore[union-attr]


def test_a_users_files_carry_its_own_login_and_certificate_only(plan: ClusterPlan) -> None:
    directory = user_dir(plan, "etl")
    files = {p.name: p.read_text() for p in directory.iterdir()}
    everything = "".join(files.values())
    assert admin_password(plan) not in everything
    assert str(admin_dir(plan)) not in everything
    # Every path the client files name is inside the user's own directory.
    named = [
        value
        for settings in ("client.env", "client.properties", "client-java.properties")
        for line in files[settings].splitlines()
        for value in [line.split("=", 1)[-1]]
        if value.startswith("/")
    ]
    assert len(named) == 8 and all(Path(v).parent == directory for v in named), named
    env = files["client.env"]
    assert "RILLET_SASL_USERNAME=etl\n" in env and "RILLET_SASL_PASSWORD=etl-password\n" in env
    assert "sasl.username=etl\n" in files["client.properties"]
    cert = x509.load_pem_x509_certificate(files["etl.pem"].encode())
    assert cert.subject.rfc4514_string() == "CN=etl"  # User:CN=etl: no ACL, no super user


@pytest.mark.parametrize("name", ["admin", "../admin", "", "-x", "a b"])
def test_a_user_certificate_cannot_take_the_admins_name_or_leave_its_directory(
    plan: ClusterPlan, name: str
) -> None:
    with pytest.raises(RilletError):
        user_dir(plan, name)


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        ("none", "--cert: no cluster in"),
        ("plain", "was made without --secure"),
        ("secure", "is the cluster's admin"),
    ],
)
def test_users_create_cert_refuses_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], setup: str, expected: str
) -> None:
    """Without a secure local cluster, or for the admin's name: one line, nothing changed
    (no node runs here: the refusals come before any connection)."""
    base = tmp_path / "cluster"
    if setup != "none":
        plan_local_cluster(base, 1, secure=setup == "secure")
    code = cli_main.main(["users", "create", "admin", "--cert", "--data-dir", str(base)])
    err = capsys.readouterr().err
    assert code == 1 and expected in err and len(err.splitlines()) == 1, err
    assert not (base / "tls" / "users").exists()

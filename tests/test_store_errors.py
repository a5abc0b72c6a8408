"""A run store or trace database that cannot be used fails clearly: a ``StoreError`` naming the
store (never a password) and saying what to do, one ``error:`` line from the command line with
a non-zero exit, and nothing already recorded changed. Damaged and foreign files, read-only
files and folders, a full disk, a PostgreSQL server that refuses or drops the connection, and
addresses of an unknown kind."""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from minloop import Loop, SQLiteRunStore, Verdict, tool
from minloop.cli.app import app
from minloop.exceptions import StoreError
from minloop.runs import open_store
from minloop.runs.postgres import PostgresRunStore
from minloop.testing import ScriptedModel, call, reply
from minloop.trace.sqlite import SQLiteSink, TraceStore

DAMAGED = "the file is damaged (database disk image is malformed); restore it from a backup, or give another file, or move this one aside (nothing was written to it)"  # fmt: skip
NOT_SQLITE = "the file is not a SQLite database (damaged, or another program's file) (file is not a database); give another file, or move this one aside (nothing was written to it)"  # fmt: skip
READ_ONLY = "give this user write access to the file and its folder (SQLite writes the -wal and -shm files beside it), or give another file"  # fmt: skip
FULL = "the file cannot be written: the disk is full (database or disk is full); free some space, then try again (what was recorded is kept)"  # fmt: skip
UNKNOWN = "an address of an unknown kind ({}://): give a SQLite file path or a postgresql:// address"


@tool(needs_approval=True)
def refund(order: str, amount: float) -> str:
    """Refund part of an order."""
    return f"refunded {amount} on {order}"


def filled(path: Path, runs: int = 40) -> tuple[str, str]:
    """A store at ``path`` with ``runs`` finished runs and one paused: (paused run, its call)."""
    with SQLiteRunStore(path) as store:
        for n in range(runs):
            Loop(ScriptedModel([f"answer {n} " * 40]), store=store).run_sync(f"question {n} " * 20)
        model = ScriptedModel([reply(None, call("refund", {"order": "A-7", "amount": 30}, id="c1"))])
        paused = Loop(model, [refund], store=store).run_sync("Refund 30 on A-7")
    assert paused.status == "paused"
    return paused.trace_id, "c1"


def rows(path: Path) -> list[Any]:
    """Every row of every table of a SQLite file, read without writing to it."""
    with sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True) as conn:
        names = [
            r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        ]
        return [(n, sorted(conn.execute(f"SELECT * FROM {n}").fetchall(), key=repr)) for n in names]


def cli(*args: str) -> tuple[int, str]:
    """The command line in this process, as ``minloop`` runs it (stderr and stdout together)."""
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def one_line(output: str) -> str:
    lines = output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), output
    return lines[0].removeprefix("error: ")


@pytest.fixture
def damaged(tmp_path: Path) -> Iterator[tuple[Path, bytes]]:
    """A real run store cut in half."""
    whole = tmp_path / "whole.db"
    filled(whole)
    data = whole.read_bytes()
    half = tmp_path / "runs.db"
    half.write_bytes(data[: len(data) // 2])
    yield half, half.read_bytes()


def test_a_store_cut_in_half_is_refused_by_the_api_and_each_command_and_left_as_it_was(
    damaged: tuple[Path, bytes],
) -> None:
    path, before = damaged
    with pytest.raises(StoreError) as caught:
        SQLiteRunStore(path)
    assert (str(caught.value), caught.value.store) == (f"run store {path}: {DAMAGED}", f"run store {path}")
    for command in (
        ["runs", "--store", str(path)],
        ["approve", "trc_x", "c1", "--store", str(path)],
        ["resume", "trc_x", "--model", "m", "--base-url", "http://127.0.0.1:9", "--store", str(path)],
    ):
        code, output = cli(*command)
        assert (code, one_line(output)) == (2, f"run store {path}: {DAMAGED}")
    assert path.read_bytes() == before


def test_garbage_and_another_programs_database_are_refused_untouched(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(os.urandom(4096))
    foreign = tmp_path / "应用.db"  # another program's database, in Chinese
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO customers (name) VALUES ('Ada')")
    conn.close()
    before = {p: p.read_bytes() for p in (garbage, foreign)}
    with pytest.raises(StoreError, match=r"garbage\.db: the file is not a SQLite database"):
        open_store(str(garbage))
    with pytest.raises(StoreError) as caught:
        open_store(str(foreign))
    assert str(caught.value) == (
        f"run store {foreign}: the file is a SQLite database of something else (tables: customers); "
        "give another file, or move this one aside (nothing was written to it)"
    )
    for store in (garbage, foreign):
        code, output = cli("runs", "--store", str(store))
        assert code == 2 and one_line(output).startswith(f"run store {store}: the file is ")
    assert {p: p.read_bytes() for p in before} == before
    assert sorted(os.listdir(tmp_path)) == ["garbage.db", "应用.db"]  # no -wal or -shm beside them


def test_the_trace_database_fails_the_same_way(damaged: tuple[Path, bytes], tmp_path: Path) -> None:
    path, before = damaged
    with pytest.raises(StoreError) as caught:
        SQLiteSink(path)
    assert str(caught.value) == f"trace database {path}: {DAMAGED}"
    with pytest.raises(StoreError, match=f"trace database {path}: the file is damaged"):
        TraceStore(path)
    runs = tmp_path / "runs-store.db"
    SQLiteRunStore(runs).close()
    with pytest.raises(StoreError, match="a SQLite database of something else \\(tables: minloop_calls"):
        SQLiteSink(runs)  # a run store given as the trace database
    code, output = cli("trace", "ls", "--db", str(path))
    assert (code, one_line(output)) == (2, f"trace database {path}: {DAMAGED}")
    assert path.read_bytes() == before


def test_addresses_of_an_unknown_kind_are_refused_and_make_no_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for address, scheme in [("mysql://user@host/db", "mysql"), ("http://example.com/runs.db", "http")]:
        with pytest.raises(StoreError) as caught:
            open_store(address)
        assert str(caught.value) == f"run store {address}: " + UNKNOWN.format(scheme)
        with pytest.raises(StoreError):
            SQLiteRunStore(address)
        with pytest.raises(StoreError, match=f"trace database {address}: an address of an unknown kind"):
            SQLiteSink(address)
        code, output = cli("runs", "--store", address)
        assert (code, one_line(output)) == (2, f"run store {address}: " + UNKNOWN.format(scheme))
    assert os.listdir(tmp_path) == []


def test_a_full_disk_ends_the_run_with_a_clear_error_and_keeps_what_was_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "runs.db"
    run_id, call_id = filled(path, runs=3)
    before = rows(path)
    store = SQLiteRunStore(path)
    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    store._conn.execute(f"PRAGMA max_page_count = {pages}")  # the disk holds not one page more
    with pytest.raises(StoreError) as caught:
        Loop(ScriptedModel(["a long answer " * 2000]), store=store).run_sync("a long question " * 2000)
    assert str(caught.value) == f"run store {path}: {FULL}"
    with pytest.raises(StoreError, match="the disk is full"):
        store.decide(run_id, {call_id: Verdict(False, "too much " * 10_000, "alice")})
    store.close()
    assert rows(path) == before

    real = sqlite3.connect  # the command line on the same full disk: SQLite itself refuses the write

    def full(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = real(*args, **kwargs)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {max(pages, 1)}")
        return conn

    monkeypatch.setattr(sqlite3, "connect", full)
    code, output = cli(
        "approve", run_id, call_id, "--deny", "--reason", "too much " * 10_000, "--store", str(path)
    )
    monkeypatch.undo()
    assert (code, one_line(output)) == (2, f"run store {path}: {FULL}")
    assert rows(path) == before


def _as_other_user() -> list[str]:
    """A command prefix running a child as a user that file modes hold back (not root)."""
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []


def test_a_read_only_store_is_refused_by_the_api_and_the_command_line(tmp_path: Path) -> None:
    home = Path(tempfile.mkdtemp(prefix="minloop-ro-"))  # a folder another user can reach
    try:
        folder = home / "store"
        folder.mkdir()
        path = folder / "runs.db"
        run_id, call_id = filled(path, runs=2)
        before = path.read_bytes()
        for p in (path, *folder.iterdir()):
            p.chmod(0o444)
        for p in (folder, home):
            p.chmod(0o555)
        env = {
            **os.environ,
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
            "MINLOOP_TRACE_DB": str(home / "t.db"),
        }
        api = (
            "from minloop import SQLiteRunStore, Verdict; SQLiteRunStore(%r).decide(%r, {%r: Verdict(True)})"
        )
        script = [*_as_other_user(), sys.executable, "-c", api % (str(path), run_id, call_id)]
        child = subprocess.run(script, env=env, capture_output=True, text=True, timeout=60)
        last = child.stderr.strip().splitlines()[-1]
        assert last.startswith(f"minloop.exceptions.StoreError: run store {path}: the file cannot be")
        assert READ_ONLY in last
        command = [*_as_other_user(), sys.executable, "-c", "from minloop.cli import main; main()", "approve", run_id, call_id,
                   "--store", str(path)]  # fmt: skip
        refused = f"run store {path}: the file cannot be written (read-only) (attempt to write a readonly database); {READ_ONLY}"  # fmt: skip
        child = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
        assert (child.returncode, child.stdout, one_line(child.stderr)) == (2, "", refused)
        path.chmod(0o666)  # the file may be written, its folder not (no -wal or -shm beside it)
        child = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
        assert (child.returncode, child.stdout, one_line(child.stderr)) == (2, "", refused)
        new = folder / "sub" / "runs.db"
        child = subprocess.run([*command[:-1], str(new)], env=env, capture_output=True, text=True, timeout=60)
        assert one_line(child.stderr) == (
            f"run store {new}: its folder cannot be made: permission denied; give this user write access "
            "to the folder above it, or give another path"
        )
        assert path.read_bytes() == before
    finally:
        for p in (home, *home.rglob("*")):
            p.chmod(0o755)
        shutil.rmtree(home)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_postgres_server_that_refuses_is_named_without_the_password() -> None:
    port = _closed_port()
    address = f"postgresql://alice:s3cret-word@127.0.0.1:{port}/runs"
    with pytest.raises(StoreError) as caught:
        open_store(address)
    said = str(caught.value)
    assert said.startswith(f"run store postgresql://alice@127.0.0.1:{port}/runs: cannot connect (")
    assert said.endswith("); check that the server runs at this address and that its user, password and database are right")  # fmt: skip
    assert "s3cret" not in said and caught.value.__cause__ is None
    for dsn in (f"postgresql://alice@127.0.0.1:{port}/runs?password=s3cret-word",
                f"host=127.0.0.1 port={port} user=alice password=s3cret-word dbname=runs"):  # fmt: skip
        with pytest.raises(StoreError) as caught:
            PostgresRunStore(dsn)
        assert "s3cret" not in str(caught.value) and "password=***" in str(caught.value)
    code, output = cli("runs", "--store", address)
    assert code == 2 and one_line(output).startswith(f"run store postgresql://alice@127.0.0.1:{port}/runs: cannot connect")  # fmt: skip
    assert "s3cret" not in output


def test_a_dropped_postgres_connection_is_a_clear_error_and_the_runs_are_kept(
    postgres_address: str, postgres: Any
) -> None:
    import psycopg

    store = open_store(postgres_address)
    done = Loop(ScriptedModel(["kept"]), store=store).run_sync("hello")
    pid = store._conn.info.backend_pid  # type: ignore[attr-defined]
    with psycopg.connect(postgres.dsn, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    with pytest.raises(StoreError) as caught:
        Loop(ScriptedModel(["lost"]), store=store).run_sync("again")
    assert str(caught.value) == (
        f"run store {postgres_address}: the server ended the connection (it is stopping, or an administrator "
        "ended it) (terminating connection due to administrator command); check the server and the network, "
        "then try again (what was recorded is kept)"
    )
    with open_store(postgres_address) as again:  # type: ignore[attr-defined]
        assert [(r.run_id, r.status) for r in again.runs()] == [(done.trace_id, "success")]


def test_a_read_only_postgres_database_and_a_user_without_rights_are_named_with_what_to_do(
    postgres_address: str, postgres: Any
) -> None:
    import psycopg

    with open_store(postgres_address) as store:  # type: ignore[attr-defined]
        done = Loop(ScriptedModel(["kept"]), store=store).run_sync("hello")
    name = postgres_address.rsplit("/", 1)[1]
    with psycopg.connect(postgres.dsn, autocommit=True) as admin:
        admin.execute("DROP ROLE IF EXISTS reader")
        admin.execute("CREATE ROLE reader LOGIN")
    reader = postgres_address.replace("postgres@", "reader@")
    with pytest.raises(StoreError) as caught:
        open_store(reader)
    assert str(caught.value) == (
        f"run store {reader}: the user may not make or change the minloop_ tables (permission denied for "
        "schema public); grant it those rights (or make the tables as the database's owner), or give another user"
    )
    with psycopg.connect(postgres.dsn, autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE {name} SET default_transaction_read_only = on")
    with pytest.raises(StoreError) as caught:
        open_store(postgres_address)
    assert str(caught.value) == (
        f"run store {postgres_address}: the server takes no writes (read-only) (cannot execute CREATE TABLE in a "
        "read-only transaction); give the address of a server that takes writes"
    )
    with psycopg.connect(postgres_address, autocommit=True) as conn:
        runs = conn.execute("SELECT run_id, status FROM minloop_runs").fetchall()
    assert runs == [(done.trace_id, "success")]  # nothing recorded changed

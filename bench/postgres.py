"""PostgreSQL 15 as the baseline: a private cluster on loopback, the original design's
tables (`bench/postgres.sql`), COPY loading and the dossier as one SQL statement
(`bench/dossier.sql`).

The cluster belongs to the benchmark: `initdb` into its own directory, `pg_ctl` on a
spare port, listening on 127.0.0.1 only, trust authentication for loopback (a throwaway
cluster that holds synthetic data), stopped and removed afterwards. Run as root, the
server runs as the `postgres` system user (PostgreSQL refuses to run as root).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from bench.generate import UserGraph
from cli.launcher import free_port
from kg.canon import Canon

HERE = Path(__file__).resolve().parent
SCHEMA = (HERE / "postgres.sql").read_text(encoding="utf-8")
DOSSIER = (HERE / "dossier.sql").read_text(encoding="utf-8")
DATABASE = "kgbench"


def _bindir() -> Path:
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "pg_ctl").exists():
            return candidate
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    raise RuntimeError(
        "PostgreSQL is not installed — `apt-get install -y postgresql` (Debian's 15)"
    )


_START_TRIES = 5
_PORT_CLASH = "Address already in use"


def _read_from(path: Path, offset: int) -> str:
    try:
        with path.open("rb") as f:
            f.seek(offset)
            return f.read().decode("utf-8", "replace")
    except OSError as e:
        return f"(not readable: {e})"


@dataclass
class PgCluster:
    """A private PostgreSQL cluster in `datadir` on 127.0.0.1:`port`."""

    datadir: Path
    port: int
    shared_buffers: str = "1GB"

    @property
    def dsn(self) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={DATABASE}"

    def _as_owner(self, *cmd: str) -> subprocess.CompletedProcess[str]:
        argv = list(cmd)
        if os.geteuid() == 0:  # PostgreSQL refuses root: run as the postgres system user
            argv = ["runuser", "-u", "postgres", "--", *argv]
        return subprocess.run(argv, capture_output=True, text=True, check=False)

    def _options(self) -> str:
        return " ".join(
            [
                f"-p {self.port}",
                "-c listen_addresses=127.0.0.1",
                f"-c unix_socket_directories={self.datadir}",
                f"-c shared_buffers={self.shared_buffers}",
                "-c effective_cache_size=4GB",
                "-c work_mem=16MB",
                "-c maintenance_work_mem=512MB",
                "-c random_page_cost=1.1",
                # A throwaway cluster: durability off for loading speed; it does not change reads.
                "-c fsync=off",
                "-c synchronous_commit=off",
                "-c full_page_writes=off",
                "-c max_wal_size=8GB",
                "-c jit=off",
            ]
        )

    def start(self) -> None:
        """initdb if the directory is new, then start the server; a port that another
        socket took since it was chosen is replaced by the next free one."""
        bindir = _bindir()
        if not (self.datadir / "PG_VERSION").exists():
            self.datadir.mkdir(parents=True, exist_ok=True)
            if os.geteuid() == 0:
                shutil.chown(self.datadir, "postgres", "postgres")
            done = self._as_owner(
                str(bindir / "initdb"),
                "-D",
                str(self.datadir),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
            )
            if done.returncode != 0:
                raise RuntimeError(f"initdb failed:\n{done.stdout}{done.stderr}")
        for attempt in range(1, _START_TRIES + 1):
            log = self.datadir / "log"
            seen = log.stat().st_size if log.exists() else 0
            done = self._as_owner(
                str(bindir / "pg_ctl"), "-D", str(self.datadir), "-l", str(log),
                "-o", self._options(), "-w", "-t", "60", "start",
            )
            if done.returncode == 0:
                break
            told = _read_from(log, seen)
            if _PORT_CLASH in told and attempt < _START_TRIES:
                # Taken between the choice and the start (a client's own port, say).
                self.port = free_port()
                continue
            raise RuntimeError(
                f"pg_ctl start on port {self.port} failed:\n{done.stdout}{done.stderr}"
                f"the server's log ({log}):\n{told[-3000:]}"
            )
        with psycopg.connect(
            self.dsn.replace(f"dbname={DATABASE}", "dbname=postgres"), autocommit=True
        ) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE]
            ).fetchone()
            if not exists:
                conn.execute(f"CREATE DATABASE {DATABASE}")
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(SCHEMA)

    def stop(self, remove: bool = True) -> None:
        if (self.datadir / "postmaster.pid").exists():
            self._as_owner(
                str(_bindir() / "pg_ctl"), "-D", str(self.datadir), "-m", "fast", "-w", "stop"
            )
        if remove:
            shutil.rmtree(self.datadir, ignore_errors=True)

    def version(self) -> str:
        with psycopg.connect(self.dsn) as conn:
            row = conn.execute("SHOW server_version").fetchone()
            return str(row[0]) if row else "?"

    def size_bytes(self) -> int:
        with psycopg.connect(self.dsn) as conn:
            row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
            return int(row[0]) if row else 0


ENTITY_COLS = ("id", "user_id", "name", "name_norm", "erstellt")
TIMELINE_COLS = (
    "id",
    "user_id",
    "character_id",
    "typ",
    "titel",
    "beginn",
    "ende",
    "genauigkeit",
    "aktiv",
    "abgesagt",
    "betrifft_id",
    "nachfolger_id",
)
FACT_COLS = (
    "id",
    "version",
    "user_id",
    "character_id",
    "subjekt_id",
    "beziehung",
    "objekt_id",
    "wert",
    "herkunft",
    "t_valid",
    "t_invalid",
    "t_recorded",
    "t_expired",
    "aktiv",
    "grund",
    "staerke_decay",
    "last_touched",
    "decay_am",
    "timeline_id",
    "timeline_bis",
)


def load(dsn: str, canon: Canon, graphs: Iterable[UserGraph], batch_users: int = 200) -> int:
    """COPY the same users into entitaeten, timeline and fakten; returns facts loaded."""
    facts = 0
    names = {r.rel_type: r.name for r in canon.relations.values()}
    with psycopg.connect(dsn) as conn:
        batch: list[UserGraph] = []

        def flush() -> None:
            with conn.cursor() as cur:
                with cur.copy(f"COPY entitaeten ({', '.join(ENTITY_COLS)}) FROM STDIN") as cp:
                    for g in batch:
                        for e in g.entities:
                            cp.write_row((e.id, e.user_id, e.name, e.name_norm, e.erstellt))
                with cur.copy(f"COPY timeline ({', '.join(TIMELINE_COLS)}) FROM STDIN") as cp:
                    for g in batch:
                        for t in g.eintraege:
                            cp.write_row(
                                (
                                    t.id,
                                    t.user_id,
                                    t.character_id,
                                    "ereignis",
                                    t.titel,
                                    t.beginn,
                                    None,
                                    t.genauigkeit,
                                    t.aktiv,
                                    False,
                                    t.betrifft_id,
                                    t.nachfolger_id,
                                )
                            )
                with cur.copy(f"COPY fakten ({', '.join(FACT_COLS)}) FROM STDIN") as cp:
                    for g in batch:
                        for f in g.facts:
                            cp.write_row(
                                (
                                    f.id,
                                    f.version,
                                    f.user_id,
                                    f.character_id,
                                    f.subjekt_id,
                                    names[f.rel],
                                    f.objekt_id,
                                    f.wert,
                                    f.herkunft,
                                    f.t_valid,
                                    f.t_invalid,
                                    f.t_recorded,
                                    f.t_expired,
                                    f.aktiv,
                                    f.grund,
                                    f.staerke_decay,
                                    f.last_touched,
                                    f.decay_am,
                                    f.timeline_id,
                                    f.timeline_bis,
                                )
                            )
            conn.commit()
            batch.clear()

        for g in graphs:
            batch.append(g)
            facts += len(g.facts)
            if len(batch) >= batch_users:
                flush()
        if batch:
            flush()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    return facts


class Dossier:
    """The dossier query on one open connection (prepared after a few runs)."""

    def __init__(self, dsn: str, canon: Canon, cap: int, schwelle: float) -> None:
        self.conn = psycopg.connect(dsn, autocommit=True)
        trans = [r for r in canon.relations.values() if r.transitiv]
        self.trans = trans[0].name if trans else "liegt_in"
        self.via = sorted(
            r.name
            for r in canon.relations.values()
            if r.objekt == "entitaet" and trans and r.objekt_typ == trans[0].objekt_typ
        )
        self.symmetric = sorted(r.name for r in canon.relations.values() if r.symmetrisch)
        self.cap = cap
        self.schwelle = schwelle

    def params(self, user_id: str, character_id: str, entity_id: str) -> dict[str, Any]:
        return {
            "eid": entity_id,
            "uid": user_id,
            "cid": character_id,
            "cap": self.cap,
            "schwelle": self.schwelle,
            "via": self.via,
            "trans": self.trans,
            "symmetric": self.symmetric,
        }

    def read(self, user_id: str, character_id: str, entity_id: str) -> dict[str, Any]:
        row = self.conn.execute(
            DOSSIER,
            self.params(user_id, character_id, entity_id),
        ).fetchone()
        if row is None:
            raise LookupError(f"no entity {entity_id!r} for {user_id!r}")
        return _dossier(row)

    def read_many(
        self, user_id: str, character_id: str, entity_ids: list[str]
    ) -> list[dict[str, Any]]:
        """The dossiers of several entities (a turn's), in order: the dossier statement
        once per entity, all of them in one pipeline, so one round trip as the
        Mappen's one query."""
        with self.conn.pipeline():
            cursors = [
                self.conn.execute(
                    DOSSIER,
                    self.params(user_id, character_id, entity_id),
                )
                for entity_id in entity_ids
            ]
        out = []
        for entity_id, cursor in zip(entity_ids, cursors, strict=True):
            row = cursor.fetchone()
            if row is None:
                raise LookupError(f"no entity {entity_id!r} for {user_id!r}")
            out.append(_dossier(row))
        return out

    def ping(self) -> None:
        self.conn.execute("SELECT 1").fetchone()

    def explain(self, user_id: str, character_id: str, entity_id: str) -> str:
        rows = self.conn.execute(
            ("EXPLAIN (ANALYZE, BUFFERS) " + DOSSIER),
            self.params(user_id, character_id, entity_id),
        ).fetchall()
        return "\n".join(r[0] for r in rows)

    def close(self) -> None:
        self.conn.close()


def _dossier(row: tuple[Any, ...]) -> dict[str, Any]:
    """A row of the dossier statement as the readers compare it."""
    keys = ("id", "name", "typ", "fakten", "historie", "abgeleitet")
    return dict(zip(keys, row[:6], strict=True))

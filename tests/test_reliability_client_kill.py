"""Reliability: a client killed in the middle of writing orders leaves nothing half-written.

A chat backend can die at any instant (OOM killer, a deploy, SIGKILL): between sending
an order and reading its result, or with the result already on its way. This test runs
the writer as a real separate process (its own `SyncMemory`, driver and sockets), kills
it with SIGKILL at a random moment, and starts the next client with the next orders,
again and again. The client prints `send <id>` before each order and `ok <id> <result
JSON>` after its result came back, so the test knows exactly what was sent and what was
acknowledged. Then, before any replay:

* every order in the graph is there completely or not at all (the ledger), and every
  acknowledged one is stored with exactly the result the client saw;

after replaying every sent-but-unacknowledged order once with the same auftrag_id:

* the replay says `wiederholt` exactly for the orders that had committed before the kill
  (counted: the client died after the commit but before it saw the result);
* every order sent is stored exactly once, the ledger is exact and `kg check` is clean.

Bounded by default (12 kills); KG_STRESS=1 kills 90 clients.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from kg.api import SyncMemory
from kg.models import AuftragErgebnis
from tests.conftest import new_user_id
from tests.reliability_support import (
    BERUFE,
    HOBBYS,
    ORTE,
    PERSONEN,
    TIERE,
    Stopwatch,
    cypher,
    ledger_violations,
    read_ledger,
    size,
    tr,
)
from tests.test_reliability_concurrency import violations_of

KILLS = size(12, 90)
CHARACTER = "nova"
ROOT = Path(__file__).resolve().parent.parent
#: The zeitpunkt of order 0; order n is n minutes later (deterministic, so a replay
#: sends exactly the order the killed client sent).
BASE = datetime(2026, 2, 1, 8, 0, tzinfo=UTC)


def auftrag_id(user_id: str, n: int) -> str:
    return f"{user_id}-{n:04d}"


def order_of(user_id: str, n: int) -> dict[str, Any]:
    """Order n of a user: five triples over einwertig (wohnt_in, beruf, partner) and
    mehrwertig (hobby, geschwister, hat_haustier) relations, the same for every caller."""
    rng = random.Random(f"{user_id}-{n}")
    a, b = rng.sample(PERSONEN, 2)
    tripel = [
        tr(a, "wohnt_in", rng.choice(ORTE)),
        tr(a, "beruf", wert=rng.choice(BERUFE)),
        tr(a, "hobby", wert=rng.choice(HOBBYS)),
        rng.choice([tr(a, "partner", b), tr(a, "geschwister", b)]),
        tr(b, "hat_haustier", rng.choice(TIERE)),
    ]
    return {
        "auftrag_id": auftrag_id(user_id, n),
        "user_id": user_id,
        "character_id": CHARACTER,
        "zeitpunkt": (BASE + timedelta(minutes=n)).isoformat(),
        "tripel": tripel,
    }


def client(user_id: str, start: int) -> None:
    """The killed process: writes orders start, start+1, ... until it is killed."""
    with SyncMemory() as store:  # NEO4J_URI / NEO4J_PASSWORD from the environment
        print("ready", flush=True)
        n = start
        while True:
            order = order_of(user_id, n)
            print(f"send {order['auftrag_id']}", flush=True)
            result = store.run(store.memory.write(order))
            print(f"ok {order['auftrag_id']} {result.model_dump_json()}", flush=True)
            n += 1


# -- the parent: start, kill, read what the client said ---------------------------------


@dataclass
class Transcript:
    """What the clients said, in order: the orders sent and the results they saw."""

    sent: list[str] = field(default_factory=list)
    acknowledged: dict[str, AuftragErgebnis] = field(default_factory=dict)
    torn_lines: int = 0  # a last line cut off by the kill (not an acknowledgement)


def run_client(store: SyncMemory, user_id: str, start: int, env: dict[str, str],
               at_commit: bool, rng: random.Random, transcript: Transcript) -> None:
    """Start one client; once it has written its first order (warm), SIGKILL it after a
    random 50-400 ms, or (`at_commit`) the moment the order in flight appears committed
    in the audit, before the client can print its result: the window a random kill
    rarely meets on a fast machine."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.test_reliability_client_kill", user_id, str(start)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    lines: list[bytes] = []
    warm = threading.Event()

    def read() -> None:  # drains the pipe, so the client never blocks on a full one
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if line.startswith(b"ok "):
                warm.set()
        warm.set()  # EOF: the client died on its own (asserted below)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert warm.wait(120), "the client wrote no order within 120 s"
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        if at_commit:
            # Single-step the client in 5 ms slices (SIGCONT/SIGSTOP); while it is
            # stopped, look whether the order in flight has committed. Once it has and
            # the client has not printed its result, kill it there.
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and proc.poll() is None:
                os.kill(proc.pid, signal.SIGCONT)
                time.sleep(0.005)
                os.kill(proc.pid, signal.SIGSTOP)
                flight = [ln for ln in lines if ln.startswith(b"send ")][-1].split()[1]
                rows = store.run(cypher(
                    store.memory, "MATCH (a:Auftrag {user_id: $u, id: $id}) RETURN count(a) AS n",
                    u=user_id, id=flight.decode(),
                ))
                if rows[0]["n"] and not any(ln.startswith(b"ok " + flight) for ln in lines):
                    break
        else:
            time.sleep(rng.uniform(0.05, 0.4))
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        proc.send_signal(signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(30)
        reader.join(30)
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    assert lines[0] == b"ready\n", lines[:1]
    for raw in lines[1:]:
        if not raw.endswith(b"\n"):
            transcript.torn_lines += 1
            continue
        kind, _, rest = raw.decode().rstrip("\n").partition(" ")
        if kind == "send":
            assert rest == auftrag_id(user_id, len(transcript.sent)), rest  # in order, no gap
            transcript.sent.append(rest)
        else:
            assert kind == "ok", raw
            sent_id, _, payload = rest.partition(" ")
            assert sent_id == transcript.sent[-1]
            transcript.acknowledged[sent_id] = AuftragErgebnis.model_validate_json(payload)


def settled(store: SyncMemory, timeout: float = 30.0) -> None:
    """Wait until the server has ended the killed clients' transactions (it rolls back
    an open one when it sees the connection gone): judge the graph after that."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = store.run(cypher(store.memory,
                                "SHOW TRANSACTIONS YIELD transactionId RETURN count(*) AS n"))
        if rows[0]["n"] <= 1:
            return
        time.sleep(0.1)
    raise AssertionError("transactions of the killed clients still run 30 s later")


@pytest.mark.slow
def test_a_killed_client_leaves_no_order_half_written_or_doubled(
    store: SyncMemory, cli_env: dict[str, str]
) -> None:
    watch = Stopwatch("client-kill")
    user = new_user_id("rel-kill")
    env = {**os.environ, **cli_env}
    rng = random.Random(user)
    transcript = Transcript()
    memory = store.memory
    try:
        for kill in range(KILLS):
            # Each new client continues with the next order: nothing sent is sent again.
            # Every third kill waits for the commit of the order in flight.
            run_client(store, user, len(transcript.sent), env, kill % 3 == 2, rng, transcript)
        sent = transcript.sent
        assert len(sent) == len(set(sent))
        unconfirmed = [k for k in sent if k not in transcript.acknowledged]
        assert unconfirmed, "no kill struck an order in flight: nothing was proven"
        settled(store)

        # Before any replay: each order is in the graph completely or not at all, and
        # every acknowledged one is stored with the result its client saw.
        before = store.run(read_ledger(memory, user))
        problems = ledger_violations(before, transcript.acknowledged)
        assert problems == [], problems[:5]
        for k, seen in transcript.acknowledged.items():
            assert before.stored[k].model_dump(exclude={"wiederholt"}) == seen.model_dump(
                exclude={"wiederholt"}), k
        assert set(before.stored) <= set(sent), "an order no client sent is in the audit"

        # Replay every unacknowledged order once, with the same auftrag_id.
        acknowledged = dict(transcript.acknowledged)
        committed = 0
        for k in unconfirmed:
            result = store.run(memory.write(order_of(user, int(k.rsplit("-", 1)[1]))))
            stored = before.stored.get(k)
            assert result.wiederholt == (stored is not None), k
            if stored is not None:
                assert result.ergebnisse == stored.ergebnisse, k
                committed += 1
            acknowledged[k] = result

        after = store.run(read_ledger(memory, user))
        assert set(after.stored) == set(sent), "every order sent is stored exactly once"
        found = ledger_violations(after, acknowledged) + violations_of(store, user)
        assert found == [], found[:10]
    finally:
        store.run(memory.purge(user))

    print(f"client-kill: {KILLS} kills, {len(sent)} orders sent, {len(unconfirmed)} "
          f"unconfirmed ({committed} had committed), all replayed once, "
          f"{len(found)} violations")
    watch.figures.update(kills=KILLS, orders=len(sent), acknowledged=len(transcript.acknowledged),
                         unconfirmed=len(unconfirmed), committed_unseen=committed,
                         torn_lines=transcript.torn_lines, violations=len(found))
    print(watch.report())


if __name__ == "__main__":
    client(sys.argv[1], int(sys.argv[2]))

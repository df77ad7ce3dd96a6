"""The connection to Neo4j: one async driver, named queries, typed errors.

Reads run as read transactions and writes as write transactions (managed, so
transient errors are retried), all sessions share the driver's bookmark manager so
a caller reads its own writes, also on a `neo4j://` cluster. The exception is
`auto_commit`, for maintenance: a query batched with `CALL { ... } IN TRANSACTIONS` (the
decay sweep) commits its own inner transactions and so must run in an auto-commit
transaction, and the full passes of `kg check` may outlast `query_timeout` on a large
graph.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager, nullcontext
from contextvars import ContextVar, Token
from typing import Any, NamedTuple, NoReturn, TypeVar
from urllib.parse import urlsplit

from neo4j import (
    AsyncDriver,
    AsyncGraphDatabase,
    AsyncManagedTransaction,
    AsyncSession,
    Query,
    unit_of_work,
)
from neo4j import Record as DriverRecord
from neo4j.exceptions import (
    AuthError,
    ClientError,
    ConfigurationError,
    ConnectionAcquisitionTimeoutError,
    DatabaseError,
    DatabaseUnavailable,
    DriverError,
    IncompleteCommit,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from kg.errors import (
    AuthFailed,
    ConfigError,
    DatabaseNotFound,
    InvalidInput,
    KgError,
    MemoryLimitExceeded,
    ServerUnavailable,
    StoredDataError,
    UsageError,
)
from kg.queries import NamedQuery, registry
from kg.settings import Settings

T = TypeVar("T")
Record = dict[str, Any]

#: When the call now running must have ended, on the event loop's clock (set by
#: `Database.user_turn` for a call that first waited for the user's earlier calls in the
#: process): its transaction gets what is left of the call's deadline, not a deadline of
#: its own on top of the wait.
CALL_ENDS: ContextVar[float | None] = ContextVar("kg_call_ends", default=None)

#: The `Database` whose call runs here (`Database._enter`), which its `close` waits for:
#: the queries the call sends are part of it, not calls of their own. (Per database: a
#: call on another one inside it is a call of that one.)
_IN_CALL: ContextVar[Database | None] = ContextVar("kg_in_call", default=None)

#: How many of one user's calls that take the user's lock on the server (orders,
#: timeline changes, purges, imports, exports, renames, a Mappe read under the lock) a
#: `Database` sends at once; the others wait in the process, holding no connection
#: (`Database.user_turn`).
USER_TURNS = 8


class _TcpSocket(socket.socket):
    """A socket that names its protocol (TCP) when made for an address family only.

    asyncio turns Nagle's algorithm off (TCP_NODELAY) on the sockets it is given only when
    their protocol is IPPROTO_TCP; the async driver makes its sockets with protocol 0, so
    they keep Nagle on, and a small write that follows another before the server's answer
    (the Bolt handshake's last bytes, then HELLO) waits for the server's delayed ACK:
    about 40 ms on every new connection. The sync driver sets TCP_NODELAY itself.
    """

    def __init__(
        self, family: int = -1, type: int = -1, proto: int = -1, fileno: int | None = None
    ) -> None:
        if fileno is None and proto in (-1, 0) and type in (-1, socket.SOCK_STREAM):
            proto = socket.IPPROTO_TCP
        super().__init__(family, type, proto, fileno)


def _connect_without_nagle() -> None:
    """Make the driver's Bolt sockets with `_TcpSocket` (see there). The driver module is
    private: where it is gone, or no longer makes its sockets with the `socket` class
    this expects, nothing is changed (and tests/test_foundation.py says so)."""
    try:
        from neo4j._async_compat.network import _bolt_socket
    except ImportError:
        return
    if getattr(_bolt_socket, "socket", None) is socket.socket:
        _bolt_socket.socket = _TcpSocket  # type: ignore[attr-defined]


_connect_without_nagle()


def _is_numeric_host(host: object) -> bool:
    """`host` is an IPv4 or IPv6 address, not a name."""
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, str(host))
        except (OSError, ValueError):
            continue
        return True
    return False


def _resolve_numeric_hosts_inline() -> None:
    """Resolve an address that is already numeric (bolt://127.0.0.1:7687) on the spot.

    The async driver resolves every address with asyncio's `getaddrinfo`, which runs it
    in a thread of the event loop's default executor: the first one in a process starts
    that thread, and closing the loop joins it, ~4 ms of a `kg` command. Resolving a
    numeric address asks no name server and cannot block, so it needs no thread; a name
    still goes to one. The process's every driver resolves so, as every one makes its
    sockets with `_TcpSocket`. The driver module is private: where it is gone or
    its resolver is not the static method this expects, nothing is changed (and
    tests/test_foundation.py says so)."""
    try:
        from neo4j._async_compat.network._util import AsyncNetworkUtil
    except ImportError:
        return
    threaded = AsyncNetworkUtil.__dict__.get("get_address_info")
    if not isinstance(threaded, staticmethod):
        return

    async def get_address_info(host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        # The driver's own arguments, as they are: getaddrinfo parses a numeric host
        # itself, with no name server to ask.
        if _is_numeric_host(host):
            return socket.getaddrinfo(host, port, *args, **kwargs)
        return await threaded.__func__(host, port, *args, **kwargs)  # type: ignore[no-any-return]

    AsyncNetworkUtil.get_address_info = staticmethod(get_address_info)  # type: ignore[method-assign]


_resolve_numeric_hosts_inline()

START_HINT = (
    "start it with `kg server start` (no Docker; `./run neo4j start` picks it or Docker) "
    "or `docker compose up -d`"
)


class Tx:
    """A transaction that runs named queries only."""

    def __init__(self, tx: AsyncManagedTransaction, db: Database) -> None:
        self._tx = tx
        self._db = db
        #: The name of the query `with_commit` queued: nothing may follow it.
        self._queued: str | None = None

    async def run(self, name: str, /, **params: Any) -> list[Record]:
        return await self.rows(name, params, _deep)

    async def one(self, name: str, /, **params: Any) -> Record | None:
        rows = await self.run(name, **params)
        return rows[0] if rows else None

    async def page(self, name: str, /, within: float, **params: Any) -> list[Record]:
        """`run`, for a caller that reads pages of rows (`AutoCommit.page`): in a
        transaction, the transaction's own deadline bounds the read, not `within`."""
        return await self.run(name, **params)

    async def plain_run(self, name: str, /, **params: Any) -> list[Record]:
        """`run` for a query that returns plain values only (maps, lists, scalars): its
        columns as the driver decoded them, without `Record.data()`'s walk over every
        nested value (see `Database.plain_query`)."""
        return await self.rows(name, params, _shallow)

    async def plain_one(self, name: str, /, **params: Any) -> Record | None:
        """`plain_run`'s first row."""
        rows = await self.plain_run(name, **params)
        return rows[0] if rows else None

    async def rows(
        self, name: str, params: dict[str, Any], decode: Callable[[Any], Record]
    ) -> list[Record]:
        """The one round trip of every query in the transaction, decoded by `decode`."""
        db = self._db
        query = db.queries[name]
        self._not_after_queued(name)
        db.round_trips += 1
        try:
            async with db.first_runs.alone(name, db.settings.query_timeout):
                result = await self._tx.run(query.wire, params)
            return [decode(record) async for record in result]
        except (ServiceUnavailable, SessionExpired):
            db.first_runs.forget()
            raise

    async def with_commit(self, name: str, /, **params: Any) -> None:
        """Run the transaction's last query, whose rows nobody reads, with its COMMIT: its
        RUN and PULL are queued, and go out with the COMMIT in one round trip when the
        transaction function returns (with the ROLLBACK where it raises). `run` would
        wait for the query's answer first: a round trip more, ~0.5 ms of a 6 ms order.

        A failure of the query is the COMMIT's failure, which the managed transaction
        handles as it would the query's: a transient one runs the whole transaction
        again, any other is raised. A connection lost after the three are sent is a
        commit whose outcome is unknown (`IncompleteCommit`; the writer's
        `WriteNotConfirmed`, to be replayed). That window is wider than a COMMIT sent
        alone: it holds the query's run, where a lost connection was `SessionExpired`
        before, which the driver retried on its own. Nothing may run after it in the
        transaction.

        The first run of a query goes as `run` sends it (alone, see `FirstRuns`: its plan
        is made while the others wait for the RUN's answer), and so does every run where
        the driver's connection is not as this expects (its interface is private; and
        tests/test_foundation.py says so)."""
        db = self._db
        self._not_after_queued(name)
        tx = self._tx
        connection = getattr(tx, "_connection", None)
        queue = all(callable(getattr(connection, m, None)) for m in ("run", "pull"))
        # A transaction that is closed, or whose query failed, has handed its connection
        # back to the pool: what is queued there would go out with the connection's next
        # use, outside any transaction of the order. `run` refuses such a transaction.
        open_ = not getattr(tx, "_closed_flag", True) and getattr(tx, "_last_error", 1) is None
        if queue and open_ and db.first_runs.planned(name):
            assert connection is not None
            try:
                connection.run(db.queries[name].wire, params)
            except TypeError:
                pass  # the driver's `run` takes other arguments now: nothing was queued
            else:
                db.round_trips += 1
                connection.pull()
                self._queued = name
                return
        await self.rows(name, params, _shallow)
        self._queued = name

    def _not_after_queued(self, name: str) -> None:
        if self._queued is not None:
            raise RuntimeError(
                f"query {name!r} after {self._queued!r}, which goes with the COMMIT: it "
                "must be the transaction's last query"
            )


class Budget(NamedTuple):
    """The time a transaction is given: `seconds`, from the setting named `setting`;
    `whole`: one transaction (a managed one), not a batch of a batched query."""

    seconds: float
    setting: str
    whole: bool


class AutoCommit:
    """A session whose every named query is its own auto-commit transaction, with
    `maintenance_timeout` instead of the interactive `query_timeout`.

    Not retried: use it only for queries that are safe to run again (idempotent).
    """

    def __init__(self, session: AsyncSession, db: Database) -> None:
        self._session = session
        self._db = db
        self._began = time.monotonic()  # when the query now running began

    async def run(self, name: str, /, **params: Any) -> list[Record]:
        try:
            return await self._run(name, params)
        except Exception as exc:  # mapped to a typed error, or re-raised untouched
            self._raise_typed(exc)

    async def run_again(self, name: str, /, **params: Any) -> list[Record]:
        """`run` for a query that is safe to run again as a whole: a transient failure
        (a deadlock with the writers, which Neo4j ends one side of) runs it again, for up
        to `retry_time` after the first failure. What it committed in earlier batches
        stands."""
        give_up: float | None = None  # counted from the first failure: a slice may be long
        delay = 0.05
        while True:
            try:
                return await self._run(name, params)
            except TransientError as exc:
                if give_up is None:
                    give_up = time.monotonic() + self._db.settings.retry_time
                if not _retryable(exc) or time.monotonic() + delay > give_up:
                    self._raise_typed(exc)
                await asyncio.sleep(delay)
                delay *= 2
            except Exception as exc:  # mapped to a typed error, or re-raised untouched
                self._raise_typed(exc)

    async def page(self, name: str, /, within: float, **params: Any) -> list[Record]:
        """`run` for a short read of many rows (a page of them): the whole read must be
        done within `within` seconds, a client-side deadline, and its rows are read
        without the driver's socket timers that are no shorter (`_without_socket_timers`: a
        task and a timer per socket read, which made a page of stored order results
        take 1.6 times as long). `within` bounds a read that makes progress too, so it
        must be far above the page's time; a silent server is then noticed within it,
        where the socket's read timeout (the server's hint, 120 s) noticed it before."""
        try:
            async with asyncio.timeout(within):
                return await self._run(name, params, within)
        except TimeoutError as exc:
            raise self._db._no_answer(within) from exc
        except Exception as exc:  # mapped to a typed error, or re-raised untouched
            self._raise_typed(exc)

    async def _run(
        self, name: str, params: dict[str, Any], bound: float | None = None
    ) -> list[Record]:
        query = self._db.queries[name]
        timeout = self._db.settings.maintenance_timeout
        self._began = time.monotonic()
        result = await self._session.run(Query(query.wire, timeout=timeout), params)
        if bound is None:
            return [record.data() async for record in result]
        # The session's connection is private to the driver: where it is gone, the read
        # keeps its timers (slower, still correct).
        with _without_socket_timers(getattr(self._session, "_connection", None), bound):
            return [record.data() async for record in result]

    def _raise_typed(self, exc: Exception) -> NoReturn:
        typed = self._db.translate(exc, self._db.budget(maintenance=True, whole=False),
                                   time.monotonic() - self._began)
        if typed is exc:
            raise exc
        raise typed from exc


class LockLost(DriverError):
    """The user's lock node was deleted (by a purge) while this write transaction waited
    for its lock: the transaction holds the lock of a node that is gone, which serialises
    nothing with the user's next writes. Raised inside the transaction, before it writes;
    the managed transaction rolls back and runs again (the driver retries what says it is
    retryable), and its next attempt takes the lock of a node that is there."""

    def is_retryable(self) -> bool:
        return True


class FirstRuns:
    """The first run of each named query goes alone; runs of it that come meanwhile wait.

    The server plans a query the first time it sees it (after its start), and the
    library's large queries take it seconds to plan on a slow machine (the Mappe's and
    the writer's first query ~1 s on a fast one). It does not share a plan still being
    made: a burst of orders after a restart planned the writer's queries once per order,
    on two cores at once (12 concurrent orders of a user: 18-21 s, against 12 s with
    first runs alone; docs/operations.md). So a query's first run is sent alone; the
    others wait until it is answered, at most `bound` seconds, then go: in a transaction
    until its RUN is answered (the plan made, not the query's locks or rows), for a
    single read until its rows are in.

    A connection lost may mean a restarted server with an empty plan cache: then every
    query is new again (`forget`). Nothing else notices a restart."""

    def __init__(self) -> None:
        self._runs: dict[str, asyncio.Event] = {}

    @asynccontextmanager
    async def alone(self, name: str, bound: float) -> AsyncIterator[None]:
        event = self._runs.get(name)
        if event is None:
            self._runs[name] = event = asyncio.Event()
            try:
                yield
            except BaseException:
                # Failed or cancelled, perhaps before the server planned it: the next run
                # of the query is its first again.
                if self._runs.get(name) is event:
                    del self._runs[name]
                raise
            finally:
                event.set()
            return
        if not event.is_set():
            try:
                async with asyncio.timeout(bound):
                    await event.wait()
            except (TimeoutError, RuntimeError):
                pass  # the first run is slow (or of another event loop): go on regardless
        yield

    def planned(self, name: str) -> bool:
        """The query's first run was answered: the server has its plan (unless it was
        restarted meanwhile, which a lost connection tells: `forget`)."""
        event = self._runs.get(name)
        return event is not None and event.is_set()

    def forget(self) -> None:
        self._runs.clear()


def held(user_id: str, taken: bool) -> None:
    """Raise `LockLost` where the user's lock query found its lock node gone."""
    if not taken:
        raise LockLost(f"the lock node of user {user_id!r} was deleted while waiting for it")


class Database:
    """The driver, the database name and the query registry, passed around together."""

    def __init__(self, driver: AsyncDriver, settings: Settings) -> None:
        self.driver = driver
        self.settings = settings
        self.name = settings.neo4j_database
        self.queries = registry()
        self.first_runs = FirstRuns()
        #: Queries sent to the server so far (a test asserts the Mappe costs one).
        self.round_trips = 0
        #: Single reads on a pooled connection without a session (see `_DirectReads`);
        #: None where the driver's internals are not as expected (a session per read).
        self.direct = _DirectReads.of(driver, settings)
        #: `close` was called: a call after it is the caller's mistake (UsageError).
        self.closed = False
        #: Calls running now (`_enter`), which `close` waits for; and the event it waits on
        #: (one for every `close`: a second one waited for an event nobody set).
        self._calls = 0
        self._idle: asyncio.Event | None = None
        #: Per user, the calls that may take the user's lock at once (`user_turn`).
        self._turns: weakref.WeakValueDictionary[str, asyncio.Semaphore] = (
            weakref.WeakValueDictionary())

    @classmethod
    def open(cls, settings: Settings) -> Database:
        try:
            driver = AsyncGraphDatabase.driver(
                settings.neo4j_uri,
                auth=(settings.neo4j_username, settings.neo4j_password.get_secret_value()),
                connection_timeout=settings.connection_timeout,
                connection_acquisition_timeout=settings.connection_timeout * 2,
                max_connection_pool_size=settings.max_connections,
                max_transaction_retry_time=settings.retry_time,
                notifications_min_severity="OFF",
            )
        except (ConfigurationError, ValueError) as exc:
            raise ConfigError(
                f"NEO4J_URI {settings.neo4j_uri!r} is not usable by the driver ({exc}) — "
                "e.g. bolt://127.0.0.1:7687"
            ) from None
        return cls(driver, settings)

    async def close(self) -> None:
        """Refuse new calls, wait for the calls running to end, then close the driver.

        Closed at once, a call in flight went on and could commit after `close`
        returned, and its cut-off sockets warned (a stranger's attack). A call waiting in
        its user's turn has run nothing and is refused. The wait is bounded by the
        longest a call may take (maintenance's deadline); then the driver closes all the
        same, and what still runs fails typed."""
        if _IN_CALL.get() is self:
            # (It would wait for the call it is made in: the whole bound, a review.)
            raise UsageError("close() was called inside a call of this Memory (a progress "
                             "callback, say): close it after the call has returned")
        # Closing the driver empties its pool but lets the pool open new connections:
        # reads after this go through a session, which the closed driver refuses.
        self.direct = None
        self.closed = True
        try:
            if self._calls:
                if self._idle is None:
                    self._idle = asyncio.Event()
                s = self.settings
                longest = max(s.query_timeout, s.maintenance_timeout) + (
                    s.retry_time + s.connection_timeout)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(longest):
                        await self._idle.wait()
        finally:
            await self.driver.close()

    def _enter(self) -> Token[Database | None] | None:
        """A call begins: every query or transaction, a user's turn (a write's several
        transactions are one call), and a library call of several transactions
        (`counted`). Refused once `close` began, counted while it runs (`close` waits for
        it); within a call, the queries it sends pass (None). (Not a context manager: a
        generator-based one cost ~5 µs a query.)"""
        if _IN_CALL.get() is self:
            return None
        if self.closed:
            raise _closed()
        self._calls += 1
        return _IN_CALL.set(self)

    @asynccontextmanager
    async def counted(self) -> AsyncIterator[None]:
        """One call of several transactions (a purge and its lock node, a decay sweep
        and its record, an audit prune's batches, a check's reads side by side, an
        import's checks and write, an export's read and file): `close` waits for all
        of it, where it refused the rest after the first had committed ("nothing of the
        call ran", which was then untrue: a review), or cut a check between its reads."""
        call = self._enter()
        try:
            yield
        finally:
            self._leave(call)

    def _leave(self, token: Token[Database | None] | None) -> None:
        """The call `_enter` began has ended."""
        if token is None:
            return
        _IN_CALL.reset(token)
        self._calls -= 1
        if not self._calls and self._idle is not None:
            self._idle.set()

    async def verify(self, *, database: bool = True) -> None:
        """Fail fast with a typed error unless the server answers and, with `database`,
        the database too (a caller whose next query proves that passes False)."""
        try:
            await self.driver.verify_connectivity()
        except Exception as exc:
            raise self.translate(exc) from exc
        if database:
            await self.read(lambda tx: tx.run("ping"))

    async def clear_plans(self) -> int:
        """Empty the server's plan cache; how many plans it held (the server says so in
        words only: "Query cache cleared of N queries")."""
        async with self.auto_commit() as session:
            (row,) = await session.run("clear_plans")
        found = re.search(r"cleared of (\d+) quer", str(row["value"]))
        return int(found.group(1)) if found else 0

    @asynccontextmanager
    async def user_turn(self, user_id: str, *, maintenance: bool = False) -> AsyncIterator[None]:
        """Around every call that takes the user's lock on the server: at most
        `USER_TURNS` of one user's such calls at a time in this process (the store takes
        them one at a time). They waited for that lock on the server, each holding a
        connection of the pool and a transaction: a hundred of one user's writes behind
        a long purge took every connection, and every other user's call failed after
        waiting for one (a stranger's attack). Waiting here holds nothing; another
        process's calls of the user still wait on the server. (A few at once, not one:
        where Neo4j refuses connections, writes queued one behind the other failed one
        after the other, each after its predecessor's retries, where together they fail
        at once.)

        The wait and the call's transaction share one deadline, a write's (a maintenance
        transaction's: `maintenance`): queued, the k-th write waited k times it (a
        review), and a frozen server's writes ended one deadline after the other."""
        lock = self._turns.get(user_id)
        if lock is None:
            lock = self._turns[user_id] = asyncio.Semaphore(USER_TURNS)
        s = self.settings
        wait = (s.maintenance_timeout if maintenance else s.query_timeout) + (
            s.retry_time + s.connection_timeout)
        ends = asyncio.get_running_loop().time() + wait
        try:
            if lock.locked():  # (a timer only where the call waits: it cost ~20 µs)
                async with asyncio.timeout_at(ends):
                    await lock.acquire()
            else:
                await lock.acquire()
        except TimeoutError:
            raise ServerUnavailable(
                f"the user's earlier calls in this process did not finish within {wait:g} s "
                f"({'KG_MAINTENANCE_TIMEOUT' if maintenance else 'KG_QUERY_TIMEOUT'}, "
                "KG_RETRY_TIME, KG_CONNECTION_TIMEOUT): Neo4j is slow, or the user's lock is "
                "held (an import, a purge) — nothing of this call ran; retry it later"
            ) from None
        token = CALL_ENDS.set(ends)
        try:
            call = self._enter()
            try:
                yield
            finally:
                self._leave(call)
        finally:
            CALL_ENDS.reset(token)
            lock.release()

    def _session(self, access: str) -> Any:
        return self.driver.session(
            database=self.name,
            default_access_mode=access,
            bookmark_manager=self.driver.execute_query_bookmark_manager,
        )

    async def read(self, work: Callable[[Tx], Awaitable[T]]) -> T:
        call = self._enter()
        try:
            return await self._execute("READ", work)
        finally:
            self._leave(call)

    async def write(
        self, work: Callable[[Tx], Awaitable[T]], *, maintenance: bool = False
    ) -> T:
        """A managed write transaction; `maintenance`: long maintenance work, given
        `maintenance_timeout` instead of `query_timeout`."""
        call = self._enter()
        try:
            return await self._execute("WRITE", work, maintenance)
        finally:
            self._leave(call)

    async def query(self, name: str, /, **params: Any) -> list[Record]:
        """One named read query in one round trip: an auto-commit read (a managed
        transaction would add a COMMIT round trip), retried like a managed one."""
        call = self._enter()
        try:
            return await self._read_once(name, params, _deep)
        finally:
            self._leave(call)

    async def plain_query(self, name: str, /, **params: Any) -> list[Record]:
        """`query` for the hot read: each record becomes a dict of its columns as the
        driver decoded them, without `Record.data()`'s walk over every nested value
        (which turns nodes into dicts, and costs milliseconds on a Mappe's lists). For
        queries that return plain values only."""
        call = self._enter()
        try:
            return await self._read_once(name, params, _shallow)
        finally:
            self._leave(call)

    async def _read_once(
        self, name: str, params: dict[str, Any], decode: Callable[[Any], Record]
    ) -> list[Record]:
        query = self.queries[name]
        s = self.settings
        give_up = time.monotonic() + s.retry_time
        delay = 0.05
        while True:
            self.round_trips += 1
            try:
                async with asyncio.timeout(_read_deadline(s)):
                    # Half the read's deadline at most: a waiter keeps time to run.
                    async with self.first_runs.alone(name, s.query_timeout / 2):
                        records = await self._auto_read(query, params)
                    return [decode(record) for record in records]
            except (ServiceUnavailable, SessionExpired, Neo4jError) as exc:
                if isinstance(exc, (ServiceUnavailable, SessionExpired)):
                    self.first_runs.forget()
                # Transient failures are retried, and so is a failure the server marks
                # as safe to run again (`_idempotent`, as the driver's auto-commit retry
                # reads it).
                if isinstance(exc, (ServiceUnavailable, SessionExpired, TransientError)):
                    again = _retryable(exc)
                else:
                    marks = getattr(exc, "diagnostic_record", None) or {}
                    again = marks.get("_idempotent") is True
                if not again or time.monotonic() + delay > give_up:
                    raise self.translate(exc) from exc
                await asyncio.sleep(delay)
                delay *= 2
            except TimeoutError as exc:
                raise self._no_answer(_read_deadline(s)) from exc
            except Exception as exc:  # mapped to a typed error, or re-raised untouched
                raise self.translate(exc) from exc

    async def _auto_read(self, query: NamedQuery, params: dict[str, Any]) -> list[DriverRecord]:
        """The records of one auto-commit read, on a pooled connection where it can."""
        direct = self.direct
        if direct is not None:
            try:
                return await direct.run(query.wire, params)
            except (TypeError, AttributeError):
                if direct.proven:
                    raise
                # The driver's private interface is not what `_DirectReads` expects (its
                # first call failed on it): every read takes a session from now on.
                self.direct = None
        timeout = self.settings.query_timeout
        async with self._session("READ") as session:
            result = await session.run(Query(query.wire, timeout=timeout), params)
            return [record async for record in result]

    @asynccontextmanager
    async def auto_commit(self, access: str = "WRITE") -> AsyncIterator[AutoCommit]:
        """A session for maintenance queries: ones that batch themselves (`IN
        TRANSACTIONS`, access WRITE) or long full passes (access READ)."""
        call = self._enter()
        try:
            async with self._session(access) as session:
                yield AutoCommit(session, self)
        except KgError:
            raise
        except Exception as exc:  # mapped to a typed error, or re-raised untouched
            typed = self.translate(exc, self.budget(maintenance=True, whole=False))
            if typed is exc:
                raise
            raise typed from exc
        finally:
            self._leave(call)

    async def _execute(
        self, access: str, work: Callable[[Tx], Awaitable[T]], maintenance: bool = False
    ) -> T:
        budget = self.budget(maintenance=maintenance, whole=True)
        seconds = budget.seconds
        began = time.monotonic()  # of the attempt now running (the driver retries)

        @unit_of_work(timeout=seconds)
        async def unit(tx: AsyncManagedTransaction) -> T:
            nonlocal began
            began = time.monotonic()
            try:
                return await work(Tx(tx, self))
            except Neo4jError as exc:
                if _out_of_memory(exc):
                    # Raised as a typed error, not the driver's: the driver runs again
                    # what it takes for transient, and this would fail again the same.
                    raise self.translate(exc, budget) from exc
                raise

        # The server ends a transaction after query_timeout; this client-side deadline
        # covers a server that stops answering at all (a frozen process, a dropped
        # network), where the driver would wait for the server's receive hint (120 s).
        s = self.settings
        deadline = seconds + s.retry_time + s.connection_timeout
        ends = CALL_ENDS.get()
        if ends is not None:
            deadline = max(0.0, min(deadline, ends - asyncio.get_running_loop().time()))
        try:
            async with asyncio.timeout(deadline), self._session(access) as session:
                result: T
                with _begin_with_first_query(session):
                    if access == "READ":
                        result = await session.execute_read(unit)
                    else:
                        result = await session.execute_write(unit)
                return result
        except KgError:
            raise
        except TimeoutError as exc:
            raise self._no_answer(deadline) from exc
        except Exception as exc:  # mapped to a typed error, or re-raised untouched
            if isinstance(exc, (ServiceUnavailable, SessionExpired)):
                # Lost at the COMMIT, which carries a query (`Tx.with_commit`): perhaps a
                # restarted server, whose plans are gone (`Tx.rows` notices the rest).
                self.first_runs.forget()
            raise self.translate(exc, budget, time.monotonic() - began) from exc

    def _no_answer(self, seconds: float) -> ServerUnavailable:
        """The client-side deadline ran out: the server is down, frozen or unreachable."""
        return ServerUnavailable(
            f"Neo4j at {self.settings.neo4j_uri} did not answer within {seconds:.0f}s — is "
            f"it overloaded or hanging? Check it, or {START_HINT}."
        )

    def budget(self, *, maintenance: bool, whole: bool) -> Budget:
        """The time a transaction is given, and the setting it comes from."""
        if maintenance:
            return Budget(self.settings.maintenance_timeout, "KG_MAINTENANCE_TIMEOUT", whole)
        return Budget(self.settings.query_timeout, "KG_QUERY_TIMEOUT", whole)

    def translate(
        self, exc: Exception, budget: Budget | None = None, ran: float | None = None
    ) -> Exception:
        """A typed, actionable error for a driver failure (never with the password);
        `budget`: the time the failed transaction was given (default the interactive
        `query_timeout`), `ran`: how long its attempt ran, where known."""
        uri = self.settings.neo4j_uri
        user = self.settings.neo4j_username
        code = getattr(exc, "code", None) or ""
        if self.closed and type(exc) is DriverError:  # (the driver's own "Driver closed";
            # a call that ran when `close` came keeps its error: a commit cut off is
            # WriteNotConfirmed, to be replayed, not "open a new one")
            # (It was the base KgError "Driver closed", where a closed SyncMemory says
            # UsageError: a stranger's attack.)
            return _closed()
        if "AuthenticationRateLimit" in code:
            return AuthFailed(
                f"Neo4j at {uri} refuses every login of user {user!r} for a while (about 5 s, "
                "dbms.security.auth_lock_time) after too many wrong passwords in a row — even "
                "the right password fails until then; wait, then retry with the right "
                "NEO4J_PASSWORD."
            )
        if isinstance(exc, UnicodeEncodeError):
            # A lone surrogate: a byte that was not UTF-8 (an argument from a terminal in
            # Latin-1, read as Python reads such bytes), which Bolt cannot carry.
            return InvalidInput(
                f"the text {exc.object[:60]!r} is not Unicode text: it holds bytes that are "
                "not UTF-8 (from a terminal or a file in another encoding?) — give it as "
                "UTF-8"
            )
        if isinstance(exc, AuthError):
            return AuthFailed(
                f"Neo4j at {uri} refused user {user!r}: wrong "
                "password — set NEO4J_USERNAME / NEO4J_PASSWORD."
            )
        if isinstance(exc, ClientError) and exc.code and "DatabaseNotFound" in exc.code:
            return DatabaseNotFound(
                f"database {self.name!r} does not exist on {uri} — set NEO4J_DATABASE "
                "(Community Edition has one user database, `neo4j`)."
            )
        if _out_of_memory(exc):
            said = f"({code}: {str(getattr(exc, 'message', '') or '')[:200]})"
            if code.endswith("TransactionOutOfMemoryError"):
                why = ("it needed more memory than the server allows one transaction "
                       f"{said}: a retry would fail the same")
                more = "a higher db.memory.transaction.max"
            else:
                # The pool of all transactions (or the heap) ran out: this call alone, or
                # other work at that moment; a retry of a hog only takes the pool again.
                why = ("the memory the server keeps for all transactions ran out while "
                       f"it ran {said}: other work may have held most of it then, or this "
                       "call needs more than the server has — try once more later; if it "
                       "fails again, it is this call")
                more = "a higher db.memory.transaction.total.max"
            return MemoryLimitExceeded(
                f"Neo4j at {uri} refused the query: {why}. The refused transaction wrote "
                "nothing (a decay sweep's earlier batches stay, and running it again is "
                "safe). Ask for less (for a Mappe, a smaller cap or fewer entities at "
                "once), or give the server more: a larger heap (server.memory.heap.max_size; "
                f"KG_NEO4J_HEAP for `kg server start`) or {more} in neo4j.conf."
            )
        if isinstance(exc, DatabaseUnavailable) or code.endswith("DatabaseUnavailable"):
            return ServerUnavailable(
                f"database {self.name!r} on {uri} is unavailable (stopped, starting, or "
                "failed — e.g. a full disk) — check the server's log, then retry."
            )
        if isinstance(exc, TransientError):
            if code.startswith("Neo.TransientError.Transaction.") and (
                "Deadlock" in code or "Lock" in code
            ):
                why = "a deadlock or lock timeout under load"
            else:
                why = str(exc.message or "a transient failure")[:200]
            return ServerUnavailable(
                f"Neo4j at {uri} kept reporting a transient error for "
                f"{self.settings.retry_time:.0f}s ({code}: {why}) — retry later, or raise "
                "KG_RETRY_TIME."
            )
        if isinstance(exc, DatabaseError):
            # The server failed on its side (e.g. a commit on a full disk): nothing of the
            # transaction is known to be written.
            return ServerUnavailable(
                f"Neo4j at {uri} failed on its side ({code}: "
                f"{str(exc.message or '')[:200]}) — check the server's log (a full disk?), "
                "then retry."
            )
        if isinstance(exc, IncompleteCommit):
            # The COMMIT (with the query `Tx.with_commit` sends with it) went out, and the
            # connection was lost before its answer: the server may have committed.
            return ServerUnavailable(
                f"the connection to Neo4j at {uri} was lost while a transaction "
                "committed: whether it was written is unknown, and nothing of it is "
                "half-written. Read it back before you retry it (`kg timeline show`, "
                "`kg mappe`; an order is replayed safely with the same auftrag_id); if "
                f"the server is gone, {START_HINT}."
            )
        if isinstance(exc, (ServiceUnavailable, SessionExpired, OSError)):
            if _tls_mismatch(exc, uri):
                return ServerUnavailable(
                    f"Neo4j at {uri} answers, but not with TLS: the URI asks for an "
                    "encrypted connection (+s / +ssc) and the server speaks plain Bolt on "
                    "that port — use bolt:// or neo4j://, or enable TLS on the server."
                )
            return ServerUnavailable(
                f"Neo4j is not reachable at {uri} ({type(exc).__name__}) — {START_HINT}."
            )
        if isinstance(exc, LockLost):
            # Run again until the retries ran out (KG_RETRY_TIME): it reached a caller as
            # "Neo4j error at …: the lock node … was deleted", exit 1 (a stranger's attack).
            return ServerUnavailable(
                f"{exc}, again and again for {self.settings.retry_time:g} s (KG_RETRY_TIME): "
                "the user's data was being purged — nothing of this call ran; send it again "
                "once the purge has ended"
            )
        if isinstance(exc, ClientError) and code.endswith(
            ("Statement.TypeError", "Statement.ArgumentError")
        ):
            # Raised as a query runs over stored values: one of them has a type or form
            # the query cannot use (the library never writes such a value).
            said = str(exc.message or "")[:200]
            error = StoredDataError(
                f"a value in {self.name!r} on {uri} has a type or form this query cannot "
                f"use ({said}): most likely a stored value changed "
                "outside the library — run `kg check` to find it (if it finds none, this is "
                "a bug in kg: please report it)."
            )
            error.server_message = said
            return error
        budget = budget or self.budget(maintenance=False, whole=True)
        timed_out = isinstance(exc, ClientError) and exc.code and (
            "TransactionTimedOut" in exc.code
            # ended while it waited for a lock: by its timeout when it ran that long
            or (exc.code.endswith(("Transaction.LockClientStopped", "Transaction.Terminated"))
                and ran is not None and ran >= budget.seconds))
        if timed_out:
            # (A read's too: "what it had written is rolled back" spoke of writes where
            # `kg mappe` and `kg check` write nothing; a stranger's attack.)
            kept = ("nothing of it is committed" if budget.whole else "nothing of this "
                    "batch is committed (a job's earlier batches stay, where it writes; "
                    "running it again is safe)")
            return ServerUnavailable(
                f"Neo4j at {uri} did not finish within {budget.seconds:g} s "
                f"({budget.setting}): the server ended the transaction, and {kept} — for a "
                f"larger store raise {budget.setting}, or find what slows the server."
            )
        if isinstance(exc, ClientError) and exc.code and exc.code.endswith(
            ("Transaction.LockClientStopped", "Transaction.Terminated")
        ):
            # A server shutting down (or an admin) ends the transactions still running:
            # nothing of them is committed, and the caller may run them again.
            return ServerUnavailable(
                f"Neo4j at {uri} ended the transaction ({exc.code.rsplit('.', 1)[-1]}): it "
                "is shutting down or the transaction was terminated — retry once it answers."
            )
        if isinstance(exc, ConnectionAcquisitionTimeoutError):
            # (It was the base KgError, which a caller handling the documented errors
            # missed: a stranger's attack, one user's burst of writes behind a held lock.)
            return ServerUnavailable(
                f"every connection to Neo4j at {uri} was busy for "
                f"{self.settings.connection_timeout * 2:g} s (KG_MAX_CONNECTIONS: "
                f"{self.settings.max_connections}): too many calls at once in this process, "
                "or calls waiting on a slow server — nothing of this call ran; retry it, or "
                "raise KG_MAX_CONNECTIONS."
            )
        if isinstance(exc, (Neo4jError, DriverError)):
            return KgError(f"Neo4j error at {uri}: {exc}")
        return exc


def _closed() -> UsageError:
    return UsageError("this Memory is closed: open a new one (`async with await "
                      "Memory.open() as memory:` closes it at the block's end)")


def lost_at_commit(exc: BaseException) -> bool:
    """A typed error (`Database.translate`) for a connection lost after the COMMIT went
    out: the transaction may be written or not."""
    return isinstance(exc.__cause__, IncompleteCommit)


def _tls_mismatch(exc: BaseException, uri: str) -> bool:
    """A +s / +ssc URI whose TLS connection failed while the port answers plain TCP:
    the server runs, but does not speak TLS there."""
    scheme = uri.split("://", 1)[0]
    if not scheme.endswith(("+s", "+ssc")):
        return False
    seen: BaseException | None = exc
    for _ in range(8):  # the SSL error is somewhere in the chain of causes
        if seen is None:
            break
        if "SSL" in type(seen).__name__ or "SSL" in str(seen) or "encrypted" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    # A routing driver (neo4j+s) reports no cause: ask the port itself.
    try:
        parts = urlsplit(uri)
        with socket.create_connection((parts.hostname or "", parts.port or 7687), timeout=1):
            return True
    except (OSError, ValueError):
        return False


class _DirectReads:
    """Auto-commit reads sent on a connection of the driver's pool, without a session.

    A session and its result object cost the async driver about 0.2 ms of CPU per query
    on top of the round trip (their state, bookkeeping and handlers), which is a third
    of a `RETURN 1`. Measured on 2026-12-01 on the 1M bench store, 900 calls each,
    interleaved: `RETURN 1` p50 0.67 ms through `Database.query` with a session, 0.47 ms
    this way; the Mappe 1.37 / 1.15 ms. What runs is the driver's own: its pool (routing,
    liveness, the acquisition timeout), its connection and messages (RUN and PULL sent
    together, as a session sends them, with the access mode and the bookmarks of the
    shared manager, which the read's own bookmark then updates, as a session does), its
    error mapping (a FAILURE resets the connection as it is read; a cancelled read closes
    it), its decoding into records. What is skipped is the session around one query.

    The pool's interface is private to the driver: `of` returns None where its names are
    not there, and where the first call finds its signatures changed, `Database` drops
    this for a session per read (tests/test_foundation.py fails when the installed driver
    takes the session path).
    """

    def __init__(
        self, driver: AsyncDriver, settings: Settings, pool: Any, *,
        database: Any, auth: Any, deadline: Callable[[float], Any], broken: Any,
    ) -> None:
        """`pool` and the rest are the driver's private pieces that `of` found."""
        self._bookmarks = driver.execute_query_bookmark_manager
        self._pool = pool
        self._database = database
        self._auth = auth
        self._deadline = deadline
        self._broken = broken
        self._name = settings.neo4j_database
        self._acquire_seconds = settings.connection_timeout * 2
        self._timeout = settings.query_timeout
        #: The deadline `Database._read_once` puts around every read (seconds).
        self._bound = _read_deadline(settings)
        #: A read has gone through: the driver's interface is as expected.
        self.proven = False

    @classmethod
    def of(cls, driver: AsyncDriver, settings: Settings) -> _DirectReads | None:
        try:
            from neo4j._async.io._pool import (
                AcquisitionAuth,
                AcquisitionDatabase,
                acquisition_timeout_to_deadline,
            )
            from neo4j._codec.hydration import BrokenHydrationObject
        except ImportError:
            return None
        pool = getattr(driver, "_pool", None)
        if not all(callable(getattr(pool, m, None)) for m in ("acquire", "release")):
            return None
        if not callable(getattr(DriverRecord, "_new", None)):
            return None
        return cls(
            driver, settings, pool,
            database=AcquisitionDatabase(settings.neo4j_database),
            auth=AcquisitionAuth(None),
            deadline=acquisition_timeout_to_deadline,
            broken=BrokenHydrationObject,
        )

    async def run(self, text: str, params: dict[str, Any]) -> list[DriverRecord]:
        """The records of one auto-commit read. The caller bounds it in time
        (`Database._read_once`: `query_timeout + connection_timeout`): its socket waits
        rely on that bound where it is shorter than their own timeouts."""
        bookmarks = await self._bookmarks.get_bookmarks()
        connection = await self._pool.acquire(
            "READ", self._deadline(self._acquire_seconds), self._database, bookmarks,
            self._auth, None,
        )
        try:
            head: dict[str, Any] = {}
            tail: dict[str, Any] = {}
            values: list[Any] = []
            connection.run(
                text, params, mode="r", bookmarks=bookmarks, timeout=self._timeout,
                db=self._name, notifications_min_severity="OFF", on_success=head.update,
            )
            connection.pull(on_records=values.extend, on_success=tail.update)
            with _without_socket_timers(connection, self._bound):
                await connection.send_all()
                await connection.fetch_all()
        except BaseException as exc:
            # The driver closes a connection whose read was cancelled, and resets one
            # whose query failed as it reads the FAILURE; anything else raised between
            # the messages leaves it in a state nobody knows, so it is closed too.
            if not isinstance(exc, (Neo4jError, DriverError)):
                connection.kill()
            raise
        finally:
            await self._pool.release(connection)
        keys = head.get("fields", [])
        records = [
            DriverRecord._new(keys, row.raw_data if isinstance(row, self._broken) else row)
            for row in values
        ]
        if tail.get("bookmark"):
            await self._bookmarks.update_bookmarks(bookmarks, [tail["bookmark"]])
        self.proven = True
        return records


def _read_deadline(settings: Settings) -> float:
    """The client-side deadline of one attempt of a single auto-commit read (seconds)."""
    return settings.query_timeout + settings.connection_timeout


@contextmanager
def _without_socket_timers(connection: Any, bound: float) -> Iterator[None]:
    """For the block, take off the connection socket's read and write timeouts that are
    no shorter than `bound`, the deadline the caller puts around the block; then put them
    back. A direct read releases its connection after the block; a session
    (`AutoCommit.page`) releases it as it reads the last answer, inside the block, and
    nothing is awaited between that and the restore, so no other task takes the
    connection before its timeouts are back (the tests check what the pool holds).

    With a timeout set (the server's hint `connection.recv_timeout_seconds`, 120 s; the
    driver's `connection_write_timeout`, 30 s), the async driver waits for every socket
    read and write through its `wait_for`, which makes a task and a timer each time: 6
    reads for a Mappe, 14 for a turn; 0.1-0.2 ms of a Mappe. A timeout no shorter than
    the caller's deadline never fires first (the deadline began before each wait), so it
    only costs; a shorter one (the write timeout with the defaults, whose deadline is
    35 s; the read timeout where `query_timeout` is raised) still detects a silent
    server sooner, and is kept. (A write order waits 17 times, but without the timers in
    its transaction's queries neither its latency nor its client CPU moved beyond the
    noise: not done there.) The socket's interface is private to the driver: where it is
    not as expected (driver 6's), nothing is changed (and tests/test_foundation.py says
    so)."""
    sock: Any = getattr(connection, "socket", None)
    names = ("get_read_timeout", "get_write_timeout", "set_read_timeout", "set_write_timeout")
    if not all(callable(getattr(sock, n, None)) for n in names):
        yield
        return
    read, write = sock.get_read_timeout(), sock.get_write_timeout()
    try:
        if read is not None and read >= bound:
            sock.set_read_timeout(None)
        if write is not None and write >= bound:
            sock.set_write_timeout(None)
        yield
    finally:
        sock.set_read_timeout(read)
        sock.set_write_timeout(write)


def _begin_with_first_query(session: AsyncSession) -> AbstractContextManager[Any]:
    """Have the session send a transaction's BEGIN with its first query, in one round
    trip, as the driver does for `execute_query`; in `execute_read` / `execute_write` it
    sends BEGIN alone and waits for the answer. The switch is private to the driver:
    where it is gone, transactions begin as the driver begins them (and
    tests/test_foundation.py says so)."""
    switch = getattr(session, "_pipelined_begin", None)
    if switch is None or not hasattr(switch, "__enter__"):
        return nullcontext()
    return switch  # type: ignore[no-any-return]


def _retryable(exc: Exception) -> bool:
    """What the driver's managed transactions would retry, but for a query refused for
    memory (`_out_of_memory`)."""
    if _out_of_memory(exc):
        return False
    is_retryable = getattr(exc, "is_retryable", None)
    return bool(is_retryable()) if callable(is_retryable) else True


def _out_of_memory(exc: BaseException) -> bool:
    """The server refused a query for memory (MemoryPoolOutOfMemoryError when the
    transactions' pool is full, TransactionOutOfMemoryError over one transaction's limit,
    OutOfMemoryError for the heap itself). Neo4j files the first and last as transient,
    as other transactions may free memory meanwhile; but a query that filled the pool by
    itself asks for the same memory again, each retry taking the pool from every other
    transaction for seconds (a Mappe with a large cap), and the driver would retry it for
    KG_RETRY_TIME. So it is not retried here: the message says when once more, later, may
    help."""
    code = getattr(exc, "code", None) or ""
    return isinstance(exc, Neo4jError) and "OutOfMemory" in code


def _deep(record: Any) -> Record:
    return record.data()  # type: ignore[no-any-return]


def _shallow(record: Any) -> Record:
    return dict(zip(record.keys(), record, strict=True))

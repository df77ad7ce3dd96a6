"""Settings, read once at start from the environment and an optional `.env` file.

Neo4j uses the ecosystem's names (`NEO4J_URI`, `NEO4J_USERNAME`, `NEO4J_PASSWORD`,
`NEO4J_DATABASE`); everything of this project is prefixed `KG_`. Names are matched without
regard to case. Precedence: values passed in, then the environment, then `.env` in the
working directory, then the defaults.

The reading is done here, in a few lines, rather than by pydantic-settings: importing
that package (its JSON, CLI and cloud sources) cost ~19 ms of every `kg mappe` of ~0.3 s,
for reading a dozen plain variables.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from kg.errors import ConfigError

#: The password the local launcher and compose.yaml use when none is set: public, so
#: it is only ever used for a server on this machine (a loopback URI).
LOCAL_DEFAULT_PASSWORD = "kg-local-password"

#: The URI schemes of the Neo4j driver: plain, TLS (+s) and TLS without a CA check (+ssc).
SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")

#: The fields read from the ecosystem's variables; every other field `x` is `KG_X`.
_VARIABLES = {
    "neo4j_uri": "NEO4J_URI",
    "neo4j_username": "NEO4J_USERNAME",
    "neo4j_password": "NEO4J_PASSWORD",
    "neo4j_database": "NEO4J_DATABASE",
}

#: The file of settings in the working directory, below the environment.
ENV_FILE = ".env"

#: The most facts a Mappe holds, however it is asked for (a call's `cap`, `kg mappe
#: --cap`, the MCP tool, `KG_MAPPE_CAP`). Each row of the Mappe's query carries the list
#: of the near facts it collected, so the query's memory grows with the square of the
#: cap: on a server with a 1 GiB heap, 1,000 facts of one entity fit in a transaction's
#: memory and 1,500 did not. A Mappe is a prompt's dossier; a thousand facts is more
#: than any prompt holds.
MAPPE_CAP_MAX = 1000

#: The contract's strength below which an edge rests (the Mappe leaves it out).
RUHE_SCHWELLE = 0.1

#: The most Mappen one call reads (`mappen`, the MCP tool): the entities a turn binds,
#: each up to the cap's facts, in one query whose memory grows with both.
MAPPEN_MAX = 50


def variable(field: str) -> str:
    """The environment variable of a settings field."""
    return _VARIABLES.get(field) or f"KG_{field.upper()}"


def _environment(fields: list[str]) -> dict[str, str]:
    """The values of `fields` set in `.env` or the environment (which wins), by field."""
    found: dict[str, str | None] = {}
    if Path(ENV_FILE).is_file():
        from dotenv import dotenv_values  # only when there is a file to read

        try:
            found.update((k.upper(), v) for k, v in dotenv_values(ENV_FILE).items())
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"{Path(ENV_FILE).resolve()} is not UTF-8 text (byte {exc.start}): save it as "
                "UTF-8 or remove it"
            ) from None
    found.update((k.upper(), v) for k, v in os.environ.items())
    values = {f: found.get(variable(f)) for f in fields}
    return {f: v for f, v in values.items() if v is not None}


S = TypeVar("S", bound="Settings")


def check_uri(uri: str) -> str:
    """A Neo4j driver URI (scheme://host[:port]) or ValueError saying what is wrong."""
    try:
        parts = urlsplit(uri.strip())
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"{uri!r} is not a URI ({exc})") from None
    if parts.scheme not in SCHEMES:
        raise ValueError(
            f"{uri!r} is not a Neo4j URI: the scheme must be one of {', '.join(SCHEMES)} "
            "(e.g. bolt://127.0.0.1:7687; the Browser's http:// address is not a Bolt URI)"
        )
    if not parts.hostname:
        raise ValueError(f"{uri!r} names no host, e.g. bolt://127.0.0.1:7687")
    if port == 0:
        raise ValueError(f"{uri!r}: port 0 is no port")
    return uri.strip()


def is_loopback(uri: str) -> bool:
    """True when the URI's host is this machine (localhost, 127.0.0.0/8, ::1)."""
    try:
        host = urlsplit(uri).hostname or ""
    except ValueError:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Settings(BaseModel):
    """Everything configurable about the store; built once, passed in.

    `Settings(**values)` reads the environment and `.env` for every field not passed in.
    """

    model_config = ConfigDict(
        extra="ignore", frozen=True, allow_inf_nan=False, validate_default=True
    )

    neo4j_uri: str = Field(
        "bolt://127.0.0.1:7687", description="Bolt or neo4j:// routing URI of the server."
    )
    neo4j_username: str = Field("neo4j", description="Neo4j user.")
    neo4j_password: SecretStr = Field(
        SecretStr(""),
        description="Neo4j password (never printed); unset: the local default, for a "
        "loopback URI only.",
    )
    neo4j_database: str = Field("neo4j", description="Database name.")
    connection_timeout: float = Field(
        5.0, gt=0, le=3600, description="Seconds to open a connection."
    )
    query_timeout: float = Field(
        30.0, gt=0, le=86_400, description="Server-side seconds per transaction."
    )
    retry_time: float = Field(5.0, ge=0, le=3600, description="Seconds managed transactions retry.")
    max_connections: int = Field(
        100, ge=1, le=10_000,
        description="Connections the process keeps to Neo4j at most (the driver's pool): a "
        "call beyond them waits up to twice connection_timeout for one, then fails with "
        "ServerUnavailable (nothing of it ran). A user's calls that take the user's lock "
        "(orders, timeline changes, purges, imports, exports, renames, a Mappe read under "
        "the lock) queue in the process, at most eight at a time, so they take eight at most.",
    )
    maintenance_timeout: float = Field(
        900.0, gt=0, le=604_800,
        description="Server-side seconds one piece of maintenance may take: an export, "
        "import or purge transaction (one per file), a pass of `kg check`, a decay sweep.",
    )
    mappe_cap: int = Field(
        60, ge=1, le=MAPPE_CAP_MAX, description="Most facts a Mappe holds (see MAPPE_CAP_MAX)."
    )
    ruhe_schwelle: float = Field(
        RUHE_SCHWELLE, ge=0, le=1, description="Strength below which an edge rests (left out)."
    )
    decay_rate: float = Field(
        0.0015, gt=0, le=10, description="Decay per day: exp(-rate * days)."
    )
    decay_batch: int = Field(
        10_000, ge=100, le=10_000_000, description="Edges per sweep transaction."
    )
    decay_max_age_days: float = Field(
        2.0, gt=0, le=36_500, description="`kg check` fails when the newest sweep is older."
    )
    audit_retention_days: int = Field(
        365, ge=1, le=36_500, description="Orders kept for forensics."
    )
    kanon_datei: Path | None = Field(
        None, description="Optional TOML file whose relations extend the built-in canon."
    )

    def __init__(self, **values: Any) -> None:
        super().__init__(**{**_environment(list(type(self).model_fields)), **values})

    @field_validator("neo4j_uri")
    @classmethod
    def _uri(cls, value: str) -> str:
        return check_uri(value)

    @field_validator("neo4j_database")
    @classmethod
    def _database(cls, value: str) -> str:
        if not value.strip():
            # An empty NEO4J_DATABASE (a `.env` line left blank) is unset: the default.
            # It reached the driver, which took the server's home database, while `kg
            # status` printed an empty database line.
            return "neo4j"
        if value.strip().lower() == "system":
            # Neo4j's own database takes administration commands only: every query of
            # the store would fail there with the server's raw error.
            raise ValueError(
                "the system database holds Neo4j's administration, not a memory; name the "
                "store's database (default neo4j)"
            )
        return value

    @model_validator(mode="after")
    def _password(self) -> Settings:
        if not self.neo4j_password.get_secret_value():
            if not is_loopback(self.neo4j_uri):
                raise ValueError(
                    f"NEO4J_PASSWORD is not set for {self.neo4j_uri}: the local default "
                    "password is public and only used for a server on this machine — set "
                    "NEO4J_PASSWORD"
                )
            # Frozen: the one place the default is filled in, during validation.
            object.__setattr__(self, "neo4j_password", SecretStr(LOCAL_DEFAULT_PASSWORD))
        return self


def load_settings(kind: type[S] = Settings, **values: Any) -> S:  # type: ignore[assignment]
    """Settings (or a subclass of them, such as the launcher's) from the environment and
    `.env`, or ConfigError naming what is wrong."""
    try:
        return kind(**values)
    except ValidationError as exc:
        problems = []
        for e in exc.errors()[:5]:
            field = str(e["loc"][0]) if e["loc"] else ""
            name = variable(field) if field else ""
            msg = str(e["msg"]).removeprefix("Value error, ")
            problems.append(f"{name}: {msg}" if name else msg)
        raise ConfigError(
            "the configuration is invalid — " + "; ".join(problems)
            + " (set it in the environment or in .env)"
        ) from None

"""Settings, read once at start from the environment and an optional `.env` file.

Neo4j uses the ecosystem's names (`NEO4J_URI`, `NEO4J_USERNAME`, `NEO4J_PASSWORD`,
`NEO4J_DATABASE`); everything of this project is prefixed `KG_`.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

#: The password the local launcher and compose.yaml use when none is set.
LOCAL_DEFAULT_PASSWORD = "kg-local-password"


class Settings(BaseSettings):
    """Everything configurable about the store; built once, passed in."""

    model_config = SettingsConfigDict(
        env_prefix="KG_", env_file=".env", extra="ignore", frozen=True
    )

    neo4j_uri: str = Field(
        "bolt://127.0.0.1:7687",
        validation_alias=AliasChoices("NEO4J_URI", "neo4j_uri"),
        description="Bolt or neo4j:// routing URI of the server.",
    )
    neo4j_username: str = Field(
        "neo4j",
        validation_alias=AliasChoices("NEO4J_USERNAME", "neo4j_username"),
        description="Neo4j user.",
    )
    neo4j_password: SecretStr = Field(
        SecretStr(LOCAL_DEFAULT_PASSWORD),
        validation_alias=AliasChoices("NEO4J_PASSWORD", "neo4j_password"),
        description="Neo4j password (never printed).",
    )
    neo4j_database: str = Field(
        "neo4j",
        validation_alias=AliasChoices("NEO4J_DATABASE", "neo4j_database"),
        description="Database name.",
    )
    connection_timeout: float = Field(5.0, gt=0, description="Seconds to open a connection.")
    query_timeout: float = Field(30.0, gt=0, description="Server-side seconds per transaction.")
    retry_time: float = Field(5.0, ge=0, description="Seconds managed transactions retry.")
    mappe_cap: int = Field(60, ge=1, le=10_000, description="Most facts a Mappe holds.")
    ruhe_schwelle: float = Field(
        0.1, ge=0, le=1, description="Strength below which an edge rests (left out)."
    )
    decay_rate: float = Field(0.0015, gt=0, description="Decay per day: exp(-rate * days).")
    decay_batch: int = Field(10_000, ge=100, description="Edges per sweep transaction.")
    decay_max_age_days: float = Field(
        2.0, gt=0, description="`kg check` fails when the newest sweep is older."
    )
    audit_retention_days: int = Field(365, ge=1, description="Orders kept for forensics.")
    kanon_datei: Path | None = Field(
        None, description="Optional TOML file whose relations extend the built-in canon."
    )

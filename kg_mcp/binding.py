"""Where a tool call's pair comes from: the server's configuration, never an argument.

stdio binds one pair for the whole process (`FixedPair`). Streamable HTTP binds a pair
per bearer token (`TokenPair`), looked up in a tokens file that stores only the
SHA-256 of each token, so the file does not hand out access when it is read.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Protocol

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from pydantic import BeforeValidator, Field, ValidationError

from kg.errors import ConfigError
from kg.models import DuplicateKey, Frozen, Ident, unique_keys
from kg.plain import describe


class PairRef(Frozen):
    """The pair a server (or a token) is bound to."""

    user_id: Ident = Field(description="The human.")
    character_id: Ident = Field(description="The character.")

    def __str__(self) -> str:
        return f"{self.user_id}/{self.character_id}"


class Unbound(Exception):
    """A call arrived without a pair (an HTTP request without a known token)."""


class Binding(Protocol):
    def pair(self) -> PairRef:
        """The pair of the current call; raises Unbound when there is none."""
        ...


@dataclass(frozen=True)
class FixedPair:
    """stdio: one pair for the whole process, from --user/--character or the environment."""

    bound: PairRef

    def pair(self) -> PairRef:
        return self.bound


# -- the tokens file (HTTP) --------------------------------------------------------


def _lower(value: Any) -> Any:
    """Hex in capitals is the same digest (a file written by hand)."""
    return value.lower() if isinstance(value, str) else value


class TokenEntry(Frozen):
    """One line of the tokens file: a named token for one pair."""

    name: Ident = Field(description="A label for the client holding the token.")
    sha256: Annotated[str, BeforeValidator(_lower)] = Field(
        pattern=r"^[0-9a-f]{64}$", description="SHA-256 of the token (hex, either case).")
    user_id: Ident
    character_id: Ident

    @property
    def pair(self) -> PairRef:
        return PairRef(user_id=self.user_id, character_id=self.character_id)


class TokenFile(Frozen):
    """The tokens file: `{"tokens": [{name, sha256, user_id, character_id}, ...]}`."""

    tokens: list[TokenEntry] = Field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> TokenFile:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigError(
                f"tokens file {path} does not exist — create a token with "
                f"`kg mcp token add --tokens-file {path} --user ... --character ...`"
            ) from None
        except OSError as exc:
            raise ConfigError(f"cannot read tokens file {path}: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"tokens file {path} is not UTF-8 text (byte {exc.start}): it is JSON written "
                "by `kg mcp token add`; restore it or start a new one"
            ) from None
        mend = ("it is JSON written by `kg mcp token add`: restore it, or remove the entry "
                "and add the token again")
        try:
            loaded = cls.model_validate(json.loads(text, object_pairs_hook=unique_keys))
        except DuplicateKey as exc:
            raise ConfigError(f"tokens file {path}: {exc}; {mend}") from None
        except json.JSONDecodeError as exc:
            raise ConfigError(f"tokens file {path} is not valid JSON ({exc.msg}, line "
                              f"{exc.lineno}); {mend}") from None
        except ValidationError as exc:
            raise ConfigError(f"tokens file {path} is not valid — {describe(exc, 3)}; "
                              f"{mend}") from None
        names = [t.name for t in loaded.tokens]
        if len(set(names)) != len(names):
            raise ConfigError(f"tokens file {path} names a token twice")
        return loaded

    def twice(self) -> tuple[TokenEntry, TokenEntry] | None:
        """Two entries of one token (its digest), if the file has such: a token acts for
        the one pair of its one entry. (`kg mcp token list` and `remove` still read such
        a file, so that it can be mended.)"""
        seen: dict[str, TokenEntry] = {}
        for entry in self.tokens:
            first = seen.setdefault(entry.sha256, entry)
            if first is not entry:
                return first, entry
        return None

    def save(self, path: Path) -> None:
        """Write the file readable by its owner only (it grants access to pairs)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(self.model_dump_json(indent=2) + "\n")
        tmp.replace(path)

    def with_new_token(self, name: str, pair: PairRef) -> tuple[TokenFile, str]:
        """A new random token for `pair`; returns the new file and the token (shown once)."""
        if any(t.name == name for t in self.tokens):
            raise ConfigError(f"a token named {name!r} exists already; choose another --name")
        token = secrets.token_urlsafe(32)
        entry = TokenEntry(
            name=name, sha256=digest(token), user_id=pair.user_id, character_id=pair.character_id
        )
        return TokenFile(tokens=[*self.tokens, entry]), token

    def without(self, name: str) -> TokenFile:
        if not any(t.name == name for t in self.tokens):
            raise ConfigError(f"no token named {name!r}")
        return TokenFile(tokens=[t for t in self.tokens if t.name != name])


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenVerifier:
    """The SDK's bearer check: a known token becomes an AccessToken naming its entry."""

    def __init__(self, tokens: TokenFile, path: Path) -> None:
        both = tokens.twice()
        if both is not None:
            # One token in two entries, for two pairs: whichever came last acted for it
            # (a stranger's attack), as the other pair's user.
            raise ConfigError(
                f"tokens file {path} has one token in two entries, {both[0].name!r} and "
                f"{both[1].name!r}: a token is one entry, for one pair — remove one of "
                f"them (`kg mcp token remove NAME --tokens-file {path}`)")
        self._by_digest = {t.sha256: t for t in tokens.tokens}

    async def verify_token(self, token: str) -> AccessToken | None:
        entry = self._by_digest.get(digest(token))
        if entry is None:
            return None
        # client_id names the entry: the SDK ties each HTTP session to it, so a
        # session opened with one token cannot be continued with another.
        return AccessToken(token=token, client_id=entry.name, scopes=[])

    def entry(self, access: AccessToken) -> TokenEntry | None:
        found = self._by_digest.get(digest(access.token))
        return found if found is not None and found.name == access.client_id else None


@dataclass(frozen=True)
class TokenPair:
    """HTTP: the pair of the bearer token the current request carried."""

    verifier: TokenVerifier

    def pair(self) -> PairRef:
        access = get_access_token()
        entry = self.verifier.entry(access) if access is not None else None
        if entry is None:
            raise Unbound("this request carries no known bearer token")
        return entry.pair

"""Who is calling: an API key (stored as its sha256 in configs/agents.yaml) names a principal
of configs/principals.yaml; a request without a key is the configured anonymous principal. The
principal never comes from a request field.

`python -m agents.serving.auth new-key PRINCIPAL` prints a fresh key once and the line to add.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import sys

from agents.serving.settings import AgentsConfig


class AuthError(Exception):
    """The credential is wrong (401)."""


class StartError(ValueError):
    """A server setting that must not start (e.g. a public bind without keys)."""


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def principal_for(agents: AgentsConfig, key: str | None) -> str:
    """The principal of an API key, or the anonymous principal when no key is given."""
    if not key:
        if agents.anonymous_principal is None:
            raise AuthError("an API key is required (Authorization: Bearer <key> or X-API-Key)")
        return agents.anonymous_principal
    digest = key_hash(key)
    for stored, principal in agents.api_keys.items():
        if hmac.compare_digest(stored, digest):  # no timing hint about a near match
            return principal
    raise AuthError("unknown API key")


def key_from_headers(headers) -> str | None:
    """`Authorization: Bearer <key>` or `X-API-Key: <key>`."""
    value = headers.get("authorization") or ""
    if value.lower().startswith("bearer "):
        return value[7:].strip() or None
    return (headers.get("x-api-key") or "").strip() or None


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_start(agents: AgentsConfig, host: str, principals: set[str]) -> None:
    """Refuse to serve a non-loopback address without keys, or keys naming unknown principals."""
    unknown = sorted({p for p in agents.api_keys.values() if p not in principals})
    anonymous = agents.anonymous_principal
    if anonymous is not None and anonymous not in principals:
        unknown.append(anonymous)
    if unknown:
        raise StartError(f"principals {unknown} are not in configs/principals.yaml")
    if not is_loopback(host) and not agents.api_keys:
        raise StartError(
            f"refusing to bind {host}: no API keys are configured (configs/agents.yaml api_keys); "
            "serve 127.0.0.1, or add keys with `python -m agents.serving.auth new-key PRINCIPAL`"
        )


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "new-key":
        print("usage: python -m agents.serving.auth new-key PRINCIPAL", file=sys.stderr)
        return 2
    key = "gk_" + secrets.token_urlsafe(32)
    print(f"key (shown once, give it to the caller): {key}")
    print("add under api_keys in configs/agents.yaml:")
    print(f'  "{key_hash(key)}": {argv[1]}')
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

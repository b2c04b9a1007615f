"""Who is calling: an API key (stored as its sha256 in configs/agents.yaml) names a principal
of configs/principals.yaml; a request that presents no credential at all is the anonymous
principal, only where configs/agents.yaml names one. Anything presented that is not a valid key
(another scheme, an empty `Bearer`, an unknown key) is refused: credentials fail closed. The
principal never comes from a request field.

`python -m agents.serving.auth new-key PRINCIPAL` prints a fresh key once and the line to add.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import os
import re
import secrets
import sys
from pathlib import Path

from agents.serving.agents_config import AgentsConfig

log = logging.getLogger(__name__)


class AuthError(Exception):
    """The credential is wrong (401)."""


class StartError(ValueError):
    """A server setting that must not start (e.g. a public bind without keys)."""


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def principal_for(agents: AgentsConfig, key: str | None) -> str:
    """The principal of an API key, or the anonymous principal when no credential is given
    (`None`; an empty string is a credential, and a wrong one)."""
    if key is None:
        if agents.anonymous_principal is None:
            raise AuthError("an API key is required (Authorization: Bearer <key> or X-API-Key)")
        return agents.anonymous_principal
    if not key:
        raise AuthError("the API key is empty")
    digest = key_hash(key)
    for stored, principal in agents.api_keys.items():
        if hmac.compare_digest(stored, digest):  # no timing hint about a near match
            return principal
    raise AuthError("unknown API key")


def key_from_headers(headers) -> str | None:
    """The key of `Authorization: Bearer <key>` or `X-API-Key: <key>`; None when the request
    presents neither header. An Authorization header of another scheme (Basic…), a `Bearer`
    without a key, or two headers naming different keys raise `AuthError`: a caller that
    meant to authenticate and got it wrong is told so, never served as anonymous."""
    authorization = headers.get("authorization")
    api_key = headers.get("x-api-key")
    key = None
    if authorization is not None:
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer":
            raise AuthError("the Authorization header must be `Bearer <key>`")
        key = token.strip()
        if not key:
            raise AuthError("the Authorization header has no key after `Bearer`")
    if api_key is not None:
        if not api_key.strip():
            raise AuthError("the X-API-Key header is empty")
        if key is not None and api_key.strip() != key:
            raise AuthError("Authorization and X-API-Key name different keys")
        key = api_key.strip()
    return key


def authenticate(agents: AgentsConfig, headers, where: str = "") -> str:
    """The request's principal, or `AuthError`; every denial is logged without the key."""
    try:
        return principal_for(agents, key_from_headers(headers))
    except AuthError as exc:
        log.warning("authentication refused%s: %s", f" ({where})" if where else "", exc)
        raise


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


def known_principals(path: Path) -> set[str]:
    """The principals of a principals.yaml (`principals:` mapping), or `ValueError`."""
    import yaml

    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from exc
    principals = raw.get("principals") if isinstance(raw, dict) else None
    if not isinstance(principals, dict):
        raise ValueError(f"{path} has no `principals:` mapping")
    return set(principals)


API_KEYS_LINE = re.compile(r"^api_keys:[ \t]*(\{[ \t]*\})?[ \t]*(#.*)?$", re.MULTILINE)


def add_key_line(text: str, digest: str, principal: str) -> str:
    """configs/agents.yaml's text with one more api_keys entry, comments kept: the shipped
    `api_keys: {}` becomes a block mapping; an existing block gains a line."""
    match = API_KEYS_LINE.search(text)
    if match is None:
        raise ValueError("no `api_keys:` line (block style or `{}`) to add the key under")
    entry = f'  "{digest}": {principal}'
    return text[: match.start()] + "api_keys:\n" + entry + text[match.end() :]


def write_key(config: Path, digest: str, principal: str) -> None:
    """Add the key to `config`, atomically, and check the result still loads."""
    from agents.serving.agents_config import AgentsConfigError, load_agents_config

    text = add_key_line(config.read_text(), digest, principal)
    partial = config.with_name(f".{config.name}.{os.getpid()}.part")
    partial.write_text(text)
    try:
        loaded = load_agents_config(partial)
    except AgentsConfigError as exc:
        partial.unlink(missing_ok=True)
        raise ValueError(f"the edited config would not load: {exc}") from exc
    if loaded.api_keys.get(digest) != principal:
        partial.unlink(missing_ok=True)
        raise ValueError("the edited config does not hold the new key; add it by hand")
    os.replace(partial, config)


USAGE = """usage: python -m agents.serving.auth new-key PRINCIPAL [--write]
                                         [--config configs/agents.yaml]
                                         [--principals configs/principals.yaml]

Make an API key for PRINCIPAL (a principal of principals.yaml). The key is printed once; only
its sha256 is stored. --write adds it to the agents config (atomically, comments kept);
without it the lines to add are printed."""


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m agents.serving.auth", usage=USAGE)
    parser.add_argument("command", choices=["new-key"])
    parser.add_argument("principal")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--config", type=Path, default=Path("configs/agents.yaml"))
    parser.add_argument("--principals", type=Path, default=Path("configs/principals.yaml"))
    if any(a in ("-h", "--help") for a in argv):
        print(USAGE)
        return 0
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 2)
    try:
        principals = known_principals(args.principals)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.principal not in principals:
        known = ", ".join(sorted(principals))
        print(
            f"error: unknown principal {args.principal!r}; {args.principals} names: {known}",
            file=sys.stderr,
        )
        return 2
    key = "gk_" + secrets.token_urlsafe(32)
    digest = key_hash(key)
    if args.write:
        try:
            write_key(args.config, digest, args.principal)
        except (OSError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    print(f"key (shown once, give it to the caller): {key}")
    if args.write:
        print(f"added to {args.config} for {args.principal}; restart the server to use it")
    else:
        print(f"add to {args.config} (an empty `api_keys: {{}}` becomes `api_keys:`):")
        print("api_keys:")
        print(f'  "{digest}": {args.principal}')
        print("or run the same command with --write to add it for you")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

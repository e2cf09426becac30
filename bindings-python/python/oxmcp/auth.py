"""``oxmcp.OAuth``: how a client authorizes to a server behind OAuth 2.1.

>>> async with Client.http(url, auth=OAuth(client_id="my-app", authorizer=open_browser)):
...     ...

Nothing happens until the server answers 401: then the core (``oxmcp::auth``) discovers the
protected-resource and authorization-server metadata, registers (pre-registered credentials,
a client ID metadata document, or dynamic registration), runs authorization code + PKCE with
``state`` and ``resource``, exchanges, refreshes and steps up scopes on
``insufficient_scope``, and the request is sent again. Discovery never reaches private or
loopback addresses unless allowed here.

The user step is ``authorizer``: a function (``def`` or ``async def``) given the
authorization URL (already checked: https or http, no CR/LF, no flag-like values) that
returns the URL the authorization server redirected to, with ``code`` and ``state``. Without
one, the redirects are followed headlessly, which works with an auto-approving server (tests,
CI, machine clients).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

__all__ = ["Authorizer", "OAuth", "TokenStore"]

Authorizer = Callable[[str], "str | Awaitable[str]"]
"""``authorizer(authorization_url) -> redirect_url``."""


class TokenStore(Protocol):
    """Where registrations and tokens are kept, by key (the issuer and the resource). Values
    are plain dicts (``{"client": {...}, "tokens": {...}}``); keep them secret. Called rarely
    (once per authorization or refresh), synchronously."""

    def load(self, key: str) -> dict[str, Any] | None: ...
    def save(self, key: str, value: dict[str, Any]) -> None: ...
    def remove(self, key: str) -> None: ...


@dataclass(frozen=True)
class OAuth:
    """OAuth 2.1 settings for :meth:`oxmcp.Client.http` (every field optional)."""

    client_id: str | None = None
    """A pre-registered client id (else a metadata document or dynamic registration)."""
    client_secret: str | None = field(default=None, repr=False)
    """Its secret, for a confidential client."""
    token_endpoint_auth: (
        Literal["none", "client_secret_basic", "client_secret_post", "private_key_jwt"] | None
    ) = None
    """How to authenticate at the token endpoint (default: from the server's metadata)."""
    client_metadata_url: str | None = None
    """An https URL serving this client's metadata document, used as its id where supported."""
    client_name: str = "oxmcp-python"
    """Shown on the consent screen (dynamic registration)."""
    redirect_uri: str = "http://localhost:3000/callback"
    """Where the authorization server sends the user back."""
    grant: Literal["authorization_code", "client_credentials", "enterprise"] = "authorization_code"
    """``client_credentials`` for a machine client; ``enterprise`` for SEP-990 (the
    ``idp_*`` fields)."""
    private_key_pem: str | None = field(default=None, repr=False)
    """An ES256 key (PEM) for ``private_key_jwt``."""
    key_id: str | None = None
    idp_token_endpoint: str | None = None
    idp_client_id: str | None = None
    idp_id_token: str | None = field(default=None, repr=False)
    offline_access: bool = True
    """Ask for a refresh token where the server offers ``offline_access``."""
    authorizer: Authorizer | None = None
    """The user step (see the module doc); ``None`` follows the redirects headlessly."""
    token_dir: str | os.PathLike[str] | None = None
    """Keep registrations and tokens in this directory (files 0600) instead of memory."""
    token_store: TokenStore | None = None
    """Or keep them in this object (a keyring, a database)."""
    allow_loopback: bool = False
    """Let discovery and token requests reach loopback addresses (development)."""
    allow_private: bool = False
    """Let them reach private and link-local addresses."""

    def settings(self) -> dict[str, Any]:
        """The plain settings the native module reads."""
        return {
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "token_endpoint_auth": self.token_endpoint_auth,
            "client_metadata_url": self.client_metadata_url,
            "client_name": self.client_name,
            "redirect_uri": self.redirect_uri,
            "grant": self.grant,
            "private_key_pem": self.private_key_pem,
            "key_id": self.key_id,
            "idp_token_endpoint": self.idp_token_endpoint,
            "idp_client_id": self.idp_client_id,
            "idp_id_token": self.idp_id_token,
            "offline_access": self.offline_access,
            "authorizer": self.authorizer,
            "token_dir": os.fspath(self.token_dir) if self.token_dir is not None else None,
            "token_store": self.token_store,
            "allow_loopback": self.allow_loopback,
            "allow_private": self.allow_private,
        }

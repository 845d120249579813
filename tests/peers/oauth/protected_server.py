"""An OAuth-protected MCP resource server on the PyPI `mcp` 2.x SDK, for rho's OAuth tests.

Usage: python3 protected_server.py <issuer> [port]
  <issuer>  the authorization server (tests/peers/oauth/authorization_server.mjs), exactly as it
            prints it: `http://127.0.0.1:<port>`, no trailing slash
  [port]    where to listen on 127.0.0.1 (default 0: a free port)

stdout: exactly one line, `ready http://127.0.0.1:<port>/mcp`, once listening; logs go to stderr.

Bearer tokens are checked by introspection at the authorization server, as the confidential
client `rs` (secret AS_RS_CLIENT_SECRET, default `rs-test-secret`, the same variable the
authorization server reads). Every request needs scope `mcp:tools` and a token issued for this
server's URL (RFC 8707 resource). Tools:
  whoami    the token's subject, client id and scopes, as JSON text
  admin_op  needs scope `mcp:admin` too; without it the HTTP answer is 403 insufficient_scope,
            so a client can exercise step-up authorization
"""

import asyncio
import json
import logging
import os
import socket
import sys
import time
from typing import Any

import httpx2
import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from pydantic import AnyHttpUrl
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

BASE_SCOPE = "mcp:tools"
ADMIN_SCOPE = "mcp:admin"
ADMIN_TOOL = "admin_op"
RS_CLIENT_ID = "rs"

log = logging.getLogger("protected_server")


class IntrospectionVerifier:
    """Asks the authorization server about every token (RFC 7662), so a revoked token stops
    working at once."""

    def __init__(self, issuer: str, secret: str):
        self.issuer = issuer
        self.endpoint = f"{issuer}/token/introspection"
        self.auth = httpx2.BasicAuth(RS_CLIENT_ID, secret)

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            async with httpx2.AsyncClient(timeout=10.0) as client:
                response = await client.post(self.endpoint, data={"token": token}, auth=self.auth)
        except httpx2.HTTPError as error:
            log.warning("introspection failed: %s", error)
            return None
        if response.status_code != 200:
            log.warning("introspection answered %s: %s", response.status_code, response.text[:200])
            return None
        body = response.json()
        if not body.get("active"):
            return None
        if body.get("iss") not in (None, self.issuer):
            log.warning("token from another issuer: %r", body.get("iss"))
            return None
        audience = body.get("aud")
        resource = audience[0] if isinstance(audience, list) and len(audience) == 1 else audience
        return AccessToken(
            token=token,
            client_id=body.get("client_id", ""),
            scopes=body.get("scope", "").split(),
            expires_at=body.get("exp"),
            resource=resource if isinstance(resource, str) else None,
            subject=body.get("sub"),
            claims={"iss": body.get("iss")},
        )


def _calls_admin_tool(payload: Any) -> bool:
    messages = payload if isinstance(payload, list) else [payload]
    return any(
        isinstance(m, dict)
        and m.get("method") == "tools/call"
        and isinstance(m.get("params"), dict)
        and m["params"].get("name") == ADMIN_TOOL
        for m in messages
    )


class AdminScopeGate:
    """Per-tool scope at the HTTP level: the SDK checks one scope set for the whole endpoint,
    but step-up authorization needs a 403 for one tool. Runs after the SDK's bearer
    authentication, so `scope["user"]` is the verified token (or absent, and the SDK answers
    401 itself)."""

    def __init__(self, app: ASGIApp, resource_metadata_url: str):
        self.app = app
        self.challenge = (
            f'Bearer error="insufficient_scope", scope="{BASE_SCOPE} {ADMIN_SCOPE}", '
            f'resource_metadata="{resource_metadata_url}", '
            f'error_description="{ADMIN_TOOL} requires scope {ADMIN_SCOPE}"'
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        user = scope.get("user")
        if scope["type"] != "http" or scope["method"] != "POST" or not isinstance(user, AuthenticatedUser):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        try:
            payload = json.loads(body)
        except ValueError:
            payload = None
        if _calls_admin_tool(payload) and ADMIN_SCOPE not in user.scopes:
            await self._forbid(send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _forbid(self, send: Send) -> None:
        body = json.dumps(
            {"error": "insufficient_scope", "error_description": f"{ADMIN_TOOL} requires scope {ADMIN_SCOPE}"}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", self.challenge.encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _current_token(ctx: Context) -> AccessToken | None:
    # The request that carries this call (in a stateful session the context variable may still
    # hold the token of the request that opened the session).
    request = getattr(ctx.request_context, "request", None)
    user = request.scope.get("user") if request is not None else None
    if isinstance(user, AuthenticatedUser):
        return user.access_token
    return get_access_token()


def build(issuer: str, port: int, secret: str) -> Any:
    resource = f"http://127.0.0.1:{port}/mcp"
    server = MCPServer(
        "rho-test-protected",
        instructions="OAuth-protected test server for rho: tools whoami and admin_op.",
        token_verifier=IntrospectionVerifier(issuer, secret),
        # Plain strings: a pydantic URL object would gain a trailing slash ("http://host:port/"),
        # which no longer equals the authorization server's issuer.
        auth=AuthSettings(
            issuer_url=issuer,
            resource_server_url=resource,
            required_scopes=[BASE_SCOPE],
            validate_token_resource=True,
        ),
    )

    @server.tool()
    def whoami(ctx: Context) -> str:
        """Who the bearer token belongs to: subject, client id and scopes (JSON)."""
        token = _current_token(ctx)
        if token is None:
            return json.dumps({"subject": None, "client_id": None, "scopes": []})
        return json.dumps({"subject": token.subject, "client_id": token.client_id, "scopes": token.scopes})

    @server.tool()
    def admin_op() -> str:
        """An operation that needs scope mcp:admin (step-up authorization)."""
        return "admin ok"

    app = server.streamable_http_app()
    metadata_url = str(build_resource_metadata_url(AnyHttpUrl(resource)))
    # Appended last, so it runs inside the SDK's authentication middleware.
    app.user_middleware.append(Middleware(AdminScopeGate, resource_metadata_url=metadata_url))
    return app


def _log_config() -> dict:
    config = json.loads(json.dumps(uvicorn.config.LOGGING_CONFIG))
    config["handlers"]["access"]["stream"] = "ext://sys.stderr"
    return config


async def serve(issuer: str, port: int) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    actual = sock.getsockname()[1]
    secret = os.environ.get("AS_RS_CLIENT_SECRET", "rs-test-secret")
    config = uvicorn.Config(build(issuer, actual, secret), log_config=_log_config(), log_level="info")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    deadline = time.monotonic() + 20
    while not server.started:
        if task.done():
            await task
            raise SystemExit("protected_server: uvicorn stopped before it started")
        if time.monotonic() > deadline:
            raise SystemExit("protected_server: uvicorn did not start")
        await asyncio.sleep(0.02)
    sys.stdout.write(f"ready http://127.0.0.1:{actual}/mcp\n")
    sys.stdout.flush()
    await task


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    issuer = sys.argv[1]
    if issuer.endswith("/"):
        sys.exit("protected_server: give the issuer exactly as the authorization server prints it (no trailing slash)")
    port = int(sys.argv[2]) if len(sys.argv) == 3 else 0
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    asyncio.run(serve(issuer, port))


if __name__ == "__main__":
    main()

"""An MCP server behind a login, and the OAuth authorization server that issues its tokens, in one
process on 127.0.0.1: ``python login_server.py PORT``.

The MCP endpoint (``/mcp``, built with the ``mcp`` SDK as a resource server) takes a bearer token:
the fixed one in ``STATIC_TOKEN``, or one that ``/token`` issued and that has not expired. ``/token``
grants client credentials (client ``minloop-test``, secret ``s3cret``), an authorization code
(``/authorize`` says yes at once and redirects with a code; PKCE checked) and a refresh token;
each token lives ``TOKEN_SECONDS`` (default 60). ``GET /grants`` lists the grant of each token. For the tests: ``GET /issued`` lists the tokens issued so far,
``POST /refuse`` makes the server refuse every token from then on.
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
import sys
import time
from urllib.parse import urlencode

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

PORT = int(sys.argv[1])
BASE = f"http://127.0.0.1:{PORT}"
STATIC = os.environ.get("STATIC_TOKEN", "")
LIFETIME = int(os.environ.get("TOKEN_SECONDS", "60"))
CLIENT, SECRET = "minloop-test", "s3cret"
issued: dict[str, float] = {}  # token -> when it expires
codes: dict[str, str] = {}  # authorization code -> its PKCE challenge
refreshes: set[str] = set()
grants: list[str] = []  # the grant of each token issued
refusing = [False]


class Verifier:
    async def verify_token(self, token: str) -> AccessToken | None:
        if refusing[0]:
            return None
        if STATIC and token == STATIC:
            return AccessToken(token=token, client_id="static", scopes=["tools"], resource=f"{BASE}/mcp")
        expires = issued.get(token)
        if expires is None or expires < time.time():
            return None
        return AccessToken(token=token, client_id=CLIENT, scopes=["tools"], expires_at=int(expires),
                           resource=f"{BASE}/mcp")  # fmt: skip


auth = AuthSettings(issuer_url=BASE, resource_server_url=f"{BASE}/mcp", required_scopes=["tools"],
                    validate_token_resource=False)  # fmt: skip
server = MCPServer("login", auth=auth, token_verifier=Verifier())


@server.tool()
def whoami(note: str = "") -> str:
    """Say that the caller got in (``note`` is ignored: it tells calls apart)."""
    return "you are in"


@server.custom_route("/.well-known/oauth-authorization-server", methods=["GET"])
async def metadata(request: Request) -> Response:
    return JSONResponse({
        "issuer": BASE, "token_endpoint": f"{BASE}/token", "authorization_endpoint": f"{BASE}/authorize",
        "grant_types_supported": ["client_credentials", "authorization_code", "refresh_token"],
        "response_types_supported": ["code"], "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
        "code_challenge_methods_supported": ["S256"],
    })  # fmt: skip


@server.custom_route("/authorize", methods=["GET"])
async def authorize(request: Request) -> Response:
    """A person who says yes at once: back to the client's redirect address with a code."""
    asked = request.query_params
    code = secrets.token_urlsafe(16)
    codes[code] = asked["code_challenge"]
    back = urlencode({"code": code, "state": asked["state"], "iss": BASE})
    return RedirectResponse(f"{asked['redirect_uri']}?{back}", status_code=302)


@server.custom_route("/token", methods=["POST"])
async def token(request: Request) -> Response:
    form = await request.form()
    grant = str(form.get("grant_type"))
    if grant == "client_credentials":
        scheme, _, encoded = request.headers.get("authorization", "").partition(" ")
        who = base64.b64decode(encoded).decode() if scheme.lower() == "basic" else ""
        if who != f"{CLIENT}:{SECRET}":
            return JSONResponse({"error": "invalid_client"}, status_code=401)
    elif grant == "authorization_code":
        challenge = codes.pop(str(form.get("code")), None)
        verifier = str(form.get("code_verifier", "")).encode()
        made = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=").decode()
        if challenge is None or made != challenge:
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
    elif grant == "refresh_token":
        if str(form.get("refresh_token")) not in refreshes:
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
    else:
        return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)
    grants.append(grant)
    value = secrets.token_urlsafe(24)
    issued[value] = time.time() + LIFETIME
    answer = {"access_token": value, "token_type": "Bearer", "expires_in": LIFETIME, "scope": "tools"}
    if grant != "client_credentials":
        answer["refresh_token"] = secrets.token_urlsafe(24)
        refreshes.add(answer["refresh_token"])
    return JSONResponse(answer)


@server.custom_route("/grants", methods=["GET"])
async def granted(request: Request) -> Response:
    return JSONResponse(grants)


@server.custom_route("/issued", methods=["GET"])
async def listed(request: Request) -> Response:
    return JSONResponse(list(issued))


@server.custom_route("/refuse", methods=["POST"])
async def refuse(request: Request) -> Response:
    refusing[0] = True
    return JSONResponse({"refusing": True})


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=PORT)

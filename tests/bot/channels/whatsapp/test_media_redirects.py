"""Where the WhatsApp access token goes when a media file is downloaded (review finding 3).

Real aiohttp servers on 127.0.0.1: a stand-in Graph API (http) and, for Meta's hosts, a TLS server
that the client's resolver sends ``lookaside.fbsbx.com`` / ``scontent.fbcdn.net`` to (a test CA made
here), so the host check is the real one. The channel's client is an aiohttp session carrying the
token as a default header, as :class:`bot.channels.whatsapp.outbound.GraphClient` opens it.
"""

from __future__ import annotations

import datetime
import socket
import ssl
import types
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from board.media.attachment import Attachment, MediaKind, MediaRef
from board.media.blobs import BlobStore
from board.media.problems import MediaProblem
from bot.channels.whatsapp import media as wa_media
from bot.channels.whatsapp.media import MAX_REDIRECTS, WhatsAppMedia

TOKEN = "Bearer EAAG-SECRET-TOKEN"
META_NAMES = ("lookaside.fbsbx.com", "scontent.fbcdn.net", "evilfbcdn.net")
BODY = b"the file's bytes\n"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


# --- the host check -----------------------------------------------------------------------------------

GRAPH = "http://127.0.0.1:8080/v23.0"


@pytest.mark.parametrize(("url", "token_host"), [
    ("https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=1", True),
    ("https://fbsbx.com/x", True),
    ("http://127.0.0.1:8080/whatsapp_business/attachments/?mid=1", True),  # the Graph API's own origin
])
def test_the_token_may_go_to_the_lookaside_host_and_the_graph_api_only(url: str, token_host: bool) -> None:
    assert wa_media.trusted_url(url, GRAPH, hop=False) is token_host
    assert wa_media.trusted_url(url, GRAPH, hop=True)


@pytest.mark.parametrize("url", [
    "https://evilfbcdn.net/x", "https://evilfbsbx.com/x", "https://fbsbx.com.evil.net/x",
    "http://lookaside.fbsbx.com/x",  # not https
    "https://lookaside.fbsbx.com@evil.net/x",  # userinfo: the host is evil.net
    "https://user:pw@lookaside.fbsbx.com/x",  # userinfo would go along as Basic auth
    "https://www.facebook.com/x", "https://mmg.whatsapp.net/x",  # Meta's, but not where media files are
    "http://127.0.0.1:8081/x", "https://127.0.0.1:8080/x", "http://localhost:8080/x",  # not the Graph origin
    "https://lookaside.fbsbx.com:99999/x", "ftp://lookaside.fbsbx.com/x", "", "/relative",
])
def test_anything_else_is_refused(url: str) -> None:
    assert not wa_media.trusted_url(url, GRAPH, hop=False)
    assert not wa_media.trusted_url(url, GRAPH, hop=True)


def test_metas_media_cdn_is_only_a_redirect_target() -> None:
    assert wa_media.trusted_url("https://scontent.fbcdn.net/v/t1/file", GRAPH, hop=True)
    assert not wa_media.trusted_url("https://scontent.fbcdn.net/v/t1/file", GRAPH, hop=False)


# --- through the download ---------------------------------------------------------------------------


class _ToLocalhost(AbstractResolver):
    """Meta's names (and evilfbcdn.net) lead to 127.0.0.1: the TLS stand-in."""

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        if host not in (*META_NAMES, "127.0.0.1"):
            raise OSError(f"no network in tests: {host}")
        return [ResolveResult(hostname=host, host="127.0.0.1", port=port, family=socket.AF_INET, proto=0,
                              flags=socket.AI_NUMERICHOST)]

    async def close(self) -> None:
        return None


def _tls_pair(tmp: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """(server, client) contexts: a test CA and a certificate for :data:`META_NAMES` signed by it."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sabha test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(1).not_valid_before(now - datetime.timedelta(hours=1))
          .not_valid_after(now + datetime.timedelta(hours=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, META_NAMES[0])]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(2)
            .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in META_NAMES]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    cert, pem_key = tmp / "leaf.pem", tmp / "leaf.key"
    cert.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    pem_key.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert, pem_key)
    client = ssl.create_default_context(cadata=ca.public_bytes(serialization.Encoding.PEM).decode())
    return server, client


@dataclass
class Servers:
    """The Graph stand-in (http) and Meta's hosts (https): routes set per test, requests recorded."""

    graph_routes: dict[str, Handler] = field(default_factory=dict)
    meta_routes: dict[str, Handler] = field(default_factory=dict)
    seen: list[tuple[str, str, str | None]] = field(default_factory=list)  # (host, path, Authorization)
    graph: str = ""
    meta_port: int = 0
    client_ssl: ssl.SSLContext | None = None

    def meta(self, name: str, path: str) -> str:
        return f"https://{name}:{self.meta_port}{path}"

    def app(self, routes: dict[str, Handler]) -> web.Application:
        async def any_path(request: web.Request) -> web.StreamResponse:
            self.seen.append((request.host, request.path_qs, request.headers.get("Authorization")))
            handler = routes.get(request.path)
            if handler is None:
                return web.Response(status=404)
            return await handler(request)

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", any_path)
        return app


@pytest.fixture
async def servers(tmp_path: Path) -> AsyncIterator[Servers]:
    s = Servers()
    server_ssl, s.client_ssl = _tls_pair(tmp_path)
    runners = [web.AppRunner(s.app(s.graph_routes)), web.AppRunner(s.app(s.meta_routes))]
    try:
        for runner in runners:
            await runner.setup()
        graph_site = web.TCPSite(runners[0], "127.0.0.1", 0)
        meta_site = web.TCPSite(runners[1], "127.0.0.1", 0, ssl_context=server_ssl)
        await graph_site.start()
        await meta_site.start()
        s.graph = f"http://127.0.0.1:{graph_site._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]
        s.meta_port = meta_site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        yield s
    finally:
        for runner in runners:
            await runner.cleanup()


def _lookup_naming(url: str, size: int | None = len(BODY)) -> Handler:
    async def lookup(request: web.Request) -> web.StreamResponse:
        return web.json_response({"url": url, "mime_type": "text/plain", "file_size": size})
    return lookup


def _redirect(to: str, status: int = 302) -> Handler:
    async def hop(request: web.Request) -> web.StreamResponse:
        return web.Response(status=status, headers={"Location": to})
    return hop


async def _file(request: web.Request) -> web.StreamResponse:
    return web.Response(body=BODY)


async def _fetch(s: Servers, tmp_path: Path) -> bytes:
    """One download of media 123 through :class:`WhatsAppMedia`: the bytes stored."""
    assert s.client_ssl is not None
    connector = aiohttp.TCPConnector(resolver=_ToLocalhost(), ssl=s.client_ssl)
    session = aiohttp.ClientSession(headers={"Authorization": TOKEN}, connector=connector)
    try:
        media = WhatsAppMedia(types.SimpleNamespace(session=session),  # type: ignore[arg-type]
                              types.SimpleNamespace(graph_base_url=s.graph, api_version="v23.0"))  # type: ignore[arg-type]
        att = Attachment(kind=MediaKind.DOCUMENT, source=MediaRef(channel="whatsapp", id="123"))
        with BlobStore(tmp_path / "media").sink(1 << 20, "the file") as sink:
            await media.fetch(att, sink)
            return sink.finish().path.read_bytes()
    finally:
        await session.close()


def _auth_at(s: Servers, path: str) -> list[str | None]:
    return [auth for _, seen_path, auth in s.seen if seen_path.split("?")[0] == path]


async def test_the_token_does_not_follow_a_redirect_to_another_host(servers: Servers, tmp_path: Path) -> None:
    """The lookaside url (token) redirects to Meta's CDN: followed, without the token."""
    servers.graph_routes["/v23.0/123"] = _lookup_naming(servers.meta("lookaside.fbsbx.com", "/wa/att?mid=123"))
    servers.meta_routes["/wa/att"] = _redirect(servers.meta("scontent.fbcdn.net", "/v/file"))
    servers.meta_routes["/v/file"] = _file
    assert await _fetch(servers, tmp_path) == BODY
    assert _auth_at(servers, "/v23.0/123") == [TOKEN]
    assert _auth_at(servers, "/wa/att") == [TOKEN]
    assert _auth_at(servers, "/v/file") == [None], "the token went along a redirect to another host"


async def test_the_token_is_not_sent_again_once_a_hop_left_the_named_host(servers: Servers, tmp_path: Path) -> None:
    lookaside = "lookaside.fbsbx.com"
    servers.graph_routes["/v23.0/123"] = _lookup_naming(servers.meta(lookaside, "/wa/att"))
    servers.meta_routes["/wa/att"] = _redirect(servers.meta("scontent.fbcdn.net", "/v/back"))
    servers.meta_routes["/v/back"] = _redirect(servers.meta(lookaside, "/wa/file"))
    servers.meta_routes["/wa/file"] = _file
    assert await _fetch(servers, tmp_path) == BODY
    assert _auth_at(servers, "/v/back") == [None] and _auth_at(servers, "/wa/file") == [None]


async def test_the_lookup_does_not_follow_a_redirect(servers: Servers, tmp_path: Path) -> None:
    servers.graph_routes["/v23.0/123"] = _redirect(servers.meta("lookaside.fbsbx.com", "/wa/att"))
    servers.meta_routes["/wa/att"] = _file
    with pytest.raises(MediaProblem, match="could not be downloaded"):
        await _fetch(servers, tmp_path)
    assert _auth_at(servers, "/wa/att") == [], "the lookup's redirect was followed"


async def test_a_download_url_on_the_cdn_or_a_lookalike_host_is_not_fetched(servers: Servers, tmp_path: Path) -> None:
    for url in (servers.meta("scontent.fbcdn.net", "/v/file"), servers.meta("evilfbcdn.net", "/v/file")):
        servers.graph_routes["/v23.0/123"] = _lookup_naming(url)
        servers.meta_routes["/v/file"] = _file
        with pytest.raises(MediaProblem, match="could not be downloaded"):
            await _fetch(servers, tmp_path)
    assert _auth_at(servers, "/v/file") == []


async def test_a_redirect_to_a_lookalike_host_is_not_followed(servers: Servers, tmp_path: Path) -> None:
    servers.graph_routes["/v23.0/123"] = _lookup_naming(servers.meta("lookaside.fbsbx.com", "/wa/att"))
    servers.meta_routes["/wa/att"] = _redirect(servers.meta("evilfbcdn.net", "/v/file"))
    servers.meta_routes["/v/file"] = _file
    with pytest.raises(MediaProblem, match="could not be downloaded"):
        await _fetch(servers, tmp_path)
    assert _auth_at(servers, "/v/file") == []


async def test_a_relative_location_stays_on_the_named_host_with_the_token(servers: Servers, tmp_path: Path) -> None:
    servers.graph_routes["/v23.0/123"] = _lookup_naming(f"{servers.graph}/dl?mid=123")
    servers.graph_routes["/dl"] = _redirect("../files/x", status=307)
    servers.graph_routes["/files/x"] = _file
    assert await _fetch(servers, tmp_path) == BODY
    assert _auth_at(servers, "/files/x") == [TOKEN]


async def test_redirects_are_followed_at_most_max_redirects_times(servers: Servers, tmp_path: Path) -> None:
    servers.graph_routes["/v23.0/123"] = _lookup_naming(f"{servers.graph}/loop")
    servers.graph_routes["/loop"] = _redirect("/loop")
    with pytest.raises(MediaProblem, match="could not be downloaded"):
        await _fetch(servers, tmp_path)
    assert len(_auth_at(servers, "/loop")) == MAX_REDIRECTS + 1


async def test_a_3xx_without_location_is_not_stored_as_the_file(servers: Servers, tmp_path: Path) -> None:
    async def no_location(request: web.Request) -> web.StreamResponse:
        return web.Response(status=302, body=BODY)

    servers.graph_routes["/v23.0/123"] = _lookup_naming(f"{servers.graph}/dl")
    servers.graph_routes["/dl"] = no_location
    with pytest.raises(MediaProblem, match="could not be downloaded"):
        await _fetch(servers, tmp_path)

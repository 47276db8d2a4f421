"""One TLS context for every model client of the process, and it still verifies.

Real parts: a local TLS server (a certificate authority and a certificate for
``localhost`` made here with ``cryptography``) in front of the scripted model,
the model clients, the doctor, a fresh interpreter for ``SSL_CERT_FILE``.
Which context a client hands to its handshakes is read from httpx2's own
transport (nothing is replaced).
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import os
import ssl
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import anyio.abc
import pytest
from anyio.streams.tls import TLSListener

from xtyserver.errors import ModelError
from xtyserver.model.client import ModelClient
from xtyserver.model.doctor import check_route
from xtyserver.model.provider import Provider
from xtyserver.model.router import ModelRouter
from xtyserver.model.routing import Routing
from xtyserver.model.settings import ModelSettings
from xtyserver.model.tls import verifying_context
from xtyserver.testing import FakeModelServer

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]


def context_of(raw: Provider) -> ssl.SSLContext:
    """The context httpx2's transport gives every TLS handshake of this client."""
    context = raw._client._transport._pool._ssl_context  # type: ignore[attr-defined]
    assert isinstance(context, ssl.SSLContext)
    return context


def route(base_url: str, model: str, **extra: object) -> ModelSettings:
    return ModelSettings(base_url=base_url, model=model, api_key="sk-test", **extra)  # type: ignore[arg-type]


def test_every_model_client_shares_the_one_verifying_context_and_it_verifies() -> None:
    chat = route("https://api.deepseek.com/v1", "deepseek-chat")
    vision = route("https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen-vl-plus")
    quick = route("http://192.168.1.20:11434/v1", "qwen2.5")  # plain HTTP, another machine
    embedding = route("https://api.openai.com/v1", "text-embedding-3-small")
    router = ModelRouter(Routing(chat=chat, vision=vision, quick=quick, embedding=embedding))
    clients = router.open_clients()
    assert len(clients) == 3
    shared = verifying_context()
    assert router.embedder is not None
    for raw in [*(c.raw for c in clients), router.embedder._client]:
        assert context_of(raw) is shared
    assert context_of(ModelClient(route("https://x.example/v1", "m")).raw) is shared
    assert shared.verify_mode == ssl.CERT_REQUIRED and shared.check_hostname


def test_plain_http_on_loopback_loads_no_ca_and_still_refuses_an_unchecked_certificate() -> None:
    for url in ("http://127.0.0.1:11434/v1", "http://localhost:1234/v1", "http://[::1]:8080/v1"):
        context = context_of(ModelClient(route(url, "local")).raw)
        assert context is not verifying_context()
        assert context.cert_store_stats()["x509_ca"] == 0  # no bundle read
        assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    # https on loopback (a local TLS proxy) verifies as any other.
    https = context_of(ModelClient(route("https://127.0.0.1:8443/v1", "m")).raw)
    assert https is verifying_context()


# -- a local TLS server ------------------------------------------------------------


def make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A certificate authority and a certificate for localhost/127.0.0.1 it signed."""
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def name(text: str) -> object:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("xtyserver test CA"))
        .issuer_name(name("xtyserver test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(name("localhost"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([x509.OID_SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    paths = folder / "ca.pem", folder / "server.pem", folder / "server.key"
    paths[0].write_bytes(ca.public_bytes(pem))
    paths[1].write_bytes(leaf.public_bytes(pem))
    paths[2].write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return paths


async def _pipe(source: anyio.abc.ByteStream, sink: anyio.abc.ByteStream) -> None:
    with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError, OSError):
        async for chunk in source:
            await sink.send(chunk)


@contextlib.asynccontextmanager
async def tls_front(target: int, cert: Path, key: Path) -> AsyncIterator[int]:
    """A TLS server on 127.0.0.1 relaying each connection to the port ``target``."""
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert, key)
    tcp = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = tcp.listeners[0].extra(anyio.abc.SocketAttribute.local_port)
    listener = TLSListener(tcp, server, standard_compatible=False)
    # A refused handshake is what some tests are about: not an error to log.
    listener.handle_handshake_error = _quiet  # type: ignore[method-assign]

    async def relay(client: anyio.abc.ByteStream) -> None:
        upstream = await anyio.connect_tcp("127.0.0.1", target)
        async with client, upstream, anyio.create_task_group() as tg:
            tg.start_soon(_pipe, upstream, client)
            await _pipe(client, upstream)
            tg.cancel_scope.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, relay, tg)
        yield port
        tg.cancel_scope.cancel()


async def _quiet(exc: BaseException, stream: anyio.abc.AnyByteStream) -> None:
    with contextlib.suppress(Exception):
        await anyio.aclose_forcibly(stream)


async def test_an_untrusted_certificate_is_refused_and_one_from_ssl_cert_file_is_trusted(
    tmp_path: Path,
) -> None:
    ca, cert, key = make_certificates(tmp_path)
    async with FakeModelServer() as fake, tls_front(fake.port, cert, key) as port:
        url = f"https://localhost:{port}/v1"
        # This process trusts the system's store only: the doctor and a turn refuse.
        report = await check_route(route(url, "fake-vl"), seconds=5.0)
        reachable = report.check("reachable")
        assert reachable is not None and reachable.status == "fail"
        assert reachable.detail_code == "cannot_connect"
        client = ModelClient(route(url, "fake-vl", max_retries=0))
        try:
            with pytest.raises(ModelError) as refused:
                async with contextlib.aclosing(client.stream_chat([_user()])) as events:
                    async for _ in events:
                        pass
            assert refused.value.code == "model_unavailable"
        finally:
            await client.aclose()
        assert fake.chat_requests == []  # nothing went past the handshake

        # A fresh process with SSL_CERT_FILE naming the CA: every route trusts it, on one context.
        script = (
            "import anyio, contextlib, sys\n"
            "from xtyserver.model.router import ModelRouter\n"
            "from xtyserver.model.routing import Routing\n"
            "from xtyserver.model.settings import ModelSettings\n"
            "from xtyserver.model.client import Done\n"
            "url = sys.argv[1]\n"
            "def s(m): return ModelSettings(base_url=url, model=m, max_retries=0)\n"
            "r = ModelRouter(Routing(chat=s('c'), vision=s('v'), quick=s('q')))\n"
            "ctx = {id(c.raw._client._transport._pool._ssl_context) for c in r.open_clients()}\n"
            "assert len(r.open_clients()) == 3 and len(ctx) == 1, ctx\n"
            "hi = [{'role': 'user', 'content': 'hi'}]\n"
            "async def main():\n"
            "    async with contextlib.aclosing(r.stream_chat(hi)) as e:\n"
            "        async for ev in e:\n"
            "            if isinstance(ev, Done): print('DONE', ev.text)\n"
            "    print('QUICK', (await r.complete(hi)).text)\n"
            "    await r.aclose()\n"
            "anyio.run(main)\n"
        )
        env = {**os.environ, "PYTHONPATH": str(ROOT), "SSL_CERT_FILE": str(ca)}
        env.pop("SSL_CERT_DIR", None)
        done = await anyio.run_process(
            [sys.executable, "-c", script, url], env=env, check=False, cwd=ROOT
        )
        out = done.stdout.decode()
        assert done.returncode == 0, done.stderr.decode()[-3000:]
        assert "DONE " in out and "QUICK " in out
        assert [r.json["model"] for r in fake.chat_requests] == ["c", "q"]


def _user() -> dict[str, str]:
    return {"role": "user", "content": "你好"}

"""The first boot's pinned wheels reach the index as pip would, or leave the work to pip saying why
(issue 40, finding 3): an index pip ignores (cleartext to a host it does not trust) is not read;
``cert`` as a file or a folder of certificates and ``trusted-host`` are followed; an index that
stalls (a byte every few seconds) is left to pip within the timeout the other faults get. Every
server here binds 127.0.0.1."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.test_pinned_wheels import (
    JSON_TYPE,
    SHA256,
    WHEEL,
    Served,
    listed,
    ranks,
    served,
    standard,
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "node-shim" / "boot"))

import index_access
import pinned_wheels

__all__ = ["served"]  # the fixture, used by name


def _pip_would_use(url: str, trusted: list[str]) -> bool:
    """pip's own answer (the oracle): whether it reads an index at ``url`` with these trusted hosts."""
    from pip._internal.models.link import Link
    from pip._internal.network.session import PipSession

    return bool(PipSession(trusted_hosts=trusted).is_secure_origin(Link(url)))


#: Index addresses and trusted hosts, each read or not as pip reads it. ``127.1`` is the loopback
#: address to the resolver but not to pip, which takes it for a host name: cleartext to it is
#: ignored unless it is trusted.
ORIGINS = [
    ("http://127.1:{port}/simple/", []),
    ("http://127.1:{port}/simple/", ["127.1"]),
    ("http://127.1:{port}/simple/", ["127.1:{port}"]),
    ("http://127.1:{port}/simple/", ["127.1:1"]),
    ("http://127.1:{port}/simple/", ["127.0.0.1"]),
    ("http://127.0.0.1:{port}/simple/", []),
    ("http://localhost:{port}/simple/", []),
    ("http://LocalHost:{port}/simple/", []),
]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pip's own, importing its session
@pytest.mark.parametrize(
    ("address", "trusted"), ORIGINS, ids=[f"{a.split('/')[2]} trusting {t}" for a, t in ORIGINS]
)
def test_the_index_is_read_exactly_when_pip_would_read_it(
    served: Served, address: str, trusted: list[str]
) -> None:
    port = served.url.split(":")[2].split("/")[0]
    url = address.format(port=port)
    hosts = [host.format(port=port) for host in trusted]
    served.routes["/simple/demo/"] = (JSON_TYPE, json.dumps(standard()).encode(), True)
    settings = {"index-url": url, **({"trusted-host": " ".join(hosts)} if hosts else {})}
    if _pip_would_use(url, hosts):
        assert pinned_wheels.Index(settings, set()).wheel("demo", "1.0", ranks()).filename == WHEEL
        return
    with pytest.raises(pinned_wheels.Unpinnable) as raised:
        pinned_wheels.Index(settings, set()).wheel("demo", "1.0", ranks())
    assert str(raised.value) == (
        f"pip ignores the index {url}: not a trusted or secure host "
        "(it is read over https, or named by pip's trusted-host)"
    )
    assert served.asked == [], "nothing is asked of an index pip ignores"


def test_the_first_boot_installs_nothing_from_an_index_pip_ignores(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served.routes["/simple/demo/"] = (JSON_TYPE, json.dumps(standard()).encode(), True)
    port = served.url.split(":")[2].split("/")[0]
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.1:{port}/simple/")
    monkeypatch.delenv("PIP_TRUSTED_HOST", raising=False)
    with pytest.raises(pinned_wheels.Unpinnable, match=r"^pip ignores the index http://127\.1:"):
        pinned_wheels.install(str(tmp_path / "venv"), ["demo==1.0"], [], str(tmp_path), lambda _: None)
    assert served.asked == []


# --- certificates ---------------------------------------------------------------------------------


def _openssl(*args: str, cwd: Path) -> str:
    return subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def authority(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a certificate authority (ca.pem) and the certificate it signed for 127.0.0.1
    (server.pem, server.key)."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command")
    folder = tmp_path_factory.mktemp("authority")
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    extensions = (
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    )
    subject = ("-subj", "/CN=rtb test CA")
    _openssl(
        "req",
        "-x509",
        *ec,
        *extensions,
        *subject,
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        cwd=folder,
    )
    _openssl("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1", cwd=folder)
    (folder / "server.ext").write_text("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "server.pem", "-days", "2", "-extfile", "server.ext", cwd=folder)  # fmt: skip
    return folder


@pytest.fixture
def https_index(authority: Path) -> Iterator[str]:
    """An index over https on 127.0.0.1 serving the demo page and wheel; its address."""
    routes = {
        "/simple/demo/": (JSON_TYPE, json.dumps(standard()).encode()),
        f"/files/{WHEEL}": ("application/octet-stream", bytes(range(256)) * 40),
    }

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            kind, body = routes.get(self.path, ("text/plain", b""))
            self.send_response(200 if self.path in routes else 404)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(authority / "server.pem", authority / "server.key")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()
        server.server_close()


def _folder_of(authority: Path, tmp_path: Path, *certificates: str) -> Path:
    """A folder of CA certificates as OpenSSL reads one (``capath``: each under its subject's hash)."""
    folder = tmp_path / "certificates"
    folder.mkdir()
    for name in certificates:
        digest = _openssl("x509", "-subject_hash", "-noout", "-in", name, cwd=authority).strip()
        shutil.copy(authority / name, folder / f"{digest}.0")
    return folder


def test_cert_as_a_file_or_a_folder_of_certificates_is_followed(
    https_index: str, authority: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for cert in (authority / "ca.pem", _folder_of(authority, tmp_path, "ca.pem")):
        index = pinned_wheels.Index({"index-url": https_index, "cert": str(cert)}, set())
        wheel = index.wheel("demo", "1.0", ranks())
        assert Path(index.download(wheel, str(tmp_path))).read_bytes() == bytes(range(256)) * 40
    # As pip's requests reads them when no cert is configured.
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(authority / "ca.pem"))
    assert (
        pinned_wheels.Index({"index-url": https_index}, set()).wheel("demo", "1.0", ranks()).sha256 == SHA256
    )


def test_a_certificate_no_authority_given_vouches_for_is_left_to_pip(
    https_index: str, authority: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    empty = tmp_path / "none"
    empty.mkdir()
    for cert in (None, str(empty), str(authority / "server.pem")):
        index = pinned_wheels.Index({"index-url": https_index, **({"cert": cert} if cert else {})}, set())
        with pytest.raises((pinned_wheels.Unpinnable, OSError)) as raised:
            index.wheel("demo", "1.0", ranks())
        assert "CERTIFICATE_VERIFY_FAILED" in str(raised.value), raised.value


def test_a_trusted_https_host_is_read_without_checking_its_certificate_as_pip_does(
    https_index: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    settings = {"index-url": https_index, "trusted-host": "127.0.0.1"}
    assert pinned_wheels.Index(settings, set()).wheel("demo", "1.0", ranks()).filename == WHEEL


# --- an index that stalls -------------------------------------------------------------------------

SMALL = b"a small wheel " * 40


@pytest.mark.parametrize("head_too", [True, False], ids=["headers and all", "the body"])
@pytest.mark.parametrize("what", ["page", "wheel"])
def test_an_index_that_trickles_is_left_to_pip_after_one_timeout(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str, head_too: bool
) -> None:
    """A byte every tenth of a second never trips a socket's timeout; fewer than ``STALL_BYTES``
    in a timeout (here 0.3 s) ends the read there, and pip takes over."""
    monkeypatch.setattr(pinned_wheels, "TIMEOUT_S", 0.3)
    small = {
        **standard()["files"][0],
        "hashes": {"sha256": hashlib.sha256(SMALL).hexdigest()},
        "size": len(SMALL),
    }
    served.routes["/simple/demo/"] = (JSON_TYPE, json.dumps({"files": [small]}).encode(), True)
    served.routes[f"/files/{WHEEL}"] = ("application/octet-stream", SMALL, True)
    path = "/simple/demo/" if what == "page" else f"/files/{WHEEL}"
    served.trickle[path] = (0.1, head_too)
    index = pinned_wheels.Index({"index-url": served.url}, set())
    with pytest.raises(pinned_wheels.Unpinnable) as raised:
        if what == "page":
            index.wheel("demo", "1.0", ranks())
        else:
            wheel = dataclasses.replace(listed(served, len(SMALL)), sha256=small["hashes"]["sha256"])
            index.download(wheel, str(tmp_path))
    shown = "the index's page for demo" if what == "page" else WHEEL
    assert str(raised.value) == (
        f"{shown} came slower than {index_access.STALL_BYTES:,} bytes in {pinned_wheels.TIMEOUT_S:g} s"
    )
    answer = len(SMALL) + (len(json.dumps({"files": [small]})) if what == "page" else 0)
    assert served.written[path] < answer // 4, "ended at its first timeout, not read on"


def test_the_docs_say_how_the_index_is_reached() -> None:
    text = " ".join((Path(__file__).resolve().parent.parent / "docs" / "install.md").read_text().split())
    assert f"fewer than {index_access.STALL_BYTES:,} bytes in {pinned_wheels.TIMEOUT_S:g} s" in text
    assert (
        "a host pip ignores (cleartext to a host not named by its `trusted-host`, other than this machine)"
        in text
    )

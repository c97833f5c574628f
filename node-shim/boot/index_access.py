"""How the pinned wheels (pinned_wheels.py) reach a package index: as pip would, with the same
configuration, or not at all, so that pip takes over saying why.

* Which index pip reads (``ignored_by_pip``): one over https, one on this machine (``localhost``,
  127.0.0.0/8, ::1), or one on a host its ``trusted-host`` names (at that port, or at any when it
  names none). Any other it ignores ("not a trusted or secure host"): this reads nothing of it
  either, nor sends it anything (the rule of pip's ``PipSession.is_secure_origin``, which
  tests/test_pinned_wheels_reach.py asks as its oracle).
* Which certificates vouch for a server (``opener``): pip's ``cert``, a file of certificates or a
  folder of them as OpenSSL reads one (each under its subject's hash); without it
  ``REQUESTS_CA_BUNDLE``, then ``CURL_CA_BUNDLE``, as pip's HTTP library reads them; else the
  system's. A host ``trusted-host`` names is read over https without a check of its certificate,
  as pip reads it.
* Where to (``fetchable``): http or https only, with no user name in the address, redirects too.
* At what pace (``Pace``): a request that brings fewer than ``STALL_BYTES`` (its headers, then its
  body) in any ``window`` (pip's timeout, 15 s at most) is stalled and ended there: a byte every
  few seconds never trips a socket's timeout, so each request is watched from a thread of its own,
  which shuts its connection down.

Standard library only.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import os
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any


class Unpinnable(Exception):
    """The short way does not apply here: pip takes the long one. The message says why."""


#: What an address this way does not fetch is called (never the address itself).
NOT_FETCHED = "an address not fetched (not http or https, or a user in it)"
#: What pip reads whatever ``trusted-host`` says: (scheme, host or network, port); ``*``: any.
SECURE_ORIGINS = (
    ("https", "*", "*"),
    ("*", "localhost", "*"),
    ("*", "127.0.0.0/8", "*"),
    ("*", "::1/128", "*"),
    ("file", "*", None),
    ("ssh", "*", "*"),
)
#: The least a request must bring in any window (its timeout) not to be stalled: far below any
#: link an index is read over, far above a byte every few seconds.
STALL_BYTES = 64 << 10


def fetchable(url: str) -> bool:
    """An address this way fetches: http or https with no user name or password in it (a password
    there would show in the text of an error; another scheme reads a local file or another kind
    of server)."""
    parts = urllib.parse.urlsplit(url)
    return parts.scheme in ("http", "https") and "@" not in parts.netloc


def trusted_hosts(settings: dict[str, str]) -> list[tuple[str | None, int | None]]:
    """The (host, port) pairs ``trusted-host`` names, as pip reads them (a bare IPv6 in brackets)."""
    pairs = []
    for netloc in (settings.get("trusted-host") or "").split():
        if netloc.count(":") >= 2 and "@" not in netloc and "[" not in netloc:
            netloc = f"[{netloc}]"
        parts = urllib.parse.urlsplit(f"https://{netloc}")
        pairs.append((parts.hostname, parts.port))
    return pairs


def ignored_by_pip(url: str, trusted: list[tuple[str | None, int | None]]) -> bool:
    """Whether pip ignores the index at ``url`` with these trusted hosts."""
    parts = urllib.parse.urlsplit(url)
    scheme, host, port = parts.scheme.rsplit("+", 1)[-1], parts.hostname, parts.port
    named = [("*", name, "*" if at is None else at) for name, at in trusted if name is not None]
    for want_scheme, want_host, want_port in (*SECURE_ORIGINS, *named):
        if want_scheme not in ("*", scheme):
            continue
        try:
            inside = ipaddress.ip_address(host or "") in ipaddress.ip_network(want_host)
        except ValueError:
            inside = not host or want_host == "*" or host.lower() == want_host.lower()
        if inside and want_port in ("*", None, port):
            return False
    return True


def _trusted(url: str, trusted: list[tuple[str | None, int | None]]) -> bool:
    parts = urllib.parse.urlsplit(url)
    return any(parts.hostname == host and at in (None, parts.port) for host, at in trusted)


_current = threading.local()


class _Plain(http.client.HTTPConnection):
    """A connection whose socket the request's ``Watch`` can shut down, once it is connected."""

    def connect(self) -> None:
        super().connect()
        watch = getattr(_current, "watch", None)
        if watch is not None:
            descriptor = self.sock.fileno()
            watch.sockets.append((descriptor, os.fstat(descriptor).st_ino))


class _Secure(http.client.HTTPSConnection, _Plain):
    """``_Plain`` under TLS: its socket is watched from before the handshake."""


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to an address this way fetches (``fetchable``); any other is an
    error that does not show it."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        if not fetchable(newurl):
            raise urllib.error.HTTPError(req.full_url, code, f"a redirect to {NOT_FETCHED}", headers, fp)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class _Http(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_Plain, req)


class _Https(urllib.request.HTTPSHandler):
    """https with the certificates pip is given, and none checked on a host it trusts."""

    def __init__(self, checked: ssl.SSLContext, trusted: list[tuple[str | None, int | None]]) -> None:
        super().__init__(context=checked)
        self._checked, self._trusted = checked, trusted
        self._unchecked = ssl.create_default_context()
        self._unchecked.check_hostname = False
        self._unchecked.verify_mode = ssl.CERT_NONE

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        context = self._unchecked if _trusted(req.full_url, self._trusted) else self._checked
        return self.do_open(_Secure, req, context=context)


def certificates(settings: dict[str, str]) -> ssl.SSLContext:
    """What checks a server's certificate: pip's ``cert`` (a file or a folder), else the bundle
    pip's HTTP library is pointed at, else the system's."""
    cert = settings.get("cert") or os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
    if cert and os.path.isdir(cert):
        context = ssl.create_default_context(capath=cert)
    else:
        context = ssl.create_default_context(cafile=cert or None)
    # Python 3.13's default trusts a server's own certificate given as cert (a partial chain);
    # pip's HTTP library does not, so neither does this.
    context.verify_flags &= ~getattr(ssl, "VERIFY_X509_PARTIAL_CHAIN", 0)
    return context


def opener(settings: dict[str, str], url: str) -> urllib.request.OpenerDirector:
    """What asks the index at ``url`` (a user and password in it go to its host alone, by basic
    auth), as pip is configured: certificates, trusted hosts, proxy."""
    parts = urllib.parse.urlsplit(url)
    handlers: list[urllib.request.BaseHandler] = [
        _Redirects(),
        _Http(),
        _Https(certificates(settings), trusted_hosts(settings)),
    ]
    if parts.username:
        passwords = urllib.request.HTTPPasswordMgrWithDefaultRealm()
        user, password = urllib.parse.unquote(parts.username), urllib.parse.unquote(parts.password or "")
        host = urllib.parse.urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], "/", "", ""))
        passwords.add_password(None, host, user, password)  # the index's host: its files too
        handlers.append(urllib.request.HTTPBasicAuthHandler(passwords))
    proxy = settings.get("proxy")
    if proxy:
        handlers.append(urllib.request.ProxyHandler({"http": proxy, "https": proxy}))
    return urllib.request.build_opener(*handlers)


class Watch:
    """One request under way: the bytes of its body read so far, its sockets, whether it stalled."""

    def __init__(self) -> None:
        self.read = 0
        self.sockets: list[tuple[int, int]] = []  # (descriptor, its inode: the same socket still)
        self.stalled = False


class Pace:
    """Requests that must bring ``STALL_BYTES`` in every ``window`` seconds."""

    def __init__(self, window: float) -> None:
        self.window = window

    @contextlib.contextmanager
    def watched(self, what: str) -> Iterator[Watch]:
        """Watch the requests made in this block (this thread's); Unpinnable, saying ``what`` came
        too slowly, when it stalled, whatever ending its connection raised."""
        watch, done = Watch(), threading.Event()
        thread = threading.Thread(target=self._watch, args=(watch, done), daemon=True)
        _current.watch = watch
        thread.start()
        try:
            yield watch
        except Exception as error:
            if watch.stalled:
                raise self._slow(what) from error
            raise
        finally:
            done.set()
            _current.watch = None
            thread.join()
        if watch.stalled:
            raise self._slow(what)

    def _slow(self, what: str) -> Unpinnable:
        return Unpinnable(f"{what} came slower than {STALL_BYTES:,} bytes in {self.window:g} s")

    def _watch(self, watch: Watch, done: threading.Event) -> None:
        since, read = time.monotonic(), 0
        while not done.wait(self.window / 10):
            if time.monotonic() - since < self.window:
                continue
            if watch.read - read < STALL_BYTES:
                watch.stalled = True
                for descriptor, inode in watch.sockets:
                    with contextlib.suppress(OSError):  # closed meanwhile: nothing to end
                        if os.fstat(descriptor).st_ino == inode:
                            with socket.socket(fileno=os.dup(descriptor)) as same:
                                same.shutdown(socket.SHUT_RDWR)
                return
            since, read = time.monotonic(), watch.read

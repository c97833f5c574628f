"""The short way to a first environment: the worker's pinned wheels, fetched at once and unpacked.

pip spends most of a first boot choosing: it reads every file an index lists for each package
(pydantic-core lists over ten thousand) and checks each against the interpreter's tags, one
package after another. The worker's packages are pinned (``[tool.dsh-repeat-tool-breaker]
worker-pins`` in pyproject.toml: every package and dependency, one exact version each), so there is
nothing to choose but the wheel: this module asks the index for each pinned package at once (the
JSON simple API, PEP 691), takes the wheel of the pinned version that suits this interpreter best
(the order of its tags, as pip ranks them), downloads them at once, checks each against the
SHA-256 the index gives (a mismatch fails the preparation), checks that the pins satisfy every
requirement the wheels declare, and unpacks them into the venv (no byte-compilation, as before).

It follows pip's own configuration where it matters (read by pip's code): the index (``index-url``,
a user and password in its address sent to its host only by basic auth and shown on no line),
reached as pip reaches it (index_access.py: ``trusted-host``, ``cert``, the proxy and the
timeout); and it leaves the work to pip (``Unpinnable``, with the reason) whenever it could not do
what pip would: no index (``no-index``), an index pip ignores (cleartext to a host it does not
trust), a client certificate, ``no-binary``, a constraint on a pinned package, an index that
stalls (``index_access.Pace``) or does not answer JSON, a
page not of the shape PEP 691 gives it (index_page.py says what is wrong), a pinned version without
a wheel for this interpreter, a wheel listed at or redirected to an address that is not http or
https or holds a user name (``fetchable``: a password there would show in an error's text), a page
or a wheel larger than ``MOST_BYTES`` or a wheel larger than its page gives it (``_body`` stops
reading there), a page of more than ``MOST_VALUES`` values, a wheel with a ``.data`` folder,
pins that do not satisfy a requirement, or an index it cannot reach; once one package could not
be fetched the other reads stop at their next chunk (``Index.stopped``). The wheels go into a folder
the caller gives (prepare_environment.py: one inside the environment's own work folder, so that
nothing is left elsewhere when the preparation is killed). Standard library and the base
interpreter's pip only; run by prepare_environment.py.
"""

from __future__ import annotations

import email.message
import email.parser
import hashlib
import http.client
import os
import shutil
import sysconfig
import threading
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import PurePosixPath
from typing import Any

import index_access
import index_page
from index_access import (
    NOT_FETCHED,
    Pace,
    Watch,
    fetchable,
    ignored_by_pip,
    opener,
    trusted_hosts,
)
from index_page import Wheel

PYPI = "https://pypi.org/simple/"
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
#: pip's own default socket timeout, and the most this way waits on a silent index whatever pip's
#: ``timeout`` says: past it pip takes over (with its own timeout and retries), not after it.
TIMEOUT_S = 15.0
CHUNK = 1 << 20
#: The most this way reads of one index page or one wheel (a wheel the page gives a size is read
#: up to that size): well above the largest pinned wheel (pydantic-core's, a few MB) and the
#: largest page (pydantic-core's, listing over ten thousand files). Past it pip takes over.
MOST_BYTES = 64 << 20
#: The most values (counted by their commas) one page is read into objects for. Read into
#: Python's objects a page weighs far more than its bytes, most of all one of tiny values: 64 MB
#: of ``{},`` hold 22 million of them, 1.7 GB once read. Real pages hold a few dozen values per
#: file listed (pydantic-core's, over ten thousand files: a few hundred thousand); past this
#: bound pip takes over. Pages are read into objects one at a time (``_READING``), so a boot
#: holds at most one such page's objects, not one per package fetched at once.
MOST_VALUES = 1 << 21
_READING = threading.Lock()
#: Written into each installed distribution's ``INSTALLER`` file.
INSTALLER = "dsh-repeat-tool-breaker"


#: What prepare_environment.py catches: pip is to take over (index_access.py defines it).
Unpinnable = index_access.Unpinnable


class _Stopped(Unpinnable):
    """A read given up because another package could not be fetched (``Index.stopped``)."""


class Tampered(Exception):
    """A download is not what the index said it is: the preparation fails."""


def pip_settings() -> dict[str, str]:
    """pip's configuration as an ``install`` would read it (files, then ``PIP_*`` variables)."""
    from pip._internal.configuration import Configuration

    configuration = Configuration(isolated=False)
    configuration.load()
    by_section: dict[str, dict[str, str]] = {}
    for key, value in configuration.items():
        section, _, name = key.partition(".")
        by_section.setdefault(section, {})[name] = value
    settings: dict[str, str] = {}
    for section in ("global", "install", ":env:"):  # pip's order: each overrides the one before
        settings.update(by_section.get(section, {}))
    return settings


def _true(value: str | None) -> bool:
    return value is not None and value.strip().lower() in {"1", "true", "yes", "on", "y"}


def _constrained(settings: dict[str, str], names: set[str]) -> str | None:
    """A configured constraint naming a pinned package (or one it cannot read), else None."""
    from pip._vendor.packaging.utils import canonicalize_name

    for path in (settings.get("constraint") or "").split():
        try:
            with open(path, encoding="utf-8") as constraints:
                lines = constraints.read().splitlines()
        except OSError as error:
            return f"its constraint file {path} cannot be read ({error.strerror})"
        for line in lines:
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            if text.startswith("-"):
                return f"its constraint file {path} includes another ({text})"
            name = text.split(";")[0]
            for mark in "<>=!~[ @":
                name = name.split(mark)[0]
            if canonicalize_name(name) in names:
                return f"its constraint file {path} constrains {name}"
    return None


class Index:
    """One package index as pip is configured to use it."""

    def __init__(self, settings: dict[str, str], names: set[str]) -> None:
        if _true(settings.get("no-index")):
            raise Unpinnable("pip is configured to use no index")
        for key in ("client-cert", "no-binary"):
            if settings.get(key):
                raise Unpinnable(f"pip is configured with {key}")
        constrained = _constrained(settings, names)
        if constrained:
            raise Unpinnable(f"pip's configuration has {constrained}")
        url = (settings.get("index-url") or PYPI).split()[0].rstrip("/") + "/"
        parts = urllib.parse.urlsplit(url)
        # The index without a user name or password in its address (those go to an auth handler),
        # as it is asked and said on a line.
        self.url = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
        try:
            configured = float(settings.get("timeout") or settings.get("default-timeout") or TIMEOUT_S)
        except ValueError:
            configured = TIMEOUT_S  # pip will say what is wrong with it, if it comes to pip
        self.timeout = min(configured, TIMEOUT_S)
        if ignored_by_pip(url, trusted_hosts(settings)):
            raise Unpinnable(
                f"pip ignores the index {self.url}: not a trusted or secure host "
                "(it is read over https, or named by pip's trusted-host)"
            )
        self._opener = opener(settings, url)
        self.pace = Pace(self.timeout)
        # Set once a package could not be fetched: pip takes over, so the other reads stop at
        # their next chunk rather than go on to their end (a slow index's wheels, a minute each).
        self.stopped = threading.Event()

    def open(self, url: str, accept: str = "*/*") -> http.client.HTTPResponse:
        request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": INSTALLER})
        response: http.client.HTTPResponse = self._opener.open(request, timeout=self.timeout)
        return response

    def wheel(self, name: str, version: str, ranks: dict[Any, int]) -> Wheel:
        """The wheel of ``name==version`` that suits this interpreter best, from the index's page."""
        page = urllib.parse.urljoin(self.url, f"{name}/")
        what = f"the index's page for {name}"
        with self.pace.watched(what) as watch, self.open(page, SIMPLE_JSON) as response:
            kind = response.headers.get("Content-Type", "")
            if not kind.startswith(SIMPLE_JSON):
                raise Unpinnable(f"the index {self.url} does not answer in JSON (PEP 691)")
            body = b"".join(_body(response, MOST_BYTES, what, _most(), self.stopped, watch))
        if body.count(b",") >= MOST_VALUES:
            raise Unpinnable(
                f"the index's page for {name} holds more than {MOST_VALUES} values, "
                "the most this way reads of one page"
            )
        try:
            with _READING:
                wheel = index_page.best(index_page.files(body), name, version, page, ranks)
        except index_page.NotStandard as why:
            raise Unpinnable(
                f"the index's page for {name} is not of the JSON (PEP 691) shape: {why}"
            ) from why
        if wheel is None:
            raise Unpinnable(f"the index has no wheel of {name} {version} for this Python")
        if not fetchable(wheel.url):
            raise Unpinnable(f"the index lists {wheel.filename} at {NOT_FETCHED}")
        return wheel

    def download(self, wheel: Wheel, folder: str) -> str:
        """``wheel`` into ``folder``, checked against its SHA-256; Unpinnable once it is larger
        than the page gives it (or than MOST_BYTES)."""
        path = os.path.join(folder, wheel.filename)
        digest = hashlib.sha256()
        if wheel.size is not None and wheel.size <= MOST_BYTES:
            limit, most = wheel.size, f"the {wheel.size} bytes the index's page gives it"
        else:
            limit, most = MOST_BYTES, _most()
        with (
            self.pace.watched(wheel.filename) as watch,
            self.open(wheel.url) as response,
            open(path, "wb") as out,
        ):
            for chunk in _body(response, limit, wheel.filename, most, self.stopped, watch):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != wheel.sha256:
            raise Tampered(
                f"{wheel.filename} from {wheel.url} has SHA-256 {digest.hexdigest()}, "
                f"not the {wheel.sha256} the index gives: not installed"
            )
        return path


def _most() -> str:
    return f"{MOST_BYTES / (1 << 20):g} MB, the most this way reads of one file"


def _body(
    response: http.client.HTTPResponse,
    limit: int,
    what: str,
    most: str,
    stopped: threading.Event,
    watch: Watch,
) -> Iterator[bytes]:
    """The body of ``response``, a chunk at a time, as it comes (a chunk is what has arrived, up to
    CHUNK), counted into ``watch``; Unpinnable (``what`` is larger than ``most``, which says
    ``limit`` bytes) as soon as its Content-Length or the bytes come past ``limit``, or once
    ``stopped`` is set."""
    length = (response.headers.get("Content-Length") or "").strip()
    if length.isdigit() and int(length) > limit:
        raise Unpinnable(f"{what} is larger than {most}")
    read = 0
    while chunk := response.read1(min(CHUNK, limit + 1 - read)):
        if stopped.is_set():
            raise _Stopped(f"{what} was not read to its end: another package could not be fetched")
        read += len(chunk)
        watch.read = read
        if read > limit:
            raise Unpinnable(f"{what} is larger than {most}")
        yield chunk


def _metadata(archive: zipfile.ZipFile, filename: str) -> tuple[str, email.message.Message]:
    """The wheel's one ``.dist-info`` folder and its METADATA; Unpinnable for what pip alone handles."""
    tops = {PurePosixPath(name).parts[0] for name in archive.namelist() if name}
    infos = [top for top in tops if top.endswith(".dist-info")]
    if len(infos) != 1:
        raise Unpinnable(f"{filename} has {len(infos)} .dist-info folders")
    if any(top.endswith(".data") for top in tops):
        raise Unpinnable(f"{filename} has a .data folder")
    for name in archive.namelist():
        parts = PurePosixPath(name).parts
        if name.startswith("/") or "\\" in name or ".." in parts:
            raise Tampered(f"{filename} holds a path outside its folder: {name!r}")
    text = archive.read(f"{infos[0]}/METADATA").decode("utf-8", "replace")
    return infos[0], email.parser.Parser().parsestr(text)


def _check_requirements(pins: dict[str, str], metadata: list[tuple[str, email.message.Message]]) -> None:
    """Every requirement a wheel declares (for this interpreter) is met by a pin."""
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.utils import canonicalize_name

    for filename, message in metadata:
        for text in message.get_all("Requires-Dist") or []:
            requirement = Requirement(text)
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue
            name = canonicalize_name(requirement.name)
            if name not in pins or not requirement.specifier.contains(pins[name], prereleases=True):
                raise Unpinnable(f"the pins do not meet {filename}'s requirement {text}")


def _size(size: int | None) -> str:
    if not size:
        return ""
    return f" ({size / 1e6:.1f} MB)" if size >= 1e6 else f" ({size / 1e3:.0f} kB)"


def install(
    target: str,
    pins: list[str],
    requirements: list[str],
    scratch: str,
    say: Callable[[str], None],
) -> int:
    """The pinned wheels into the venv at ``target`` (downloaded into ``scratch``, removed at the
    end); the number of packages installed. Raises Unpinnable before anything is unpacked (pip is
    to take over: what this way cannot do, or an index it cannot reach), Tampered (a download was
    not what the index said) or OSError (while unpacking)."""
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.tags import sys_tags
    from pip._vendor.packaging.utils import canonicalize_name

    versions: dict[str, str] = {}
    for pin in pins:
        name, _, version = pin.partition("==")
        versions[canonicalize_name(name)] = version.strip()
    for text in requirements:
        requirement = Requirement(text)
        pinned = versions.get(canonicalize_name(requirement.name))
        if pinned is None or not requirement.specifier.contains(pinned, prereleases=True):
            raise Unpinnable(f"the pins do not meet the requirement {text}")
    try:
        settings = pip_settings()
    except Exception as error:  # pip's own configuration errors: pip will report them
        raise Unpinnable(f"pip's configuration could not be read ({error})") from error
    index = Index(settings, set(versions))
    ranks = {tag: rank for rank, tag in enumerate(sys_tags())}
    fetched = [0]
    counting = threading.Lock()

    def fetch(item: tuple[str, str]) -> tuple[Wheel, str]:
        try:
            wheel = index.wheel(item[0], item[1], ranks)
            path = index.download(wheel, scratch)
        except (OSError, http.client.HTTPException, ValueError, KeyError) as error:
            index.stopped.set()
            raise Unpinnable(
                f"{item[0]} {item[1]} could not be fetched from {index.url} ({error})"
            ) from error
        except BaseException:  # Unpinnable, Tampered: the others are of no use now
            index.stopped.set()
            raise
        with counting:
            fetched[0] += 1
            what = f"{wheel.name}-{wheel.version}{_size(wheel.size)}"
            say(f"step 2/3, fetching packages: {fetched[0]} so far, downloaded {what}")
        return wheel, path

    say(f"step 2/3, fetching packages: {len(versions)} pinned wheels at once")
    with ThreadPoolExecutor(max_workers=len(versions) or 1) as pool:
        fetches = [pool.submit(fetch, item) for item in versions.items()]
    failures = [error for error in (done.exception() for done in fetches) if error is not None]
    if failures:  # what stopped the others, not their being stopped
        raise next((error for error in failures if not isinstance(error, _Stopped)), failures[0])
    downloads = [done.result() for done in fetches]
    archives = [(wheel, zipfile.ZipFile(path)) for wheel, path in downloads]
    try:
        infos = [(wheel, *_metadata(archive, wheel.filename)) for wheel, archive in archives]
        _check_requirements(versions, [(wheel.filename, message) for wheel, _, message in infos])
        say(f"step 3/3, installing {len(archives)} packages into the environment")
        scheme = (
            "venv" if "venv" in sysconfig.get_scheme_names() else {"nt": "nt"}.get(os.name, "posix_prefix")
        )
        paths = sysconfig.get_paths(scheme, vars={"base": target, "platbase": target})
        for (_, archive), (_, info, _) in zip(archives, infos, strict=True):
            tags = email.parser.Parser().parsestr(archive.read(f"{info}/WHEEL").decode("utf-8", "replace"))
            pure = tags.get("Root-Is-Purelib", "").strip().lower() == "true"
            root = paths["purelib" if pure else "platlib"]
            archive.extractall(root)
            with open(os.path.join(root, info, "INSTALLER"), "w", encoding="utf-8") as out:
                out.write(f"{INSTALLER}\n")
            with open(os.path.join(root, info, "RECORD"), "a", encoding="utf-8") as out:
                out.write(f"{info}/INSTALLER,,\n")
    finally:
        for _, archive in archives:
            archive.close()
        shutil.rmtree(scratch, ignore_errors=True)
    return len(archives)

"""The first boot's pinned wheels read a hostile or broken index without failing the boot.

node-shim/boot/pinned_wheels.py (with index_page.py) leaves the work to pip, saying why, when an index's
JSON page is not of the shape PEP 691 gives it, and reads no page or wheel past its bound: a
wheel past the size its page gives it, or anything past ``MOST_BYTES``. These drive it against an
index on 127.0.0.1 (node-shim/test/pinned-wheels.test.js boots with one).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "node-shim" / "boot"))

import index_page  # noqa: E402  (node-shim/ is no package: its modules import each other by name)
import pinned_wheels  # noqa: E402

WHEEL = "demo-1.0-py3-none-any.whl"
BYTES = bytes(range(256)) * 40
SHA256 = hashlib.sha256(BYTES).hexdigest()
JSON_TYPE = pinned_wheels.SIMPLE_JSON


def standard(**changed: Any) -> dict[str, Any]:
    """A PEP 691 page listing the demo wheel, its entry's fields replaced by ``changed``."""
    entry = {
        "filename": WHEEL,
        "url": f"../../files/{WHEEL}",
        "hashes": {"sha256": SHA256},
        "size": len(BYTES),
    }
    return {"meta": {"api-version": "1.1"}, "name": "demo", "files": [{**entry, **changed}]}


class Served:
    """What the loopback index answers: path -> (Content-Type, body, whether to send Content-Length)."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[str, bytes, bool]] = {}
        self.slow: set[str] = set()  # paths whose body comes a kilobyte every tenth of a second
        #: paths whose answer comes a byte at a time, this far apart, its headers too or at once
        self.trickle: dict[str, tuple[float, bool]] = {}
        self.asked: list[str] = []  # every path asked, in order
        self.written: dict[str, int] = {}  # bytes of each trickled answer written before the client left
        self.url = ""


@pytest.fixture
def served() -> Iterator[Served]:
    answers = Served()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # HTTP/1.0: without a Content-Length the body ends with the connection
            answers.asked.append(self.path)
            kind, body, length = answers.routes.get(self.path, ("text/plain", b"", True))
            if self.path in answers.trickle:
                self.trickled(kind, body, *answers.trickle[self.path])
                return
            self.send_response(200 if self.path in answers.routes else 404)
            self.send_header("Content-Type", kind)
            if length:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            piece = 1024 if self.path in answers.slow else 4096
            for start in range(0, len(body), piece):
                self.wfile.write(body[start : start + piece])
                if self.path in answers.slow:
                    self.wfile.flush()
                    time.sleep(0.1)

        def trickled(self, kind: str, body: bytes, apart: float, head_too: bool) -> None:
            """The answer a byte at a time (its headers too, or at once), until the client goes away."""
            head = f"HTTP/1.0 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            answers.written[self.path] = 0
            if not head_too:
                self.wfile.write(head)
                self.wfile.flush()
            try:
                for byte in (head if head_too else b"") + body:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    answers.written[self.path] += 1
                    time.sleep(apart)
            except OSError:
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    answers.url = f"http://127.0.0.1:{server.server_address[1]}/simple/"
    try:
        yield answers
    finally:
        server.shutdown()
        server.server_close()


def ranks() -> dict[Any, int]:
    from pip._vendor.packaging.tags import sys_tags

    return {tag: rank for rank, tag in enumerate(sys_tags())}


def page(served: Served, document: object, kind: str = JSON_TYPE) -> pinned_wheels.Index:
    served.routes["/simple/demo/"] = (kind, json.dumps(document).encode(), True)
    return pinned_wheels.Index({"index-url": served.url}, set())


SHAPES = [
    ([], "it is not a JSON object"),
    ({"name": "demo"}, "its `files` is missing or not a list"),
    ({"files": {WHEEL: standard()["files"][0]}}, "its `files` is missing or not a list"),
    ({"files": [WHEEL]}, "entry 1 of its `files` is not an object"),
    (standard(filename=None), "entry 1 of its `files` has no `filename` string"),
    (standard(url=5), "entry 1 of its `files` has no `url` string"),
    (standard(hashes=[SHA256]), "entry 1 of its `files` has no `hashes` map of names to strings"),
    (standard(hashes={"sha256": 5}), "entry 1 of its `files` has no `hashes` map of names to strings"),
    (
        standard(**{"requires-python": 3}),
        "entry 1 of its `files` has a `requires-python` that is not a string",
    ),
    (standard(size="big"), "entry 1 of its `files` has a `size` that is not a number of bytes"),
    (standard(size=-1), "entry 1 of its `files` has a `size` that is not a number of bytes"),
    (standard(size=True), "entry 1 of its `files` has a `size` that is not a number of bytes"),
    (standard(url="http://[::1/x.whl"), "the `url` of its wheel of demo 1.0 is not an address"),
]


@pytest.mark.parametrize(("document", "wrong"), SHAPES, ids=[wrong for _, wrong in SHAPES])
def test_a_page_not_of_the_standard_shape_leaves_the_work_to_pip(
    served: Served, document: object, wrong: str
) -> None:
    with pytest.raises(pinned_wheels.Unpinnable) as raised:
        page(served, document).wheel("demo", "1.0", ranks())
    assert str(raised.value) == f"the index's page for demo is not of the JSON (PEP 691) shape: {wrong}"


def test_a_page_that_is_not_json_or_nested_past_reading_leaves_the_work_to_pip(served: Served) -> None:
    for body in (b"{", b"\xff\xfe\xfd", b"[" * 100_000):
        served.routes["/simple/demo/"] = (JSON_TYPE, body, True)
        with pytest.raises(
            pinned_wheels.Unpinnable, match=r"^the index's page for demo .*: it is not JSON that"
        ):
            pinned_wheels.Index({"index-url": served.url}, set()).wheel("demo", "1.0", ranks())


def test_the_standard_page_gives_its_wheel(served: Served) -> None:
    wheel = page(served, standard(**{"requires-python": None})).wheel("demo", "1.0", ranks())
    assert (wheel.filename, wheel.sha256, wheel.size) == (WHEEL, SHA256, len(BYTES))
    assert wheel.url == f"{served.url.removesuffix('simple/')}files/{WHEEL}"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
#: Each field a file entry may have: values of its standard type that a page may well give it.
FIELDS = {
    "filename": st.sampled_from(
        [WHEEL, "demo-1.0-1-py3-none-any.whl", "demo-x-py3-none-any.whl", "demo-1.0.tar.gz"]
    ),
    "url": st.sampled_from([f"../../files/{WHEEL}", "http://[::1/x", "file:///etc/passwd", ""]),
    "hashes": st.sampled_from([{"sha256": SHA256}, {}, {"md5": "x"}]),
    "requires-python": st.sampled_from([None, ">=3", "<3", "not a specifier"]),
    "size": st.sampled_from([None, 0, len(BYTES)]),
}
REQUIRED = ("filename", "url", "hashes")
WELL_SHAPED = st.fixed_dictionaries(
    {key: FIELDS[key] for key in REQUIRED},
    optional={key: value for key, value in FIELDS.items() if key not in REQUIRED},
)
#: An entry whose every field may be any JSON instead.
ANY_SHAPE = st.fixed_dictionaries(
    {key: st.one_of(FIELDS[key], JSON) for key in REQUIRED},
    optional={key: st.one_of(value, JSON) for key, value in FIELDS.items() if key not in REQUIRED},
)


@given(st.one_of(JSON, st.fixed_dictionaries({"files": st.lists(ANY_SHAPE | JSON, max_size=3)})))
def test_whatever_json_a_page_holds_it_gives_its_files_or_says_what_is_wrong(document: object) -> None:
    try:
        entries = index_page.files(json.dumps(document).encode())
    except index_page.NotStandard as why:
        assert "\n" not in str(why)
    else:
        assert isinstance(document, dict) and entries == document["files"]


@given(st.lists(WELL_SHAPED, max_size=4))
def test_of_well_shaped_entries_the_wheel_is_one_listed_none_or_an_address_is_wrong(
    entries: list[Any],
) -> None:
    assert index_page.files(json.dumps({"files": entries}).encode()) == entries
    try:
        wheel = index_page.best(entries, "demo", "1.0", "http://i/", ranks())
    except index_page.NotStandard as why:
        assert str(why) == "the `url` of its wheel of demo 1.0 is not an address"
    else:
        assert wheel is None or wheel.filename in {entry["filename"] for entry in entries}


def listed(served: Served, size: int | None) -> index_page.Wheel:
    """The demo wheel as a page would list it, with the ``size`` it gives it."""
    return index_page.Wheel(
        "demo", "1.0", WHEEL, served.url.replace("/simple/", f"/files/{WHEEL}"), SHA256, size
    )


@pytest.mark.parametrize("length", [True, False], ids=["with Content-Length", "without"])
def test_a_wheel_is_read_no_further_than_its_page_says(served: Served, tmp_path: Path, length: bool) -> None:
    served.routes[f"/files/{WHEEL}"] = ("application/octet-stream", BYTES + b"more", length)
    index = pinned_wheels.Index({"index-url": served.url}, set())
    wheel = listed(served, len(BYTES))
    with pytest.raises(pinned_wheels.Unpinnable) as raised:
        index.download(wheel, str(tmp_path))
    assert str(raised.value) == f"{WHEEL} is larger than the {len(BYTES)} bytes the index's page gives it"
    assert (tmp_path / WHEEL).stat().st_size <= len(BYTES)
    served.routes[f"/files/{WHEEL}"] = ("application/octet-stream", BYTES, length)
    assert index.download(wheel, str(tmp_path)) == str(tmp_path / WHEEL)  # its very size is read whole


@pytest.mark.parametrize("length", [True, False], ids=["with Content-Length", "without"])
def test_a_wheel_or_page_past_the_most_bytes_is_not_read(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, length: bool
) -> None:
    monkeypatch.setattr(pinned_wheels, "MOST_BYTES", len(BYTES) - 1)
    served.routes[f"/files/{WHEEL}"] = ("application/octet-stream", BYTES, length)
    index = pinned_wheels.Index({"index-url": served.url}, set())
    for size in (None, len(BYTES)):  # no size given, or one past the bound
        wheel = listed(served, size)
        with pytest.raises(
            pinned_wheels.Unpinnable, match=rf"^{WHEEL} is larger than .* MB, the most this way"
        ):
            index.download(wheel, str(tmp_path))
        assert (tmp_path / WHEEL).stat().st_size < len(BYTES)
    served.routes["/simple/demo/"] = (JSON_TYPE, json.dumps(standard(pad="x" * len(BYTES))).encode(), length)
    with pytest.raises(
        pinned_wheels.Unpinnable, match=r"^the index's page for demo is larger than .* MB, the most"
    ):
        index.wheel("demo", "1.0", ranks())


def test_a_page_of_too_many_values_is_not_read_into_objects(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Well shaped, and the demo wheel is on it: only the count of its values stops it (a page of
    # 64 MB of tiny values weighs 1.7 GB once read; pip then takes over).
    listed_too = [{"filename": f"other-{n}.tar.gz", "url": "x", "hashes": {}} for n in range(60)]
    document = {"files": [*standard()["files"], *listed_too]}
    monkeypatch.setattr(pinned_wheels, "MOST_VALUES", 100)
    with pytest.raises(pinned_wheels.Unpinnable) as raised:
        page(served, document).wheel("demo", "1.0", ranks())
    assert (
        str(raised.value)
        == "the index's page for demo holds more than 100 values, the most this way reads of one page"
    )
    monkeypatch.setattr(pinned_wheels, "MOST_VALUES", 200)
    assert page(served, document).wheel("demo", "1.0", ranks()).filename == WHEEL


def test_the_docs_give_the_bound_and_a_line_as_this_way_says_it(served: Served) -> None:
    text = " ".join((ROOT / "docs" / "install.md").read_text(encoding="utf-8").split())
    assert f"a page holds more than {pinned_wheels.MOST_VALUES} values" in text
    assert f"or a page or a wheel past {pinned_wheels.MOST_BYTES >> 20} MB (the most read of one file" in text
    broken = {"files": [standard()["files"][0], {**standard()["files"][0], "hashes": [SHA256]}]}
    served.routes["/simple/pydantic/"] = (JSON_TYPE, json.dumps(broken).encode(), True)
    with pytest.raises(pinned_wheels.Unpinnable) as raised:
        pinned_wheels.Index({"index-url": served.url}, set()).wheel("pydantic", "2.0", ranks())
    assert f"such as ``{raised.value}``;" in text


def test_once_one_package_cannot_be_fetched_the_others_stop_and_pip_takes_over(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # demo's page is no JSON; slow's wheel would take ten seconds to come: its download stops at
    # its next chunk, not at its end, and the line says why pip takes over (demo's page), not that.
    slow = "slow-1.0-py3-none-any.whl"
    body = BYTES * 10
    entry = {
        "filename": slow,
        "url": f"../../files/{slow}",
        "hashes": {"sha256": hashlib.sha256(body).hexdigest()},
    }
    served.routes["/simple/slow/"] = (JSON_TYPE, json.dumps({"files": [entry]}).encode(), True)
    served.routes[f"/files/{slow}"] = ("application/octet-stream", body, True)
    served.slow.add(f"/files/{slow}")
    served.routes["/simple/demo/"] = (JSON_TYPE, b"<html>", True)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", served.url)
    scratch = tmp_path / "wheels"
    scratch.mkdir()
    started = time.monotonic()
    with pytest.raises(pinned_wheels.Unpinnable, match=r"^the index's page for demo is not of the JSON"):
        pinned_wheels.install(
            str(tmp_path / "venv"), ["slow==1.0", "demo==1.0"], [], str(scratch), lambda _: None
        )
    assert time.monotonic() - started < 3, "the slow download went on to its end"

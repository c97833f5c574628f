"""One resource however spelled (issue 38): paths and URLs are read as what they resolve to.

``./src/app.py``, ``././src/app.py`` and ``src//app.py`` are one file; ``/v1/./jobs/42``,
``/v1/x1/../jobs/42`` and ``/v1/%6Aobs/42`` one URL. Every rule sees the resolved form: the caps,
the failure track, the same answer, a command's targets. What names another resource stays
apart: ``../a`` is not ``a``, ``a/x.py`` not ``b/x.py``, a query's order and its reserved escapes
are kept, and a word of a command that is not a path (``sed``'s script) is left as written.
"""

from __future__ import annotations

import posixpath
from itertools import count

import pytest
from hypothesis import given
from hypothesis import strategies as st

from breaker import Allow, Breaker, Deny, ToolCall, default_config
from breaker.core.history import target_of
from breaker.core.reading import fingerprint_call, resolved_call
from breaker.core.reading.commands import analyze_shell
from breaker.core.reading.paths import normal_path, normal_path_word, resolved_path
from breaker.core.reading.resolved import resolved_arguments
from breaker.core.reading.urls import _requested, canonical_url, requested_url

_ids = count()
DEFAULTS = default_config()


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(name, arguments, f"call-{next(_ids)}")


def keys(tool_call: ToolCall, kind: str) -> set[str]:
    return {fp.key for fp in fingerprint_call(tool_call, DEFAULTS).fingerprints if fp.kind == kind}


def command(text: str) -> str:
    return analyze_shell(text, {}).command


def verdicts(calls: list[ToolCall], results: list[str], *, failed: bool = False) -> list[bool]:
    """Whether each call is allowed under the defaults, each answered by the result given for it
    (``failed``: an ``isError`` result)."""
    breaker = Breaker(DEFAULTS)
    allowed = []
    for tool_call, result in zip(calls, results, strict=True):
        verdict = breaker.decide(1, tool_call)
        if isinstance(verdict, Deny):
            breaker.record_result(1, tool_call.call_id, verdict.message)
        else:
            breaker.record_result(1, tool_call.call_id, result, {"isError": failed})
        allowed.append(isinstance(verdict, Allow))
    return allowed


RESPELLED_PATHS = [
    "./src/app.py",
    "././src/app.py",
    "src//app.py",
    "./././src/app.py",
    "src///app.py",
    "src/app.py/",
]
RESPELLED_URLS = [
    "https://api.example.com/v1/./jobs/42",
    "https://api.example.com/v1/x1/../jobs/42",
    "https://api.example.com/v1/%6Aobs/42",
    "https://API.example.com:443/./v1/jobs/42?",
    "https://api.example.com/v1/jobs/./42#top",
    "https://api.example.com/v1/jobs/42",
]


# --- paths ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "normal"),
    [
        ("./src/app.py", "src/app.py"),
        ("././src/app.py", "src/app.py"),
        ("src//app.py", "src/app.py"),
        ("src/lib/../app.py", "src/app.py"),
        ("src/", "src"),
        ("./", "."),
        ("a/..", "."),
        ("../a", "../a"),
        ("../../a/./b", "../../a/b"),
        ("a/../../b", "../b"),
        ("/..", "/"),
        ("/a/../../b", "/b"),
        ("//etc//hosts", "/etc/hosts"),
        ("~/notes/./todo.md", "~/notes/todo.md"),
        ("~/..", "~/.."),
        ("src/app.py", "src/app.py"),
        (".env", ".env"),
        ("a/.git/config", "a/.git/config"),
    ],
)
def test_a_path_is_normalised_by_its_text(path: str, normal: str) -> None:
    assert normal_path(path) == normal


@given(st.text(alphabet="ab./", max_size=24))
def test_normal_paths_agree_with_posixpath_and_are_normal_already(path: str) -> None:
    """An independent check: ``posixpath.normpath`` (which keeps a leading ``//`` as POSIX allows,
    where Linux reads it as ``/``), and normalising twice changes nothing."""
    normal = normal_path(path)
    assert normal_path(normal) == normal
    if path and not path.startswith("//"):
        assert normal == posixpath.normpath(path)


def test_a_relative_path_resolves_against_the_working_directory_the_call_names() -> None:
    assert resolved_path("src/../app.py", "/repo/./") == "/repo/app.py"
    assert resolved_path("/etc/hosts", "/repo") == "/etc/hosts"
    assert resolved_path("../a", "/repo/sub") == "/repo/a"
    assert resolved_path("./a", None) == "a"


def test_a_pattern_given_for_a_path_is_left_as_written() -> None:
    assert resolved_path("./src/**/*.py", None) == "./src/**/*.py"  # a glob
    assert resolved_path("//div[@id='main']", None) == "//div[@id='main']"  # an XPath


# --- URLs -------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", RESPELLED_URLS)
def test_a_url_is_read_as_an_http_client_requests_it(url: str) -> None:
    assert requested_url(url) == "https://api.example.com/v1/jobs/42"
    resource = canonical_url(url, {})
    assert resource is not None and resource.resource == "api.example.com/v1/jobs/42"


@pytest.mark.parametrize(
    ("url", "requested"),
    [
        ("https://x.io/search?b=2&a=1", "https://x.io/search?b=2&a=1"),  # a query's order may matter
        ("https://x.io/search?q=c%2b%2b", "https://x.io/search?q=c%2B%2B"),  # c++ is another query
        ("https://x.io/projects/a%2fb", "https://x.io/projects/a%2Fb"),  # one segment, not two
        ("https://x.io/Jobs/42", "https://x.io/Jobs/42"),  # a path's case is the server's
        ("http://x.io:443/a", "http://x.io:443/a"),  # 443 is not http's port
        ("https://x.io:8443/a/b/..", "https://x.io:8443/a/"),
        ("https://x.io/..", "https://x.io/"),
        ("https://x.io", "https://x.io/"),
        ("ftp://x.io/./a", None),
        ("src/app.py", None),
    ],
)
def test_what_names_another_resource_stays_in_a_requested_url(url: str, requested: str | None) -> None:
    assert requested_url(url) == requested


@given(
    st.sampled_from(["http", "https", "HTTPS"]),
    st.sampled_from(
        [
            *("x.io", "X.io", "x.io:443", "x.io:80", "x.io:8080", "x.io:08080", "x.io:", "x.io:99999"),
            *("x.io:\uff18\uff10", "u@x.io", "u:p@x.io", "u@x.io:8080", "[::1]", "[::1]:8080"),
            "10.0.0.5:8080",  # a port that is not the scheme's: the URL as written
        ]
    ),
    st.text(alphabet="ab/.%6A?#&=", max_size=16),
)
def test_a_url_taken_as_requested_already_is_what_reading_it_in_full_gives(
    scheme: str, authority: str, tail: str
) -> None:
    """The fast path (substring tests) never keeps a URL that reading it apart would change."""
    url = f"{scheme}://{authority}{tail}"
    requested = requested_url(url)
    assert requested == _requested(url)
    assert requested is None or requested_url(requested) == requested


# --- a call's arguments ---------------------------------------------------------------------------


def test_the_paths_and_urls_a_call_names_are_resolved_by_what_the_arguments_mean() -> None:
    resolved = resolved_arguments(
        {
            "file_path": "./src//app.py",
            "source_path": "a/./b",
            "paths": ["./x", "y/"],
            "url": "https://X.io/./a",
            "urls": ["https://x.io/%7euser"],
            "pattern": "./**/*.py",
            "old_string": "./a",
        }
    )
    assert resolved == {
        "file_path": "src/app.py",
        "source_path": "a/b",
        "paths": ["x", "y"],
        "url": "https://x.io/a",
        "urls": ["https://x.io/~user"],
        "pattern": "./**/*.py",  # a glob, not a path
        "old_string": "./a",  # text an edit replaces
    }


def test_a_call_already_as_it_resolves_is_the_very_same_call() -> None:
    plain = call("read", file_path="src/app.py", offset=10)
    assert resolved_call(plain) is plain
    respelled = resolved_call(call("read", file_path="./src/app.py"))
    assert respelled.arguments == {"file_path": "src/app.py"}
    assert respelled.written == {"file_path": "./src/app.py"}


def test_with_a_working_directory_a_relative_path_is_the_absolute_path_it_names() -> None:
    relative = resolved_call(call("list", cwd="/repo/", path="./src"))
    absolute = resolved_call(call("list", cwd="/repo", path="/repo/src"))
    assert keys(relative, "exact") == keys(absolute, "exact")


@pytest.mark.parametrize("path", RESPELLED_PATHS)
def test_every_spelling_of_one_file_has_one_exact_key_and_one_target(path: str) -> None:
    plain = call("read", file_path="src/app.py")
    respelled = resolved_call(call("read", file_path=path))
    assert keys(respelled, "exact") == keys(plain, "exact")
    assert keys(call("read", file_path=path), "exact") == keys(plain, "exact")  # rtb explain reads it so
    assert target_of(respelled, ()) == target_of(plain, ())


def test_different_files_stay_different() -> None:
    spellings = ["a/x.py", "b/x.py", "../a/x.py", "../../a/x.py", "x.py", "a/x.py/../y.py"]
    assert len({frozenset(keys(call("read", file_path=path), "exact")) for path in spellings}) == 6


# --- paths in shell commands ------------------------------------------------------------------


def test_a_file_a_command_names_is_one_target_however_spelled() -> None:
    assert command("cat ./src/app.py") == command("cat src//app.py") == command("cat src/app.py")
    assert command("python3 ././tools/gen.py > ./out//a.json") == command("python3 tools/gen.py > out/a.json")
    assert command("cat ../a") != command("cat a")
    assert command("curl -s https://api.example.com/v1/x1/../%6Aobs/42") == command(
        "curl -s https://api.example.com/v1/jobs/42"
    )
    assert command("curl -o ./x//y.json https://x.io/") == command("curl -o x/y.json https://x.io/")


@pytest.mark.parametrize(
    "text",
    [
        "sed -i 's/a//g' ./app.py",  # sed's script, and sed's words kept as written
        "grep -rn './' src",  # a pattern
        "echo a//b",  # text
        "jq .a//.b data.json",  # jq's alternative operator
        "cat <<< ./a//b",  # a here-string is text
        "git show HEAD:./a//b",  # a revision and a path in one word
        "cat *//x.py",  # a glob
    ],
)
def test_a_word_that_is_not_a_file_path_is_left_as_written(text: str) -> None:
    assert "//" in command(text) or "./" in command(text)


def test_a_resolved_word_never_reads_as_another_word() -> None:
    assert normal_path_word("./././run.sh", keep_dot=True) == "./run.sh"  # not a run.sh from PATH
    assert normal_path_word("./-rf") == "./-rf"  # not an option
    assert normal_path_word("./src//") == "src/"  # rsync src/ copies what src holds
    assert command("rsync -a ./src/ dst") != command("rsync -a src dst")


@pytest.mark.parametrize(
    ("respelled", "written", "other"),
    [
        ("npm install ././pkg", "npm install ./pkg", "npm install pkg"),  # a folder, not the registry's
        ("go test ././...", "go test ./...", "go test ..."),  # this module's packages, not all
        ("go run ./cmd//server", "go run ./cmd/server", "go run cmd/server"),  # not an import path
        ("source ././env.sh", "source ./env.sh", "source env.sh"),  # not looked up in PATH
        ("./././run.sh --fast", "./run.sh --fast", "run.sh --fast"),
    ],
)
def test_a_leading_dot_slash_stays_where_without_it_a_word_names_something_else(
    respelled: str, written: str, other: str
) -> None:
    assert command(respelled) == command(written) != command(other)


# --- every rule sees the resolved resource -------------------------------------------------------


def test_a_respelled_missing_file_is_stopped_by_the_failure_track() -> None:
    calls = [call("read", file_path=path) for path in RESPELLED_PATHS]
    results = [f"Error: File not found: {path}" for path in RESPELLED_PATHS]
    assert verdicts(calls, results, failed=True) == [True, True, True, False, False, False]


def test_a_respelled_read_is_stopped_by_the_cap_and_by_the_same_answer() -> None:
    calls = [call("read", file_path=path) for path in RESPELLED_PATHS]
    echoed = [f"<path>{path}</path>\n1: def main():" for path in RESPELLED_PATHS]  # as dsh's read answers
    assert verdicts(calls, echoed) == [True, True, True, True, False, False]  # exact:read:… 5/5
    calls = [call("read", file_path=path) for path in RESPELLED_PATHS]
    assert verdicts(calls, ["1: def main():"] * 6) == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]  # the same result


def test_a_respelled_url_fetched_and_curled_is_one_resource() -> None:
    fetches = [call("web_fetch", url=url) for url in RESPELLED_URLS]
    assert verdicts(fetches, ["Error: fetch failed: HTTP 404"] * 6, failed=True)[4:] == [False, False]
    curls = [call("bash", command=f"curl -s '{url}'") for url in RESPELLED_URLS]
    assert verdicts(curls, ['{"state": "queued"}'] * 6)[4:] == [False, False]


def test_the_denial_says_that_respelling_a_path_makes_no_new_action() -> None:
    breaker = Breaker(DEFAULTS)
    verdict = None
    for path in ["src/app.py"] * 4 + ["./src/app.py"]:
        tool_call = call("read", file_path=path)
        verdict = breaker.decide(1, tool_call)
        breaker.record_result(1, tool_call.call_id, "1: def main():")
    assert isinstance(verdict, Deny)
    assert (
        "does not make this a new action: it is still the same action on the same resource" in verdict.message
    )
    assert 'exact:read:{"file_path":"src/app.py"}' in verdict.message


def test_controls_different_resources_spelled_alike_are_never_stopped() -> None:
    parents = [call("read", file_path=path) for path in ["a.py", "../a.py", "../../a.py", "../../../a.py"]]
    assert all(verdicts(parents, ["Error: File not found"] * 4, failed=True))
    twins = [call("read", file_path=f"{package}/x.py") for package in "abcd"]
    assert all(verdicts(twins, ["Error: File not found"] * 4, failed=True))
    queries = ["c%2B%2B", "c++", "C%2B%2B", "c%2b%2b%20"]
    searches = [call("web_fetch", url=f"https://x.io/search?q={query}") for query in queries]
    assert all(verdicts(searches, ["Error: fetch failed: HTTP 404"] * 4, failed=True))

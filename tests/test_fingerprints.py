"""fingerprint_call: the seed's loops A/B/C, T5, T8, T10, pagination, generic sinks, locality."""

from __future__ import annotations

from random import Random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from breaker.core.config import BreakerConfig, default_config, load_config
from breaker.core.reading.fingerprints import CallFingerprints, Fingerprint, ToolCall, fingerprint_call
from tests.test_config import ignored_args

CONFIG = default_config()
TARGET_KINDS = ("net", "site", "sink", "family", "verb")


def fingerprints(name: str, arguments: object, config: BreakerConfig = CONFIG) -> CallFingerprints:
    return fingerprint_call(ToolCall(name, arguments), config)


def keys(name: str, arguments: object, config: BreakerConfig = CONFIG) -> list[str]:
    return [fp.key for fp in fingerprints(name, arguments, config).fingerprints]


def bash(command: str, **extra: object) -> list[str]:
    return keys("bash", {"command": command, **extra})


def of_kind(all_keys: list[str], kind: str) -> set[str]:
    return {key for key in all_keys if key.startswith(kind + ":")}


def semantic(all_keys: list[str]) -> list[str]:
    """Every fingerprint except exact: (which keeps the raw arguments by design)."""
    return [key for key in all_keys if not key.startswith("exact:")]


# --- the three loops --------------------------------------------------------------------------


def test_loop_a_verbatim_repeats_share_every_fingerprint() -> None:
    calls: list[tuple[str, dict[str, object]]] = [
        ("read", {"file_path": "/src/a.ts", "offset": 1, "limit": 200}),
        ("write", {"file_path": "/src/a.ts", "content": "x = 1\n"}),
        ("bash", {"command": "npm test"}),
    ]
    for name, arguments in calls:
        assert keys(name, arguments) == keys(name, dict(arguments))


def test_loop_b_decoy_arguments_reach_no_fingerprint() -> None:
    calls = [
        {"command": "echo hello-repeat", "description": description, "timeoutMs": timeout}
        for description, timeout in [("1st", 60000), ("2nd", 1000), ("3rd", 31337)]
    ]
    results = [keys("bash", call) for call in calls]
    assert results[0] == results[1] == results[2]
    for key in results[0]:
        for decoy in ("1st", "2nd", "3rd", "60000", "1000", "31337", "description", "timeoutMs"):
            assert decoy not in key


def test_loop_b_reports_the_stripped_decoy_names() -> None:
    result = fingerprints("bash", {"description": "1st", "command": "ls", "timeoutMs": 5, "title": "t"})
    assert result.stripped_args == ("description", "timeoutMs", "title")


def test_loop_c_host_and_timeout_ping_pong_shares_net_sink_and_cmd() -> None:
    first = bash("curl --max-time 60 -sSL -o /tmp/od.html https://open-data.canada.ca/")
    second = bash("curl --max-time 30 -o /tmp/od.html open.canada.ca")
    assert of_kind(first, "exact") != of_kind(second, "exact")
    for kind in ("net", "sink", "cmd"):
        assert of_kind(first, kind) == of_kind(second, kind) != set()
    assert "net:open.canada.ca/" in first and "sink:/tmp/od.html" in first


def test_loop_c_explains_what_was_folded_and_removed() -> None:
    result = fingerprints(
        "bash", {"command": "curl --max-time 60 -sSL -o /tmp/od.html https://open-data.canada.ca/"}
    )
    assert result.volatile_removed == ("--max-time 60", "-sSL")
    assert result.aliases_folded == (("open-data.canada.ca", "open.canada.ca"),)


# --- T5, T8, T10 ------------------------------------------------------------------------------


def test_t5_curl_and_wget_of_one_url_share_net() -> None:
    curl = bash("curl -sL https://www.example.org/data.csv")
    wget = bash("wget -q -O - http://example.org/data.csv")
    assert of_kind(curl, "net") == of_kind(wget, "net") == {"net:example.org/data.csv"}
    assert "family:http-fetch" in curl and "family:http-fetch" in wget


def test_t5_a_web_fetch_tool_shares_net_with_curl() -> None:
    tool = keys("web_fetch", {"url": "https://example.org/data.csv#top", "prompt": "summarise"})
    assert of_kind(tool, "net") == of_kind(bash("curl example.org/data.csv"), "net")
    assert "family:http-fetch" in tool


def test_t8_volatile_flags_do_not_change_any_semantic_fingerprint() -> None:
    plain = semantic(bash("curl -o out.json https://api.x.org/v1"))
    for noisy in [
        "curl -sSL --max-time 30 -o out.json https://api.x.org/v1",
        "curl --connect-timeout 5 --retry 3 --retry-delay 2 -o out.json -k https://api.x.org/v1",
        "timeout 60 curl --silent --fail --location -A Mozilla -o out.json https://api.x.org/v1",
        "FOO=1 sudo curl -sSLo out.json --compressed https://api.x.org/v1",
    ]:
        assert semantic(bash(noisy)) == plain


def test_t10_reads_of_one_path_at_different_offsets_are_different_actions() -> None:
    first = keys("read", {"file_path": "/src/a.ts", "offset": 1, "limit": 200})
    second = keys("read", {"file_path": "/src/a.ts", "offset": 201, "limit": 200})
    assert first != second
    assert len(first) == 1 and first[0].startswith("exact:read:")


def test_file_tools_get_exact_only() -> None:
    for name in ("read", "write", "edit", "multi_edit", "glob", "grep", "todo_write", "anything"):
        result = fingerprints(name, {"path": "https://x.org/a", "file_path": "/tmp/x > y"})
        assert [fp.kind for fp in result.fingerprints] == ["exact"]
        assert not result.is_local


# --- pagination and generic sinks -------------------------------------------------------------


def test_pagination_is_a_new_resource() -> None:
    base = "curl -s 'https://api.github.com/repos/x/y/commits?per_page=100&page={}'"
    pages = [bash(base.format(page)) for page in (1, 2, 3)]
    nets = [of_kind(page, "net") for page in pages]
    assert nets[0] != nets[1] != nets[2] != nets[0]
    assert nets[1] == {"net:api.github.com/repos/x/y/commits?page=2&per_page=100"}
    assert of_kind(pages[0], "site") == of_kind(pages[2], "site") == {"site:github.com"}


def test_refetching_one_page_with_tracking_noise_is_the_same_resource() -> None:
    first = bash("curl 'https://api.github.com/repos/x/y/commits?page=2'")
    second = bash("curl 'https://api.github.com/repos/x/y/commits?utm_source=x&page=2&fbclid=abc'")
    assert of_kind(first, "net") == of_kind(second, "net")


def test_four_urls_written_to_dev_null_share_no_net_or_sink() -> None:
    calls = [
        bash(f"curl -s -o /dev/null -w '%{{http_code}}' https://{host}/")
        for host in ("a.org", "b.org", "c.org", "d.org")
    ]
    nets = [of_kind(call, "net") for call in calls]
    assert all(len(net) == 1 for net in nets) and len(set.union(*nets)) == 4
    assert all(not of_kind(call, "sink") for call in calls)
    assert len({frozenset(of_kind(call, "cmd")) for call in calls}) == 4


# --- locality ---------------------------------------------------------------------------------


def test_a_purely_local_call_marks_every_target_fingerprint_local() -> None:
    command = "curl -s -o out.json http://localhost:8080/api && curl 127.0.0.1:9"
    result = fingerprints("bash", {"command": command})
    assert result.is_local
    for fp in result.fingerprints:
        assert fp.local == (fp.kind in TARGET_KINDS)


def test_a_mixed_call_is_not_local() -> None:
    result = fingerprints("bash", {"command": "curl http://localhost:8080/a && curl https://example.org/"})
    assert not result.is_local
    assert not any(fp.local for fp in result.fingerprints)


def test_a_call_without_urls_is_not_local() -> None:
    result = fingerprints("bash", {"command": "echo hi > out.txt"})
    assert not result.is_local and not any(fp.local for fp in result.fingerprints)


def test_a_local_url_tool_call_is_local() -> None:
    result = fingerprints("web_fetch", {"url": "http://192.168.1.5:3000/status"})
    assert result.is_local
    assert [(fp.kind, fp.local) for fp in result.fingerprints] == [
        ("exact", False),
        ("net", True),
        ("site", True),
        ("family", True),
    ]


# --- shapes of calls --------------------------------------------------------------------------


def test_fingerprint_order_is_exact_cmd_net_site_sink_family_verb() -> None:
    result = fingerprints("bash", {"command": "curl -o a.html https://b.org/x https://c.org/y | tee t.txt"})
    kinds = [fp.kind for fp in result.fingerprints]
    assert kinds == ["exact", "cmd", "net", "net", "site", "site", "sink", "sink", "family", "verb", "verb"]
    assert len({fp.key for fp in result.fingerprints}) == len(result.fingerprints)


def test_every_key_starts_with_its_kind() -> None:
    for fp in fingerprints("bash", {"command": "wget -O x https://a.org/ && ls"}).fingerprints:
        assert fp.key.startswith(fp.kind + ":")


def test_repeated_targets_are_de_duplicated() -> None:
    all_keys = bash("curl https://a.org/x; curl https://www.a.org/x/ > f; cat f > f")
    assert all_keys.count("net:a.org/x") == 1 and all_keys.count("verb:curl") == 1
    assert all_keys.count("sink:f") == 1


def test_cmd_is_keyed_by_the_verb_of_the_first_command() -> None:
    assert of_kind(bash("/usr/bin/curl -s x.org"), "cmd") == {"cmd:curl:/usr/bin/curl x.org/"}
    assert of_kind(bash("cd /tmp && make"), "cmd") == {"cmd:cd:cd /tmp && make"}


def test_shell_tools_accept_cmd_and_script_arguments() -> None:
    for name in ("bash", "pwsh", "shell"):
        for argument in ("command", "cmd", "script"):
            assert "net:x.org/" in keys(name, {argument: "curl https://x.org"})


def test_url_tools_read_url_href_uri_and_url_lists() -> None:
    assert of_kind(keys("browse_page", {"href": "x.org/a"}), "net") == {"net:x.org/a"}
    assert of_kind(keys("fetch_url", {"uri": "https://x.org/b"}), "net") == {"net:x.org/b"}
    many = keys("web_fetch", {"urls": ["https://x.org/c", "https://y.org/d", 3, None]})
    assert of_kind(many, "net") == {"net:x.org/c", "net:y.org/d"}


def test_a_search_tool_is_an_http_fetch_only_when_it_is_web_or_given_a_url() -> None:
    assert "family:http-fetch" in keys("web_search", {"query": "dsh breaker"})
    assert "family:http-fetch" not in keys("file_search", {"query": "TODO"})
    assert "family:http-fetch" in keys("site_search", {"url": "https://x.org/"})


def test_host_aliases_come_from_the_config() -> None:
    config = load_config({"hostAliases": {"WWW.Mirror.Example.": "example.org"}})
    assert of_kind(keys("bash", {"command": "curl https://mirror.example/a"}, config), "net") == {
        "net:example.org/a"
    }


def test_tool_specific_decoys_come_from_the_config() -> None:
    config = load_config({"ignoreArgs": {"web_fetch": ["prompt"]}})
    with_prompt = keys("web_fetch", {"url": "https://x.org", "prompt": "a"}, config)
    assert with_prompt == keys("web_fetch", {"url": "https://x.org", "prompt": "b"}, config)
    assert keys("web_fetch", {"url": "https://x.org", "prompt": "a"}) != keys(
        "web_fetch", {"url": "https://x.org", "prompt": "b"}
    )


@pytest.mark.parametrize("arguments", [None, 3, "text", [1, 2], {"command": 5}, {"command": None}, {}])
def test_odd_arguments_get_exact_only(arguments: object) -> None:
    result = fingerprints("bash", arguments)
    assert [fp.kind for fp in result.fingerprints] == ["exact"]


def test_a_huge_argument_fingerprints_to_a_bounded_key_that_keeps_its_identity() -> None:
    content = "line of text\n" * 800_000  # ~10 MB
    result = fingerprints("write", {"file_path": "/tmp/big.txt", "content": content})
    changed = fingerprints("write", {"file_path": "/tmp/big.txt", "content": content + "x"})
    assert len(result.fingerprints[0].key) <= 512
    assert result.fingerprints[0].key != changed.fingerprints[0].key


def test_huge_commands_fingerprint_to_bounded_keys() -> None:
    for size in (1_000_000, 10_000_000):
        command = "curl -o /tmp/a https://x.org/a && echo " + "a" * size
        result = fingerprints("bash", {"command": command})
        assert all(len(fp.key) <= 512 for fp in result.fingerprints)
        assert "net:x.org/a" in [fp.key for fp in result.fingerprints]


# --- properties -------------------------------------------------------------------------------

DECOY_MARK = "DECOYVALUE"
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
tool_names = st.sampled_from(["bash", "pwsh", "shell", "read", "write", "web_fetch", "web_search", "grep"])
shell_words = st.sampled_from(
    [
        "curl",
        "wget",
        "-sSL",
        "-o",
        "out.txt",
        "https://x.org/a?page=2",
        "open.canada.ca",
        "|",
        "&&",
        ";",
        ">",
        "/dev/null",
        "tee",
        "'quoted word'",
        '"dq $(sub)"',
        "<<EOF\nhttps://h.org/\nEOF\n",
        "timeout",
        "30",
        "sudo",
        "FOO=1",
        "--max-time",
        "\\\n",
        "#",
        "http://[::1]:8080/",
        "`x`",
    ]
)


@given(
    tool_names,
    st.dictionaries(st.text(max_size=8), json_values, max_size=4),
    st.text(min_size=1, max_size=10),
    st.sampled_from(sorted(ignored_args(CONFIG, "bash"))),
)
def test_no_ignored_value_ever_appears_in_a_fingerprint(
    tool: str, arguments: dict[str, object], suffix: str, decoy: str
) -> None:
    value = DECOY_MARK + suffix
    arguments = {key: val for key, val in arguments.items() if key not in ignored_args(CONFIG, tool)}
    arguments[decoy] = value
    arguments.setdefault("command", "curl -o x https://x.org")
    for fp in fingerprints(tool, arguments).fingerprints:
        assert DECOY_MARK not in fp.key


@given(st.dictionaries(st.text(max_size=8), json_values, max_size=6), st.randoms())
def test_fingerprints_are_invariant_under_dict_key_order(arguments: dict[str, object], rnd: Random) -> None:
    items = list(arguments.items())
    rnd.shuffle(items)
    arguments.setdefault("command", "curl -o x 'https://x.org/?b=1&a=2'")
    items.append(("command", arguments["command"]))
    for tool in ("bash", "read", "web_fetch"):
        shuffled = fingerprints(tool, dict(reversed(items))).fingerprints
        assert shuffled == fingerprints(tool, arguments).fingerprints


volatile_flags = st.lists(
    st.sampled_from(
        [
            "-s",
            "-S",
            "-L",
            "-sSL",
            "-k",
            "-f",
            "--silent",
            "--max-time 30",
            "--max-time=5",
            "-m 9",
            "--connect-timeout 4",
            "--retry 2",
            "--retry-all-errors",
            "-A bot",
            "--compressed",
            "-#",
            "-v",
        ]
    ),
    max_size=5,
)


@given(volatile_flags, st.sampled_from(["", "timeout 30 ", "sudo ", "FOO=1 ", "nice -n 5 ", "env A=b "]))
def test_fingerprints_are_invariant_under_volatile_flags_and_wrappers(flags: list[str], wrapper: str) -> None:
    plain = "curl -o /tmp/p.html 'https://x.org/p?page=2'"
    noisy = f"{wrapper}curl {' '.join(flags)} -o /tmp/p.html 'https://x.org/p?page=2'"
    assert semantic(bash(noisy)) == semantic(bash(plain))


@given(
    st.sampled_from(["open.canada.ca", "open-data.canada.ca"]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.sampled_from(["", ":443", ":80"]),
    st.sampled_from(["https://", "http://", ""]),
)
def test_fingerprints_are_invariant_under_host_spelling(
    host: str, upper: bool, www: bool, trailing_dot: bool, port: str, scheme: str
) -> None:
    spelled = ("www." if www else "") + (host.upper() if upper else host) + ("." if trailing_dot else "")
    url = f"{scheme}{spelled}{port}/data/"
    for tool, arguments in [("bash", {"command": f"curl -o d.html '{url}'"}), ("web_fetch", {"url": url})]:
        canonical = fingerprints(
            tool, {key: value.replace(url, "https://open.canada.ca/data") for key, value in arguments.items()}
        )
        assert semantic([fp.key for fp in fingerprints(tool, arguments).fingerprints]) == semantic(
            [fp.key for fp in canonical.fingerprints]
        )


@pytest.mark.parametrize("spelled", ["bücher.de", "BÜCHER.DE", "www.bücher.de", "xn--bcher-kva.de"])
def test_an_internationalised_host_and_its_ascii_form_are_one_host(spelled: str) -> None:
    """``bücher.de`` and ``xn--bcher-kva.de`` name one host (the second is what DNS is asked): a
    model alternating the two spellings repeats one fetch, as with upper case or ``www.``."""
    assert of_kind(bash(f"curl -s https://{spelled}/katalog"), "net") == {"net:xn--bcher-kva.de/katalog"}
    config = load_config({"hostAliases": {"bücher.de": "books.example"}})
    assert of_kind(keys("bash", {"command": f"curl -s https://{spelled}/k"}, config), "net") == {
        "net:books.example/k"
    }


def test_a_host_with_no_ascii_form_is_kept_as_written() -> None:
    too_long = "ü" * 70 + ".de"  # a label past 63 characters has none
    assert of_kind(bash(f"curl -s https://{too_long}/x"), "net") == {f"net:{too_long}/x"}


@given(tool_names, json_values)
def test_fingerprint_call_never_raises_on_json_ish_arguments(tool: str, arguments: object) -> None:
    result = fingerprints(tool, arguments)
    assert result.fingerprints[0].kind == "exact"


@given(st.one_of(st.text(), st.lists(shell_words, max_size=25).map(" ".join)))
def test_fingerprint_call_never_raises_on_any_command(command: str) -> None:
    result = fingerprints("bash", {"command": command})
    assert all(isinstance(fp, Fingerprint) and len(fp.key) <= 512 for fp in result.fingerprints)
    for fp in result.fingerprints:
        fp.key.encode("utf-8")
    assert result == fingerprints("bash", {"command": command})

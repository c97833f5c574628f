"""The normalizer: canonical JSON, bounded keys, canonical URLs (T9), shell lexing and analysis."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from breaker.core.reading.canonical import (
    CONDENSED_CHARS,
    MAX_KEY_CHARS,
    bounded_key,
    canonical_json,
    json_key,
)
from breaker.core.reading.commands import analyze_shell
from breaker.core.reading.shell import SimpleCommand, lex_shell
from breaker.core.reading.urls import canonical_url

ALIASES = {"open-data.canada.ca": "open.canada.ca"}


def resource(url: str, *, scheme_optional: bool = False) -> str | None:
    canonical = canonical_url(url, ALIASES, scheme_optional=scheme_optional)
    return None if canonical is None else canonical.resource


def commands(text: str) -> list[list[str]]:
    return [part.words for part in lex_shell(text).parts if isinstance(part, SimpleCommand)]


# --- canonical JSON and bounded keys ---------------------------------------------------------


def test_canonical_json_sorts_keys_deeply_and_is_compact() -> None:
    assert canonical_json({"b": 1, "a": {"d": [1, {"z": 0, "y": None}], "c": "é"}}) == (
        '{"a":{"c":"é","d":[1,{"y":null,"z":0}]},"b":1}'
    )


def test_canonical_json_survives_cycles() -> None:
    cyclic: dict[str, object] = {"a": 1}
    cyclic["self"] = cyclic
    looped: list[object] = [1]
    looped.append(looped)
    assert canonical_json(cyclic) == '{"a":1,"self":"<cycle>"}'
    assert canonical_json(looped) == '[1,"<cycle>"]'


def test_canonical_json_survives_nesting_far_beyond_the_recursion_limit() -> None:
    deep: object = "leaf"
    for _ in range(200_000):
        deep = [deep]
    text = canonical_json(deep)
    assert text.startswith("[[[[") and '"leaf"' in text and text.endswith("]]]]")


def test_canonical_json_matches_the_plain_encoder_for_deep_but_ordinary_values() -> None:
    deep: object = {"b": 2, "a": 1}
    for depth in range(200):
        deep = {"k": deep, "j": [depth, {"x": None}]}
    assert canonical_json(deep) == json.dumps(deep, sort_keys=True, separators=(",", ":"))


def test_canonical_json_takes_non_json_values_without_raising() -> None:
    weird = {1: b"\xff", False: (1, 2), None: {3}, "huge": 10**5000, "nan": float("nan"), "s": "\ud800\x00"}
    text = canonical_json(weird)
    assert '"1":"\\\\xff"' in text and '"false":[1,2]' in text and '"null":"<set>"' in text
    assert "NaN" in text and "0x" in text


def test_bounded_key_keeps_short_keys_and_digests_long_ones() -> None:
    assert bounded_key("net:x.org/") == "net:x.org/"
    long_a, long_b = "cmd:" + "a" * 5000, "cmd:" + "a" * 4999 + "b"
    bounded_a, bounded_b = bounded_key(long_a), bounded_key(long_b)
    assert len(bounded_a) == MAX_KEY_CHARS and bounded_a.startswith("cmd:aaaa")
    assert "…#" in bounded_a and bounded_a != bounded_b
    assert bounded_key(long_a) == bounded_a


LONG = 'line "one"\n\tsecond \\ line\n' * 80


@pytest.mark.parametrize(
    "value",
    [
        {"file_path": "a.py", "old_string": LONG, "new_string": LONG + "x"},
        {"command": LONG},
        {"content": "\ud800" + LONG, "file_path": "b.py", "mode": 3, "flag": True, "none": None},
        {"content": "x" * CONDENSED_CHARS, "file_path": "c.py"},
        {"content": "x" * CONDENSED_CHARS, "note": LONG},
        {"path": "short"},
        [LONG],
    ],
)
def test_a_json_key_names_one_value_with_the_head_its_json_has(value: object) -> None:
    key = json_key("exact:edit:", value)
    plain = bounded_key("exact:edit:" + canonical_json(value))
    assert len(key) == len(plain) and key.encode("utf-8")
    assert key.partition("…#")[0] == plain.partition("…#")[0]
    assert json_key("exact:edit:", json.loads(json.dumps(value))) == key  # the same value, anew
    if isinstance(value, dict):
        for name, child in value.items():
            changed = {**value, name: (child + "y") if isinstance(child, str) else "other"}
            assert json_key("exact:edit:", changed) != key
        assert json_key("exact:write:", value) != key


def test_a_json_key_of_condensed_texts_only_is_the_bounded_key_of_its_json() -> None:
    value = {"content": "x" * CONDENSED_CHARS, "file_path": "c.py"}
    assert json_key("exact:write:", value) == bounded_key("exact:write:" + canonical_json(value))


def test_bounded_key_is_always_valid_utf8() -> None:
    key = bounded_key("exact:x:\ud800")
    key.encode("utf-8")
    assert key == "exact:x:\\ud800"
    bounded_key("exact:" + "\udfff" * 10_000).encode("utf-8")


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
        lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    )
)
def test_canonical_json_agrees_with_json_dumps_on_json_values(value: object) -> None:
    expected = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_json(value) == expected


# --- T9: URL normalizer units ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://open.canada.ca/", "open.canada.ca/"),
        ("http://open.canada.ca", "open.canada.ca/"),
        ("HTTPS://WWW.Open.Canada.CA./", "open.canada.ca/"),
        ("https://open-data.canada.ca/", "open.canada.ca/"),
        ("https://www.open-data.canada.ca./data/", "open.canada.ca/data"),
        ("https://x.org:443/a", "x.org/a"),
        ("http://x.org:80/a", "x.org/a"),
        ("http://localhost:8080/api/", "localhost:8080/api"),
        ("https://user:secret@x.org/a", "x.org/a"),
        ("https://x.org/a#section-2", "x.org/a"),
        ("https://x.org/a/b///", "x.org/a/b"),
        ("https://x.org/?b=2&a=1", "x.org/?a=1&b=2"),
        ("https://x.org/p?utm_source=x&UTM_Medium=y&fbclid=1&gclid=2&page=2", "x.org/p?page=2"),
        ("https://x.org/p?utm_source=x", "x.org/p"),
        ("https://x.org/p?", "x.org/p"),
        ("http://[::1]:8080/", "[::1]:8080/"),
        ("http://[0:0:0:0:0:0:0:1]/", "[::1]/"),
        ("http://[fe80::1%25eth0]/", "[fe80::1]/"),
        ("http://127.1:8080/", "127.0.0.1:8080/"),
        ("http://0x7f.0.0.1:8080/", "127.0.0.1:8080/"),
        ("http://2130706433:8080/", "127.0.0.1:8080/"),
        ("http://0177.0.0.01:8080/", "127.0.0.1:8080/"),
        ("https://1.2.3.4.5/", "1.2.3.4.5/"),
        ("https://x.org/@user/a@b", "x.org/@user/a@b"),
    ],
)
def test_urls_are_canonicalised(url: str, expected: str) -> None:
    assert resource(url) == expected


def test_pagination_is_a_new_resource_but_tracking_is_not() -> None:
    base = "https://api.github.com/repos/x/y/commits"
    assert resource(base + "?page=2") != resource(base + "?page=3")
    assert resource(base + "?page=2&utm_source=x") == resource(base + "?page=2")


@pytest.mark.parametrize("url", ["ftp://x.org/", "file:///etc/passwd", "https://", "https://a b/", "x.org"])
def test_non_http_urls_are_not_resources(url: str) -> None:
    assert resource(url) is None


@pytest.mark.parametrize(
    ("spelled", "expected"),
    [
        ("open.canada.ca", "open.canada.ca/"),
        ("open-data.canada.ca/x?y=1", "open.canada.ca/x?y=1"),
        ("localhost:3000", "localhost:3000/"),
        ("127.0.0.1/x", "127.0.0.1/x"),
        ("//x.org/a", "x.org/a"),
        ("README", None),
        ("ftp://x.org", None),
        ("mailto:me@x.org", None),
        ("javascript:alert(1)", None),
        ("x.org:notaport", None),
    ],
)
def test_scheme_is_optional_for_fetcher_arguments(spelled: str, expected: str | None) -> None:
    assert resource(spelled, scheme_optional=True) == expected


@pytest.mark.parametrize(
    ("url", "site"),
    [
        ("https://api.github.com/x", "github.com"),
        ("https://github.com/x", "github.com"),
        ("https://www.bbc.co.uk/news", "bbc.co.uk"),
        ("https://a.b.example.com.au/", "example.com.au"),
        ("http://192.168.1.10:8000/", "192.168.1.10"),
        ("http://[::1]:8000/", "[::1]"),
        ("http://localhost:8000/", "localhost"),
    ],
)
def test_site_is_the_registrable_part_and_ip_literals_stand_alone(url: str, site: str) -> None:
    canonical = canonical_url(url, ALIASES)
    assert canonical is not None and canonical.site == site


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "app.localhost",
        "127.0.0.1",
        "127.8.9.10",
        "0.0.0.0",
        "10.1.2.3",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.0.1",
        "169.254.169.254",
        "[::1]",
        "[::]",
        "[fe80::1]",
        "[fd00::1]",
        "[::ffff:127.0.0.1]",
        "[::ffff:192.168.1.1]",
        "127.1",
        "0x7f.1",
        "2130706433",
        "0177.0.0.1",
        "10.1",
        "192.168.257",
    ],
)
def test_local_hosts_are_recognised_without_dns(host: str) -> None:
    canonical = canonical_url(f"http://{host}:8080/", ALIASES)
    assert canonical is not None and canonical.local


@pytest.mark.parametrize(
    "host",
    [
        "example.com",
        "8.8.8.8",
        "172.32.0.1",
        "192.169.0.1",
        "[2001:db8::1]",
        "[::ffff:8.8.8.8]",
        "localhost.example.com",
        "8.8.2056",
        "134744072",
        "256.1.1.1",
    ],
)
def test_public_hosts_are_not_local(host: str) -> None:
    canonical = canonical_url(f"http://{host}/", ALIASES)
    assert canonical is not None and not canonical.local


def test_alias_fold_is_reported_with_the_spelling_seen() -> None:
    canonical = canonical_url("https://WWW.Open-Data.Canada.ca./", ALIASES)
    assert canonical is not None
    assert (
        canonical.aliased
        and canonical.seen_host == "WWW.Open-Data.Canada.ca."
        and canonical.host == ("open.canada.ca")
    )


# --- shell lexing ----------------------------------------------------------------------------


def test_lexer_splits_simple_commands_on_every_operator() -> None:
    expected = [["a", "1"], ["b", "2"], ["c"], ["d"], ["e"], ["f"], ["g"]]
    assert commands("a 1 | b 2 && c || d; e & f\ng") == expected


def test_lexer_removes_quotes_and_escapes() -> None:
    assert commands("""echo 'a b' "c \\"d\\" \\$e" f\\ g""") == [["echo", "a b", 'c "d" $e', "f g"]]


def test_lexer_joins_backslash_newline_continuations() -> None:
    assert commands("curl \\\n  -o x \\\n  https://x.org") == [["curl", "-o", "x", "https://x.org"]]


def test_lexer_keeps_substitutions_whole_inside_their_word() -> None:
    assert commands('echo "$(date "+%F") `id -u`" $(a $(b) "c)") done') == [
        ["echo", '$(date "+%F") `id -u`', '$(a $(b) "c)")', "done"]
    ]


def test_lexer_drops_comments_but_not_hashes_inside_words() -> None:
    assert commands("echo a#b # comment https://x.org\nls") == [["echo", "a#b"], ["ls"]]


def test_lexer_sets_heredoc_bodies_aside_as_data() -> None:
    script = lex_shell("cat <<'EOF' > out.py\nprint(1)\n  EOF\nEOF\necho after\ncat <<-X\n\tbody\n\tX\n")
    assert commands("cat <<'EOF' > out.py\nprint(1)\nEOF\necho after") == [["cat"], ["echo", "after"]]
    assert script.heredocs == ["print(1)\n  EOF", "\tbody"]


def test_lexer_reads_redirections_with_their_fd() -> None:
    script = lex_shell("cmd > out 2>&1 >>log 2> err &> all <in")
    first = script.parts[0]
    assert isinstance(first, SimpleCommand)
    assert first.redirects == [
        (">", "out"),
        ("2>&", "1"),
        (">>", "log"),
        ("2>", "err"),
        ("&>", "all"),
        ("<", "in"),
    ]


@pytest.mark.parametrize(
    "text", ["'", '"', "$(", "`", '"$(`', "\\", "<<", "a >", "$((", "${", "((", "))", "<("]
)
def test_lexer_survives_unterminated_constructs(text: str) -> None:
    lex_shell(text)
    analyze_shell(text, ALIASES)


@given(st.text())
def test_lexer_never_raises_on_any_text(text: str) -> None:
    lex_shell(text)


@given(st.text(alphabet="ab '\"\\$()`|&;<>#\n\t-=/:.", max_size=200))
def test_analysis_never_raises_on_shell_shaped_text(text: str) -> None:
    analyze_shell(text, ALIASES)


# --- wrappers, volatile flags, sinks, verbs ---------------------------------------------------


@pytest.mark.parametrize(
    ("command", "removed"),
    [
        ("timeout 30 curl x.org", ["timeout 30"]),
        ("timeout -s KILL -k 5 30s curl x.org", ["timeout -s KILL -k 5 30s"]),
        ("FOO=1 BAR=2 curl x.org", ["FOO=1", "BAR=2"]),
        ("sudo -u root -E curl x.org", ["sudo -u root -E"]),
        ("doas -u www curl x.org", ["doas -u www"]),
        ("env -i PATH=/bin curl x.org", ["env -i", "PATH=/bin"]),
        ("nice -n 10 nohup curl x.org", ["nice -n 10", "nohup"]),
        ("time command exec curl x.org", ["time", "command", "exec"]),
        ("stdbuf -oL curl x.org", ["stdbuf -oL"]),
        ("/usr/bin/sudo /usr/bin/curl x.org", ["/usr/bin/sudo"]),
    ],
)
def test_wrappers_are_transparent(command: str, removed: list[str]) -> None:
    analysis = analyze_shell(command, ALIASES)
    assert analysis.verb == "curl"
    assert list(analysis.volatile_removed) == removed
    assert analysis.verbs == ("curl",)


def test_a_wrapper_with_nothing_to_run_is_the_command_itself() -> None:
    assert analyze_shell("FOO=1", ALIASES).command == "FOO=1"
    assert analyze_shell("FOO=1", ALIASES).verbs == ()
    assert analyze_shell("time", ALIASES).verb == "time"
    assert analyze_shell("command -v curl", ALIASES).verb == "command"


@pytest.mark.parametrize(
    ("command", "expected", "removed"),
    [
        ("curl --max-time 60 -sSL https://x.org/", "curl x.org/", ["--max-time 60", "-sSL"]),
        ("curl -sSLo out https://x.org/", "curl -o out x.org/", ["-sSL"]),
        ("curl -sm 30 https://x.org/", "curl x.org/", ["-sm 30"]),
        ("curl -sm30 -I https://x.org/", "curl -I x.org/", ["-sm30"]),
        ("curl -# -v -k -f https://x.org/", "curl x.org/", ["-#", "-v", "-k", "-f"]),
        (
            "curl --max-time=5 --connect-timeout 3 --retry 4 --retry-delay 1 --retry-all-errors x.org",
            "curl x.org/",
            ["--max-time=5", "--connect-timeout 3", "--retry 4", "--retry-delay 1", "--retry-all-errors"],
        ),
        (
            "curl --silent --show-error --fail --location --insecure --compressed x.org",
            "curl x.org/",
            ["--silent", "--show-error", "--fail", "--location", "--insecure", "--compressed"],
        ),
        (
            "curl -A 'Mozilla/5.0' --user-agent=bot x.org",
            "curl x.org/",
            ["-A Mozilla/5.0", "--user-agent=bot"],
        ),
        (
            "wget -q -nv -T 10 --tries=3 --no-check-certificate -U ua x.org",
            "wget x.org/",
            ["-q", "-nv", "-T 10", "--tries=3", "--no-check-certificate", "-U ua"],
        ),
        ("wget -qO- x.org", "wget -O - x.org/", ["-q"]),
        ("http --timeout 5 --verify no GET x.org/a", "http GET x.org/a", ["--timeout 5", "--verify no"]),
    ],
)
def test_volatile_fetcher_flags_are_removed(command: str, expected: str, removed: list[str]) -> None:
    analysis = analyze_shell(command, ALIASES)
    assert analysis.command == expected
    assert list(analysis.volatile_removed) == removed


def test_volatile_short_flags_are_only_stripped_for_fetchers() -> None:
    assert analyze_shell("ls -s -L -f", ALIASES).command == "ls -s -L -f"


def test_generic_timeouts_and_retries_are_volatile_for_any_command() -> None:
    analysis = analyze_shell("pip download --timeout 30 --retries 5 pkg", ALIASES)
    assert analysis.command == "pip download pkg"
    assert analysis.volatile_removed == ("--timeout 30", "--retries 5")


def test_an_option_argument_is_never_taken_for_a_url() -> None:
    analysis = analyze_shell("curl -X POST -H 'Host: a.org' -d @body.json -u me:pw api.x.org/v1", ALIASES)
    assert [url.resource for url in analysis.urls] == ["api.x.org/v1"]


def test_curl_url_option_is_a_url() -> None:
    assert [u.resource for u in analyze_shell("curl --url x.org/a", ALIASES).urls] == ["x.org/a"]


def test_httpie_takes_the_first_non_method_word_as_its_url() -> None:
    analysis = analyze_shell("http POST :8080/api name=x.org Accept:text/html", ALIASES)
    assert [url.resource for url in analysis.urls] == ["localhost:8080/api"]


@pytest.mark.parametrize(
    ("command", "sinks"),
    [
        ("curl -o /tmp/a.html x.org", ["/tmp/a.html"]),
        ("curl --output=/tmp/a.html x.org", ["/tmp/a.html"]),
        ("curl -sSLo /tmp/a.html x.org", ["/tmp/a.html"]),
        ("curl -O x.org/file.tgz", []),
        ("wget -O page.html x.org", ["page.html"]),
        ("wget --output-document=page.html x.org", ["page.html"]),
        ("curl x.org > a.txt 2> err.txt", ["a.txt"]),
        ("curl x.org >> a.txt 2>&1", ["a.txt"]),
        ("curl x.org &> both.txt", ["both.txt"]),
        ("curl x.org >| forced.txt", ["forced.txt"]),
        ("curl x.org >&2", []),
        ("curl x.org | tee -a one.txt --append two.txt", ["one.txt", "two.txt"]),
        ("echo hi > ./dir//a.txt", ["dir/a.txt"]),
        ("curl -o /dev/null -w '%{http_code}' x.org", []),
        ("curl x.org > /dev/stdout | tee /dev/stderr - /dev/tty /dev/fd/3", []),
    ],
)
def test_sinks_are_where_a_command_writes(command: str, sinks: list[str]) -> None:
    assert list(analyze_shell(command, ALIASES).sinks) == sinks


def test_every_simple_command_has_a_verb() -> None:
    analysis = analyze_shell("cd /x && curl a.org | python3 -c 'x' ; sudo wget b.org || echo $(id)", ALIASES)
    assert analysis.verbs == ("cd", "curl", "python3", "wget", "echo")
    assert analysis.verb == "cd"
    assert analysis.fetches


def test_shell_keywords_are_not_verbs() -> None:
    analysis = analyze_shell("if curl -s x.org; then echo ok; fi; for u in a b; do wget $u; done", ALIASES)
    assert analysis.verbs == ("curl", "echo", "wget")


# --- real-world shapes ------------------------------------------------------------------------


def test_urls_are_found_inside_quotes_substitutions_heredocs_and_remote_commands() -> None:
    command = (
        "ssh box 'curl -s https://a.org/1' && x=$(curl -s \"https://b.org/2\")\n"
        "python3 -c \"import urllib.request as u; u.urlopen('https://c.org/3')\" | "
        "cat <<EOF\nsee https://d.org/4.\nEOF\n"
        "echo `wget -qO- https://e.org/5`"
    )
    found = [url.resource for url in analyze_shell(command, ALIASES).urls]
    assert found == ["a.org/1", "b.org/2", "c.org/3", "e.org/5", "d.org/4"]


def test_urls_in_text_lose_prose_punctuation_and_unbalanced_closers() -> None:
    analysis = analyze_shell("echo '(see https://x.org/a_(b)), then https://y.org/c.'", ALIASES)
    assert [url.resource for url in analysis.urls] == ["x.org/a_(b)", "y.org/c"]


def test_the_command_line_is_spelling_insensitive() -> None:
    spellings = [
        "curl -o /tmp/x https://open-data.canada.ca/",
        "curl  -o '/tmp/x'  \"HTTPS://WWW.open.canada.ca./\"   # second try",
        "curl \\\n -o /tmp/x open.canada.ca;",
    ]
    assert {analyze_shell(text, ALIASES).command for text in spellings} == {"curl -o /tmp/x open.canada.ca/"}


def test_a_heredoc_body_is_part_of_the_command_identity() -> None:
    first = analyze_shell("cat > f.py <<'EOF'\nprint(1)\nEOF", ALIASES)
    second = analyze_shell("cat > f.py <<'EOF'\nprint(2)\nEOF", ALIASES)
    assert first.command != second.command
    assert first.sinks == second.sinks == ("f.py",)


def test_huge_commands_are_analysed_in_linear_time() -> None:
    one_mb = "curl -o /tmp/a https://x.org/a; " + "echo " + "a " * 500_000 + "https://late.org/z"
    analysis = analyze_shell(one_mb, ALIASES)
    assert analysis.sinks == ("/tmp/a",)
    assert [url.resource for url in analysis.urls] == ["x.org/a", "late.org/z"]
    ten_mb = "cat <<EOF\n" + ("x" * 99 + "\n") * 100_000 + "EOF\n" + "a|" * 4_000_000
    assert analyze_shell(ten_mb, ALIASES).verb == "cat"


def test_the_number_of_urls_per_call_is_bounded() -> None:
    command = "echo " + " ".join(f"https://x.org/{n}" for n in range(1000))
    assert len(analyze_shell(command, ALIASES).urls) == 64

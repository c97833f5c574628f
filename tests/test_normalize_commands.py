"""Command lines read as the fingerprints read them: the shell lexer (quoting, operators, heredocs),
then wrappers, volatile flags, sinks and verbs, and real-world shapes. tests/test_normalize.py holds
canonical JSON, bounded keys and the URL normaliser."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from breaker.core.reading.commands import analyze_shell
from breaker.core.reading.shell import SimpleCommand, lex_shell
from tests.test_normalize import ALIASES, commands

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

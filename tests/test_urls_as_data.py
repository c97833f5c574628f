"""A URL a call only writes into a file is text, not a resource the call touches.

A bash-only agent writes its scripts with heredocs and ``echo``: ``cat <<'EOF' > check.py`` holding
``requests.get('http://httpbin.org/get')`` fetches nothing. Such a URL yields no ``net:``, ``site:``,
``host:`` or ``family:`` in any mode; it stays in ``exact:`` and ``cmd:`` (two scripts with
different text are still different writes). A heredoc fed to an interpreter, a fetch command and a
URL-taking tool still touch what they name.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from breaker.core.config import default_config, load_config
from breaker.core.reading.fingerprints import ToolCall, fingerprint_call
from breaker.core.reading.shell import SimpleCommand, lex_shell
from breaker.core.reading.urls import fold_host_name

CONFIG = default_config()
TARGET_URL_KINDS = ("net", "site", "host", "family")
WITH_HOSTS = load_config({"limits": {"host": 5}})


def keys(command: str, *, tool: str = "bash") -> list[str]:
    return [fp.key for fp in fingerprint_call(ToolCall(tool, {"command": command}), WITH_HOSTS).fingerprints]


def url_targets(command: str) -> list[str]:
    return [key for key in keys(command) if key.partition(":")[0] in TARGET_URL_KINDS]


SCRIPT = "import requests\nprint(requests.get('http://httpbin.org/get').status_code)\n"


@pytest.mark.parametrize(
    "command",
    [
        f"cat <<'EOF' > check.py\n{SCRIPT}EOF",
        f"cat > check.py <<'EOF'\n{SCRIPT}EOF",
        f"cat >> check.py << EOF\n{SCRIPT}EOF",
        f"tee check.py <<'EOF'\n{SCRIPT}EOF",
        f"tee -a check.py > /dev/null <<'EOF'\n{SCRIPT}EOF",
        "echo \"requests.get('http://httpbin.org/get')\" > check.py",
        "echo 'auth = \"http://user:pass@host.example/\"' >> settings.py",
        "printf '%s\\n' 'URL = \"https://api.example.org/v1\"' > conf.py",
        f"mkdir -p demo && cat <<'EOF' > demo/check.py\n{SCRIPT}EOF\nls demo",
    ],
)
def test_a_url_written_into_a_file_is_no_target(command: str) -> None:
    assert url_targets(command) == []


def test_a_script_written_then_run_touches_only_what_the_command_line_names() -> None:
    command = f"cat <<'EOF' > check.py\n{SCRIPT}EOF\npython check.py"
    all_keys = keys(command)
    assert url_targets(command) == []
    assert "sink:check.py" in all_keys
    assert any(key.startswith("cmd:cat:") and "httpbin.org/get" in key for key in all_keys)


def test_two_scripts_with_different_urls_are_still_two_different_writes() -> None:
    first = keys("echo 'URL = \"https://a.example.org/\"' > conf.py")
    second = keys("echo 'URL = \"https://b.example.org/\"' > conf.py")
    assert [key for key in first if key.startswith(("exact:", "cmd:"))] != [
        key for key in second if key.startswith(("exact:", "cmd:"))
    ]
    assert "sink:conf.py" in first and "sink:conf.py" in second


@pytest.mark.parametrize(
    "command",
    [
        f"python3 - <<'EOF'\n{SCRIPT}EOF",
        f"python3 <<'EOF'\n{SCRIPT}EOF",
        "node <<'EOF'\nfetch('http://httpbin.org/get').then(r => console.log(r.status))\nEOF",
        "bash <<'EOF'\ncurl -sS http://httpbin.org/get\nEOF",
        "cat <<'EOF' | python3\nimport urllib.request\nurllib.request.urlopen('http://httpbin.org/get')\nEOF",
        "cat <<'EOF' | sh\ncurl http://httpbin.org/get\nEOF",
        "echo http://httpbin.org/get | xargs curl",
        "curl -sS http://httpbin.org/get > response.json",
        "wget -O page.html http://httpbin.org/get",
    ],
)
def test_a_url_a_command_runs_or_fetches_is_still_a_target(command: str) -> None:
    targets = url_targets(command)
    assert "net:httpbin.org/get" in targets
    assert "site:httpbin.org" in targets
    assert "host:httpbin.org" in targets


def test_a_url_echoed_to_the_terminal_stays_the_seeds_target() -> None:
    """Only writing into a file makes text data; everything else is exactly the seed's."""
    assert "net:httpbin.org/get" in url_targets("echo http://httpbin.org/get")
    assert "net:httpbin.org/get" in url_targets("cat <<'EOF' > /dev/null\nhttp://httpbin.org/get\nEOF")


def test_a_fetch_beside_a_written_script_keeps_the_fetch_and_drops_the_text() -> None:
    command = (
        "cat <<'EOF' > notes.md\nsee https://docs.example.org/guide\nEOF\n"
        "curl -sS https://api.example.org/v1/items -o items.json"
    )
    targets = url_targets(command)
    assert "net:api.example.org/v1/items" in targets
    assert not any("docs.example.org" in key for key in targets)
    assert "family:http-fetch" in targets


def test_a_written_url_does_not_make_a_call_local() -> None:
    call = ToolCall("bash", {"command": "echo 'BASE = \"http://localhost:8000\"' > conf.py"})
    assert fingerprint_call(call, CONFIG).is_local is False


@pytest.mark.parametrize(
    "command",
    [
        "git commit -m \"$(cat <<'EOF'\nfix the parser\n\nGenerated with [Claude Code](https://claude.ai/code)\nEOF\n)\"",
        "git add -A && git commit -am 'see https://github.com/acme/app/issues/7'",
        "git commit --message='Refs https://github.com/acme/app/issues/7'",
        "git commit -m'Refs https://github.com/acme/app/issues/7' -- src",
        "git tag -a v1.2 -m 'notes: https://acme.example/changelog'",
    ],
)
def test_a_url_in_a_commit_message_is_no_target(command: str) -> None:
    assert url_targets(command) == []


def test_git_commands_that_reach_a_url_still_do() -> None:
    assert "net:github.com/acme/app.git" in url_targets("git clone https://github.com/acme/app.git")
    pushed = "git commit -m 'Refs https://acme.example/7' && git push https://github.com/acme/app.git main"
    assert url_targets(pushed) == ["net:github.com/acme/app.git", "host:github.com", "site:github.com"]


def test_content_given_to_a_write_tool_is_never_a_target() -> None:
    call = ToolCall("write", {"file_path": "check.py", "content": SCRIPT})
    assert [fp.kind for fp in fingerprint_call(call, CONFIG).fingerprints] == ["exact"]


hosts = st.from_regex(r"[a-z]{1,10}\.(?:org|com|net|io)", fullmatch=True)
paths = st.from_regex(r"(?:/[a-z0-9]{1,8}){0,3}", fullmatch=True)
writers = st.sampled_from(
    ["cat <<'EOF' > {f}\n{t}\nEOF", "cat > {f} <<EOF\n{t}\nEOF", "tee {f} <<'EOF'\n{t}\nEOF"]
)
interpreters = st.sampled_from(
    ["python3 - <<'EOF'\n{t}\nEOF", "node <<'EOF'\n{t}\nEOF", "bash <<'EOF'\n{t}\nEOF"]
)
files = st.sampled_from(["check.py", "src/app.js", "/tmp/x/notes.md", "reproduce_issue.py"])


@given(writers, files, hosts, paths)
def test_any_url_in_a_heredoc_written_to_a_file_is_no_target(
    template: str, file: str, host: str, path: str
) -> None:
    command = template.format(f=file, t=f"url = 'https://{host}{path}'")
    assert url_targets(command) == []
    assert f"sink:{file}" in keys(command)


@given(interpreters, hosts, paths)
@example("python3 - <<'EOF'\n{t}\nEOF", "www.org", "")  # a host whose first label is www
@example("python3 - <<'EOF'\n{t}\nEOF", "www.example.org", "/x")
def test_any_url_in_a_heredoc_fed_to_an_interpreter_is_a_target(template: str, host: str, path: str) -> None:
    command = template.format(t=f"url = 'https://{host}{path}'")
    canonical = fold_host_name(host)  # www.example.org is counted as example.org
    assert any(key.startswith(f"net:{canonical}") for key in url_targets(command))


@pytest.mark.parametrize(
    ("spelled", "folded"),
    [
        ("WWW.Example.org.", "example.org"),
        ("www.co.uk", "co.uk"),
        ("www.org", "www.org"),  # folding would leave the bare label "org", which names no site
        ("www", "www"),
        ("wwwx.org", "wwwx.org"),
    ],
)
def test_www_folds_away_only_in_front_of_a_name_that_keeps_a_dot(spelled: str, folded: str) -> None:
    assert fold_host_name(spelled) == folded
    assert load_config({"hostAliases": {spelled: "b.example"}}).hostAliases[folded] == "b.example"


def test_a_heredoc_belongs_to_the_command_that_reads_it() -> None:
    command = "cat <<'A' > notes.md && python3 - <<'B'\nhttp://a.example\nA\nhttp://b.example\nB\n"
    script = lex_shell(command)
    readers = [part for part in script.parts if isinstance(part, SimpleCommand)]
    assert [reader.heredocs for reader in readers] == [[0], [1]]
    assert script.heredocs == ["http://a.example", "http://b.example"]
    assert url_targets(command) == [
        "net:b.example/",
        "host:b.example",
        "site:b.example",
    ]

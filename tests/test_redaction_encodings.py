"""Secrets are redacted in whatever encoding the text that carries them went through (issue 32,
finding 3): a JSON member inside a JSON string, a token after an escaped newline, a Python dict
repr, a URL whose slashes are escaped, every spelling of ``curl -u``, a value on the line after its
name, and a call's JSON body as its ``exact:`` key shows it. One redaction serves every view of a
call: the denial's ``exact:`` and ``cmd:`` lines, its quotes, and every ``rtb`` output."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from breaker.core.config import load_config
from breaker.core.decision import Breaker
from breaker.core.judging.verdicts import Deny
from breaker.core.reading.fingerprints import ToolCall, fingerprint_call
from breaker.core.wording.escapes import Unescaped
from breaker.core.wording.redaction import quotable, quotable_inline, redact, scrub
from breaker.rtb.cli import main
from tests.rtb_logs import Log

#: The reproductions of the finding, each as (what, text that carries it, the secret in it).
REPRODUCTIONS = [
    (
        "json-member-in-a-json-string",
        json.dumps({"method": "POST", "body": json.dumps({"user": "bob", "password": "Zq7-body-pw"})}),
        "Zq7-body-pw",
    ),
    (
        "token-after-an-escaped-newline",
        json.dumps({"log": "deploy started\nghp_Zq7k2Vx9Lm4Np6Rs8Tv0Wy1Ab3Cd5Ef7Gh9 used"}),
        "Zq7k2Vx9Lm4Np6Rs8Tv0",
    ),
    (
        "python-dict-repr",
        "environ({'HOME': '/root', 'DB_PASSWORD': 'Zq7-repr-pw', 'GITHUB_TOKEN': 'Zq7-repr-token'})",
        "Zq7-repr-",
    ),
    (
        "url-with-escaped-slashes",
        '{"remote": "https:\\/\\/deploy:Zq7-slash-pw@git.example.com\\/org\\/repo.git"}',
        "Zq7-slash-pw",
    ),
    ("curl-su", "curl -su alice:Zq7-su-pw https://api.example.org/v1/items", "Zq7-su-pw"),
    ("curl-u-attached", "curl -ualice:Zq7-attached-pw https://api.example.org/v1/items", "Zq7-attached-pw"),
    ("value-on-the-next-line", "Enter DB_PASSWORD:\nZq7-next-line-pw\nconnected", "Zq7-next-line-pw"),
    ("yaml-block-value", "client_secret: |\n  Zq7-block-secret\nname: app", "Zq7-block-secret"),
    ("across-a-line-continuation", "#!/bin/sh\nAPI_TOKEN=\\\n  Zq7-continued\ncurl x", "Zq7-continued"),
    ("mysql-password-attached", "mysql -u root -pZq7-mysql-pw app", "Zq7-mysql-pw"),
]


@pytest.mark.parametrize(
    ("text", "secret"), [case[1:] for case in REPRODUCTIONS], ids=[case[0] for case in REPRODUCTIONS]
)
def test_each_reproduced_leak_is_redacted_in_every_way_text_is_shown(text: str, secret: str) -> None:
    for shown in (redact(text), quotable(text, 2000), quotable_inline(text, 2000), scrub(text)):
        assert secret not in shown, shown
        assert "[REDACTED" in shown


def test_what_identifies_the_call_stays_around_a_secret_redacted_through_escapes() -> None:
    text = '{"body": "{\\"user\\": \\"bob\\", \\"password\\": \\"Zq7-pw\\"}", "url": "https:\\/\\/a.org"}'
    assert redact(text) == (
        '{"body": "{\\"user\\": \\"bob\\", \\"password\\": \\"[REDACTED]\\"}", "url": "https:\\/\\/a.org"}'
    )
    assert redact("curl -su alice:Zq7 -x 127.0.0.1:9 http://a.org/") == (
        "curl -su alice:[REDACTED] -x 127.0.0.1:9 http://a.org/"
    )


@pytest.mark.parametrize(
    "text",
    [
        "C:\\new\\table\\index.html and \\d+ matched 3 lines",
        '{"msg": "line one\\nline two", "path": "a\\/b"}',
        "curl -sS -o out.json https://api.example.org/v1/items",
        "Name:\nalice\nRole:\nadmin",
        "repr: {'user': 'bob', 'count': 3}",
    ],
    ids=["windows-paths-and-regexes", "escaped-json", "curl-without-user", "next-line-non-secret", "repr"],
)
def test_escaped_text_without_a_secret_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_a_password_in_a_json_body_is_redacted_on_the_exact_line_as_on_the_cmd_line() -> None:
    """The call's ``exact:`` key holds its arguments as JSON, so the body's quotes are escaped
    there; the ``cmd:`` key shows the command as typed. Both are redacted alike."""
    command = 'curl -s -d \'{"user":"bob","password":"Zq7-exact-pw"}\' https://api.example.org/login'
    call = ToolCall("bash", {"command": command, "description": "log in"}, "c1")
    keys = {fp.kind: fp.key for fp in fingerprint_call(call, load_config({})).fingerprints}
    assert '\\"password\\":\\"Zq7-exact-pw\\"' in keys["exact"]  # escaped where exact: shows it
    breaker = Breaker(load_config({"limits": {"exact": 2, "cmd": 2}}))
    verdict = breaker.decide(1, call)
    for index in range(2, 4):
        breaker.record_result(1, f"c{index - 1}", '{"password":"Zq7-exact-pw"} accepted')
        verdict = breaker.decide(1, ToolCall("bash", call.arguments, f"c{index}"))
    assert isinstance(verdict, Deny)
    assert "exact:" in verdict.message and "cmd:" in verdict.message
    assert "Zq7-exact-pw" not in verdict.message
    assert verdict.message.count("[REDACTED]") >= 3  # the exact: line, the cmd: line, the quote


def _every_replay_output(capsys: pytest.CaptureFixture[str], tmp_path: Path, log: Log) -> list[str]:
    """What ``rtb replay`` of ``log`` prints as a table, markdown, JSON (in that order), and its page."""
    log.write(tmp_path / "logs")
    page = tmp_path / "page.html"
    outputs = []
    for options in (
        ["--calls", "--show-denials"],
        ["--format", "markdown", "--show-denials"],
        ["--format", "json", "--show-denials"],
        ["--html", str(page)],
    ):
        assert main(["replay", *options, str(tmp_path / "logs")]) == 0
        outputs.append(capsys.readouterr().out)
    return [*outputs, page.read_text(encoding="utf-8")]


def test_no_rtb_output_prints_a_secret_carried_in_an_encoding(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = Log("session-e5c0d1a9-0000-4000-8000-000000000001", started_ms=1_796_000_000_000, cwd="/work")
    log.prompt("log in")
    command = 'curl -su alice:Zq7-rtb-user -d \'{"password":"Zq7-rtb-body"}\' https://api.example.org/login'
    result = (
        repr({"DB_PASSWORD": "Zq7-rtb-repr"})
        + "\n"
        + json.dumps({"log": "x\nsk-Zq7rtbabcdefghijklmnopqrstu"})
    )
    for _ in range(7):
        log.call("bash", {"command": command, "description": "log in"}, result)
    outputs = _every_replay_output(capsys, tmp_path, log)
    assert main(["explain", command]) == 0
    outputs.append(capsys.readouterr().out)
    for output in outputs:
        assert "Zq7-rtb" not in output and "Zq7rtb" not in output
    assert "REDACTED" in outputs[2]


def test_a_secret_assigned_across_a_line_continuation_reaches_no_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A script the agent reads again and again, whose token is assigned across a line
    continuation (issue 40, finding 4): neither the denial nor any ``rtb replay`` output shows it."""
    script = "#!/bin/sh\nexport DEPLOY_TOKEN=\\\n  Zq7-cont-token\nmysql -u root -pZq7-cont-mysql app\n"
    arguments = {"command": "cat deploy.sh", "description": "read the script"}
    breaker = Breaker(load_config({}))
    shown = []
    for index in range(1, 8):
        verdict = breaker.decide(1, ToolCall("bash", arguments, f"c{index}"))
        if isinstance(verdict, Deny):
            shown.append(verdict.message)
            break
        breaker.record_result(1, f"c{index}", script)
    assert shown and "[REDACTED]" in shown[0]
    log = Log("session-e5c0d1a9-0000-4000-8000-000000000002", started_ms=1_796_000_000_000, cwd="/work")
    log.prompt("deploy")
    for _ in range(7):
        log.call("bash", arguments, script)
    shown += _every_replay_output(capsys, tmp_path, log)
    assert "DEPLOY_TOKEN" in shown[3]  # the JSON quotes the script, redacted
    for output in shown:
        assert "Zq7-cont" not in output


# --- every secret shape in every encoding ---------------------------------------------------------

#: A secret's characters: none of them spells a word of the texts around it, so any five of them
#: in a row found in the output came from the secret.
SECRET_ALPHABET = "qxzjkv2357QXZJKV"

#: Shapes a secret takes, each a text carrying ``value``.
SHAPES: dict[str, Callable[[str], str]] = {
    "assignment": lambda value: f"password={value}",
    "json-member": lambda value: json.dumps({"password": value}),
    "repr-member": lambda value: repr({"DB_PASSWORD": value}),
    "header": lambda value: f"Authorization: Bearer {value}",
    "url-userinfo": lambda value: f"https://deploy:{value}@git.example.com/org/repo",
    "curl-u": lambda value: f"curl -u alice:{value} https://api.example.org/",
    "curl-su": lambda value: f"curl -su alice:{value} https://api.example.org/",
    "curl-u-attached": lambda value: f"curl -ualice:{value} https://api.example.org/",
    "next-line": lambda value: f"API_TOKEN:\n  {value}",
    "github-token": lambda value: f"ghp_{value}",
    "openai-key": lambda value: f"sk-{value}",
    "private-key": lambda value: f"-----BEGIN PRIVATE KEY-----\n{value}\n-----END PRIVATE KEY-----",
    "netrc": lambda value: f"machine h login alice password {value}",
    "line-continuation": lambda value: f"export DEPLOY_TOKEN=\\\n  {value}",
    "mysql-p": lambda value: f"mysql -h db -u root -p{value} app",
}


def _exact_key(text: str) -> str:
    call = ToolCall("write", {"file_path": "/tmp/notes.txt", "content": text}, "c1")
    return next(fp.key for fp in fingerprint_call(call, load_config({})).fingerprints if fp.kind == "exact")


#: Encodings a text goes through before it is shown, each a function of the text.
ENCODINGS: dict[str, Callable[[str], str]] = {
    "as-is": lambda text: text,
    "json-string": json.dumps,
    "json-in-json": lambda text: json.dumps({"body": json.dumps({"log": text})}),
    "json-escaped-slashes": lambda text: json.dumps(text).replace("/", "\\/"),
    "after-an-escaped-newline": lambda text: json.dumps("started\n" + text + "\nended"),
    "python-repr": repr,
    "python-dict-repr": lambda text: repr({"out": text, "code": 0}),
    "exact-key": _exact_key,
}


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
@pytest.mark.parametrize("shape", sorted(SHAPES))
@settings(max_examples=8, deadline=None)
@given(
    st.text(alphabet=SECRET_ALPHABET, min_size=24, max_size=40),
    st.sampled_from(["", "log: ", "ok\n", "x = 1; "]),
    st.sampled_from(["", " done", "\nnext line", "; y"]),
)
def test_no_piece_of_a_secret_survives_any_shape_in_any_encoding(
    shape: str, encoding: str, value: str, before: str, after: str
) -> None:
    """Every shape in every encoding (the grid), with values and surroundings drawn for each."""
    text = ENCODINGS[encoding](before + SHAPES[shape](value) + after)
    for shown in (redact(text), quotable(text, 4000)):
        assert [value[i : i + 5] for i in range(len(value) - 4) if value[i : i + 5] in shown] == [], shown


def test_unescaping_maps_every_character_back_to_where_it_was_written() -> None:
    source = 'a\\"b\\\\c\\u00e9d\\n'
    level = Unescaped(source)
    assert level.text == 'a"b\\c\u00e9d\n'
    assert [level.start(index) for index in range(len(level.text) + 1)] == [0, 1, 3, 4, 6, 7, 13, 14, 16]
    assert [level.end(index) for index in range(len(level.text) + 1)] == [0, 1, 3, 4, 6, 7, 13, 14, 16]
    assert Unescaped("plain").text == "plain" and Unescaped("plain").start(3) == 3

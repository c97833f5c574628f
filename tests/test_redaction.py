"""What reaches a denial from a quoted result: no control character, no invisible character, no
piece of a secret however long the result (issue 25, items 7 and 8), and the tool-call shapes the
review found quoted back unchanged."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from breaker.core.config import load_config
from breaker.core.decision import Breaker
from breaker.core.history.streaks import Streak
from breaker.core.judging.verdicts import Deny, FailureHit, Hit, Stall
from breaker.core.reading.fingerprints import Fingerprint, ToolCall
from breaker.core.reading.outcomes import Failure
from breaker.core.wording import secretformats
from breaker.core.wording.messages import (
    ask_reason,
    denial,
    failure_notice,
    limit_ask_reason,
    stall_denial,
    summarize_notice,
    warn_notice,
)
from breaker.core.wording.redaction import (
    _INVISIBLE,
    drop_invisible,
    quotable,
    quoted_prefix,
    redact,
    scrub,
)

CONFIG = load_config(None)

#: Every C0 and C1 control character and DEL: none may reach a text the breaker writes, but the
#: "\n" between its own lines.
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")
#: What a reader cannot see: format characters and variation selectors.
_UNSEEN = re.compile(
    "[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\U000e0000-\U000e007f]"
)

_HOSTILE_PIECES = [
    "\x1b[2J",
    "\x1b]0;pwned\x07",
    "\x1b[1A\x1b[2K",
    "\b\b\b",
    "\x9b31m",
    "\x7f",
    "\x00",
    "\r",
    "\r\n",
    "\t",
    "\x0b",
    "\x0c",
    "\x85",
    "\u2028",
    "\u202e",
    "\u2066",
    "\u200b",
    "\ufeff",
    "\U000e0041\U000e0042",
    "<tool_call>",
    "</tool_call>",
    "REPEAT_TOOL_BLOCKED:",
    "\n",
    "x",
    " ",
]
#: Results built from control sequences and anything else.
_RESULTS = st.lists(st.sampled_from(_HOSTILE_PIECES) | st.text(max_size=6), max_size=40).map("".join)


def _every_text_quoting(result: str, config: object = CONFIG) -> list[str]:
    """Every text that quotes a result, or a failure, key or name built from it."""
    quote = quotable(result, CONFIG.resultPreviewChars)
    kept = quotable(quoted_prefix(result, CONFIG.resultPreviewChars), CONFIG.resultPreviewChars, len(result))
    failure = Failure("exception", result[:50])
    hit = Hit(Fingerprint("cmd", f"cmd:{result[:80]}"), 5, 5.0)
    failing = FailureHit(Fingerprint("sink", f"sink:{result[:80]}"), Streak(3, failure, quote, 1), 3.0)
    tool = result[:20] or "bash"
    return [
        denial(tool, (hit,), quote, CONFIG),
        denial(tool, (hit,), kept, CONFIG),
        denial(tool, (hit,), None, CONFIG, failures=(failing,), refused=True),
        denial(tool, (), None, CONFIG, failures=(failing,)),
        stall_denial(tool, Stall("same", 4, 4.0), quote, CONFIG),
        ask_reason(tool, (hit,), CONFIG),
        limit_ask_reason(tool, (hit,), (failing,), CONFIG),
        warn_notice(hit.fingerprint.key, 3, 5.0, CONFIG).text,
        summarize_notice(hit.fingerprint.key, 4, 5.0, CONFIG).text,
        failure_notice(failing.fingerprint.key, 2, failure, CONFIG).text,
    ]


@settings(max_examples=400, deadline=None, derandomize=True)
@given(_RESULTS)
@example("\x1b[31mred\x1b[0m\b\b\x9b2J\x7fdone")
@example("progress 10%\r progress 20%\r\x1b[K done")
@example("a\x00b\x01c\x1fd\x80e\x9ff")
@example("\x1b" * 2000)
def test_no_control_character_reaches_any_denial_or_notice(result: str) -> None:
    for text in _every_text_quoting(result):
        assert not _CONTROL.search(text), repr(text)
        assert not _UNSEEN.search(text), repr(text)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=400))
def test_no_control_character_reaches_a_denial_whatever_the_characters(result: str) -> None:
    for text in _every_text_quoting(result):
        assert not _CONTROL.search(text), repr(text)


def _breaker_denial(result: str, config_row: dict[str, object] | None = None) -> str:
    """The denial of the 5th identical call after four that returned ``result``, through Breaker."""
    breaker = Breaker(load_config(config_row))
    call = ToolCall("bash", {"command": "aws sts assume-role --role-arn arn:aws:iam::1:role/x"})
    for number in range(1, 5):
        breaker.decide("a", ToolCall(call.name, call.arguments, f"c{number}"))
        breaker.record_result("a", f"c{number}", result, {"isError": False, "exitCode": 0})
    verdict = breaker.decide("a", ToolCall(call.name, call.arguments, "c5"))
    assert isinstance(verdict, Deny)
    return verdict.message


def test_control_characters_of_a_result_never_reach_the_guard_denial() -> None:
    result = "build \x1b[31mFAILED\x1b[0m\b\b\x9b2J\x7f\r\nnext line\x00"
    message = _breaker_denial(result)
    assert not _CONTROL.search(message), repr(message)
    assert "FAILED" in message and "next line" in message
    assert "\u241b[31m" in message  # the escape is shown as a picture, not dropped


def test_the_failure_track_denial_quotes_no_control_character() -> None:
    breaker = Breaker(load_config({"failLimit": 2}))
    call = {"command": "make"}
    for number in (1, 2):
        breaker.decide("a", ToolCall("bash", call, f"c{number}"))
        breaker.record_result("a", f"c{number}", "\x1b[2Jerror\x07\x9b\x7f\n[exit code: 2]", {"exitCode": 2})
    verdict = breaker.decide("a", ToolCall("bash", call, "c3"))
    assert isinstance(verdict, Deny) and verdict.failures
    assert not _CONTROL.search(verdict.message), repr(verdict.message)


def _session_token(length: int = 940) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    return "IQoJb3JpZ2luX2VjE" + "".join(alphabet[(index * 37 + 11) % 64] for index in range(length - 17))


def _assume_role_output(token: str) -> str:
    """`aws sts assume-role` prints this JSON (keys and spacing as the CLI writes them)."""
    return (
        "{\n"
        '    "Credentials": {\n'
        '        "AccessKeyId": "ASIAZ3EXAMPLE7QWERTY",\n'
        '        "SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",\n'
        f'        "SessionToken": "{token}",\n'
        '        "Expiration": "2026-12-03T23:00:00+00:00"\n'
        "    },\n"
        '    "AssumedRoleUser": {\n'
        '        "AssumedRoleId": "AROA3XFRBF23:demo",\n'
        '        "Arn": "arn:aws:sts::123456789012:assumed-role/demo/demo"\n'
        "    }\n"
        "}\n"
    )


def _pieces(secret: str, size: int = 12) -> list[str]:
    return [secret[start : start + size] for start in range(0, len(secret) - size + 1)]


def test_no_piece_of_a_long_session_token_reaches_the_denial() -> None:
    token = _session_token()
    message = _breaker_denial(_assume_role_output(token))
    assert "SessionToken" in message
    leaked = [piece for piece in _pieces(token) if piece in message]
    assert leaked == [], leaked[:3]
    assert "wJalrXUtnFEMI" not in message


@pytest.mark.parametrize("preview", [40, 100, 300, 800, 2000])
def test_a_long_token_is_redacted_whatever_the_preview_length(preview: int) -> None:
    token = _session_token(3000)
    for text in (_assume_role_output(token), f"export AWS_SESSION_TOKEN={token}\n", f"Bearer {token}"):
        quoted = quotable(text, preview)
        kept = quotable(quoted_prefix(text, preview), preview, len(text))
        assert kept == quoted
        assert [piece for piece in _pieces(token) if piece in quoted] == [], (preview, quoted)


_SECRETS = [
    ("ghp_" + "a1B2c3D4e5" * 4, "github"),
    ("sk-" + "Zx9Yw8Vu7T" * 5, "openai"),
    ("AKIAIOSFODNN7EXAMPLE", "aws id"),
    ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws secret"),
    ("npm_" + "abcdEFGH12" * 3 + "abcdef", "npm"),
]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.sampled_from(_SECRETS),
    st.integers(min_value=0, max_value=1400),
    st.integers(min_value=20, max_value=900),
    st.sampled_from([" ", "\n", ": ", "'", '"']),
)
@example(_SECRETS[0], 1030, 800, " ")
@example(_SECRETS[3], 1040, 800, " ")
def test_a_token_cut_anywhere_leaves_no_piece_in_the_quote(
    secret: tuple[str, str], offset: int, limit: int, before: str
) -> None:
    """A token placed anywhere in a long text, the quote cut anywhere: no 12 characters of it
    appear, even when redactions before it pull text from past the cut into the quote."""
    token = secret[0]
    filler = "Authorization: Bearer " + "q" * 300 + "\n"  # shrinks a lot when redacted
    text = (filler * 4 + "x " * 1000)[:offset] + before + token + " tail " + "y " * 800
    quoted = quotable(text, limit)
    assert [piece for piece in _pieces(token) if piece in quoted] == [], quoted


def test_a_url_password_cut_before_its_at_sign_is_left_out() -> None:
    password = "S3cr3tPassw0rd" * 20
    text = "x " * 390 + f"clone https://deploy:{password}@git.example.com/r.git " + "z" * 900
    quoted = quotable(text, 800)
    assert "S3cr3tPassw0rd" not in quoted


def test_an_unterminated_secret_value_is_redacted_to_the_end() -> None:
    assert "hunter2" not in scrub('{"password": "hunter2')
    assert "hunter2" not in scrub("password='hunter2\nnext")
    assert "next" in scrub("password='hunter2\nnext")


# --- invisible characters and the other tool-call shapes ---------------------------------------


def test_every_format_character_of_this_python_is_dropped() -> None:
    format_characters = [chr(code) for code in range(0x110000) if unicodedata.category(chr(code)) == "Cf"]
    assert [char for char in format_characters if not _INVISIBLE.fullmatch(char)] == []


@pytest.mark.parametrize(
    ("raw", "gone"),
    [
        ("<\u200btool_call>{}</tool_call>", "<tool_call>"),
        ("<tool\u200d_call>", "<tool_call>"),
        ("\u202eevil\u202c and \u2067isolated\u2069", "\u202e"),
        ("ignore \U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065 this", "\U000e0069"),
        ("\ufeffBOM and so\u00adft", "\ufeff"),
        ("<ns:invoke name='bash'>", "<ns:invoke"),
        ("< antml:invoke>", "< antml:invoke"),
        ("</x:function_calls>", "</x:function_calls"),
        ("```tool_code\nprint(1)\n```", "```tool_code"),
        ("gh\u200bp_" + "a1B2c3D4e5" * 4, "a1B2c3D4e5"),
    ],
)
def test_invisible_characters_and_other_call_shapes_are_defused(raw: str, gone: str) -> None:
    for shown in (quotable(raw, 800), scrub(raw)):
        assert gone not in shown, shown
        assert not _UNSEEN.search(shown)


def test_ordinary_text_with_visible_unicode_is_kept() -> None:
    text = "café → naïve 日本語 ✓ <div> ```python"
    assert quotable(text, 800) == text
    assert drop_invisible(text) == text


def _every_pattern_run(text: str) -> str:
    """Redaction as it would be with every pattern run on every text, hints aside."""
    hinted = secretformats.redactions()
    secretformats._COMPILED = tuple((pattern, replacement, None) for pattern, replacement, _ in hinted)
    try:
        return redact(text)
    finally:
        secretformats._COMPILED = hinted


#: Pieces of texts that hold secrets, spelled in every case the patterns read alike (the letters
#: beyond ASCII Python's case-insensitive matching takes for i, s and k among them), and others.
_PIECES = st.sampled_from(
    [
        "password=hunter2",
        "PASSWORD: x9",
        "pa\u017f\u017fword=s3cret ",
        "api_\u212aey=abc ",
        "CRED\u0130NTIAL=q ",
        "credent\u0131al: w",
        '"client_secret": "v"',
        "DB_PASS=x",
        "Authorization: Bearer abc.def",
        "bearer tok123",
        "curl -u bob:pw https://h/",
        "https://user:pw@host.example/p",
        "https://ghp_x@github.com/o/r",
        "machine h login u password p",
        "ghp_" + "a" * 30,
        " ",
        "\n",
        "plain text",
        "key",
        "token_count=3",
        "://",
        '\\"pa\\u017f\\u017fword\\": \\"x\\"',
        "https:\\/\\/u:pw@host.example\\/",
        "\\n\\tTOKEN=abc",
    ]
)


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(_PIECES, max_size=8))
def test_a_pattern_skipped_for_want_of_its_hints_could_not_have_matched(pieces: list[str]) -> None:
    """Redaction runs a pattern only on a text holding one of the words every match of it holds
    (read as its case-insensitive matching reads them): what it redacts is what running every
    pattern would."""
    text = "".join(pieces)
    assert redact(text) == _every_pattern_run(text)

"""Whether a finished tool call failed, judged from the plain facts of its result.

The failure track needs a yes or a no that the model cannot argue with. One rule for every tool,
so a function-calling agent's failures count as dsh's do:

1. the structured value a tool returns decides first: a shell's non-zero ``exitCode``, a
   ``signal`` or ``timedOut``; a web tool's HTTP status, which is definitive both ways (a 200 page
   that mentions an error did not fail). A tool that said it ended well (exit code 0) succeeded,
   whatever its text says;
2. else the result's shape: a text that begins ``Error``, a JSON object with an ``error`` key
   (not null, false or empty), or dsh's last line saying how a shell command ended (``[exit code:
   N]``, ``[killed by signal: X]``). Only the shape is read, never the words of a page or a file:
   ``error`` in the middle of a text proves nothing;
3. the harness's ``isError`` flag alone (dsh sets it when the call itself could not run: an
   unknown tool, a sandbox or plugin denial) says the call did not work, not that it failed:
   neither a failure nor a success, it leaves a streak where it was.

A cancelled call is the operator's choice, not the model's failure, and a call sent to the
background has not ended: neither says anything. A shell's exit status hides what failed inside a
pipeline (``curl … | head`` exits 0), so shell tools alone fall back to their text: curl's
``curl: (N)``, a Python traceback, urllib's ``HTTP Error NNN``.

Every pattern here runs in linear time.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

# The marks a failure's text holds and the facts ``judge`` reads: defined with what the shim is told.
from breaker.core.reading.sent import FACT_FIELDS as FACT_FIELDS
from breaker.core.reading.sent import FACT_TEXT_CHARS as FACT_TEXT_CHARS
from breaker.core.reading.sent import FAILURE_MARKS as FAILURE_MARKS
from breaker.core.reading.sent import FAILURE_STARTS as FAILURE_STARTS
from breaker.core.reading.sent import FETCHED_START as FETCHED_START
from breaker.core.reading.sent import JSON_HEAD as JSON_HEAD
from breaker.core.reading.sent import JSON_START as JSON_START
from breaker.core.reading.shell import SHELL_TOOLS

#: Tools that read or write files: their error result is their failure.
FILE_TOOLS = frozenset(
    {"read", "write", "edit", "multiedit", "multi_edit", "glob", "grep", "notebook_edit", "apply_patch"}
)

#: A detail from a tool (a signal name, an exception name) is cut to this many characters.
DETAIL_CHARS = 64

_CURL = re.compile(r"\bcurl: \((\d{1,3})\)")
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):", re.MULTILINE)
_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]{0,200}(?:Error|Exception|Exit|Interrupt))\b", re.MULTILINE)
_HTTP_ERROR = re.compile(r"\bHTTP Error (\d{3})\b")
#: dsh renders a shell command that did not exit 0 with one of these as its result's last line.
_SHELL_MARKER = r"\[(?:exit code: (\d+)|killed by signal: ([^\]\n]+))\]"
_SHELL_END = re.compile(r"\n" + _SHELL_MARKER + r"\Z")
#: A result that says the command printed nothing: blank, or dsh's ``(no output)``, perhaps with
#: the line saying how it ended.
_NOTHING = re.compile(r"\s*(?:\(no output\)\s*)?(?:" + _SHELL_MARKER + r"\s*)?")
#: How far from the end of a result that line is looked for.
_SHELL_END_CHARS = 200
#: A result this long or shorter that looks like a JSON object is parsed for its ``error`` key; a
#: longer one (or one cut short) is read by its first key alone.
_JSON_CHARS = 16384
_LEADING_ERROR_KEY = re.compile(r'\A\s*\{\s*"error"\s*:\s*(?!null\b|false\b|""|\{\s*\}|\[\s*\])')
#: dsh's first line of a fetched page names the URL asked for: a cache-buster query would make
#: every answer new. The page is what came back.
FETCHED = re.compile(r"\AFetched \S{1,4096} \(HTTP (\d{3})\)")


@dataclass(frozen=True, slots=True)
class Failure:
    """Evidence that a call failed: ``reason`` is its kind, ``detail`` the code or name."""

    reason: str  # "exit" | "signal" | "timeout" | "http" | "curl" | "exception" | "tool"
    detail: str = ""

    def describe(self) -> str:
        """The failure in a few words, for a notice or a denial."""
        match self.reason:
            case "exit":
                return f"the command exited with code {self.detail}"
            case "signal":
                return f"the command was killed by signal {self.detail}"
            case "timeout":
                return "the call timed out"
            case "http":
                return f"the request returned HTTP {self.detail}"
            case "curl":
                return f"curl failed with error {self.detail}"
            case "tool":
                detail = f" ({self.detail})" if self.detail else ""
                return f"the tool returned an error{detail}"
            case _:
                return f"the script raised {self.detail or 'an uncaught exception'}"


class Settled(Enum):
    """A result that is not a failure: it either shows the call worked, or shows nothing."""

    SUCCEEDED = "succeeded"  # ends the streaks of the call's fingerprints
    UNDECIDED = "undecided"  # cancelled, thrown, in the background, or no facts: streaks stay


def judge(tool: str, facts: Mapping[str, object] | None, text: str) -> Failure | Settled:
    """Judge one result from its plain facts and its shape (the module docstring's order).

    ``facts`` holds what the shim copied from the result: ``isError`` and the scalar fields of its
    structured value (``kind``, ``exitCode``, ``signal``, ``timedOut``, ``aborted``, ``statusCode``
    or ``status``). A field of the wrong type counts as absent.
    """
    if facts is None:
        return Settled.UNDECIDED
    get = facts.get  # most results' facts are ``isError`` alone: each absent one is skipped at once
    if get("aborted") is True or get("kind") == "background":
        return Settled.UNDECIDED
    status = get("statusCode")
    status = None if status is None else _integer(status)
    if status is None:
        status = get("status")
        status = None if status is None else _integer(status)
    if status is not None and 100 <= status <= 599:
        return Failure("http", str(status)) if status >= 400 else Settled.SUCCEEDED
    if get("timedOut") is True:
        return Failure("timeout")
    signal = get("signal")
    if isinstance(signal, str) and signal:
        return Failure("signal", signal[:DETAIL_CHARS])
    exit_code = get("exitCode")
    exit_code = None if exit_code is None else _integer(exit_code)
    if exit_code is not None and exit_code != 0:
        return Failure("exit", str(exit_code))
    if exit_code is None:
        shaped = failure_shape(text)
        if shaped is not None:
            return shaped
    if get("isError") is True:
        return Settled.UNDECIDED
    if tool.lower() in SHELL_TOOLS:
        return _from_shell_text(text) or Settled.SUCCEEDED
    return Settled.SUCCEEDED


def failure_shape(text: str) -> Failure | None:
    """The failure a result's shape shows, whatever tool returned it: a text that begins
    ``Error``, a JSON object with an ``error`` key, dsh's last line of a shell command that did not
    exit 0; None when its shape shows none."""
    if text.startswith("Error"):
        return Failure("tool", _first_line(text))
    if text[:JSON_HEAD].lstrip().startswith(JSON_START):
        error = _error_key(text)
        if error is not None:
            return Failure("tool", _first_line(error))
    code, signal = shell_end(text)
    if signal is not None:
        return Failure("signal", signal[:DETAIL_CHARS])
    if code:
        return Failure("exit", str(code))
    return None


def _error_key(text: str) -> str | None:
    """The ``error`` of a JSON object's text when it holds one (not null, false or empty), as text."""
    if len(text) <= _JSON_CHARS:
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict):
            error = value.get("error")
            if error is None or error is False or error in ("", {}, []):
                return None
            return error if isinstance(error, str) else json.dumps(error, ensure_ascii=False)
    found = _LEADING_ERROR_KEY.match(text)
    return None if found is None else text[found.end() : found.end() + DETAIL_CHARS * 4].strip('"')


def _from_shell_text(text: str) -> Failure | None:
    """What a shell's output says when its exit status cannot be trusted. Each pattern is searched
    for only in a text that holds its literal part (``FAILURE_MARKS``): a substring test is a
    fraction of a regular expression's search over a long output."""
    curl = _CURL.search(text) if FAILURE_MARKS[0] in text else None
    if curl is not None:
        return Failure("curl", curl.group(1))
    traceback = _TRACEBACK.search(text) if FAILURE_MARKS[1] in text else None
    if traceback is not None:
        names = _EXCEPTION_LINE.findall(text, traceback.end())
        return Failure("exception", names[-1][:DETAIL_CHARS] if names else "")
    http = _HTTP_ERROR.search(text) if FAILURE_MARKS[2] in text else None
    if http is not None and int(http.group(1)) >= 400:
        return Failure("http", http.group(1))
    return None


def _first_line(text: str) -> str:
    """An error's first line, without dsh's ``Error:`` and cut to ``DETAIL_CHARS``."""
    line = text[: DETAIL_CHARS * 4].split("\n", 1)[0].removeprefix("Error:").strip()
    return line[:DETAIL_CHARS]


def _integer(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def says_nothing(text: str) -> bool:
    """A result with no output: blank or dsh's ``(no output)``, perhaps with the shell's line
    saying how the command ended (a ``grep`` that matched nothing prints nothing and exits 1)."""
    return len(text) < _SHELL_END_CHARS and _NOTHING.fullmatch(text) is not None


def shell_end(text: str) -> tuple[int | None, str | None]:
    """How a shell command ended, read from dsh's rendering of its result: (exit code, None), or
    (None, signal) when it was killed; (0, None) when the text shows neither (an exit 0 adds no
    line). Trailing whitespace after the marker is allowed."""
    tail = text[-_SHELL_END_CHARS:].rstrip()
    found = _SHELL_END.search(tail) if tail.endswith("]") else None  # the marker ends the text
    if found is None:
        return 0, None
    code, signal = found.groups()
    return (None, signal) if code is None else (int(code), None)


def result_digest(tool: str, text: str) -> bytes:
    """What a result is compared by: SHA-256 of the tool's name, a NUL and the text, the first 16
    bytes; a fetched page's first line without the URL it names (``FETCHED``)."""
    if text.startswith(FETCHED_START):
        text = FETCHED.sub(r"Fetched (HTTP \1)", text, count=1)
    return hashlib.sha256(f"{tool}\0{text}".encode("utf-8", "surrogatepass")).digest()[:16]


#: A shell that could not find a command it was told to run (bash, dash, zsh): the line did not do
#: what it says, whatever its exit status (a missing command inside ``$(…)`` or backticks exits 0).
_COMMAND_NOT_FOUND = re.compile(
    r"^[\w/.-]*sh: (?:(?:line \d+: )?[^\n:]{1,256}: command not found"
    r"|\d+: [^\n:]{1,256}: not found|command not found: [^\n]{1,256})$",
    re.MULTILINE,
)
#: A literal part of every match of ``_COMMAND_NOT_FOUND``.
_NOT_FOUND = "not found"
#: A result that is only dsh's line saying a command did not exit 0 (it printed nothing at all).
_ENDED_ALONE = re.compile(r"\s*\[(?:exit code: [1-9]\d*|killed by signal: [^\]\n]+)\]\s*")


def succeeded(text: str) -> bool:
    """Whether a result shows the call did its work (dsh's error and shell failure markers)."""
    if failure_shape(text) is not None or _ENDED_ALONE.fullmatch(text) is not None:
        return False
    # Searched for only in a text that holds its literal part (as ``_from_shell_text`` does): every
    # result of a change is read here, and a multiline search costs a pass per line of the output.
    return _NOT_FOUND not in text or _COMMAND_NOT_FOUND.search(text) is None

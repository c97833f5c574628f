"""Making text safe to show: secrets redacted, tool-call markup defused, invisible and control
characters removed or made visible. The one owner of that rule: the denial, the ask reason and the
notices (``messages``), the worker's logs, and every ``rtb`` output (table, markdown, JSON, HTML)
show quoted text only through :func:`quotable`, :func:`quotable_inline` or :func:`scrub`.

What is done to a quoted text, in this order:

1. Invisible characters are dropped: every format character (Unicode category Cf: bidi
   embeddings, overrides and isolates, zero-width spaces and joiners, the word joiner, the BOM,
   soft hyphens, the invisible tag characters U+E0000-E007F) and the variation selectors. They
   can hide text from a reader that a model still reads (a ``<tool_call>`` split by a zero-width
   space, an instruction spelt in tag characters, a line reordered by an override); dropping them
   first lets the steps below see the text as the model would.
2. Secrets are redacted (:func:`redact`), as written and as meant under backslash escapes (a JSON
   string in a JSON string, ``\\n`` before a token, ``https:\\/\\/``: ``escapes``), each where it
   stands, over everything that is shown: a text cut to a preview is examined past the cut
   (``REDACTION_MARGIN``), a value still open at the end of what was examined is redacted to that
   end, and a run of characters that ends exactly at the cut (where a token could be cut below the
   length its shape needs) is left out of the quote.
3. Tool-call markup and special tokens are defused (:func:`neutralise`).
4. Control characters are made visible: C0 controls as their Control Pictures (``␛`` for the
   escape that starts a terminal sequence), DEL as ``␡``, C1 controls as ``\ufffd``. In a quoted
   result, line breaks of any kind become ``\n`` (the quote is then marked line by line) and tabs
   become spaces; in an inline quote (a name, a key) a line break shows as ``⏎`` and a tab as ``␉``.
   So the only control character in any text the breaker writes is the ``\n`` between its lines.

Every pattern here runs in linear time: no nested unbounded quantifiers.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from breaker.core.wording import secretformats
from breaker.core.wording.escapes import Unescaped
from breaker.core.wording.secretformats import FOLD_BEYOND_ASCII as _FOLD_BEYOND_ASCII

#: How much more of a result than can be quoted is redacted before the cut, so that a secret
#: straddling the cut is still recognised whole.
REDACTION_MARGIN = 256
#: How many levels of backslash escapes redaction reads through: a request body logged as a JSON
#: string inside a command line shown as a call's ``exact:`` key is three.
ESCAPE_LEVELS = 3


#: The "<" of tool-call-shaped tags (Hermes/Qwen XML, function-call wrappers) and the brackets of
#: special tokens (<|im_start|>, DeepSeek's fullwidth-bar tokens) are swapped for
#: look-alike angle quotes.
_TAG_OPEN = re.compile(
    r"(?i)<(?=[ \t]{0,8}/?[ \t]{0,8}(?:tool_calls?|tool_response|tool_result|tool_use|"
    r"function_calls?|function_results?|function\b|functions\.|parameter\b|invoke\b|arg_key|arg_value)"
    r"|[ \t]{0,8}/?[a-z][a-z0-9_\-]{0,31}:(?:tool_calls?|function_calls?|invoke\b|parameter\b))"
)
_SPECIAL_OPEN = re.compile(r"<(?=[|\uff5c])")
_SPECIAL_CLOSE = re.compile(r"(?<=[|\uff5c])>")
_LEFT, _RIGHT = "\u2039", "\u203a"
#: A Markdown fence opening a tool-code block (```tool_code, ```tool_call): its backticks become
#: look-alike modifier letters.
_TOOL_FENCE = re.compile(r"(?i)```(?=[ \t]{0,8}(?:tool_code|tool_calls?|function_calls?|tool_use)\b)")
_BRACKET_TOKEN = re.compile(r"\[(?=/?(?:TOOL_CALLS|TOOL_RESULTS|AVAILABLE_TOOLS)\])")


#: Format characters (category Cf) and the variation selectors: shown as nothing at all. The
#: ranges are the Cf code points of Unicode 15.1; ``tests/test_redaction.py`` checks them against
#: the running Python's ``unicodedata``.
_INVISIBLE = re.compile(
    "["
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f"
    "\ufe00-\ufe0f\U000e0100-\U000e01ef"
    "]+"
)


def drop_invisible(text: str) -> str:
    """``text`` without format characters (bidi controls, zero-width, tags) and variation selectors."""
    return _INVISIBLE.sub("", text)


def redact(text: str) -> str:
    """``text`` with secrets (credentials, tokens, private keys, URL passwords) replaced, as
    written and as meant under up to ``ESCAPE_LEVELS`` levels of backslash escapes.

    A value still open where ``text`` ends (a JSON string, a quoted value, a private key block)
    is redacted to the end: the text may have been cut inside it.
    """
    folded = None
    for pattern, replacement, hints in secretformats.redactions():
        if hints is not None:
            folded = _folded(text) if folded is None else folded
            if not any(hint in folded for hint in hints):
                continue
        text, replaced = pattern.subn(replacement, text)
        if replaced:
            folded = None
    return _through_escapes(text) if "\\" in text else text


def _folded(text: str) -> str:
    """``text`` as the patterns' ``(?i)`` reads it, for their hints: each letter it takes for an
    ASCII one written as that letter in lower case."""
    return (text if text.isascii() else text.translate(_FOLD_BEYOND_ASCII)).lower()


def _through_escapes(text: str) -> str:
    """``text`` with the secrets redacted that only show once its escapes are read (a JSON string
    in a JSON string, ``\\n`` before a token, ``https:\\/\\/``), each replaced where it stands in
    ``text``, in the encoding it stands in there."""
    for depth in range(1, ESCAPE_LEVELS + 1):
        levels = _unescaped(text, depth)
        if levels is None:
            break
        folded = None
        for pattern, replacement, hints in secretformats.redactions():
            if hints is not None:
                folded = _folded(levels[-1].text) if folded is None else folded
                if not any(hint in folded for hint in hints):
                    continue
            edits = [
                edit
                for match in pattern.finditer(levels[-1].text)
                if (edit := _edit(match, replacement)) is not None
            ]
            if not edits:
                continue
            pieces: list[str] = []
            done = 0
            for start, end, shown in edits:
                empty = start == end  # an insertion (the quote closing a value cut open)
                for level in reversed(levels):
                    start, end = level.start(start), level.start(end) if empty else level.end(end)
                pieces += (text[done:start], shown)
                done = end
            text = "".join(pieces) + text[done:]
            levels, folded = _unescaped(text, depth), None
            if levels is None:
                break
    return text


def _unescaped(text: str, depth: int) -> list[Unescaped] | None:
    """``text`` with ``depth`` levels of escapes taken out, level by level (None: it has fewer)."""
    levels: list[Unescaped] = []
    for _ in range(depth):
        if "\\" not in text:
            return None
        level = Unescaped(text)
        levels.append(level)
        text = level.text
    return levels


def _edit(
    match: re.Match[str], replacement: str | Callable[[re.Match[str]], str]
) -> tuple[int, int, str] | None:
    """What a redaction changes in ``match``: (start, end, the text shown there), the name, quotes
    and separators it keeps left out; None when it changes nothing."""
    found = match.group(0)
    shown = _expanded(match, replacement) if isinstance(replacement, str) else replacement(match)
    if shown == found:
        return None
    most = min(len(found), len(shown))
    kept = 0
    while kept < most and found[kept] == shown[kept]:
        kept += 1
    tail = 0
    while tail < most - kept and found[-1 - tail] == shown[-1 - tail]:
        tail += 1
    return match.start() + kept, match.end() - tail, shown[kept : len(shown) - tail]


#: Each replacement template read once: its literal texts and the groups between them (``\N``).
#: ``match.expand`` reads its template again at every match (Python 3.11 keeps no parsed copy):
#: ~70 µs a match, a second for a text of 20,000 short secrets.
_TEMPLATES: dict[str, tuple[str | int, ...]] = {}
_GROUP_REFERENCE = re.compile(r"\\(\d)")


def _expanded(match: re.Match[str], template: str) -> str:
    """``match.expand(template)`` for a template of literal text and ``\\N`` group references (a
    group that took part in no match is empty, as ``expand`` has it)."""
    parts = _TEMPLATES.get(template)
    if parts is None:
        pieces = _GROUP_REFERENCE.split(template)
        if any("\\" in literal for literal in pieces[::2]):
            raise ValueError(f"a redaction template holds only text and \\N references: {template!r}")
        parts = tuple(int(piece) if index % 2 else piece for index, piece in enumerate(pieces) if piece)
        _TEMPLATES[template] = parts
    return "".join(part if type(part) is str else match.group(part) or "" for part in parts)


def neutralise(text: str) -> str:
    """``text`` with tool-call markup and special tokens defused, so no parser reads a call in it."""
    text = _TAG_OPEN.sub(_LEFT, text)
    text = _SPECIAL_OPEN.sub(_LEFT, text)
    text = _SPECIAL_CLOSE.sub(_RIGHT, text)
    text = _TOOL_FENCE.sub("\u02cb\u02cb\u02cb", text)
    return _BRACKET_TOKEN.sub("(", text)


#: C0 controls but the line feed as Control Pictures, DEL as "␡", C1 controls as "\ufffd".
_VISIBLE = {
    **{code: "\ufffd" for code in range(0x80, 0xA0)},
    **{code: chr(0x2400 + code) for code in range(0x20) if code != 0x0A},
    0x7F: "\u2421",
}
#: What a reader or a parser takes for the end of a line (str.splitlines' set, CR LF as one).
_LINE_BREAK = re.compile("\r\n|[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
#: A quoted name or key: kept on one line, a line break shown as "⏎".
_INLINE = str.maketrans(
    {**_VISIBLE, **dict.fromkeys(map(ord, "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"), "\u23ce")}
)
#: A quoted result: lines kept (normalised to "\n" first), a tab as a space.
_BLOCK = str.maketrans({**_VISIBLE, 0x09: " "})


def scrub(text: str) -> str:
    """``text`` whole, made safe to show: invisible characters dropped, secrets redacted, markup
    defused, control characters but ``\n`` made visible. For a text already bounded (an ``rtb``
    report's arguments); anything that may be long goes through :func:`quotable`."""
    return _visible_block(neutralise(redact(drop_invisible(text))))


def quotable_inline(text: str, limit: int) -> str:
    """:func:`quotable`, kept on one line and free of control characters: a tool name or a key
    quoted inside a sentence (a heredoc in a ``cmd:`` key, a quoted ``-o`` path) cannot start a
    line that poses as the breaker's own, nor redraw the operator's terminal."""
    return _cleaned(text, limit, len(text)).translate(_INLINE)


def quotable(text: str, limit: int, length: int | None = None) -> str:
    """``text`` made safe to quote and cut to ``limit`` characters, saying so when it was cut.

    Only a bounded prefix is examined (:func:`quoted_prefix`), so a huge tool output costs no more
    than a short one; that prefix and the whole ``length`` give the same answer as the whole text.
    """
    length = len(text) if length is None else length
    return _visible_block(_cleaned(text, limit, length))


def quoted_prefix(text: str, limit: int) -> str:
    """The part of ``text`` that :func:`quotable` reads: what to keep of a text quoted later."""
    return text[: limit + REDACTION_MARGIN]


#: The longest a token can be and still go unrecognised because a cut ended it early: every
#: shape needs at most 40 characters before it matches (``npm_`` and 36, a bare AWS secret key).
_SHORT_TAIL = 64
#: How far back from the cut a URL is looked for whose userinfo the cut may have left open.
_URL_TAIL = 640
#: A URL's "://", its slashes escaped or not (``https:\/\/`` in a JSON string).
_SCHEME_END = re.compile(r":(?:\\*/){2}")


def _cleaned(text: str, limit: int, length: int) -> str:
    examined = quoted_prefix(text, limit)
    cut = length > len(examined)
    if cut:
        examined = _without_open_tail(examined)
    cleaned = neutralise(redact(drop_invisible(examined)))
    if not cut and len(cleaned) <= limit:
        return cleaned
    return f"{cleaned[:limit]}\u2026 [cut at {limit} of {length} characters]"


def _without_open_tail(text: str) -> str:
    """``text``, which was cut from a longer one, without what the cut may have left unrecognisable:
    the last characters of the run of non-space characters that reaches its end (a token cut below
    the length its shape needs), or that whole run from a URL's scheme on (a password whose ``@``
    is past the cut)."""
    stop = max(0, len(text) - _URL_TAIL)
    start = len(text)
    while start > stop and not text[start - 1].isspace():
        start -= 1
    if _SCHEME_END.search(text, start):
        return text[:start]
    return text[: max(start, len(text) - _SHORT_TAIL)]


def _visible_block(text: str) -> str:
    return _LINE_BREAK.sub("\n", text).translate(_BLOCK)

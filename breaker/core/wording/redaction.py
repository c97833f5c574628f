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

from breaker.core.wording.escapes import Unescaped

#: How much more of a result than can be quoted is redacted before the cut, so that a secret
#: straddling the cut is still recognised whole.
REDACTION_MARGIN = 256
#: How many levels of backslash escapes redaction reads through: a request body logged as a JSON
#: string inside a command line shown as a call's ``exact:`` key is three.
ESCAPE_LEVELS = 3

_REDACTED = "[REDACTED]"

#: A name whose value is a secret ends with one of these: ``password``, ``DB_PASSWORD``,
#: ``client_secret``, ``GITHUB_TOKEN``, ``_authToken``, ``x-api-key``, ``AccountKey``,
#: ``aws_secret_access_key``, ``SECRET_KEY``, ``Authorization``, ``Set-Cookie``; ``pass`` and
#: ``pwd`` only after a separator (``DB_PASS``, but not ``bypass`` or the shell's ``PWD``). A name
#: that only starts with one (``token_count``, ``password_file``, ``max_tokens``) is not a secret.
_KEY_KINDS = (
    "api",
    "access",
    "account",
    "private",
    "secret",
    "auth",
    "client",
    "master",
    "signing",
    "encryption",
    "storage",
    "shared",
)
_SECRET_ENDINGS = "|".join(
    [
        *(
            f"(?<={word})"
            for word in (
                "password",
                "passwd",
                "passphrase",
                "secret",
                "credential",
                "credentials",
                "token",
                "authorization",
                "cookie",
            )
        ),
        "(?<=[a-z0-9][_.\\-]pass)",
        "(?<=[a-z0-9][_.\\-]pwd)",
        "(?<=key)(?:" + "|".join(f"(?<={kind}key)|(?<={kind}[_.\\-]key)" for kind in _KEY_KINDS) + ")",
    ]
)
#: A whole name, never a file's (one after a "/": `/etc/passwd: Permission denied` is an error the
#: model must read); it must end where the name does, so a shorter try fails at once and the scan
#: is linear; then a look back at how it ends. No possessive quantifier or atomic group anywhere:
#: Python 3.10's re has neither (``tests/test_oldest_python.py``).
_SECRET_NAME = rf"(?<![A-Za-z0-9_.\-/])[A-Za-z0-9_.\-]{{1,64}}(?![A-Za-z0-9_.\-])(?:{_SECRET_ENDINGS})"
#: ``=`` (not ``==``) or ``:``, spaced or not.
_ASSIGN = r"[ \t]*(?:=(?!=)|:)[ \t]*"
_URL_SCHEME = r"\b([a-z][a-z0-9+.\-]{0,15}://)"

#: Tokens recognised by their shape alone: (issuer, pattern).
_TOKEN_SHAPES = (
    ("GitHub", r"\b(?:gh[pousr]|github_pat)_[A-Za-z0-9_]{20,255}"),
    ("OpenAI, Anthropic", r"\bsk-[A-Za-z0-9_\-]{20,255}"),
    ("AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    # header.payload.signature, both JSON objects, so both start "eyJ".
    ("JWT", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"),
    ("Slack", r"\bxox[abposre]-[A-Za-z0-9\-]{10,255}|\bxapp-\d-[A-Za-z0-9\-]{10,255}"),
    ("Stripe", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,255}|\bwhsec_[A-Za-z0-9]{20,255}"),
    ("GitLab", r"\bgl(?:pat|dt|rt|ptt|cbt|soat)-[A-Za-z0-9_\-]{20,255}"),
    ("Google API key, OAuth token", r"\bAIza[0-9A-Za-z_\-]{35}|\bya29\.[0-9A-Za-z_\-]{20,2048}"),
    ("npm", r"\bnpm_[A-Za-z0-9]{36}\b"),
)


def _redact_base64_key(match: re.Match[str]) -> str:
    """A bare 40-character key (AWS secret access keys): redacted when it mixes cases and digits,
    as random keys do and hex digests (git, sha1) do not."""
    text = match.group(0)
    kinds = (str.isupper, str.islower, str.isdigit)
    return _REDACTED if all(any(kind(char) for char in text) for kind in kinds) else text


#: What a pattern's match is replaced with: a template, or a function of the match.
Replacement = str | Callable[[re.Match[str]], str]

#: What each match of a pattern with a name in it holds, as the patterns' ``(?i)`` reads text
#: (``_folded``): a name ending as ``_SECRET_ENDINGS`` says.
_SECRET_HINTS = ("pass", "pwd", "secret", "credential", "token", "authorization", "cookie", "key")
#: The letters beyond ASCII that Python's case-insensitive matching takes for an ``i``, ``s`` or ``k``.
_FOLD_BEYOND_ASCII = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})

#: Every secret format that is redacted, as (pattern, replacement, hints), applied in order: a
#: pattern is run only on a text that holds one of its hints (words every match of it holds, read
#: as ``_folded`` reads them; None: always run), since most texts hold no secret at all. Each entry
#: names the formats it covers; ``tests/test_messages.py`` has one case per format.
_REDACTIONS: tuple[tuple[re.Pattern[str], Replacement, tuple[str, ...] | None], ...] = (
    # A private key block (PEM, OpenSSH, PGP), up to its END line or, when the text was cut, to the end.
    (
        re.compile(
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
        "[REDACTED PRIVATE KEY]",
        None,
    ),
    # URL userinfo with a password, which may hold "@" or "/": the last "@" before the host ends
    # it (https://user:p@ss/w@rd@host -> https://[REDACTED]@host). host:port is not a password.
    (
        re.compile(
            rf"(?i){_URL_SCHEME}[^\s/?#@:'\"\\]{{1,256}}:(?!\d{{1,5}}(?:[/?#'\"\s]|\Z))"
            r"[^\s'\"\\]{1,256}@(?=[^\s/?#@'\"\\]+(?:[/?#:'\"\s]|\Z))"
        ),
        r"\1" + _REDACTED + "@",
        ("://",),
    ),
    # URL userinfo without a password, a token as the user (https://ghp_x@github.com/o/r).
    (re.compile(rf"(?i){_URL_SCHEME}[^\s/?#@'\"\\]{{1,256}}@"), r"\1" + _REDACTED + "@", ("://",)),
    # Members of a JSON object, a Python dict repr (``print(os.environ)``) or a Ruby/PHP hash:
    # "password": "value", 'PASSWORD': 'value', "token" => 'value', "Authorization": "Bearer ...".
    (
        re.compile(rf"(?i)([\"'])({_SECRET_NAME})\1(\s*(?::|=>)\s*)([\"'])(?:(?!\4)[^\\]|\\.)*(?:\4|\\?\Z)"),
        r"\1\2\1\3\4" + _REDACTED + r"\4",
        _SECRET_HINTS,
    ),
    # A named value in escaped quotes, as a JSON string holds a file's text (an `exact:` key of a
    # write: "password: \\"x\\""), up to the escaped quote that closes it.
    (
        re.compile(
            rf"(?i)({_SECRET_NAME})({_ASSIGN})(\\[\"'])(?:(?!\3)[^\r\n]){{0,1024}}(?:\3|(?=[\r\n]|\Z))"
        ),
        r"\1\2\3" + _REDACTED + r"\3",
        _SECRET_HINTS,
    ),
    # Named values, in one pass: quoted (password='x', PASSWORD="x", secret: "x"; the quotes
    # stay), assignments, options, query and form values, connection strings (token=x,
    # PASSWORD = x, --password=x, &api_key=x, DB_PASS=x, SECRET_KEY=x, AccountKey=x;,
    # _authToken=x), header lines or "name: value" secrets, to the end of the line or a quote;
    # and a value on the line after its name (a name and ":" or "=" ending a line: a prompt, a
    # YAML block scalar "secret: |"; or a shell line continuation, TOKEN=\ and the value on the
    # next line), the next line's text.
    (
        re.compile(
            rf"(?i)({_SECRET_NAME})(?:"
            r"([ \t]*(?:=(?!=)|:)[ \t]*(?:(?:[|>][-+]?[ \t]*)?\r?\n[ \t]*|(?:\\\r?\n[ \t]*)+))\S[^\r\n]*"
            rf"|({_ASSIGN})([\"'])(?:(?!\4)[^\\\r\n]|\\.){{0,1024}}(?:\4|\\?(?=[\r\n]|\Z))"
            r"|([ \t]*=(?!=)[ \t]*)[^&\s'\"#;\\]+"
            r"|([ \t]*:[ \t]*)(?![ \t])[^\r\n'\"\\]+)"
        ),
        r"\1\2\3\4\5\6" + _REDACTED + r"\4",
        _SECRET_HINTS,
    ),
    (re.compile(r"(?i)\b(bearer)\s+[a-z0-9\-._~+/]+=*"), r"\1 " + _REDACTED, ("bearer",)),
    # curl -u user:pass, -uuser:pass, -su user:pass (flags before it in one word), -U (the proxy
    # user), --user user:pass, --user=user:pass, --proxy-user ...: the user stays. The word may
    # be quoted whole ('--user=user:pa!ss', as a `cmd:` key quotes it).
    (
        re.compile(
            r"(?i)(\bcurl\b[^\r\n|;&]{0,256}?[ \t]['\"]?"
            r"(?:-[a-z0-9#]{0,16}?u[ \t]*|(?:--user|--proxy-user)(?:[ \t]+|=))"
            r"['\"]?[^\s:'\"]{1,256}:)[^\s'\"]+"
        ),
        r"\1" + _REDACTED,
        ("curl",),
    ),
    # A MySQL or MariaDB client's password attached to -p (mysql -u root -pSECRET, -p'SECRET';
    # a -p standing alone prompts for it, and -P is the port): the command's other words stay.
    (
        re.compile(
            r"(\b(?i:mysql|mariadb)[a-z\-]{0,16}\b[^\r\n|;&]{0,256}?[ \t]-p)"
            r"(?:'[^'\r\n]*'?|\"[^\"\r\n]*\"?|[^\s'\"]+)"
        ),
        r"\1" + _REDACTED,
        ("mysql", "mariadb"),
    ),
    # The same word quoted whole ('-pSECRET', "-pSECRET"; a `cmd:` key quotes it so): up to its
    # closing quote.
    (
        re.compile(
            r"(\b(?i:mysql|mariadb)[a-z\-]{0,16}\b[^\r\n|;&]{0,256}?[ \t](?P<q>['\"])-p)"
            r"(?:(?!(?P=q))[^\r\n])+"
        ),
        r"\1" + _REDACTED,
        ("mysql", "mariadb"),
    ),
    # A long option named for a secret, its value the next word: --password X, --token X,
    # --api-key 'X', --client-secret "X" (a value starting with "-" is the next option; the
    # --password=X form is a named value above).
    (
        re.compile(
            rf"(?i)((?<![^\s'\"])(?=--)({_SECRET_NAME})[ \t]+)(?!-)"
            r"(?:'[^'\r\n]*'?|\"[^\"\r\n]*\"?|[^\s'\"]+)"
        ),
        r"\1" + _REDACTED,
        _SECRET_HINTS,
    ),
    # A password given to -p of `docker login` (also podman, nerdctl, helm registry) or sshpass,
    # or to -a of redis-cli: -p X, -pX; the command's other words stay (`docker run -p 80:80`
    # and `redis-cli -p 6379` are ports).
    (
        re.compile(
            r"(?i)((?:\b(?:(?:docker|podman|nerdctl|registry)[ \t]+login|sshpass)\b[^\r\n|;&]{0,256}?[ \t]-p"
            r"|\bredis-cli\b[^\r\n|;&]{0,256}?[ \t]-a)[ \t]*)(?!-)"
            r"(?:'[^'\r\n]*'?|\"[^\"\r\n]*\"?|[^\s'\"]+)"
        ),
        r"\1" + _REDACTED,
        ("login", "sshpass", "redis-cli"),
    ),
    # netrc entries: machine host login user password secret (on one line or several).
    (re.compile(r"(?i)(\b(?:login|account)\s+\S{1,256}\s+password\s+)\S+"), r"\1" + _REDACTED, ("password",)),
    # A bare AWS secret access key (40 characters of base64 mixing cases and digits).
    (re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"), _redact_base64_key, None),
    # Well-known token shapes that travel without a name in front of them, in one pass.
    (re.compile("|".join(shape for _, shape in _TOKEN_SHAPES)), _REDACTED, None),
)

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
    for pattern, replacement, hints in _REDACTIONS:
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
        for pattern, replacement, hints in _REDACTIONS:
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
    shown = match.expand(replacement) if isinstance(replacement, str) else replacement(match)
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

"""Text → canonical forms: the spelling-insensitive views fingerprints are built from.

A loop survives a naive counter by changing what does not matter: a decoy argument, a timeout,
a host spelling, a quoting style. Everything here maps such variants onto one form — canonical
JSON, canonical URLs (with host folding and locality), and a shell command line with its
wrappers and volatile flags removed — while keeping every difference that names another
resource (a path, a query, an output file).

Everything is pure and linear-time: no I/O, no DNS, no regex that can backtrack
catastrophically, no recursion whose depth the input controls.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import json
import posixpath
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

# ---------------------------------------------------------------------------------------------
# Canonical JSON and bounded keys

#: The longest fingerprint key kept verbatim; longer keys keep a head plus a digest of the whole.
MAX_KEY_CHARS = 512
_DIGEST_BYTES = 16
_DIGEST_MARK = "…#"
_KEY_HEAD_CHARS = MAX_KEY_CHARS - len(_DIGEST_MARK) - 2 * _DIGEST_BYTES

#: Values nested deeper than this take the iterative encoder instead of the C one.
_PLAIN_DEPTH = 64
#: Integers wider than this are written in hex: str() refuses very long ints.
_MAX_DECIMAL_BITS = 4096
_REPEATED_CONTAINER = '"<cycle>"'
_SCALAR_TYPES = (str, int, float, bool, type(None))
_FLAT_SCALAR_TYPES = (str, float, bool, type(None))
#: Strings at least this long are checked for characters to escape in one bytes pass.
_LONG_TEXT = 1024
#: Every byte that JSON writes as it is (all but control characters, ``"`` and ``\\``).
_JSON_VERBATIM_BYTES = bytes(byte for byte in range(256) if byte >= 0x20 and byte not in b'"\\')
#: The escapes JSON writes as a backslash and one letter, backslash first so none is doubled.
_JSON_SHORT_ESCAPES = tuple(
    (character, ord(character), "\\" + letter)
    for character, letter in zip('\\"\n\r\t', '\\"nrt', strict=True)
)
_JSON_SHORT_ESCAPED_BYTES = b"\\\"\n\r\t"


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: object) -> str:
    """Compact JSON with keys deep-sorted; never raises, whatever the depth, cycles or types."""
    if type(value) is dict and _is_flat(value):
        if any(type(child) is str and len(child) >= _LONG_TEXT for child in value.values()):
            return _encode_flat_with_long_text(value)
        return _ENCODER.encode(value)
    if _is_plain(value):
        return _ENCODER.encode(value)
    return _encode_iteratively(value)


def _is_flat(value: dict[object, object]) -> bool:
    """The usual arguments: one object of strings, flags and small numbers, keyed by strings."""
    return all(type(key) is str and type(child) in _FLAT_SCALAR_TYPES for key, child in value.items())


def _encode_flat_with_long_text(value: dict[object, object]) -> str:
    """What the C encoder writes for a flat object, without its per-character pass over long text."""
    fields = sorted(value.items(), key=_first_of_pair)
    return "{" + ",".join(_ENCODER.encode(key) + ":" + _json_scalar(child) for key, child in fields) + "}"


def _json_scalar(value: object) -> str:
    if type(value) is str and len(value) >= _LONG_TEXT:
        encoded = value.encode("utf-8", "surrogatepass")
        # UTF-8 spells every non-ASCII character with bytes >= 0x80, so these bytes are exactly
        # the characters JSON must escape: control characters, the quote and the backslash.
        escaped = encoded.translate(None, _JSON_VERBATIM_BYTES)
        if not escaped:
            return '"' + value + '"'
        if not escaped.translate(None, _JSON_SHORT_ESCAPED_BYTES):  # text with newlines, mostly
            for character, byte, escape in _JSON_SHORT_ESCAPES:
                if byte in escaped:
                    value = value.replace(character, escape)
            return '"' + value + '"'
    return _ENCODER.encode(value)


def _first_of_pair(pair: tuple[object, object]) -> str:
    key = pair[0]
    assert isinstance(key, str)
    return key


def bounded_key(key: str) -> str:
    """``key`` at most MAX_KEY_CHARS long and valid UTF-8, still unique to the whole text."""
    if len(key) > MAX_KEY_CHARS:
        # SHA-256 (hardware-accelerated on common CPUs) is the fastest digest hashlib offers here.
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
        key = key[:_KEY_HEAD_CHARS] + _DIGEST_MARK + digest[: 2 * _DIGEST_BYTES]
    if key.isascii():
        return key
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: spell them out so the key can travel
        return key.encode("utf-8", "backslashreplace").decode("utf-8")
    return key


def _is_plain(value: object) -> bool:
    """Whether the C encoder can take ``value`` as is: JSON types, str keys, shallow, no sharing."""
    seen: set[int] = set()
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if type(item) is list:
            if depth >= _PLAIN_DEPTH or id(item) in seen:
                return False
            seen.add(id(item))
            stack.extend((child, depth + 1) for child in item)
        elif type(item) is dict:
            if depth >= _PLAIN_DEPTH or id(item) in seen:
                return False
            seen.add(id(item))
            for key, child in item.items():
                if type(key) is not str:
                    return False
                stack.append((child, depth + 1))
        elif type(item) is int:
            if item.bit_length() > _MAX_DECIMAL_BITS:
                return False
        elif type(item) not in _SCALAR_TYPES:
            return False
    return True


_DONE = object()
#: One open container of the iterative encoder: its items, the next index, its closing bracket.
_Frame = tuple[list[tuple[str, object]] | list[object], int, str]


def _encode_iteratively(value: object) -> str:
    """The slow, total encoder: an explicit stack, so depth costs memory and never recursion."""
    out: list[str] = []
    seen: set[int] = set()
    stack: list[_Frame] = []
    pending = value
    while pending is not _DONE:
        _emit(pending, stack, out, seen)
        pending = _advance(stack, out)
    return "".join(out)


def _emit(value: object, stack: list[_Frame], out: list[str], seen: set[int]) -> None:
    """Write a scalar, or open a container and push its items."""
    if not isinstance(value, (dict, list, tuple)):
        out.append(_scalar_json(value))
        return
    if not isinstance(value, tuple):  # only mutable containers can be revisited (cycles)
        if id(value) in seen:
            out.append(_REPEATED_CONTAINER)
            return
        seen.add(id(value))
    if isinstance(value, dict):
        out.append("{")
        stack.append((sorted(((_key_text(k), v) for k, v in value.items()), key=_first), 0, "}"))
    else:
        out.append("[")
        stack.append((list(value), 0, "]"))


def _advance(stack: list[_Frame], out: list[str]) -> object:
    """The next value to encode, closing finished containers on the way; _DONE at the end."""
    while stack:
        items, index, closer = stack[-1]
        if index >= len(items):
            out.append(closer)
            stack.pop()
            continue
        stack[-1] = (items, index + 1, closer)
        if index:
            out.append(",")
        item = items[index]
        if closer == "}":
            assert isinstance(item, tuple)
            out.append(_ENCODER.encode(item[0]) + ":")
            return item[1]
        return item
    return _DONE


def _first(pair: tuple[str, object]) -> str:
    return pair[0]


def _key_text(key: object) -> str:
    """A dict key as JSON spells it (``True`` → ``"true"``, ``1`` → ``"1"``)."""
    if isinstance(key, str):
        return key
    text = _scalar_json(key)
    return text[1:-1] if text.startswith('"') else text


def _scalar_json(value: object) -> str:
    if value is None or isinstance(value, (bool, float)):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value) if value.bit_length() <= _MAX_DECIMAL_BITS else json.dumps(hex(value))
    if isinstance(value, str):
        return _ENCODER.encode(value)
    if isinstance(value, (bytes, bytearray)):
        return _ENCODER.encode(bytes(value).decode("utf-8", "backslashreplace"))
    return json.dumps(f"<{type(value).__name__}>")


# ---------------------------------------------------------------------------------------------
# URLs: canonical resource, site, locality

#: Query parameters that say who linked, not what is fetched.
_TRACKING_PARAM = re.compile(
    r"(?:utm_[^=]*|fbclid|gclid|dclid|msclkid|mc_cid|mc_eid|_ga|igshid|yclid|ref_src)(?:=|\Z)", re.IGNORECASE
)
#: Second-level labels under a two-letter TLD that are registries, not sites (``bbc.co.uk``).
_GENERIC_SECOND_LEVELS = frozenset(
    {"co", "com", "org", "net", "gov", "ac", "edu", "mil", "ne", "or", "go", "gob", "nic", "ltd", "plc"}
)
_LOCAL_V4 = tuple(
    ipaddress.IPv4Network(net)
    for net in (
        "127.0.0.0/8",
        "0.0.0.0/32",
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "169.254.0.0/16",
    )
)
_LOCAL_V6 = tuple(ipaddress.IPv6Network(net) for net in ("::1/128", "::/128", "fe80::/10", "fc00::/7"))

_URL_IN_TEXT = re.compile(r"https?://[^\s'\"<>\\`{}|^]+", re.IGNORECASE)
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_AUTHORITY_END = re.compile(r"[/?#]")
_BAD_HOST_CHAR = re.compile(r"[^\w.-]")
_IPV4 = re.compile(r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}")
_TRAILING_PROSE = ".,;:!?*'"
_DEFAULT_PORTS = (80, 443)
#: The longest DNS name; a longer "host" is not one (and is never cached).
_MAX_HOST_CHARS = 253


class CanonicalUrl(NamedTuple):
    """One http(s) URL in canonical form; ``resource`` is what ``net:`` counts."""

    resource: str  # "open.canada.ca/" , "localhost:8080/api?a=1"
    site: str  # "canada.ca": the registrable-ish site, never with a port
    local: bool  # the host is loopback, private, link-local or *.localhost
    host: str  # the folded host, without port
    seen_host: str  # the host as it was spelled, for explaining an alias fold
    aliased: bool  # ``host`` came from config.hostAliases


def canonical_url(
    url: str, aliases: Mapping[str, str], *, scheme_optional: bool = False
) -> CanonicalUrl | None:
    """The canonical form of an http(s) URL, or None for anything else.

    ``scheme_optional`` accepts a bare ``host[:port][/path]`` the way curl and URL tools do; a bare
    word then needs a dot, an IP literal, a port or ``localhost`` to count as a host.
    """
    lowered = url[:8].lower()
    has_scheme = True
    if lowered.startswith("https://"):
        rest = url[8:]
    elif lowered.startswith("http://"):
        rest = url[7:]
    elif not scheme_optional:
        return None
    elif url.startswith("//"):
        rest = url[2:]
    elif (scheme := _SCHEME.match(url)) and not url[scheme.end() : scheme.end() + 1].isdigit():
        return None  # another scheme (ftp://, mailto:, data:); "host:8080" is a port
    else:
        rest = url
        has_scheme = False
    end = _AUTHORITY_END.search(rest)
    authority, tail = (rest[: end.start()], rest[end.start() :]) if end else (rest, "")
    authority = authority[authority.rfind("@") + 1 :]
    split = _split_host_port(authority)
    if split is None:
        return None
    seen_host, port = split
    host = _host_facts(seen_host) if len(seen_host) <= _MAX_HOST_CHARS else None
    if host is None or (not has_scheme and port is None and host.bare_word):
        return None
    aliased = aliases.get(host.name)
    if aliased is not None:
        host = _host_facts(aliased) or _Host(aliased, aliased, local=False, bare_word=False)
    netloc = host.name if port is None or port in _DEFAULT_PORTS else f"{host.name}:{port}"
    return CanonicalUrl(
        resource=netloc + _path_and_query(tail),
        site=host.site,
        local=host.local,
        host=host.name,
        seen_host=seen_host,
        aliased=aliased is not None,
    )


def _split_host_port(authority: str) -> tuple[str, int | None] | None:
    if authority.startswith("["):
        close = authority.find("]")
        if close < 0:
            return None
        host, after = authority[: close + 1], authority[close + 1 :]
        if after and not after.startswith(":"):
            return None
        port_text = after[1:]
    else:
        host, _, port_text = authority.partition(":")
    if not port_text:
        return host, None
    if not (port_text.isascii() and port_text.isdigit()) or int(port_text) > 65535:
        return None
    return host, int(port_text)


class _Host(NamedTuple):
    """What a folded host name says on its own."""

    name: str  # lowercase, no trailing dot, no www., IPs in canonical spelling
    site: str
    local: bool
    bare_word: bool  # no dot, not an IP, not localhost: a host only when a scheme says so


@functools.lru_cache(maxsize=1024)
def _host_facts(spelled: str) -> _Host | None:
    """Fold one spelled host (cached: few distinct hosts recur, and the cache is bounded)."""
    if spelled.startswith("["):
        try:
            v6 = ipaddress.IPv6Address(spelled[1:-1].partition("%")[0])
        except ValueError:
            return None
        name = f"[{v6.compressed}]"
        return _Host(name, name, _is_local_ip(v6), bare_word=False)
    name = spelled.lower().rstrip(".")
    if name.startswith("www."):
        name = name[4:]
    if not name or _BAD_HOST_CHAR.search(name):
        return None
    v4 = _ipv4_of(name)
    if v4 is not None:
        name = str(v4)
        return _Host(name, name, _is_local_ip(v4), bare_word=False)
    is_localhost = name == "localhost" or name.endswith(".localhost")
    return _Host(name, _site_of(name), is_localhost, bare_word="." not in name and not is_localhost)


def _ipv4_of(name: str) -> ipaddress.IPv4Address | None:
    if not _IPV4.fullmatch(name):
        return None
    try:
        return ipaddress.IPv4Address(name)
    except ValueError:
        return None


def _is_local_ip(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Loopback, unspecified, private or link-local — decided from the text alone, never DNS."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is None:
            return any(ip in net for net in _LOCAL_V6)
        ip = ip.ipv4_mapped
    return any(ip in net for net in _LOCAL_V4)


def _site_of(name: str) -> str:
    """The last two labels, or three under ``co.uk``-style registries; a single label alone."""
    labels = name.rsplit(".", 3)
    if len(labels) >= 3 and len(labels[-1]) == 2 and labels[-2] in _GENERIC_SECOND_LEVELS:
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])


def _path_and_query(tail: str) -> str:
    """Path without trailing slash (``/`` when empty), then ``?query`` sorted, without trackers."""
    tail = tail.partition("#")[0]
    path, _, query = tail.partition("?")
    path = path.rstrip("/") or "/"
    if not query:
        return path
    params = [param for param in query.split("&") if param and not _TRACKING_PARAM.match(param)]
    if not params:
        return path
    params.sort()
    return path + "?" + "&".join(params)


def _trim_url(found: str) -> tuple[str, str]:
    """Split prose punctuation and unbalanced closers off a URL found in text: (url, trailer)."""
    end = len(found)
    open_parens, close_parens = found.count("("), found.count(")")
    open_brackets, close_brackets = found.count("["), found.count("]")
    while end:
        last = found[end - 1]
        if last in _TRAILING_PROSE:
            pass
        elif last == ")" and close_parens > open_parens:
            close_parens -= 1
        elif last == "]" and close_brackets > open_brackets:
            close_brackets -= 1
        else:
            break
        end -= 1
    return found[:end], found[end:]


# ---------------------------------------------------------------------------------------------
# Shell lexing

#: Commands longer than this are lexed up to here; the rest is only scanned for URLs.
MAX_LEXED_CHARS = 1 << 16
#: The most URLs one call contributes; more are a crawl list, already caught by what came before.
MAX_URLS = 64

_BLANK_CHARS = " \t\r\f\v"
#: Characters the lexer must look at before reading a word.
_LEXER_SPECIALS = _BLANK_CHARS + "\n#\\<>|&;()"
#: Characters that end an unquoted word.
_WORD_ENDS = _BLANK_CHARS + "\n|&;<>()"
#: Characters after which a run of digits is a word, not the fd of a redirection.
_PLAIN_WORD_ENDS = _BLANK_CHARS + "\n|&;()"
_PLAIN = re.compile(r"[^ \t\n\r\f\v'\"\\$`|&;<>()]+")
#: The characters that end a bare word (the complement of ``_PLAIN``).
_PLAIN_STOPS = _BLANK_CHARS + "\n'\"\\$`|&;<>()"
_PLAIN_STOP_TABLE = bytes(0 if chr(byte) in _PLAIN_STOPS else 1 for byte in range(256))
#: Text at least this long finds bare word ends through a table of stops (see ``_plain_stops``).
_STOPS_MIN_CHARS = 2048
_OPERATOR = re.compile(r"&&|\|\||;;&?|;&|\|&|[|&;()]")
_REDIRECT = re.compile(r"&>>?|<<<|<<-?|<>|<&|>>|>\||>&|[<>]")
_NESTED_STOPS = {
    '"': re.compile(r'[\\"`$]'),
    "`": re.compile(r"[\\`]"),
    ")": re.compile(r"[\\()'\"`]"),
}
_DOUBLE_QUOTE_ESCAPE = re.compile(r'\\([\\"$`\n])')


@dataclass(slots=True)
class SimpleCommand:
    """One simple command: its words (quotes removed) and its redirections (operator, target)."""

    words: list[str] = field(default_factory=list)
    redirects: list[tuple[str, str]] = field(default_factory=list)


@dataclass(slots=True)
class ShellScript:
    """A lexed command line: simple commands and the operators between them, and heredoc bodies."""

    parts: list[SimpleCommand | str]
    heredocs: list[str]


def lex_shell(text: str) -> ShellScript:
    """Split a POSIX-ish command line into simple commands; linear, and total on any text.

    Substitutions (``$(…)``, backticks, ``${…}``) stay inside their word verbatim; comments are
    dropped; heredoc bodies are set aside as data.
    """
    parts: list[SimpleCommand | str] = []
    heredocs: list[str] = []
    pending_heredocs: list[tuple[str, bool]] = []
    command = SimpleCommand()
    stops = _plain_stops(text)
    n = len(text)
    i = 0
    while i < n:
        char = text[i]
        if char not in _LEXER_SPECIALS:
            # Inlined common case: a bare word followed by a blank.
            if stops is None:
                plain = _PLAIN.match(text, i)
                end = i if plain is None else plain.end()
            else:
                end = stops.find(0, i)
                end = n if end < 0 else end
            if end > i and (end == n or text[end] in _PLAIN_WORD_ENDS):
                command.words.append(text[i:end])
                i = end
            else:
                i = _lex_word(text, i, command, pending_heredocs)
        elif char in _BLANK_CHARS:
            i += 1
        elif char == "\n":
            command = _close(command, parts, ";")
            i = _read_heredoc_bodies(text, i + 1, pending_heredocs, heredocs)
        elif char == "#":
            newline = text.find("\n", i)
            i = n if newline < 0 else newline
        elif char == "\\" and text.startswith("\n", i + 1):
            i += 2
        elif char in "<>" and text.startswith("(", i + 1):  # process substitution: a word
            end, _ = _end_of_nested(text, i + 2, ")")
            command.words.append(text[i:end])
            i = end
        elif char in "<>" or (char == "&" and text.startswith(">", i + 1)):
            i = _read_redirect(text, i, "", command, pending_heredocs)
        elif char in "|&;()":
            operator = _OPERATOR.match(text, i)
            assert operator is not None
            command = _close(command, parts, operator.group())
            i = operator.end()
        else:
            i = _lex_word(text, i, command, pending_heredocs)
    _close(command, parts, "")
    return ShellScript(parts, heredocs)


def _plain_stops(text: str) -> bytes | None:
    """For long ASCII text, a byte per character, 0 where a bare word must stop (else None).

    Finding the end of a long bare word is then one ``bytes.find`` instead of a regex walk.
    """
    if len(text) < _STOPS_MIN_CHARS or not text.isascii():
        return None
    return text.encode("ascii").translate(_PLAIN_STOP_TABLE)


def _lex_word(text: str, i: int, command: SimpleCommand, pending_heredocs: list[tuple[str, bool]]) -> int:
    """Add the word at ``i`` to ``command`` (or the redirection it is the fd of); where it ends."""
    word, end, quoted = _read_word(text, i)
    if end == i:  # unreachable by construction; guarantees progress regardless
        return i + 1
    if not quoted and word.isdigit() and word.isascii() and text.startswith(("<", ">"), end):
        return _read_redirect(text, end, word, command, pending_heredocs)
    command.words.append(word)
    return end


def _close(command: SimpleCommand, parts: list[SimpleCommand | str], operator: str) -> SimpleCommand:
    """End the current simple command at ``operator``; the command to fill next."""
    if command.words or command.redirects:
        parts.append(command)
        command = SimpleCommand()
    if operator:
        parts.append(operator)
    return command


def _read_redirect(
    text: str, i: int, fd: str, command: SimpleCommand, pending_heredocs: list[tuple[str, bool]]
) -> int:
    operator = _REDIRECT.match(text, i)
    assert operator is not None
    i = operator.end()
    while i < len(text) and text[i] in _BLANK_CHARS:
        i += 1
    target, i, _ = _read_word(text, i)
    if operator.group() in ("<<", "<<-"):
        pending_heredocs.append((target, operator.group() == "<<-"))
    command.redirects.append((fd + operator.group(), target))
    return i


def _read_heredoc_bodies(
    text: str, i: int, pending: list[tuple[str, bool]], heredocs: list[str]
) -> int:
    """Consume the bodies of the heredocs opened on the line that just ended."""
    n = len(text)
    for delimiter, strip_tabs in pending:
        start = i
        body_end = n
        if not strip_tabs:
            body_end, i = _find_delimiter_line(text, i, delimiter)
            heredocs.append(text[start:body_end].removesuffix("\n"))
            continue
        while i < n:
            newline = text.find("\n", i)
            line_end = n if newline < 0 else newline
            line = text[i:line_end]
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                body_end = i
                i = line_end + 1
                break
            i = line_end + 1
        heredocs.append(text[start:body_end].removesuffix("\n"))
    pending.clear()
    return min(i, n)


def _find_delimiter_line(text: str, i: int, delimiter: str) -> tuple[int, int]:
    """Where the first line from ``i`` equal to ``delimiter`` starts, and the index after it."""
    n = len(text)
    marker = "\n" + delimiter
    line = i if text.startswith(delimiter, i) else text.find(marker, i) + 1 or -1
    while line >= 0:
        after = line + len(delimiter)
        if after >= n or text[after] == "\n":
            return line, min(after + 1, n)
        line = text.find(marker, line) + 1 or -1
    return n, n


def _read_word(text: str, i: int) -> tuple[str, int, bool]:
    """One word from ``i``: its value with quoting removed, where it ends, and whether it was quoted."""
    n = len(text)
    plain = _PLAIN.match(text, i)
    if plain is not None:  # the common case: one unquoted run
        end = plain.end()
        if end >= n or text[end] in _WORD_ENDS:
            return plain.group(), end, False
    elif text.startswith(("'", '"'), i):  # the next most common: one quoted run, nothing inside
        quote = text[i]
        close = text.find(quote, i + 1)
        after = close + 1
        if close > 0 and (after >= n or text[after] in _WORD_ENDS):
            inner = text[i + 1 : close]
            if quote == "'" or not ("\\" in inner or "$" in inner or "`" in inner):
                return inner, after, True
    parts: list[str] = []
    quoted = False
    while i < n:
        plain = _PLAIN.match(text, i)
        if plain is not None:
            parts.append(plain.group())
            i = plain.end()
            if i >= n:
                break
        char = text[i]
        if char == "'":
            quoted = True
            close = text.find("'", i + 1)
            end = n if close < 0 else close
            parts.append(text[i + 1 : end])
            i = end + 1
        elif char == '"':
            quoted = True
            end, closed = _end_of_nested(text, i + 1, '"')
            inner = text[i + 1 : end - 1 if closed else end]
            if "\\" in inner:
                inner = _DOUBLE_QUOTE_ESCAPE.sub(_unescape_in_double_quotes, inner)
            parts.append(inner)
            i = end
        elif char == "\\":
            if text.startswith("\n", i + 1):
                i += 2
            else:
                parts.append(text[i + 1 : i + 2])
                i += 2
        elif char == "$" and text.startswith("(", i + 1):
            end, _ = _end_of_nested(text, i + 2, ")")
            parts.append(text[i:end])
            i = end
        elif char == "$" and text.startswith("{", i + 1):
            close = text.find("}", i + 2)
            end = n if close < 0 else close + 1
            parts.append(text[i:end])
            i = end
        elif char == "$":
            parts.append("$")
            i += 1
        elif char == "`":
            end, _ = _end_of_nested(text, i + 1, "`")
            parts.append(text[i:end])
            i = end
        else:
            break
    return "".join(parts), min(i, n), quoted


def _unescape_in_double_quotes(match: re.Match[str]) -> str:
    escaped = match.group(1)
    return "" if escaped == "\n" else escaped


def _end_of_nested(text: str, i: int, closer: str) -> tuple[int, bool]:
    """Index just past the ``"``, backtick or ``)`` closing a construct opened before ``i``.

    Nesting (``"$(echo "`date`")"``) is followed with an explicit stack; returns (len, False) when
    the construct never closes.
    """
    n = len(text)
    stack = [closer]
    while stack:
        top = stack[-1]
        stop = _NESTED_STOPS[top].search(text, i)
        if stop is None:
            return n, False
        i = stop.start()
        char = text[i]
        if char == "\\":
            i += 2
            continue
        i += 1
        if top == '"':
            if char == '"':
                stack.pop()
            elif char == "`":
                stack.append("`")
            elif char == "$" and text.startswith("(", i):
                stack.append(")")
                i += 1
        elif top == "`" or char == ")":
            stack.pop()
        elif char == "(":
            stack.append(")")
        elif char == "'":
            close = text.find("'", i)
            if close < 0:
                return n, False
            i = close + 1
        else:
            stack.append(char)
    return i, True


# ---------------------------------------------------------------------------------------------
# Command normalisation: wrappers, volatile flags, sinks, verbs


@dataclass(frozen=True, slots=True)
class _Wrapper:
    """A command that runs another one: its options taking an argument, and positionals it eats."""

    short_with_arg: str = ""
    long_with_arg: frozenset[str] = frozenset()
    positionals: int = 0
    #: Options that make it a query rather than a wrapper (``command -v curl``).
    not_wrapping: frozenset[str] = frozenset()


_WRAPPERS: dict[str, _Wrapper] = {
    "sudo": _Wrapper(
        "ugpChDrtTU",
        frozenset({"--user", "--group", "--prompt", "--close-from", "--host", "--chdir", "--role",
                   "--type", "--command-timeout", "--other-user"}),
    ),
    "doas": _Wrapper("uC"),
    "env": _Wrapper("uCS", frozenset({"--unset", "--chdir", "--split-string"})),
    "nice": _Wrapper("n", frozenset({"--adjustment"})),
    "ionice": _Wrapper("cnp", frozenset({"--class", "--classdata", "--pid"})),
    "nohup": _Wrapper(),
    "time": _Wrapper("fo", frozenset({"--format", "--output"})),
    "timeout": _Wrapper("sk", frozenset({"--signal", "--kill-after"}), positionals=1),
    "command": _Wrapper(not_wrapping=frozenset({"-v", "-V"})),
    "builtin": _Wrapper(),
    "exec": _Wrapper("a"),
    "stdbuf": _Wrapper("ioe", frozenset({"--input", "--output", "--error"})),
}
#: Shell syntax that may precede the command word; kept in the command line, skipped for the verb.
_PREFIX_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{"})
#: Words that start a simple command without naming a program.
_NO_VERB_WORDS = frozenset({"fi", "done", "esac", "}", "for", "case", "select", "in", "function", "[["})
_DYNAMIC = re.compile(r"[$`(]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
_DURATION = re.compile(r"\d+(?:\.\d+)?[smhd]?")
_SAFE_WORD = re.compile(r"[\w@%+=:,./~^-]+")
_SAFE_ASCII_BYTES = (string.ascii_letters + string.digits + "_@%+=:,./~^-").encode("ascii")
#: Destinations that say nothing about which resource was written.
_GENERIC_SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-", "/dev/zero"})
_GENERIC_SINK_PREFIXES = ("/dev/fd/", "/proc/self/fd/")
_UNNORMALISED_PATH = re.compile(r"(?:^|/)\.\.?(?:/|\Z)|//|./\Z")
_STDOUT_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "1>", "1>>", "1>|"})
_OPERATORS_ABSORBING_SEMICOLON = frozenset({";", "&&", "||", "|", "|&", "&", "("})
_HTTP_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT"})
#: Generic volatile options that never take an argument.
_RETRY_SWITCHES = frozenset({"--retry-all-errors", "--retry-connrefused"})


def _option_set(names: str) -> frozenset[str]:
    """A set of option names from a whitespace-separated list (long tables stay readable)."""
    return frozenset(names.split())


@dataclass(frozen=True, slots=True)
class _Fetcher:
    """The option grammar of one HTTP client, enough to find its URLs and its output file."""

    short_with_arg: str
    long_with_arg: frozenset[str]
    volatile_short: str
    volatile_long: frozenset[str]
    sink_short: str
    sink_long: frozenset[str]
    url_long: frozenset[str] = frozenset()
    #: Whole words that look like a cluster but are one option (wget's ``-nv``).
    whole_words: frozenset[str] = frozenset()
    volatile_words: frozenset[str] = frozenset()
    #: httpie-style: ``[METHOD] URL [items…]``, so only the first positional is a URL.
    single_url: bool = False


_CURL = _Fetcher(
    short_with_arg="AbcCdDeEFHKmoPQrtTuUwxXyYz",
    long_with_arg=_option_set(
        """--abstract-unix-socket --alt-svc --aws-sigv4 --cacert --capath --cert --cert-type
        --ciphers --config --connect-timeout --connect-to --continue-at --cookie --cookie-jar
        --create-file-mode --crlfile --curves --data --data-ascii --data-binary --data-raw
        --data-urlencode --delegation --dns-interface --dns-ipv4-addr --dns-ipv6-addr
        --dns-servers --doh-url --dump-header --egd-file --engine --etag-compare --etag-save
        --expect100-timeout --form --form-string --ftp-account --ftp-alternative-to-user
        --ftp-method --ftp-port --ftp-ssl-ccc-mode --happy-eyeballs-timeout-ms --haproxy-clientip
        --header --hostpubmd5 --hostpubsha256 --hsts --interface --ipfs-gateway --json
        --keepalive-time --key --key-type --krb --libcurl --limit-rate --local-port
        --login-options --mail-auth --mail-from --mail-rcpt --max-filesize --max-redirs
        --max-time --netrc-file --noproxy --oauth2-bearer --output --output-dir --parallel-max
        --pass --pinnedpubkey --preproxy --proto --proto-default --proto-redir --proxy
        --proxy-cacert --proxy-capath --proxy-cert --proxy-cert-type --proxy-ciphers
        --proxy-crlfile --proxy-header --proxy-key --proxy-key-type --proxy-pass
        --proxy-pinnedpubkey --proxy-service-name --proxy-tls13-ciphers --proxy-tlsauthtype
        --proxy-tlspassword --proxy-tlsuser --proxy-user --proxy1.0 --pubkey --quote
        --random-file --range --rate --referer --request --request-target --resolve --retry
        --retry-delay --retry-max-time --sasl-authzid --service-name --socks4 --socks4a
        --socks5 --socks5-gssapi-service --socks5-hostname --speed-limit --speed-time --stderr
        --tls-max --tls13-ciphers --tlsauthtype --tlspassword --tlsuser --trace --trace-ascii
        --trace-config --unix-socket --upload-file --url --url-query --user --user-agent
        --variable --write-out"""
    ),
    volatile_short="sSfLkv#mA",
    volatile_long=_option_set(
        """--silent --show-error --fail --fail-with-body --fail-early --location --insecure
        --compressed --no-progress-meter --progress-bar --verbose --max-time --connect-timeout
        --user-agent"""
    ),
    sink_short="o",
    sink_long=frozenset({"--output"}),
    url_long=frozenset({"--url"}),
)
_WGET = _Fetcher(
    short_with_arg="oaeiBtOTwQPUlARDXI",
    long_with_arg=_option_set(
        """--output-file --append-output --execute --input-file --base --tries --output-document
        --timeout --dns-timeout --connect-timeout --read-timeout --wait --waitretry --quota
        --directory-prefix --user-agent --level --accept --reject --domains --exclude-domains
        --exclude-directories --include-directories --header --post-data --post-file --body-data
        --body-file --method --user --password --http-user --http-password --load-cookies
        --save-cookies --referer --limit-rate --bind-address --ca-certificate --ca-directory
        --certificate --private-key --progress --restrict-file-names --cut-dirs --default-page
        --local-encoding --remote-encoding --max-redirect --proxy-user --proxy-password
        --retry-on-http-error --backups --config --rejected-log --accept-regex --reject-regex
        --regex-type --secure-protocol --warc-file"""
    ),
    volatile_short="qvTtU",
    volatile_long=_option_set(
        """--quiet --no-verbose --verbose --timeout --dns-timeout --read-timeout --tries
        --waitretry --user-agent --no-check-certificate --show-progress --progress"""
    ),
    sink_short="O",
    sink_long=frozenset({"--output-document"}),
    whole_words=frozenset({"-nv", "-nc", "-nd", "-nH", "-np"}),
    volatile_words=frozenset({"-nv"}),
)
_HTTPIE = _Fetcher(
    short_with_arg="aAopsP",
    long_with_arg=_option_set(
        """--auth --auth-type --output --session --session-read-only --print --history-print
        --pretty --style --format-options --response-charset --response-mime --timeout --verify
        --cert --cert-key --cert-key-pass --ssl --ciphers --proxy --max-redirects --max-headers
        --boundary --default-scheme --raw --bearer --resolve --interface --http-version"""
    ),
    volatile_short="",
    volatile_long=frozenset({"--timeout", "--verify"}),
    sink_short="o",
    sink_long=frozenset({"--output"}),
    single_url=True,
)
_ARIA2C = _Fetcher(
    short_with_arg="dosxjikltUmTM",
    long_with_arg=_option_set(
        """--dir --out --split --max-connection-per-server --max-concurrent-downloads --input-file
        --min-split-size --log --timeout --connect-timeout --max-tries --retry-wait --user-agent
        --header --referer --summary-interval --console-log-level"""
    ),
    volatile_short="tUmq",
    volatile_long=_option_set(
        """--timeout --connect-timeout --max-tries --retry-wait --user-agent --quiet
        --summary-interval --console-log-level"""
    ),
    sink_short="o",
    sink_long=frozenset({"--out"}),
)
#: Verbs of the ``family:http-fetch`` fingerprint, with the option grammar of each.
_FETCHERS: dict[str, _Fetcher] = {
    "curl": _CURL,
    "wget": _WGET,
    "http": _HTTPIE,
    "https": _HTTPIE,
    "httpie": _HTTPIE,
    "xh": _HTTPIE,
    "xhs": _HTTPIE,
    "aria2c": _ARIA2C,
}


class ShellAnalysis(NamedTuple):
    """What one command line does, in canonical form."""

    verb: str  # verb of the first simple command ("" when it has none)
    command: str  # the command line without wrappers, volatile flags, comments; URLs canonical
    verbs: tuple[str, ...]  # verb of every simple command, first appearance order
    urls: tuple[CanonicalUrl, ...]
    sinks: tuple[str, ...]  # files written, generic destinations excluded
    fetches: bool  # some simple command runs an HTTP client
    volatile_removed: tuple[str, ...]  # wrappers and flags removed, as they were written


def analyze_shell(command: str, aliases: Mapping[str, str]) -> ShellAnalysis:
    """Normalise one shell command line and extract its verbs, URLs and sinks."""
    collector = _Collector(aliases)
    script = lex_shell(command[:MAX_LEXED_CHARS])
    rendered: list[str] = []
    first_verb = ""
    for part in script.parts:
        if isinstance(part, str):
            _append_operator(rendered, part)
            continue
        text, verb = collector.simple_command(part)
        if not first_verb:
            first_verb = verb
        if text:
            rendered.append(text)
    while rendered and rendered[-1] == ";":
        rendered.pop()
    line = " ".join(rendered)
    for body in script.heredocs:
        line += "\n" + collector.canonical_text(body)
    tail = command[MAX_LEXED_CHARS:]
    if tail:
        collector.scan_only(tail)
        line += tail
    return ShellAnalysis(
        verb=first_verb,
        command=line,
        verbs=tuple(collector.verbs),
        urls=tuple(collector.urls),
        sinks=tuple(collector.sinks),
        fetches=collector.fetches,
        volatile_removed=tuple(collector.removed),
    )


def _append_operator(rendered: list[str], operator: str) -> None:
    """Operators between commands; ``;`` and newlines collapse, so layout is not identity."""
    if operator in (";", "\n"):
        if rendered and rendered[-1] not in _OPERATORS_ABSORBING_SEMICOLON:
            rendered.append(";")
    else:
        rendered.append(operator)


class _Collector:
    """Accumulates URLs, sinks, verbs and removals over the simple commands of one line."""

    __slots__ = ("aliases", "fetches", "removed", "sinks", "urls", "verbs")

    def __init__(self, aliases: Mapping[str, str]) -> None:
        self.aliases = aliases
        self.urls: dict[CanonicalUrl, None] = {}
        self.sinks: dict[str, None] = {}
        self.verbs: dict[str, None] = {}
        self.removed: list[str] = []
        self.fetches = False

    def simple_command(self, command: SimpleCommand) -> tuple[str, str]:
        """The normalised text of one simple command, and its verb ("" when none)."""
        words = command.words
        kept, start = self._strip_prefix(words)
        verb = ""
        if start < len(words) and words[start] not in _NO_VERB_WORDS:
            verb = words[start].rsplit("/", 1)[-1]
            if _DYNAMIC.search(verb):  # "$CMD", "$(which curl)": no name to count
                verb = ""
        if verb:
            self.verbs[verb] = None
        if start < len(words):
            kept.append(self._render(words[start]))
        arguments = words[start + 1 :]
        fetcher = _FETCHERS.get(verb)
        if fetcher is not None:
            self.fetches = True
            kept.extend(self._fetcher_args(fetcher, arguments))
        else:
            kept.extend(self._generic_args(arguments, is_tee=verb == "tee"))
        for operator, target in command.redirects:
            if operator in _STDOUT_REDIRECTS or (operator == ">&" and not _is_fd(target)):
                self._add_sink(target)
            kept.append(operator + self._render(target))
        return " ".join(kept), verb

    def canonical_text(self, text: str) -> str:
        """``text`` with each http(s) URL in it canonical, collecting the URLs on the way."""
        if "://" not in text:
            return text
        return _URL_IN_TEXT.sub(self._rewrite_url, text)

    def _render(self, word: str) -> str:
        """One word of the normalised command line: URLs canonical, quoted as a shell needs it."""
        if "://" in word:
            word = _URL_IN_TEXT.sub(self._rewrite_url, word)
        return _quote(word)

    def scan_only(self, text: str) -> None:
        """Collect URLs from text beyond the lexed part, up to the URL cap."""
        if "://" not in text:
            return
        for found in _URL_IN_TEXT.finditer(text):
            if len(self.urls) >= MAX_URLS:
                return
            url = canonical_url(_trim_url(found.group())[0], self.aliases)
            if url is not None:
                self.urls[url] = None

    def _rewrite_url(self, found: re.Match[str]) -> str:
        url_text, trailer = _trim_url(found.group())
        url = canonical_url(url_text, self.aliases)
        if url is None:
            return found.group()
        self._add_url(url)
        return url.resource + trailer

    def _add_url(self, url: CanonicalUrl) -> None:
        if len(self.urls) < MAX_URLS:
            self.urls[url] = None

    def _add_sink(self, path: str) -> None:
        if not path or path in _GENERIC_SINKS or path.startswith(_GENERIC_SINK_PREFIXES):
            return
        if _UNNORMALISED_PATH.search(path):
            path = posixpath.normpath(path)
        self.sinks[path] = None

    def _strip_prefix(self, words: list[str]) -> tuple[list[str], int]:
        """Keywords to keep and the index of the command word, wrappers and assignments removed.

        A prefix with no command after it is the command itself (``FOO=1`` alone, bare ``time``).
        """
        kept: list[str] = []
        removed: list[str] = []
        i = 0
        while i < len(words):
            word = words[i]
            if word in _PREFIX_KEYWORDS:
                kept.append(word)
                i += 1
                continue
            if _ASSIGNMENT.match(word):
                self.canonical_text(word)
                removed.append(word)
                i += 1
                continue
            wrapper = _WRAPPERS.get(word.rsplit("/", 1)[-1])
            if wrapper is None:
                break
            end = _end_of_wrapper(wrapper, words, i + 1)
            if end is None:
                break
            removed.append(" ".join(words[i:end]))
            i = end
        if i >= len(words):
            return [self._render(word) for word in words], i
        self.removed.extend(removed)
        return kept, i

    def _generic_args(self, words: Sequence[str], *, is_tee: bool) -> list[str]:
        """Arguments of any command: URLs canonical, generic volatile long options removed."""
        kept: list[str] = []
        options_done = False
        i = 0
        while i < len(words):
            word = words[i]
            i += 1
            if not options_done and word.startswith("--"):
                name, equals, _ = word.partition("=")
                arity = _generic_volatile_arity(name)
                if arity is not None:
                    if arity and not equals and i < len(words) and _DURATION.fullmatch(words[i]):
                        self.removed.append(f"{word} {words[i]}")
                        i += 1
                    else:
                        self.removed.append(word)
                    continue
                options_done = word == "--"
            elif is_tee and (options_done or not word.startswith("-") or word == "-"):
                self._add_sink(word)
            kept.append(self._render(word))
        return kept

    def _fetcher_args(self, fetcher: _Fetcher, words: Sequence[str]) -> list[str]:
        """Arguments of an HTTP client: volatile options out, URLs and output files found."""
        kept: list[str] = []
        positional_urls = 0
        options_done = False
        i = 0
        while i < len(words):
            word = words[i]
            i += 1
            if options_done or word == "-" or not word.startswith("-"):
                if fetcher.single_url and (positional_urls or word in _HTTP_METHODS):
                    kept.append(self._render(word))
                    continue
                positional_urls += 1
                kept.append(_quote(self._positional_url(word, httpie=fetcher.single_url)))
            elif word == "--":
                options_done = True
                kept.append(word)
            elif word.startswith("--"):
                i = self._fetcher_long_option(fetcher, words, i, kept)
            elif word in fetcher.whole_words:
                if word in fetcher.volatile_words:
                    self.removed.append(word)
                else:
                    kept.append(word)
            else:
                i = self._fetcher_short_cluster(fetcher, words, i, kept)
        return kept

    def _fetcher_long_option(self, fetcher: _Fetcher, words: Sequence[str], i: int, kept: list[str]) -> int:
        """Handle ``words[i - 1]``, a ``--long`` option; returns the index after its argument."""
        word = words[i - 1]
        name, equals, value = word.partition("=")
        generic_arity = _generic_volatile_arity(name)
        takes_arg = name in fetcher.long_with_arg or generic_arity == 1
        argument: str | None = value if equals else None
        if argument is None and takes_arg and i < len(words):
            argument = words[i]
            i += 1
        if name in fetcher.volatile_long or generic_arity is not None:
            self.removed.append(word if equals or argument is None else f"{word} {argument}")
            return i
        kept.append(name)
        if argument is not None:
            if name in fetcher.sink_long:
                self._add_sink(argument)
            if name in fetcher.url_long:
                kept.append(_quote(self._positional_url(argument, httpie=False)))
            else:
                kept.append(self._render(argument))
        return i

    def _fetcher_short_cluster(self, fetcher: _Fetcher, words: Sequence[str], i: int, kept: list[str]) -> int:
        """Handle ``words[i - 1]``, a cluster like ``-sSLo out``; returns the index after it."""
        word = words[i - 1]
        removed_letters = ""
        removed_argument = ""
        for position in range(1, len(word)):
            letter = word[position]
            if letter not in fetcher.short_with_arg:
                if letter in fetcher.volatile_short:
                    removed_letters += letter
                else:
                    kept.append("-" + letter)
                continue
            attached = word[position + 1 :]
            if attached:
                argument: str | None = attached
            elif i < len(words):
                argument = words[i]
                i += 1
            else:
                argument = None
            if letter in fetcher.volatile_short:
                removed_letters += letter
                if argument is not None:
                    removed_argument = attached if attached else " " + argument
            else:
                kept.append("-" + letter)
                if argument is not None:
                    if letter in fetcher.sink_short:
                        self._add_sink(argument)
                    kept.append(self._render(argument))
            break
        if removed_letters:
            self.removed.append("-" + removed_letters + removed_argument)
        return i

    def _positional_url(self, word: str, *, httpie: bool) -> str:
        """A client's URL argument: schemes optional, httpie's ``:8080/x`` meaning localhost."""
        spelled = "localhost" + word if httpie and word.startswith(":") else word
        url = canonical_url(spelled, self.aliases, scheme_optional=True)
        if url is None:
            return self.canonical_text(word)
        self._add_url(url)
        return url.resource


def _end_of_wrapper(wrapper: _Wrapper, words: Sequence[str], i: int) -> int | None:
    """Index of the command a wrapper runs, or None when it runs none (or is not wrapping)."""
    positionals = wrapper.positionals
    while i < len(words):
        word = words[i]
        if word in wrapper.not_wrapping:
            return None
        if word == "--":
            i += 1
            break
        if word.startswith("--"):
            name, equals, _ = word.partition("=")
            i += 2 if name in wrapper.long_with_arg and not equals else 1
        elif word.startswith("-") and len(word) > 1:
            i += 1
            for position in range(1, len(word)):
                if word[position] in wrapper.short_with_arg:
                    if position == len(word) - 1:
                        i += 1
                    break
        elif positionals:
            positionals -= 1
            i += 1
        else:
            break
    i += positionals
    return i if i < len(words) else None


def _generic_volatile_arity(name: str) -> int | None:
    """For options that never change what any command fetches: 1 if it takes a value, 0 if not."""
    if name in ("--max-time", "--connect-timeout", "--timeout"):
        return 1
    if name.startswith("--retry") or name == "--retries":
        return 0 if name in _RETRY_SWITCHES else 1
    return None


def _is_fd(target: str) -> bool:
    return target == "-" or (target.isascii() and target.isdigit())


def _quote(word: str) -> str:
    """One word as a shell would need it written; a single canonical spelling of each value."""
    if word.isascii():  # for ASCII, \\w is [A-Za-z0-9_]: one bytes pass instead of the regex
        if word and not word.encode("ascii").translate(None, _SAFE_ASCII_BYTES):
            return word
    elif _SAFE_WORD.fullmatch(word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"

"""URLs: the canonical resource, the site, whether the host is local, and host folding.

``net:`` and ``site:`` count what a URL names, not how it was spelled: scheme, default port,
``www.``, case, trailing slash, fragment, query order and tracking parameters do not make another
resource; a path or a query value does. Locality is decided from the text alone, never by DNS.

A URL is first read as an HTTP client requests it (RFC 3986 section 6, ``requested_url``): the
scheme's and host's case, a default port, dot segments (``/v1/./jobs``, ``/v1/x/../jobs``),
percent-encoded unreserved characters (``/v1/%6Aobs`` is ``/v1/jobs``), the case of the hex of
the other escapes, an empty query and the fragment do not change what is fetched. The order of a
query's parameters does, for a server, so ``requested_url`` keeps it (``net:`` sorts them).
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Mapping
from typing import NamedTuple

from breaker.core.config import fold_host_name as fold_host_name  # hosts fold one way: URLs and hostAliases

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

URL_IN_TEXT = re.compile(r"https?://[^\s'\"<>\\`{}|^]+", re.IGNORECASE)
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_AUTHORITY_END = re.compile(r"[/?#]")
_BAD_HOST_CHAR = re.compile(r"[^\w.-]")
#: An IPv4 address's parts as HTTP clients read them (WHATWG URL, inet_aton): 1 to 4 numbers,
#: each decimal, ``0x`` hex or ``0`` octal, the last filling the bytes left (``127.1`` is 127.0.0.1).
_IPV4_PART = re.compile(r"0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*")
_TRAILING_PROSE = ".,;:!?*'"
_DEFAULT_PORTS = (80, 443)
#: One percent-encoded octet; the unreserved characters an escape of one is the character itself.
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_SCHEME_PORTS = {"http": 80, "https": 443}
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
    name = fold_host_name(spelled)
    if not name or _BAD_HOST_CHAR.search(name):
        return None
    v4 = _ipv4_of(name)
    if v4 is not None:
        name = str(v4)
        return _Host(name, name, _is_local_ip(v4), bare_word=False)
    is_localhost = name == "localhost" or name.endswith(".localhost")
    return _Host(name, _site_of(name), is_localhost, bare_word="." not in name and not is_localhost)


def _ipv4_of(name: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a host spells, in any form an HTTP client reads as one (``127.1``,
    ``0x7f.0.0.1``, ``2130706433``, ``0177.0.0.1``), or None for a name."""
    parts = name.split(".")
    if len(parts) > 4 or not all(_IPV4_PART.fullmatch(part) for part in parts):
        return None
    numbers = [_ipv4_number(part) for part in parts]
    last = numbers.pop()
    if any(number > 255 for number in numbers) or last >= 256 ** (4 - len(numbers)):
        return None
    for place, number in enumerate(numbers):
        last += number << (8 * (3 - place))
    return ipaddress.IPv4Address(last)


def _ipv4_number(part: str) -> int:
    """One part of an IPv4 address (``_IPV4_PART``) as its number."""
    if part[:2] in ("0x", "0X"):
        return int(part[2:] or "0", 16)
    return int(part, 8) if part.startswith("0") else int(part)


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


def requested_url(url: str) -> str | None:
    """An http(s) URL as a client requests it (see the module docstring): ``HTTPS://Api.Example.com:443
    /v1/./%6Aobs/42?`` is ``https://api.example.com/v1/jobs/42``. None for anything else."""
    return url if _as_requested(url) else _requested(url)


def _requested(url: str) -> str | None:
    """``requested_url`` read in full."""
    scheme, colon, rest = url.partition("://")
    scheme = scheme.lower()
    if not colon or scheme not in _SCHEME_PORTS:
        return None
    end = _AUTHORITY_END.search(rest)
    authority, tail = (rest[: end.start()], rest[end.start() :]) if end else (rest, "")
    user, at, host_port = authority.rpartition("@")
    split = _split_host_port(host_port)
    if split is None:
        return None
    host, port = split
    netloc = user + at + host.lower()
    if port is not None and port != _SCHEME_PORTS[scheme]:
        netloc += f":{port}"
    path, _, query = tail.partition("#")[0].partition("?")
    query = _normal_escapes(query) if "%" in query else query
    return f"{scheme}://{netloc}{normal_url_path(path) or '/'}" + ("?" + query if query else "")


def _as_requested(url: str) -> bool:
    """Whether ``url`` is surely written as it is requested already (most are): substring tests
    that find nothing to fold, without reading the URL apart."""
    if (
        not url.startswith(("https://", "http://"))
        or "%" in url
        or "/." in url
        or "#" in url
        or url.endswith("?")
    ):
        return False
    start = url.index("//") + 2
    slash = url.find("/", start)
    if slash < 0:
        return False  # no path: "/" is added
    authority = url[start:slash]
    if "?" in authority or authority != authority.lower():
        return False
    _, colon, port = authority.partition(":")
    # A port is kept as written when it is not the scheme's own and is written as ``int`` writes
    # it (digits, no leading zero): ``http://10.0.0.5:8080/x`` is requested as it is.
    return not colon or (
        port.isascii()
        and port.isdigit()
        and port[0] != "0"
        and int(port) <= 65535
        and int(port) != _SCHEME_PORTS[url[: start - 3]]
    )


def normal_url_path(path: str) -> str:
    """A URL's path with its escapes normalised, then its dot segments removed (RFC 3986 5.2.4)."""
    if "%" in path:
        path = _normal_escapes(path)
    if "/." not in path:
        return path
    kept: list[str] = []
    segments = path.split("/")
    for at, segment in enumerate(segments):
        last = at == len(segments) - 1
        if segment == "." or segment == "..":
            if segment == ".." and len(kept) > 1:
                kept.pop()
            if last:
                kept.append("")  # "/a/b/.." is "/a/", a folder
        else:
            kept.append(segment)
    return "/".join(kept) if len(kept) > 1 else "/"


def _normal_escapes(text: str) -> str:
    """Percent-encoded unreserved characters decoded, the other escapes in uppercase hex."""
    return _ESCAPE.sub(_normal_escape, text)


def _normal_escape(found: re.Match[str]) -> str:
    character = chr(int(found.group(1), 16))
    return character if character in _UNRESERVED else found.group().upper()


def _path_and_query(tail: str) -> str:
    """Path as requested (``normal_url_path``) without trailing slash (``/`` when empty), then
    ``?query`` sorted, without trackers."""
    tail = tail.partition("#")[0]
    path, _, query = tail.partition("?")
    path = normal_url_path(path).rstrip("/") or "/"
    if "%" in query:
        query = _normal_escapes(query)
    if not query:
        return path
    params = [param for param in query.split("&") if param and not _TRACKING_PARAM.match(param)]
    if not params:
        return path
    params.sort()
    return path + "?" + "&".join(params)


def trim_url(found: str) -> tuple[str, str]:
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

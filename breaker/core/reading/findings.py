"""What one command line was found to touch, and each of its words in canonical spelling.

Normalising a command line and collecting what it names happen in one pass: a URL is recorded
where it is rewritten to its canonical resource, an output file where its option or redirection
is read, a removed wrapper or flag where it is dropped. ``Findings`` is that pass's record, shared
by the prefix (``wrappers``), the HTTP clients (``fetchers``) and every other command
(``commands``); ``quote`` gives each kept word a single spelling.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping

from breaker.core.reading.paths import normal_path, normal_path_word
from breaker.core.reading.urls import URL_IN_TEXT, CanonicalUrl, canonical_url, trim_url

#: The most URLs one call contributes; more are a crawl list, already caught by what came before.
MAX_URLS = 64

_SAFE_WORD = re.compile(r"[\w@%+=:,./~^-]+")
#: The ASCII characters a word may hold and be written as it is (``_SAFE_WORD``'s, \w being
#: [A-Za-z0-9_] in ASCII).
_SAFE_ASCII = frozenset(string.ascii_letters + string.digits + "_@%+=:,./~^-")
#: Destinations that say nothing about which resource was written.
_GENERIC_SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-", "/dev/zero"})
_GENERIC_SINK_PREFIXES = ("/dev/fd/", "/proc/self/fd/")


class Findings:
    """Accumulates URLs, sinks, verbs and removals over the simple commands of one line."""

    __slots__ = ("aliases", "as_data", "fetches", "removed", "sinks", "urls", "verbs")

    def __init__(self, aliases: Mapping[str, str]) -> None:
        self.aliases = aliases
        # While True, the text rendered is only written into a file: its URLs are not recorded.
        self.as_data = False
        self.urls: dict[CanonicalUrl, None] = {}
        self.sinks: dict[str, None] = {}
        self.verbs: dict[str, None] = {}
        self.removed: list[str] = []
        self.fetches = False

    def canonical_text(self, text: str) -> str:
        """``text`` with each http(s) URL in it canonical, collecting the URLs on the way."""
        if "://" not in text:
            return text
        return URL_IN_TEXT.sub(self._rewrite_url, text)

    def render(self, word: str, *, path: bool = False, keep_dot: bool = False) -> str:
        """One word of the normalised command line: URLs canonical, quoted as a shell needs it;
        where a file may be named (``path``), a word spelled like a path as it resolves
        (``paths.normal_path_word``, ``keep_dot`` for a program or a name)."""
        if "://" in word:
            word = URL_IN_TEXT.sub(self._rewrite_url, word)
        elif path and "/" in word:
            word = normal_path_word(word, keep_dot=keep_dot)
        return quote(word)

    def scan_only(self, text: str) -> None:
        """Collect URLs from text beyond the lexed part, up to the URL cap."""
        if "://" not in text:
            return
        for found in URL_IN_TEXT.finditer(text):
            if len(self.urls) >= MAX_URLS:
                return
            url = canonical_url(trim_url(found.group())[0], self.aliases)
            if url is not None:
                self.urls[url] = None

    def positional_url(self, word: str, *, httpie: bool) -> str:
        """A client's URL argument: schemes optional, httpie's ``:8080/x`` meaning localhost."""
        spelled = "localhost" + word if httpie and word.startswith(":") else word
        url = canonical_url(spelled, self.aliases, scheme_optional=True)
        if url is None:
            return self.canonical_text(word)
        self._add_url(url)
        return url.resource

    def add_sink(self, path: str) -> None:
        if is_file(path):
            self.sinks[normal_path(path)] = None

    def _rewrite_url(self, found: re.Match[str]) -> str:
        url_text, trailer = trim_url(found.group())
        url = canonical_url(url_text, self.aliases)
        if url is None:
            return found.group()
        self._add_url(url)
        return url.resource + trailer

    def _add_url(self, url: CanonicalUrl) -> None:
        if not self.as_data and len(self.urls) < MAX_URLS:
            self.urls[url] = None


def is_file(path: str) -> bool:
    """Whether a destination names a file (``/dev/null``, ``-`` and the like say nothing)."""
    return bool(path) and path not in _GENERIC_SINKS and not path.startswith(_GENERIC_SINK_PREFIXES)


def quote(word: str) -> str:
    """One word as a shell would need it written; a single canonical spelling of each value."""
    if word.isascii():  # one set look-up per character instead of the regex
        if word and _SAFE_ASCII.issuperset(word):
            return word
    elif _SAFE_WORD.fullmatch(word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"

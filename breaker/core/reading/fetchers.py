"""HTTP clients (curl, wget, httpie, aria2c): their option grammars, and their arguments read.

Reading a client's arguments finds what it fetches and where it writes: its URLs (positional, or
behind ``--url``), its output file (``-o``, ``--output-document``…), and the options that change
nothing about what is fetched (timeouts, retries, verbosity, the user agent), which are removed so
that ``curl -s --max-time 5 URL`` and ``curl URL`` are one command. These clients are also the
verbs of the ``family:http-fetch`` fingerprint.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from breaker.core.reading.findings import Findings, quote

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
FETCHERS: dict[str, _Fetcher] = {
    "curl": _CURL,
    "wget": _WGET,
    "http": _HTTPIE,
    "https": _HTTPIE,
    "httpie": _HTTPIE,
    "xh": _HTTPIE,
    "xhs": _HTTPIE,
    "aria2c": _ARIA2C,
}


def generic_volatile_arity(name: str) -> int | None:
    """For options that never change what any command fetches: 1 if it takes a value, 0 if not."""
    if name in ("--max-time", "--connect-timeout", "--timeout"):
        return 1
    if name.startswith("--retry") or name == "--retries":
        return 0 if name in _RETRY_SWITCHES else 1
    return None


def fetcher_args(fetcher: _Fetcher, words: Sequence[str], found: Findings) -> list[str]:
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
                kept.append(found.render(word))
                continue
            positional_urls += 1
            kept.append(quote(found.positional_url(word, httpie=fetcher.single_url)))
        elif word == "--":
            options_done = True
            kept.append(word)
        elif word.startswith("--"):
            i = _long_option(fetcher, words, i, kept, found)
        elif word in fetcher.whole_words:
            if word in fetcher.volatile_words:
                found.removed.append(word)
            else:
                kept.append(word)
        else:
            i = _short_cluster(fetcher, words, i, kept, found)
    return kept


def _long_option(fetcher: _Fetcher, words: Sequence[str], i: int, kept: list[str], found: Findings) -> int:
    """Handle ``words[i - 1]``, a ``--long`` option; returns the index after its argument."""
    word = words[i - 1]
    name, equals, value = word.partition("=")
    generic_arity = generic_volatile_arity(name)
    takes_arg = name in fetcher.long_with_arg or generic_arity == 1
    argument: str | None = value if equals else None
    if argument is None and takes_arg and i < len(words):
        argument = words[i]
        i += 1
    if name in fetcher.volatile_long or generic_arity is not None:
        found.removed.append(word if equals or argument is None else f"{word} {argument}")
        return i
    kept.append(name)
    if argument is not None:
        if name in fetcher.sink_long:
            found.add_sink(argument)
        if name in fetcher.url_long:
            kept.append(quote(found.positional_url(argument, httpie=False)))
        else:
            kept.append(found.render(argument, path=name in fetcher.sink_long))
    return i


def _short_cluster(fetcher: _Fetcher, words: Sequence[str], i: int, kept: list[str], found: Findings) -> int:
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
                sink = letter in fetcher.sink_short
                if sink:
                    found.add_sink(argument)
                kept.append(found.render(argument, path=sink))
        break
    if removed_letters:
        found.removed.append("-" + removed_letters + removed_argument)
    return i

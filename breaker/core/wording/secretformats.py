"""Which secrets are redacted: every format as a pattern, what replaces its match, and the words
every match holds (so a text holding none of them skips the pattern). ``redaction`` applies
them in order, as written and through backslash escapes; ``tests/test_secret_formats.py`` has one case
per format.

Every pattern runs in linear time (no nested unbounded quantifiers) and uses nothing Python
3.10's ``re`` lacks (``tests/test_oldest_python.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

REDACTED = "[REDACTED]"

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
        # a registry's "auth" alone (Docker's config.json, .npmrc: user:password in base64), and a
        # kubeconfig's base64 private key
        "(?<=(?<![a-z0-9_.\\-])auth)",
        "(?<=key-data)",
        # a signed URL's signature (X-Amz-Signature, X-Goog-Signature; an Azure SAS's sig)
        "(?<=signature)",
        "(?<=(?<![a-z0-9_.\\-])sig)",
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

#: Tokens recognised by their shape alone: (issuer, pattern, hints: words every match holds, as
#: ``_folded`` reads them; None: always run). Each is a pass of its own, run only on a text holding
#: one of its hints: most texts hold none.
_TOKEN_SHAPES = (
    ("GitHub", r"\b(?:gh[pousr]|github_pat)_[A-Za-z0-9_]{20,255}", ("gh", "github_pat")),
    ("OpenAI, Anthropic", r"\bsk-[A-Za-z0-9_\-]{20,255}", ("sk-",)),
    ("AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", ("akia", "asia")),
    # header.payload.signature, both JSON objects, so both start "eyJ".
    ("JWT", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*", ("eyj",)),
    ("Slack", r"\bxox[abposre]-[A-Za-z0-9\-]{10,255}|\bxapp-\d-[A-Za-z0-9\-]{10,255}", ("xox", "xapp-")),
    (
        "Stripe",
        r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,255}|\bwhsec_[A-Za-z0-9]{20,255}",
        ("sk_", "rk_", "whsec_"),
    ),
    ("GitLab", r"\bgl(?:pat|dt|rt|ptt|cbt|soat)-[A-Za-z0-9_\-]{20,255}", ("gl",)),
    (
        "Google API key, OAuth token",
        r"\bAIza[0-9A-Za-z_\-]{35}|\bya29\.[0-9A-Za-z_\-]{20,2048}",
        ("aiza", "ya29."),
    ),
    ("npm", r"\bnpm_[A-Za-z0-9]{36}\b", ("npm_",)),
    ("Hugging Face", r"\bhf_[A-Za-z0-9]{30,40}\b", ("hf_",)),
    ("PyPI", r"\bpypi-AgE[A-Za-z0-9_\-]{40,}", ("pypi-age",)),
    ("HashiCorp Vault", r"\bhv[sbr]\.[A-Za-z0-9_\-]{20,255}", ("hvs.", "hvb.", "hvr.")),
    ("Databricks", r"\bdapi[0-9a-f]{32}\b", ("dapi",)),
    ("Shopify", r"\bshp(?:at|ca|pa|ss)_[0-9a-fA-F]{32}\b", ("shp",)),
    ("DigitalOcean", r"\bdo[por]_v1_[0-9a-f]{64}\b", ("_v1_",)),
    ("age", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b", ("age-secret-key-1",)),
    ("SendGrid", r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}", ("sg.",)),
    # a bot's id, a colon and "AA" then 33 more: in its API's URLs it follows "/bot"
    ("Telegram bot", r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])", (":aa",)),
    # the bot's id in base64, a time stamp, an HMAC
    (
        "Discord bot",
        r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}(?![A-Za-z0-9_\-])",
        None,
    ),
)


def _redact_base64_key(match: re.Match[str]) -> str:
    """A bare 40-character key (AWS secret access keys): redacted when it mixes cases and digits,
    as random keys do and hex digests (git, sha1) do not."""
    text = match.group(0)
    kinds = (str.isupper, str.islower, str.isdigit)
    return REDACTED if all(any(kind(char) for char in text) for kind in kinds) else text


#: What a pattern's match is replaced with: a template, or a function of the match.
Replacement = str | Callable[[re.Match[str]], str]

#: What each match of a pattern with a name in it holds, as the patterns' ``(?i)`` reads text
#: (``_folded``): a name ending as ``_SECRET_ENDINGS`` says.
_SECRET_HINTS = ("pass", "pwd", "secret", "credential", "token", "auth", "cookie", "key", "sig")
#: The letters beyond ASCII that Python's case-insensitive matching takes for an ``i``, ``s`` or ``k``.
FOLD_BEYOND_ASCII = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})

#: A secret format: its pattern, what replaces a match, and the words every match holds (None: no hint).
Redaction = tuple[re.Pattern[str], Replacement, tuple[str, ...] | None]


def _compiled() -> tuple[Redaction, ...]:
    """Every secret format that is redacted, as (pattern, replacement, hints), applied in order: a
    pattern is run only on a text that holds one of its hints (words every match of it holds, read
    as ``_folded`` reads them; None: always run), since most texts hold no secret at all. Each entry
    names the formats it covers; ``tests/test_secret_formats.py`` has one case per format."""
    return (*_named_secrets(), *_secrets_in_options())


def _named_secrets() -> tuple[Redaction, ...]:
    """Private keys, URL userinfo and secrets named where they stand (JSON members, assignments,
    headers); first of all."""
    return (
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
            r"\1" + REDACTED + "@",
            ("://",),
        ),
        # URL userinfo without a password, a token as the user (https://ghp_x@github.com/o/r).
        (re.compile(rf"(?i){_URL_SCHEME}[^\s/?#@'\"\\]{{1,256}}@"), r"\1" + REDACTED + "@", ("://",)),
        # Members of a JSON object, a Python dict repr (``print(os.environ)``) or a Ruby/PHP hash:
        # "password": "value", 'PASSWORD': 'value', "token" => 'value', "Authorization": "Bearer ...".
        (
            re.compile(
                rf"(?i)([\"'])({_SECRET_NAME})\1(\s*(?::|=>)\s*)([\"'])(?:(?!\4)[^\\]|\\.)*(?:\4|\\?\Z)"
            ),
            r"\1\2\1\3\4" + REDACTED + r"\4",
            _SECRET_HINTS,
        ),
        # A named value in escaped quotes, as a JSON string holds a file's text (an `exact:` key of a
        # write: "password: \\"x\\""), up to the escaped quote that closes it.
        (
            re.compile(
                rf"(?i)({_SECRET_NAME})({_ASSIGN})(\\[\"'])(?:(?!\3)[^\r\n]){{0,1024}}(?:\3|(?=[\r\n]|\Z))"
            ),
            r"\1\2\3" + REDACTED + r"\3",
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
            r"\1\2\3\4\5\6" + REDACTED + r"\4",
            _SECRET_HINTS,
        ),
        (re.compile(r"(?i)\b(bearer)\s+[a-z0-9\-._~+/]+=*"), r"\1 " + REDACTED, ("bearer",)),
    )


def _secrets_in_options() -> tuple[Redaction, ...]:
    """Secrets given to a command's options, netrc entries, then the token shapes that travel with
    no name before them and the bare key, last."""
    return (
        # curl -u user:pass, -uuser:pass, -su user:pass (flags before it in one word), -U (the proxy
        # user), --user user:pass, --user=user:pass, --proxy-user ...: the user stays. The word may
        # be quoted whole ('--user=user:pa!ss', as a `cmd:` key quotes it).
        (
            re.compile(
                r"(?i)(\bcurl\b[^\r\n|;&]{0,256}?[ \t]['\"]?"
                r"(?:-[a-z0-9#]{0,16}?u[ \t]*|(?:--user|--proxy-user)(?:[ \t]+|=))"
                r"['\"]?[^\s:'\"]{1,256}:)[^\s'\"]+"
            ),
            r"\1" + REDACTED,
            ("curl",),
        ),
        # A MySQL or MariaDB client's password attached to -p (mysql -u root -pSECRET, -p'SECRET';
        # a -p standing alone prompts for it, and -P is the port): the command's other words stay.
        (
            re.compile(
                r"(\b(?i:mysql|mariadb)[a-z\-]{0,16}\b[^\r\n|;&]{0,256}?[ \t]-p)"
                r"(?:'[^'\r\n]*'?|\"[^\"\r\n]*\"?|[^\s'\"]+)"
            ),
            r"\1" + REDACTED,
            ("mysql", "mariadb"),
        ),
        # The same word quoted whole ('-pSECRET', "-pSECRET"; a `cmd:` key quotes it so): up to its
        # closing quote.
        (
            re.compile(
                r"(\b(?i:mysql|mariadb)[a-z\-]{0,16}\b[^\r\n|;&]{0,256}?[ \t](?P<q>['\"])-p)"
                r"(?:(?!(?P=q))[^\r\n])+"
            ),
            r"\1" + REDACTED,
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
            r"\1" + REDACTED,
            _SECRET_HINTS,
        ),
        # A password given to -p of `docker login` (also podman, nerdctl, helm registry) or sshpass,
        # or to -a of redis-cli: -p X, -pX; the command's other words stay (`docker run -p 80:80`
        # and `redis-cli -p 6379` are ports).
        (
            re.compile(
                r"(?i)((?:\b(?:(?:docker|podman|nerdctl|registry)[ \t]+login|sshpass)"
                r"\b[^\r\n|;&]{0,256}?[ \t]-p"
                r"|\bredis-cli\b[^\r\n|;&]{0,256}?[ \t]-a)[ \t]*)(?!-)"
                r"(?:'[^'\r\n]*'?|\"[^\"\r\n]*\"?|[^\s'\"]+)"
            ),
            r"\1" + REDACTED,
            ("login", "sshpass", "redis-cli"),
        ),
        # netrc entries: machine host login user password secret (on one line or several).
        (
            re.compile(r"(?i)(\b(?:login|account)\s+\S{1,256}\s+password\s+)\S+"),
            r"\1" + REDACTED,
            ("password",),
        ),
        # Well-known token shapes that travel without a name in front of them; before the bare key
        # below, which would take 40 characters out of a longer token between its "-" or "_" and
        # leave the rest of it (an Anthropic key's body is base64url).
        *((re.compile(shape), REDACTED, hints) for _, shape, hints in _TOKEN_SHAPES),
        # A bare AWS secret access key (40 characters of base64 mixing cases and digits).
        (re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"), _redact_base64_key, None),
    )


def redactions() -> tuple[Redaction, ...]:
    """``_compiled``'s formats, compiled at the first call (~20 ms) and kept. Only what a message
    may quote is redacted (a failed result, a denial's or a notice's words, an error reply), so a
    worker's start never compiles them, nor do the calls it allows that go well: they were the
    costliest part of its start (docs/benchmarks.md, "Starting")."""
    global _COMPILED
    if _COMPILED is None:
        _COMPILED = _compiled()
    return _COMPILED


_COMPILED: tuple[Redaction, ...] | None = None

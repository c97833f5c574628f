"""The secret formats a quoted result is redacted of before a denial shows it to the model
(breaker/core/wording/redaction.py, secretformats.py): what a secret looks like in each format and
what is left of it. Split from tests/test_messages.py, which holds the rest of the wording."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from breaker.core.wording import redaction, secretformats
from breaker.core.wording.messages import redact

#: One case per secret format: (format, text that carries it, the secret that must not survive).
SECRET_FORMATS = [
    ("authorization-bearer", "curl -H 'Authorization: Bearer abc.def-123' https://x.org", "abc.def-123"),
    ("authorization-basic", "Authorization: Basic dXNlcjpwYXNzd29yZA==\nok", "dXNlcjpwYXNzd29yZA"),
    ("proxy-authorization", "Proxy-Authorization: Basic cHJveHk6cHc=", "cHJveHk6cHc"),
    ("cookie", "Cookie: session=s3cr3tcookie; theme=dark", "s3cr3tcookie"),
    ("set-cookie", "Set-Cookie: sid=cookievalue42; HttpOnly", "cookievalue42"),
    ("x-api-key-header", "x-api-key: key-0123456789", "key-0123456789"),
    ("x-auth-token-header", "X-Auth-Token: authtok-998877", "authtok-998877"),
    ("query-token", "https://api.example.org/v1?token=tok123&page=2", "tok123"),
    ("query-access-token", "https://api.example.org/v1?access_token=acc456", "acc456"),
    ("query-api-key", "https://maps.example.org/?api_key=k789&q=ottawa", "k789"),
    ("query-apikey", "https://maps.example.org/?apikey=k790", "k790"),
    ("form-password", "curl -d 'user=bob&password=hunter2' https://x.org/login", "hunter2"),
    ("option-password", "mysqldump --password=opt-pw-55 db", "opt-pw-55"),
    ("client-secret", "client_secret=cs-0001 grant_type=x", "cs-0001"),
    ("bare-secret", "secret=topsecretvalue", "topsecretvalue"),
    ("password-single-quoted", "password='x-single-q'", "x-single-q"),
    ("password-double-quoted", 'PASSWORD="x-double-q"', "x-double-q"),
    ("password-spaced", "PASSWORD = x-spaced-pw", "x-spaced-pw"),
    ("password-yaml-quoted", 'password: "yaml-pw-1"', "yaml-pw-1"),
    ("secret-key-env", "SECRET_KEY=django-insecure-abc123", "django-insecure-abc123"),
    ("db-pass-env", "DB_PASS=dbpass-777 DB_USER=app", "dbpass-777"),
    ("db-password-camel", "dbPassword=camel-pw-9", "camel-pw-9"),
    ("json-password", '{"password": "p\\"w0rd", "user": "bob"}', 'p\\"w0rd'),
    ("json-authorization", '{"Authorization": "Bearer jsonbearer"}', "jsonbearer"),
    ("json-aws-session", '{"SecretAccessKey": "aws/json+secret", "Expiration": "2026"}', "aws/json+secret"),
    ("bearer-prose", "the header was bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "eyJhbGciOiJIUzI1NiJ9"),
    ("url-password", "git clone https://alice:pa55word@github.com/org/repo", "pa55word"),
    ("url-password-with-at", "git clone https://alice:p@ssw0rd@github.com/org/repo", "ssw0rd"),
    ("url-password-with-slash", "psql postgres://app:ab/cd+ef@db.internal:5432/app", "ab/cd+ef"),
    ("url-token-user", "https://ghp_abcdefghijklmnopqrstuvwxyz0123@github.com/o/r", "ghp_abcdefghij"),
    ("github-token", "export GH=ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghij"),
    ("github-fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv", "11ABCDEFG0123456789"),
    ("openai-key", "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx", "abcdefghijklmnop"),
    ("anthropic-key", "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz in text", "abcdefghijklmnop"),
    ("aws-access-key-id", "aws AKIAABCDEFGHIJKLMNOP done", "AKIAABCDEFGHIJKLMNOP"),
    ("aws-temporary-key-id", "ASIAABCDEFGHIJKLMNOP", "ASIAABCDEFGHIJKLMNOP"),
    ("aws-secret-credentials-file", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPx", "wJalrXUtnFEMI"),
    ("aws-secret-env", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
    ("aws-secret-bare", "the key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY alone", "wJalrXUtnFEMI"),
    (
        "jwt-bare",
        "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "dozjgNryP4J3jVmNHl0w5N",
    ),
    ("slack-bot-token", "SLACK=xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp", "AbCdEfGhIjKlMnOp"),
    ("slack-app-token", "xapp-1-A0123456789-1234567890123-abcdef0123456789", "abcdef0123456789"),
    ("stripe-secret-key", "stripe sk_live_51H8abcdefghijklmnopqrstu", "51H8abcdefghijklmnop"),
    ("stripe-restricted-key", "rk_test_51H8abcdefghijklmnopqrstu", "51H8abcdefghijklmnop"),
    ("stripe-webhook-secret", "whsec_abcdefghijklmnopqrstuvwxyz012345", "abcdefghijklmnopqrstu"),
    ("gitlab-token", "glpat-abcdefghij0123456789", "abcdefghij0123456789"),
    ("gitlab-token-in-url", "https://oauth2:glpat-AbCdEfGhIjKlMnOpQrSt@gitlab.com/o/r", "glpat-AbCdEf"),
    ("google-api-key", "key=AIzaSyA-abcdefghijklmnopqrstuvwxyz01234 x", "SyA-abcdefghijklmnop"),
    ("google-api-key-bare", "maps AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "SyA-abcdefghijklmnop"),
    ("google-oauth-token", "ya29.a0AfH6SMBabcdefghijklmnopqrstuvwxyz", "a0AfH6SMBabcdefghij"),
    ("npm-token", "npm_abcdefghijklmnopqrstuvwxyz0123456789 published", "abcdefghijklmnopqrstuvwxyz0123"),
    ("hugging-face-token", "HF token hf_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7 set", "a1B2c3D4e5F6g7H8i9J0"),
    (
        "azure-sas-sig",
        "https://a.blob.core.windows.net/c/f?sv=2021-08-06&sr=b&sig=AbCdEf%2BGhIjKl%3D",
        "AbCdEf%2BGhIjKl",
    ),
    (
        "signed-url-signature",
        "https://storage.googleapis.com/b/o?X-Goog-Signature=0a1b2c3d4e5f6071",
        "0a1b2c3d4e5f6071",
    ),
    (
        "pypi-token",
        "uploaded with pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6",
        "CJGFiY2RlZmdoaWprbG1ub3",
    ),
    ("vault-token", "token hvs.CAESIJlWh0abcdefghijklmnopqrstuvwxyz0123", "CAESIJlWh0abcdefghij"),
    ("databricks-token", "dapi0123456789abcdef0123456789abcdef in the header", "0123456789abcdef0123"),
    ("shopify-token", "shpat_0123456789abcdef0123456789abcdef in the header", "0123456789abcdef0123"),
    ("digitalocean-token", "dop_v1_" + "0123456789abcdef" * 4 + " in the header", "0123456789abcdef0123"),
    (
        "age-secret-key",
        "AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" + "QPZRY9X8GF2TVDW0S3JN54KHCE",
        "QPZRY9X8GF2TVDW0S3JN",
    ),
    (
        "docker-config-auth",
        '{"auths": {"ghcr.io": {"auth": "dXNlcjpnaHBfc2VjcmV0MTIz"}}}',
        "dXNlcjpnaHBfc2VjcmV0MTIz",
    ),
    (
        "kubeconfig-client-key-data",
        "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVkt",
        "LS0tLS1CRUdJTiBSU0Eg",
    ),
    (
        "sendgrid-key",
        "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
        "abcdefghijklmnopqrstuvwxyz01",
    ),
    (
        "telegram-bot-token",
        "curl https://api.telegram.org/bot123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0/getMe",
        "AAHfiqksKZ8WmR2zSjiQ7",
    ),
    (
        "discord-bot-token",
        "Bot MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GhIjKl.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab",
        "AbCdEfGhIjKlMnOp",
    ),
    (
        "anthropic-key-holding-a-40-character-run",
        "sk-ant-api03-ysRwsr16ZqiyP9M2ykleByz16wLMwHw7kyjksA13_A7M9BT8v-JdQRlxJd8BkWZMH2OADKADT-7pE83mGftOOoXbssZsMAA",
        "JdQRlxJd8BkWZMH2OADKADT",
    ),
    ("npmrc-auth-token", "//registry.npmjs.org/:_authToken=npmrc-tok-42", "npmrc-tok-42"),
    (
        "azure-account-key",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=q1w2e3r4t5y6+u7i8o9/p0==;EndpointSuffix=core",
        "q1w2e3r4t5y6",
    ),
    ("curl-user", "curl -s -u alice:curl-pw-3 https://api.example.org/", "curl-pw-3"),
    ("curl-long-user", "curl --user 'bob:long-pw-4' https://api.example.org/", "long-pw-4"),
    ("curl-user-equals", "curl --user=alice:curlpass7 https://api.example.org/", "curlpass7"),
    ("curl-proxy-user", "curl --proxy-user carol:proxy-pw-8 -x 127.0.0.1:9 http://x.org/", "proxy-pw-8"),
    ("netrc-one-line", "machine api.example.org login alice password netrc-pw-5", "netrc-pw-5"),
    ("netrc-lines", "machine api.example.org\n  login alice\n  password netrc-pw-6\n", "netrc-pw-6"),
    ("curl-user-in-flags", "curl -su alice:curl-pw-9 https://api.example.org/", "curl-pw-9"),
    ("curl-user-attached", "curl -ualice:curl-pw-10 https://api.example.org/", "curl-pw-10"),
    ("python-repr", "{'HOME': '/root', 'DB_PASSWORD': 'repr-pw-11'}", "repr-pw-11"),
    ("hash-arrow", "{ 'api_key' => 'arrow-key-12' }", "arrow-key-12"),
    ("next-line-value", "API_TOKEN:\n  next-line-tok-13\n", "next-line-tok-13"),
    ("json-in-a-json-string", '{"body": "{\\"password\\": \\"nested-pw-14\\"}"}', "nested-pw-14"),
    (
        "after-an-escaped-newline",
        '{"log": "ok\\nnpm_abcdefghijklmnopqrstuvwxyz0123456789"}',
        "abcdefghijklmnopqrstuvwxyz",
    ),
    ("url-escaped-slashes", '{"u": "https:\\/\\/app:slash-pw-15@db.example.org\\/x"}', "slash-pw-15"),
    ("assignment-across-a-line-continuation", "export DEPLOY_TOKEN=\\\n  cont-tok-16\nrun", "cont-tok-16"),
    ("mysql-password-attached", "mysql -h db -u root -pmysql-pw-17 app < dump.sql", "mysql-pw-17"),
    ("mysqldump-password-quoted", "mysqldump -uroot -p'dump pw 18' app", "dump pw 18"),
    ("mysql-password-word-quoted", "mysql -u root '-pword pw!19' -e 'select 1'", "word pw!19"),
    ("curl-user-word-quoted", "curl '--user=bob:curl-pw!20' https://h/", "curl-pw!20"),
    ("long-option-then-value", "vault login --token opt-tok-22 && app --api-key 'opt key 23'", "opt-tok-22"),
    ("long-option-then-quoted-value", "app --client-secret 'opt key 23' --verbose", "opt key 23"),
    ("docker-login-p", "docker login -u bob -p docker-pw-24 registry.example.com", "docker-pw-24"),
    ("sshpass-p", "sshpass -psshpass-pw-25 ssh deploy@h", "sshpass-pw-25"),
    ("redis-cli-a", "redis-cli -h cache -p 6379 -a redis-pw-26 ping", "redis-pw-26"),
    ("value-in-escaped-quotes", '{"content": "db:\\n  password: \\"esc pw 21\\"\\n"}', "esc pw 21"),
]


@pytest.mark.parametrize(
    ("raw", "secret"), [case[1:] for case in SECRET_FORMATS], ids=[case[0] for case in SECRET_FORMATS]
)
def test_secrets_are_redacted(raw: str, secret: str) -> None:
    redacted = redact(raw)
    assert secret not in redacted
    assert "[REDACTED" in redacted


def test_the_security_page_counts_the_secret_formats_as_this_file_lists_them() -> None:
    page = (Path(__file__).resolve().parent.parent / "docs" / "failure-modes.md").read_text(encoding="utf-8")
    assert f"has one case per format ({len(SECRET_FORMATS)})" in " ".join(page.split())


@pytest.mark.parametrize(
    "text",
    [
        "HTTP/1.1 200 OK\nContent-Type: text/html\n<html><body>tokens: 5, page=2</body></html>",
        "git push -u origin main",
        "docker run -u 1000:1000 alpine id",
        "==== 3 passed, 0 failed in 0.12s ====",
        "passed=3 failed=0 bypass=on",
        "PWD=/home/alice OLDPWD=/tmp",
        "max_tokens=4096 token_count=17 tokenizer=gpt2",
        "password_file=/run/secrets/db sort_key=name primary_key=id",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "https://medium.com/@alice/post-1 and http://localhost:8080/@me",
        "https://example.org:8443/path@v2",
        "npm install left-pad@1.3.0 && pip install requests==2.31.0",
        "if password == expected: return True",
        "The secretary filed the passport; the compass points north.",
        "mysql -h db -P 3306 -u root -p app && mkdir -p /tmp/out",
        "docker run -p 8080:80 nginx && redis-cli -p 6379 ping && ssh -p 2222 h",
        "app --token-file /run/tok --password-stdin --password --verbose",
        "grep: /etc/passwd: Permission denied\ncat: /run/secrets/db_password: No such file or directory",
    ],
    ids=[
        "http-response",
        "git-push-u",
        "docker-user",
        "test-summary",
        "pass-words",
        "pwd",
        "token-counters",
        "names-starting-with-a-secret-word",
        "git-sha",
        "at-in-url-paths",
        "port-then-at",
        "package-versions",
        "comparison",
        "prose",
        "mysql-password-prompt",
        "ports-after-p",
        "secret-options-without-a-value",
        "a-file-named-for-a-secret-in-an-error",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_a_private_key_block_is_redacted_whole_even_when_cut_before_its_end() -> None:
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x\nmore\n-----END RSA PRIVATE KEY-----"
    assert redact(f"before\n{block}\nafter") == "before\n[REDACTED PRIVATE KEY]\nafter"
    assert "MIIE" not in redact("x -----BEGIN OPENSSH PRIVATE KEY-----\nMIIEcut")


def test_redaction_keeps_what_identifies_the_resource() -> None:
    text = "curl -s 'https://alice:pw@api.example.org/v1/items?page=2&token=t0k'"
    assert redact(text) == "curl -s 'https://[REDACTED]@api.example.org/v1/items?page=2&token=[REDACTED]'"
    assert redact("https://alice:p@ss/w0rd@db.example.org:5432/app?x=1") == (
        "https://[REDACTED]@db.example.org:5432/app?x=1"
    )
    assert redact("password='x' and PASSWORD=\"y\"") == "password='[REDACTED]' and PASSWORD=\"[REDACTED]\""
    assert redact("curl -u alice:pw https://x.org/") == "curl -u alice:[REDACTED] https://x.org/"


def test_each_replacement_is_expanded_as_re_expands_it() -> None:
    """``redaction`` reads each template once (``re``'s ``expand`` parses it at every match): on
    every case's matches of every format, the same text as ``match.expand``."""
    compared = 0
    for pattern, replacement, _ in secretformats.redactions():
        if not isinstance(replacement, str):
            continue
        for _, text, _ in SECRET_FORMATS:
            for match in pattern.finditer(text):
                assert redaction._expanded(match, replacement) == match.expand(replacement)
                compared += 1
    assert compared >= len(SECRET_FORMATS)


def test_a_template_with_another_escape_is_refused() -> None:
    match = re.match("(a)", "a")
    assert match is not None
    with pytest.raises(ValueError, match="only text and"):
        redaction._expanded(match, r"\g<1>")


#: A worker prepared as it is before serving (its decision core and redaction imported), then a
#: secret redacted: whether the formats were compiled at each step.
_COMPILED_WHEN = """
from breaker.core.wording import secretformats
from breaker.worker import RequestHandler
RequestHandler().start()
print(secretformats._COMPILED is not None)
from breaker.core.wording.redaction import redact
print(redact("password=hunter2"))
print(secretformats._COMPILED is not None)
"""


def test_the_formats_compile_at_the_first_redaction_not_at_the_workers_start() -> None:
    """Only what a message may quote is redacted: a worker's start never pays for the patterns
    (~14 ms of its CPU), and the first redaction finds them all."""
    run = subprocess.run([sys.executable, "-c", _COMPILED_WHEN], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["False", "password=[REDACTED]", "True"]
    assert secretformats.redactions() is secretformats.redactions(), "compiled once, then kept"

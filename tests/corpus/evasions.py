"""Hand-made evasions: loops whose calls never repeat verbatim, one after the other.

A detector that compares a call's raw arguments with the call before it (the published loop
detectors do) sees a new call every time in each of these: the agent is stuck on one action
but changes its spelling (a decoy argument, a host spelling, a header, a wrapper, the tool that
fetches, the file the output goes to) or spreads the repeats over other calls. Each session is
one loop from its first call to its last, with the result the same failure every time.

    python tests/corpus/evasions.py     # rewrites evasions/ (sessions and labels.tsv)

tests/test_corpus.py fails when the committed files drift from what this script writes; the
decision-quality measurement (bench/quality) counts how many of them each system catches.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from build import replace_sessions
from casebook import CURL_TIMEOUT, PYTEST_FAIL, Agent

HERE = Path(__file__).resolve().parent
EVASIONS = HERE / "evasions"
LABELS = EVASIONS / "labels.tsv"
#: How many times each evasion repeats its action: enough for every system to have its chance.
ROUNDS = 10

#: (name, how it evades, builder); the builder writes the loop's calls.
EvasionBuilder = Callable[[Agent], None]
BUILDERS: list[tuple[str, str, EvasionBuilder]] = []


def evasion(reason: str) -> Callable[[EvasionBuilder], EvasionBuilder]:
    """Register a builder; the evasion's name is the function's, with dashes."""

    def register(build: EvasionBuilder) -> EvasionBuilder:
        BUILDERS.append((build.__name__.replace("_", "-"), reason, build))
        return build

    return register


MIGRATE_REFUSED = (
    'django.db.utils.OperationalError: connection to server at "localhost" (127.0.0.1), '
    "port 5432 failed: Connection refused"
)
REPORT_URL = "https://reports.example.org/api/v2/quarterly?region=emea&year=2025"


@evasion("the description changes on every attempt of one failing migration")
def decoy_description(a: Agent) -> None:
    wording = ["Apply migrations", "Retry migrate", "Run migrate again", "Migrate once more", "Try migrating"]
    for n in range(ROUNDS):
        a.bash("python manage.py migrate", MIGRATE_REFUSED, 1, description=f"{wording[n % 5]} ({n + 1})")


@evasion("timeoutMs and description churn around one failing test run")
def decoy_timeout(a: Agent) -> None:
    for n in range(ROUNDS):
        a.bash(
            "python -m pytest tests/test_dates.py -q",
            PYTEST_FAIL.removesuffix("\n[exit code: 1]"),
            1,
            description="Run the date tests",
            timeoutMs=60_000 + 30_000 * n,
        )


@evasion("a web_fetch whose title and reason change while the server answers 503")
def decoy_fetch_reason(a: Agent) -> None:
    for n in range(ROUNDS):
        a.fetch(REPORT_URL, 503, "Service Unavailable", title=f"report, try {n + 1}", reason="again")


@evasion("one dataset fetched as www., bare host, trailing dot and :443 in turn")
def host_spellings(a: Agent) -> None:
    hosts = ["www.open.example.gov", "open.example.gov", "open.example.gov.", "open.example.gov:443"]
    for n in range(ROUNDS):
        a.bash(f"curl -sS https://{hosts[n % 4]}/dataset/inventory.csv", CURL_TIMEOUT, 28)


@evasion("curl --max-time raised on every attempt at one unreachable URL")
def max_time_churn(a: Agent) -> None:
    for n in range(ROUNDS):
        url = "https://mirror.example.net/pkg/tool-2.1.tar.gz"
        a.bash(f"curl -sS --max-time {15 * (n + 1)} {url}", CURL_TIMEOUT, 28)


@evasion("a new request-id header on every fetch of one endpoint that answers 404")
def churning_headers(a: Agent) -> None:
    for n in range(ROUNDS):
        a.bash(
            f"curl -sS -H 'X-Request-Id: {4100 + n}' -H 'Accept: application/json' "
            "https://api.example.org/v1/orders/77",
            '{"error":"not found"}',
        )


@evasion("curl, wget and web_fetch take turns on one page that answers 403")
def fetcher_rotation(a: Agent) -> None:
    url = "https://docs.vendor.example/api/limits"
    for n in range(ROUNDS):
        if n % 3 == 0:
            a.bash(f"curl -sS {url}", "<h1>403 Forbidden</h1>")
        elif n % 3 == 1:
            a.bash(f"wget -qO- {url}", "", 8)
        else:
            a.fetch(url, 403, "Forbidden")


@evasion("the same failing download written to a new file name each time")
def sink_renamed(a: Agent) -> None:
    for n in range(ROUNDS):
        a.bash(
            f"curl -fsS https://data.example.org/exports/sales.csv -o /tmp/sales-{n + 1}.csv",
            "curl: (22) The requested URL returned error: 500",
            22,
        )


@evasion("query parameters reordered and a fragment changed around one failing report")
def query_reorder(a: Agent) -> None:
    spellings = [
        REPORT_URL,
        "https://reports.example.org/api/v2/quarterly?year=2025&region=emea",
        "https://reports.example.org/api/v2/quarterly?region=emea&year=2025#table",
        "https://reports.example.org/api/v2/quarterly?year=2025&region=emea#summary",
    ]
    for n in range(ROUNDS):
        a.fetch(spellings[n % 4], 500, "Internal Server Error")


@evasion("a cache-buster query (_=<timestamp>) on every poll of one endpoint that answers 503")
def cache_buster(a: Agent) -> None:
    for n in range(ROUNDS):
        a.fetch(f"https://status.example.com/api/jobs/42?_={1767225600 + 7 * n}", 503, "Service Unavailable")


@evasion("wrappers change around one failing test command (timeout, env, nice, nohup)")
def wrapper_churn(a: Agent) -> None:
    wrappers = ["", "timeout 300 ", "env CI=1 ", "nice -n 5 ", "nohup "]
    for n in range(ROUNDS):
        failure = PYTEST_FAIL.removesuffix("\n[exit code: 1]")
        a.bash(f"{wrappers[n % 5]}python -m pytest tests/test_dates.py -q", failure, 1)


@evasion("a rejected git push, each retry after reading a different file")
def spread_over_reads(a: Agent) -> None:
    rejected = (
        " ! [rejected]        main -> main (non-fast-forward)\n"
        "error: failed to push some refs to 'github.com:acme/app.git'"
    )
    for n in range(ROUNDS):
        a.bash("git push origin main", rejected, 1)
        a.read(f"docs/notes-{n + 1}.md", ["# notes"], 1, 1)


@evasion("one failing install, spread over a rotation of status checks")
def spread_over_checks(a: Agent) -> None:
    checks = ["node --version", "npm --version", "cat package.json", "ls node_modules", "npm config list"]
    conflict = "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree"
    for n in range(ROUNDS):
        a.bash("npm install react-widgets@6", conflict, 1)
        a.bash(checks[n % 5], "ok")
        a.bash(checks[(n + 2) % 5], "ok")


def evasion_files() -> dict[Path, bytes]:
    """Every file of the evasions (evasions/*.jsonl and labels.tsv) and its content."""
    files: dict[Path, bytes] = {}
    rows = ["# session id\tloop|ok\thow it evades\tloop start (call number)"]
    for name, reason, build in BUILDERS:
        agent = Agent(name)
        agent.human("please get this done")
        agent.loop_starts()
        build(agent)
        files[EVASIONS / f"{name}.jsonl"] = agent.trajectory.to_jsonl().encode()
        rows.append(f"{name}\tloop\t{reason}\t1")
    files[LABELS] = ("\n".join(rows) + "\n").encode()
    return files


def write_evasions() -> None:
    """Rewrite evasions/ (its sessions and labels.tsv)."""
    replace_sessions(EVASIONS, evasion_files())


if __name__ == "__main__":
    write_evasions()
    print(f"{len(BUILDERS)} evasions", file=sys.stderr)

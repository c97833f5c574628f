"""The labelled corpus: agent trajectories a breaker must stop (``loop``) or let run (``ok``).

Each case below writes one session in the replay format (``breaker.rtb.trajectories``) with the
tool names, argument shapes and result texts dsh gives the model (``[exit code: N]`` after a
failed shell command, ``Fetched <url> (HTTP <status>)``, ``Error: ...`` for a failed file edit),
so logic that reads results can be judged on it. A loop case marks the call where its loop
starts: the first call of the action (or cycle of actions) the agent then keeps repeating.
``recorded-*`` sessions are real dsh logs from the compat harness (examples/sessions).

    python tests/corpus/build.py      # rewrites sessions/ and labels.tsv from this file

tests/test_corpus.py fails when the committed files drift from what this script writes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import zstandard
from trajectories import Trajectory

HERE = Path(__file__).resolve().parent
SESSIONS = HERE / "sessions"
LABELS = HERE / "labels.tsv"
RECORDED = HERE.parent.parent / "examples" / "sessions"


class Agent:
    """One agent's trajectory, written through dsh's tool shapes; counts calls to place a loop."""

    def __init__(self, session_id: str, parent: str | None = None) -> None:
        self.session_id = session_id
        self.trajectory = Trajectory(session_id, parent=parent)
        self.calls = 0
        self.loop_start: int | None = None

    def loop_starts(self) -> None:
        """The next call is the loop's first."""
        self.loop_start = self.calls + 1

    def human(self, text: str) -> None:
        self.trajectory.human(text)

    def together(self, calls: list[tuple[str, dict[str, object], str]]) -> None:
        """One model turn that sends ``calls`` (tool, arguments, result) at once: their results
        come back after all of them were sent."""
        self.trajectory.step()
        ids = [self.trajectory.call_only(tool, arguments) for tool, arguments, _ in calls]
        self.calls += len(calls)
        for call_id, (_, _, result) in zip(ids, calls, strict=True):
            self.trajectory.result(call_id, result)

    def call(self, tool: str, arguments: dict[str, object], result: str, *, is_error: bool = False) -> None:
        self.calls += 1
        self.trajectory.call(tool, arguments, result, is_error=is_error)

    def bash(self, command: str, output: str = "", code: int = 0, **decoys: object) -> None:
        """A shell command; a non-zero ``code`` ends the text with dsh's exit marker."""
        text = output or "(no output)"
        self.call("bash", {"command": command, **decoys}, text + (f"\n[exit code: {code}]" if code else ""))

    def read(self, path: str, lines: list[str], offset: int = 1, total: int | None = None) -> None:
        numbered = "\n".join(f"{offset + i}: {line}" for i, line in enumerate(lines))
        end = offset + len(lines) - 1
        total = total if total is not None else end
        footer = (
            f"(Showing lines {offset}-{end} of {total}. Use offset={end + 1} to continue.)"
            if end < total
            else f"(End of file - total {total} lines)"
        )
        arguments: dict[str, object] = {"file_path": path}
        if offset != 1:
            arguments["offset"] = offset
        self.call(
            "read",
            arguments,
            f"<path>{path}</path>\n<type>file</type>\n<content>\n{numbered}\n\n{footer}\n</content>",
        )

    def write(self, path: str, content: str, *, created: bool = False) -> None:
        done = "Created" if created else "Updated"
        self.call(
            "write",
            {"file_path": path, "content": content},
            f"<path>{path}</path>\n<type>file</type>\n<content>\n{done} file\n</content>",
        )

    def edit(self, path: str, old: str, new: str, *, found: bool = True) -> None:
        arguments: dict[str, object] = {"file_path": path, "old_string": old, "new_string": new}
        if found:
            self.call("edit", arguments, f"The file {path} has been updated successfully.")
        else:
            self.call("edit", arguments, f"Error: old_string not found in {path}", is_error=True)

    def fetch(self, url: str, status: int = 200, body: str = "", **decoys: object) -> None:
        self.call("web_fetch", {"url": url, **decoys}, f"Fetched {url} (HTTP {status})\n\n{body}")

    def fetch_error(self, url: str, reason: str) -> None:
        self.call("web_fetch", {"url": url}, f"Error: fetch failed: {reason}", is_error=True)

    def search(self, query: str, titles: list[str]) -> None:
        hits = "\n".join(f"{i}. {title}\n   https://example.org/{i}" for i, title in enumerate(titles, 1))
        self.call("web_search", {"query": query}, hits or "No results found")

    def grep(self, pattern: str, path: str, matches: list[str]) -> None:
        self.call("grep", {"pattern": pattern, "path": path}, "\n".join(matches) or "No matches found")


@dataclass
class Case:
    name: str
    label: str
    reason: str
    agents: list[Agent] = field(default_factory=list)

    def agent(self, parent: Agent | None = None) -> Agent:
        suffix = f".helper-{len(self.agents)}" if parent is not None else ""
        agent = Agent(self.name + suffix, parent.session_id if parent is not None else None)
        self.agents.append(agent)
        return agent

    @property
    def loop_start(self) -> int | None:
        return next((agent.loop_start for agent in self.agents if agent.loop_start is not None), None)


CASES: list[Case] = []


def case(label: str, reason: str) -> Callable[[Callable[[Case], None]], Callable[[Case], None]]:
    """Register a builder; the case's name is the function's, with dashes."""

    def register(build: Callable[[Case], None]) -> Callable[[Case], None]:
        built = Case(build.__name__.replace("_", "-"), label, reason)
        build(built)
        CASES.append(built)
        return build

    return register


def cycles(count: int) -> Iterator[int]:
    return iter(range(1, count + 1))


# Outputs reused by several cases.
PYTEST_FAIL = (
    "============ FAILURES ============\n___ test_parse_date ___\n"
    "    assert parse_date('2024-02-30') is None\nE   ValueError: day is out of range for month\n"
    "tests/test_dates.py:14: ValueError\n=== 1 failed, 11 passed in 0.42s ===\n[exit code: 1]"
)
PYTEST_PASS = "=== 12 passed in 0.39s ==="
CURL_REFUSED = "curl: (7) Failed to connect to {host} port {port} after 0 ms: Couldn't connect to server"
CURL_TIMEOUT = "curl: (28) Connection timed out after 30001 milliseconds"
CURL_DNS = "curl: (6) Could not resolve host: {host}"


# --- loops: the seed's A, B, C --------------------------------------------------------------


@case("loop", "the same read of the same region, verbatim (README loop A)")
def loop_a_read(c: Case) -> None:
    a = c.agent()
    a.human("why does the importer skip rows?")
    a.grep("def import_rows", "src", ["src/importer.py:41:def import_rows(reader, table):"])
    a.loop_starts()
    for _ in cycles(14):
        a.read(
            "src/importer.py",
            ["def import_rows(reader, table):", "    for row in reader:", "        if not row:"],
            41,
            180,
        )


@case("loop", "the same write of the same content, verbatim (loop A on a file tool)")
def loop_a_write(c: Case) -> None:
    a = c.agent()
    a.human("add a .env.example")
    a.loop_starts()
    for _ in cycles(8):
        a.write(".env.example", "DATABASE_URL=postgres://localhost/app\nSECRET_KEY=change-me\n")


@case("loop", "description churn around an unchanged failing command (README loop B)")
def loop_b_description(c: Case) -> None:
    a = c.agent()
    a.human("run the migrations")
    a.loop_starts()
    for n in cycles(9):
        a.bash(
            "alembic upgrade head",
            "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server at "
            '"localhost" (127.0.0.1), port 5432 failed: Connection refused',
            1,
            description=f"Run migrations, attempt {n}",
        )


@case("loop", "host-spelling and --max-time ping-pong to one dataset (README loop C)")
def loop_c_hosts(c: Case) -> None:
    a = c.agent()
    a.human("download the open data inventory")
    a.loop_starts()
    for n in cycles(10):
        host, timeout = ("open-data.canada.ca", 60) if n % 2 else ("open.canada.ca", 30)
        a.bash(
            f"curl -sS --max-time {timeout} https://{host}/data/en/dataset -o /tmp/inventory.html",
            CURL_TIMEOUT,
            28,
        )


# --- loops: decoy churn -----------------------------------------------------------------------


@case("loop", "timeoutMs churns while the same build fails the same way")
def decoy_timeout_churn(c: Case) -> None:
    a = c.agent()
    a.human("build the frontend")
    a.bash(
        "npm run build", "> vite build\nerror during build:\nRollupError: Could not resolve './App.vue'", 1
    )
    a.loop_starts()
    for n in cycles(8):
        a.bash(
            "npm run build",
            "> vite build\nerror during build:\nRollupError: Could not resolve './App.vue'",
            1,
            timeoutMs=60000 * (n + 1),
        )


@case("loop", "justification churn on a pip install that cannot succeed")
def decoy_justification(c: Case) -> None:
    a = c.agent()
    a.human("set up the training environment")
    a.loop_starts()
    for n in cycles(8):
        a.bash(
            "pip install torch==2.9.7",
            "ERROR: Could not find a version that satisfies the requirement torch==2.9.7\n"
            "ERROR: No matching distribution found for torch==2.9.7",
            1,
            justification=["needed for training", "retrying install", "the index may have updated"][n % 3],
        )


@case("loop", "a web_fetch with a churning title and reason, the server answers 503 each time")
def decoy_fetch_title(c: Case) -> None:
    a = c.agent()
    a.human("summarise the status page")
    a.loop_starts()
    for n in cycles(8):
        a.fetch(
            "https://status.example.net/api/v2/summary.json",
            503,
            "Service Unavailable",
            title=f"status, try {n}",
            reason="retry",
        )


@case("loop", "volatile curl flags churn (-s/-sS, --retry, --user-agent), same URL, same 404")
def decoy_volatile_flags(c: Case) -> None:
    a = c.agent()
    a.human("get the release notes")
    flags = [
        "-fsS",
        "-fs --retry 3",
        "-f -sS --user-agent Mozilla/5.0",
        "-fsSL --max-time 20",
        "-f --retry 5 -s",
    ]
    a.loop_starts()
    for n in cycles(9):
        a.bash(
            f"curl {flags[n % len(flags)]} https://releases.example.com/v4.2/NOTES.md",
            "curl: (22) The requested URL returned error: 404",
            22,
        )


# --- loops: ping-pong between tools and between hosts ------------------------------------------


@case("loop", "web_fetch and curl take turns on one failing API endpoint")
def pingpong_fetch_curl(c: Case) -> None:
    a = c.agent()
    a.human("check whether the export job finished")
    a.loop_starts()
    for n in cycles(10):
        url = "https://api.example.org/v1/exports/8812"
        if n % 2:
            a.fetch(url, 500, '{"error":"internal"}')
        else:
            a.bash(f"curl -s {url}", '{"error":"internal"}')


@case("loop", "web_fetch and wget take turns on a page that answers 403")
def pingpong_fetch_wget(c: Case) -> None:
    a = c.agent()
    a.human("read the vendor's API docs")
    a.loop_starts()
    for n in cycles(10):
        url = "https://docs.vendor.example/api/reference"
        if n % 2:
            a.fetch(url, 403, "Forbidden")
        else:
            a.bash(f"wget -qO- {url}", "", 8)


@case("loop", "www. and bare host take turns on one CSV that keeps failing")
def pingpong_www(c: Case) -> None:
    a = c.agent()
    a.human("load the population CSV")
    a.loop_starts()
    for n in cycles(10):
        host = "www.stats.example.gov" if n % 2 else "stats.example.gov"
        a.bash(f"curl -fsS https://{host}/data/population.csv -o data/population.csv", CURL_TIMEOUT, 28)


@case("loop", "trailing-dot and :443 spellings of one docs URL, alternating")
def pingpong_host_spelling(c: Case) -> None:
    a = c.agent()
    a.human("what changed in the v3 guide?")
    a.loop_starts()
    for n in cycles(10):
        url = "https://docs.example.org./guide/v3" if n % 2 else "https://docs.example.org:443/guide/v3/"
        a.fetch(url, 502, "Bad Gateway")


# --- loops: failing commands retried unchanged ---------------------------------------------


@case("loop", "the same failing test file rerun with nothing changed in between")
def retry_pytest(c: Case) -> None:
    a = c.agent()
    a.human("fix the date test")
    a.read(
        "tests/test_dates.py",
        ["def test_parse_date():", "    assert parse_date('2024-02-30') is None"],
        12,
        40,
    )
    a.loop_starts()
    for _ in cycles(8):
        a.bash("python -m pytest tests/test_dates.py -x", PYTEST_FAIL.removesuffix("\n[exit code: 1]"), 1)


@case("loop", "npm install keeps failing on the same peer-dependency conflict")
def retry_npm_install(c: Case) -> None:
    a = c.agent()
    a.human("install dependencies")
    a.loop_starts()
    for _ in cycles(16):
        a.bash(
            "npm install",
            "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree\n"
            'npm ERR! peer react@"^17" from react-table@7.8.0',
            1,
        )


@case("loop", "a script that crashes on a missing module is rerun as is")
def retry_traceback(c: Case) -> None:
    a = c.agent()
    a.human("run the report script")
    a.bash("ls scripts", "migrate.py\nreport.py")
    a.loop_starts()
    for _ in cycles(8):
        a.bash(
            "python scripts/report.py --month 2024-05",
            'Traceback (most recent call last):\n  File "scripts/report.py", line 3, in <module>\n'
            "    import pandas as pd\nModuleNotFoundError: No module named 'pandas'",
            1,
        )


@case("loop", "git push rejected (non-fast-forward) and pushed again, unchanged")
def retry_git_push(c: Case) -> None:
    a = c.agent()
    a.human("push the fix")
    a.bash(
        "git commit -am 'Fix date parsing'",
        "[main 3f2c1a9] Fix date parsing\n 1 file changed, 2 insertions(+)",
    )
    a.loop_starts()
    for _ in cycles(8):
        a.bash(
            "git push origin main",
            " ! [rejected]        main -> main (fetch first)\nerror: failed to push some refs to "
            "'github.com:acme/app.git'",
            1,
        )


@case("loop", "docker compose up fails on a busy port and is retried unchanged")
def retry_docker(c: Case) -> None:
    a = c.agent()
    a.human("start the stack")
    a.loop_starts()
    for _ in cycles(8):
        a.bash(
            "docker compose up -d",
            "Error response from daemon: driver failed programming external connectivity: "
            "Bind for 0.0.0.0:5432 failed: port is already allocated",
            1,
        )


@case("loop", "cargo build fails on the same borrow error with no edit in between")
def retry_cargo(c: Case) -> None:
    a = c.agent()
    a.human("build the CLI")
    a.loop_starts()
    for _ in cycles(8):
        a.bash(
            "cargo build --release",
            "error[E0502]: cannot borrow `cache` as mutable because it is also borrowed as immutable\n"
            "  --> src/main.rs:48:9\nerror: could not compile `cli` due to previous error",
            101,
        )


@case("loop", "an edit whose old_string is not in the file, retried verbatim")
def retry_failed_edit(c: Case) -> None:
    a = c.agent()
    a.human("rename the setting")
    a.read("config/settings.py", ["TIMEOUT_SECONDS = 30", "RETRIES = 3"], 1, 2)
    a.loop_starts()
    for _ in cycles(8):
        a.edit("config/settings.py", "TIMEOUT = 30", "TIMEOUT_SECONDS = 60", found=False)


# --- loops: flip-flop edits with a test between ---------------------------------------------


@case("loop", "edit A->B, test, edit B->A, test, and round again")
def flipflop_edit(c: Case) -> None:
    a = c.agent()
    a.human("make the rounding test pass")
    a.bash("python -m pytest tests/test_money.py", "E   assert 10.0 == 10.01\n=== 1 failed ===", 1)
    a.loop_starts()
    for n in cycles(12):
        old, new = (
            ("round(x, 2)", "math.floor(x * 100) / 100")
            if n % 2
            else ("math.floor(x * 100) / 100", "round(x, 2)")
        )
        a.edit("app/money.py", old, new)
        a.bash("python -m pytest tests/test_money.py", "E   assert 10.0 == 10.01\n=== 1 failed ===", 1)


@case("loop", "write version X, test, write version Y, test, write X again, ...")
def flipflop_write(c: Case) -> None:
    a = c.agent()
    a.human("fix the tsconfig so the build passes")
    a.loop_starts()
    for n in cycles(12):
        target = '"target": "ES2020"' if n % 2 else '"target": "ES2017"'
        a.write("tsconfig.json", '{\n  "compilerOptions": {' + target + ', "strict": true}\n}\n')
        a.bash(
            "npx tsc --noEmit",
            "src/index.ts(3,7): error TS2550: Property 'at' does not exist on type 'string[]'.",
            2,
        )


@case("loop", "a config value toggled between two numbers around the same failing make test")
def flipflop_config(c: Case) -> None:
    a = c.agent()
    a.human("the integration test times out")
    a.read("config/test.yml", ["timeout: 30", "workers: 4"], 1, 2)
    a.loop_starts()
    for n in cycles(10):
        old, new = ("timeout: 30", "timeout: 60") if n % 2 else ("timeout: 60", "timeout: 30")
        a.edit("config/test.yml", old, new)
        a.bash(
            "make test-integration",
            "FAIL: test_sync_orders (timeout after 30s)\nmake: *** [Makefile:21: test-integration] Error 1",
            2,
        )
        a.read("logs/integration.log", ["ERROR sync_orders: upstream 504"], 1, 1)


# --- loops: alternation between two failing targets -----------------------------------------


@case("loop", "two mirrors of one tarball, each unreachable, tried in turn")
def alternate_mirrors(c: Case) -> None:
    a = c.agent()
    a.human("fetch the SDK tarball")
    a.loop_starts()
    for n in cycles(12):
        host = "mirror-eu.example.net" if n % 2 else "mirror-us.example.net"
        a.bash(f"curl -fsSLO https://{host}/sdk/sdk-4.1.tar.gz", CURL_DNS.format(host=host), 6)


@case("loop", "npm and yarn take turns installing one package that does not exist")
def alternate_installers(c: Case) -> None:
    a = c.agent()
    a.human("add the charts library")
    a.loop_starts()
    for n in cycles(12):
        if n % 2:
            a.bash(
                "npm install @acme/chartz",
                "npm ERR! 404 Not Found - GET https://registry.npmjs.org/@acme%2fchartz",
                1,
            )
        else:
            a.bash(
                "yarn add @acme/chartz",
                "error An unexpected error occurred: "
                '"https://registry.yarnpkg.com/@acme%2fchartz: Not found".',
                1,
            )


@case("loop", "two API versions of one docs page, both 404, fetched in turn")
def alternate_doc_versions(c: Case) -> None:
    a = c.agent()
    a.human("how do I paginate the v2 API?")
    a.loop_starts()
    for n in cycles(12):
        version = "v2" if n % 2 else "v2.1"
        a.fetch(f"https://developer.example.com/{version}/pagination", 404, "Not Found")


@case("loop", "two local ports polled in turn for a server that never started")
def alternate_ports(c: Case) -> None:
    a = c.agent()
    a.human("is the API up?")
    a.loop_starts()
    for n in cycles(12):
        port = 3000 if n % 2 else 8080
        a.bash(
            f"curl -s http://localhost:{port}/api/health", CURL_REFUSED.format(host="localhost", port=port), 7
        )


# --- loops: spread thinly over many distinct calls ------------------------------------------


@case("loop", "a cycle of five different calls (grep, read, search, read, ls) run again and again")
def spread_cycle(c: Case) -> None:
    a = c.agent()
    a.human("find where the webhook secret is configured")
    a.loop_starts()
    for _ in cycles(5):
        a.grep("WEBHOOK_SECRET", "src", [])
        a.read("src/settings.py", ["SECRET_KEY = env('SECRET_KEY')"], 1, 1)
        a.search("django webhook secret setting name", ["Webhooks - Django docs", "Securing webhooks"])
        a.read("docker-compose.yml", ["services:", "  web:", "    env_file: .env"], 1, 3)
        a.bash("ls -a", ".\n..\n.env.example\ndocker-compose.yml\nsrc")


@case("loop", "the same failing deploy, each attempt after a different file was read")
def spread_failing_deploy(c: Case) -> None:
    a = c.agent()
    a.human("deploy to staging")
    files = [
        f"deploy/{part}.{kind}"
        for part in ("staging", "k8s", "values", "ingress")
        for kind in ("yml", "env", "md", "sh")
    ]
    a.loop_starts()
    for n in cycles(8):
        a.bash(
            "make deploy ENV=staging",
            "error: You must be logged in to the server (Unauthorized)\nmake: *** [deploy] Error 1",
            2,
        )
        a.read(files[2 * n - 2], ["# ..."], 1, 1)
        a.read(files[2 * n - 1], ["# ..."], 1, 1)


# --- loops: read-only actions with nothing changing --------------------------------------------


@case("loop", "grep and read of the same spot, in turn, with nothing changed")
def reread_grep_pair(c: Case) -> None:
    a = c.agent()
    a.human("why is the cache never hit?")
    a.loop_starts()
    for _ in cycles(6):
        a.grep("cache_key", "app/cache.py", ["app/cache.py:22:    cache_key = f'{user}:{path}'"])
        a.read("app/cache.py", ["def lookup(user, path):", "    cache_key = f'{user}:{path}'"], 21, 90)


@case("loop", "the same web search, over and over")
def search_loop(c: Case) -> None:
    a = c.agent()
    a.human("find the rate limit of the geocoding API")
    a.loop_starts()
    for _ in cycles(15):
        a.search("acme geocoding api rate limit per minute", ["Acme Maps pricing", "Geocoding API overview"])


@case("loop", "ls of a build folder polled for an artefact that never appears")
def poll_missing_artifact(c: Case) -> None:
    a = c.agent()
    a.human("package the app")
    a.bash("npm run package", "> electron-builder\n  • building        target=AppImage", 0)
    a.loop_starts()
    for n in cycles(8):
        a.bash(
            "sleep 5 && ls dist/" if n % 2 else "ls dist/",
            "ls: cannot access 'dist/': No such file or directory",
            2,
        )


@case("loop", "git status and git diff in turn, nothing is ever changed or committed")
def git_status_loop(c: Case) -> None:
    a = c.agent()
    a.human("commit the work")
    a.loop_starts()
    for _ in cycles(6):
        a.bash("git status", "On branch main\nChanges not staged for commit:\n\tmodified:   app/models.py")
        a.bash("git diff --stat", " app/models.py | 4 ++--\n 1 file changed, 2 insertions(+), 2 deletions(-)")


@case("loop", "kubectl get pods and logs in turn while the pod stays in CrashLoopBackOff")
def kubectl_watch_loop(c: Case) -> None:
    a = c.agent()
    a.human("why is the worker pod crashing?")
    a.loop_starts()
    for _ in cycles(6):
        a.bash(
            "kubectl get pods -n jobs",
            "NAME               READY   STATUS             RESTARTS\n"
            "worker-7d9f8-x2k   0/1     CrashLoopBackOff   14",
        )
        a.bash("kubectl logs worker-7d9f8-x2k -n jobs --tail=20", "Error: REDIS_URL is not set")


# --- loops: changes that are no change ---------------------------------------------------------


@case("loop", "the same file content written back before each identical failing test run")
def rewrite_same_content(c: Case) -> None:
    a = c.agent()
    a.human("make the lint job pass")
    a.loop_starts()
    for _ in cycles(8):
        a.write(".flake8", "[flake8]\nmax-line-length = 120\nexclude = .venv\n")
        a.bash("flake8 app", "app/views.py:88:121: E501 line too long (131 > 120 characters)", 1)


@case("loop", "a download that succeeds into the same file, then a grep that finds nothing, again and again")
def redownload_same_sink(c: Case) -> None:
    a = c.agent()
    a.human("find the API key field in the vendor's sample config")
    a.loop_starts()
    for _ in cycles(7):
        a.bash("curl -sSL https://raw.example.com/vendor/sdk/main/sample.yml -o /tmp/sample.yml", "")
        a.bash("grep -n api_key /tmp/sample.yml", "", 1)


@case("loop", "pip install that is already satisfied, then the same crash, again and again")
def reinstall_loop(c: Case) -> None:
    a = c.agent()
    a.human("run the app")
    a.loop_starts()
    for _ in cycles(7):
        a.bash(
            "pip install requests",
            "Requirement already satisfied: requests in ./.venv/lib/python3.11/site-packages (2.32.3)",
        )
        a.bash(
            "python app.py",
            'Traceback (most recent call last):\n  File "app.py", line 2, in <module>\n'
            "    import yaml\nModuleNotFoundError: No module named 'yaml'",
            1,
        )


@case("loop", "generate the same output into the same file and print it, over and over")
def regenerate_sink(c: Case) -> None:
    a = c.agent()
    a.human("produce the schema dump")
    a.loop_starts()
    for _ in cycles(7):
        a.bash("python manage.py dumpschema > schema.json", "")
        a.bash("head -c 200 schema.json", '{"tables": []}')


# --- loops: subagents, human turns, local polling ----------------------------------------------


@case("loop", "a subagent loops on one failing fetch while its parent waits")
def subagent_loop(c: Case) -> None:
    parent = c.agent()
    parent.human("research the API's auth scheme")
    parent.call("subagent", {"task": "read the auth docs"}, "(running)")
    child = c.agent(parent)
    child.loop_starts()
    for _ in cycles(9):
        child.fetch("https://api.example.io/docs/auth", 500, "Internal Server Error")


@case("loop", "after the human says 'try again', the agent retries the same failing call forever")
def human_then_loop(c: Case) -> None:
    a = c.agent()
    a.human("upload the build")
    for _ in cycles(3):
        a.bash(
            "aws s3 cp dist/app.zip s3://acme-builds/", "upload failed: An error occurred (AccessDenied)", 1
        )
    a.human("try again")
    a.loop_starts()
    for _ in cycles(8):
        a.bash(
            "aws s3 cp dist/app.zip s3://acme-builds/", "upload failed: An error occurred (AccessDenied)", 1
        )


@case("loop", "work, a human turn with new instructions, then a read loop")
def work_human_loop(c: Case) -> None:
    a = c.agent()
    a.human("list the endpoints")
    a.grep("@app.route", "app", ["app/api.py:10:@app.route('/users')", "app/api.py:30:@app.route('/orders')"])
    a.read("app/api.py", ["@app.route('/users')"], 10, 60)
    a.human("now document /orders")
    a.loop_starts()
    for _ in cycles(8):
        a.read("app/api.py", ["@app.route('/orders')", "def orders():"], 30, 60)


@case("loop", "a dev server that never comes up, polled with no edit in between")
def poll_dead_server(c: Case) -> None:
    a = c.agent()
    a.human("start the dev server and check it")
    a.bash("npm run dev > /tmp/dev.log 2>&1 &", "")
    a.loop_starts()
    for n in cycles(9):
        command = "curl -s http://localhost:5173/" if n % 3 else "sleep 2 && curl -s http://localhost:5173/"
        a.bash(command, CURL_REFUSED.format(host="localhost", port=5173), 7)


@case("loop", "the same endpoint checked through three different pipelines, no change between")
def local_pipelines(c: Case) -> None:
    a = c.agent()
    a.human("is the API healthy?")
    pipes = ["", " | jq .", " | head -c 200"]
    a.loop_starts()
    for n in cycles(9):
        a.bash(f"curl -s http://127.0.0.1:8000/health{pipes[n % 3]}", '{"status":"degraded","db":"down"}')


@case("loop", "a test-only file is rewritten with new text each time around one failing build")
def loop_through_notes(c: Case) -> None:
    a = c.agent()
    a.human("get the build green")
    a.loop_starts()
    for n in cycles(8):
        a.bash(
            "make",
            "cc -c main.c\nmain.c:12: undefined reference to `sqlite3_open'\nmake: *** [app] Error 1",
            2,
        )
        a.write("NOTES.md", f"Attempt {n}: link error on sqlite3_open; retrying make.\n")


# --- loops: one resource respelled each time (issue 38) ----------------------------------------


def respelled_path(n: int) -> str:
    """The n-th spelling of ``src/app.py``: one more ``./``, or one more ``/`` in the middle."""
    return "./" * (n // 2 + 1) + "src/app.py" if n % 2 else "src" + "/" * (n // 2 + 1) + "app.py"


def respelled_url(n: int) -> str:
    """The n-th spelling of ``https://api.example.com/v1/jobs/42``: ``/.``, ``/./``, ``x1/../``, an
    escaped letter of the path."""
    spellings = ["/v1/./jobs/42", "/v1/jobs/./42", "/v1/x1/../jobs/42", "/v1/%6Aobs/42", "/v1/jobs/42/."]
    return "https://api.example.com" + "/." * (n // 5) + spellings[n % 5]


@case("loop", "one missing file read again and again, one more ./ or / in its path each time")
def respelled_read_missing(c: Case) -> None:
    a = c.agent()
    a.human("why does the app crash on start?")
    a.loop_starts()
    for n in cycles(20):
        path = respelled_path(n)
        a.call("read", {"file_path": path}, f"Error: File not found: {path}", is_error=True)


@case("loop", "one file read again and again, the same lines each time, its path respelled")
def respelled_read_same(c: Case) -> None:
    a = c.agent()
    a.human("what does main() do?")
    a.loop_starts()
    for n in cycles(20):
        a.read(respelled_path(n), ["def main():", "    app = create_app()", "    app.run()"], 10, 40)


@case("loop", "cat of one missing file, its path respelled each time, the same error")
def respelled_cat_missing(c: Case) -> None:
    a = c.agent()
    a.human("show me the app's entry point")
    a.loop_starts()
    for n in cycles(20):
        path = respelled_path(n)
        a.bash(f"cat {path}", f"cat: {path}: No such file or directory", 1)


@case("loop", "web_fetch of one API URL respelled (/./, x1/../, %6A), answering 404 each time")
def respelled_fetch_missing(c: Case) -> None:
    a = c.agent()
    a.human("did job 42 finish?")
    a.loop_starts()
    for n in cycles(20):
        a.fetch_error(respelled_url(n), "HTTP 404 Not Found")


@case("loop", "curl of one API URL respelled (/./, x1/../, %6A), the same answer each time")
def respelled_curl_same(c: Case) -> None:
    a = c.agent()
    a.human("what is the state of job 42?")
    a.loop_starts()
    for n in cycles(20):
        a.bash(f"curl -s {respelled_url(n)}", '{"id": 42, "state": "queued", "position": 3}')


# --- ok: edit/test and build/fix cycles ------------------------------------------------------


def edit_test_cycle(c: Case, test: str, path: str, fixes: int, failing: str, passing: str) -> None:
    a = c.agent()
    a.human("make the tests pass")
    a.bash(test, failing, 1)
    for n in cycles(fixes):
        a.edit(path, f"# step {n}", f"# step {n} done")
        last = n == fixes
        a.bash(
            test,
            passing if last else failing.replace("failed", f"failed ({fixes - n} left)"),
            0 if last else 1,
        )


@case("ok", "pytest after each of six different edits")
def edit_test_pytest(c: Case) -> None:
    edit_test_cycle(
        c, "python -m pytest -q", "app/dates.py", 6, "=== 6 failed, 20 passed ===", "=== 26 passed ==="
    )


@case("ok", "npm test after each of seven different edits")
def edit_test_npm(c: Case) -> None:
    edit_test_cycle(c, "npm test", "src/cart.ts", 7, "Tests: 3 failed, 41 passed", "Tests: 44 passed")


@case("ok", "go test ./... after each of five edits")
def edit_test_go(c: Case) -> None:
    edit_test_cycle(
        c,
        "go test ./...",
        "pkg/queue/queue.go",
        5,
        "--- FAIL: TestQueue (0.00s)\nFAIL\tacme/pkg/queue",
        "ok  \tacme/pkg/queue\t0.012s",
    )


@case("ok", "cargo test after each of eight edits, spread over two files")
def edit_test_cargo(c: Case) -> None:
    a = c.agent()
    a.human("fix the parser tests")
    for n in cycles(8):
        a.edit("src/parser.rs" if n % 2 else "src/lexer.rs", f'todo!("case {n}")', f"Token::Case{n}")
        done = n == 8
        a.bash(
            "cargo test",
            "test result: ok. 31 passed" if done else f"test result: FAILED. {31 - n} passed; {8 - n} failed",
            0 if done else 101,
        )


@case("ok", "ruff check after each fix, the read-only check repeated six times")
def lint_fix_cycle(c: Case) -> None:
    a = c.agent()
    a.human("clean up the lint errors")
    a.bash("ruff check app", "Found 6 errors.", 1)
    for n in cycles(6):
        a.edit("app/views.py", f"import os{n}", "")
        a.bash(
            "ruff check app", "All checks passed!" if n == 6 else f"Found {6 - n} errors.", 0 if n == 6 else 1
        )


def build_fix_cycle(c: Case, build: str, path: str, errors: list[str]) -> None:
    a = c.agent()
    a.human("fix the build")
    for n, error in enumerate(errors):
        a.bash(build, error, 2)
        a.read(path, [f"line with error {n}"], 10 * n + 1, 200)
        a.edit(path, f"error {n}", f"fixed {n}")
    a.bash(build, "build finished", 0)


@case("ok", "make, read the error, fix it, make again: six different errors")
def build_fix_make(c: Case) -> None:
    build_fix_cycle(
        c,
        "make -j4",
        "src/net.c",
        [f"src/net.c:{10 * n}: error: unknown type name 'sock{n}_t'" for n in range(6)],
    )


@case("ok", "tsc, fix, tsc again: six different type errors")
def build_fix_tsc(c: Case) -> None:
    build_fix_cycle(
        c,
        "npx tsc --noEmit",
        "src/api.ts",
        [f"src/api.ts({10 * n},5): error TS2339: Property 'f{n}' does not exist" for n in range(6)],
    )


@case("ok", "cargo build, fix, again: five different borrow errors")
def build_fix_cargo(c: Case) -> None:
    build_fix_cycle(
        c, "cargo build", "src/main.rs", [f"error[E0502]: cannot borrow `v{n}` as mutable" for n in range(5)]
    )


@case("ok", "mkdocs build after each edit of the docs")
def docs_build_cycle(c: Case) -> None:
    a = c.agent()
    a.human("fix the broken docs links")
    for n in cycles(6):
        a.bash(
            "mkdocs build --strict",
            f"WARNING - Doc file 'index.md' contains a link to 'page{n}.md', not found"
            if n < 6
            else "INFO - Documentation built in 0.81 seconds",
            1 if n < 6 else 0,
        )
        a.edit("docs/index.md", f"(page{n}.md)", f"(guide/page{n}.md)")


@case("ok", "a benchmark rerun after each optimisation")
def bench_cycle(c: Case) -> None:
    a = c.agent()
    a.human("make the resize faster")
    a.bash("python bench.py", "resize: 812 ms")
    for n in cycles(6):
        a.edit("imgproc/resize.py", f"# opt {n}", f"# opt {n} applied")
        a.bash("python bench.py", f"resize: {812 - 90 * n} ms")


# --- ok: reading after writing -----------------------------------------------------------------


@case("ok", "write a file, read it back, write a new version, read it back, ...")
def read_after_write(c: Case) -> None:
    a = c.agent()
    a.human("draft the changelog entry")
    for n in cycles(6):
        a.write("CHANGELOG.md", f"## 2.{n}.0\n- draft {n}\n", created=n == 1)
        a.read("CHANGELOG.md", [f"## 2.{n}.0", f"- draft {n}"])


@case("ok", "re-read the same region after each edit to check it")
def read_after_edit(c: Case) -> None:
    a = c.agent()
    a.human("tidy the handler")
    for n in cycles(6):
        a.edit("app/handler.py", f"x{n} = 1", f"x{n} = 2")
        a.read("app/handler.py", [f"x{n} = 2"], 20, 120)


@case("ok", "cat the config after each sed -i that changes it")
def cat_after_sed(c: Case) -> None:
    a = c.agent()
    a.human("bump the ports in the config")
    for n in cycles(6):
        a.bash(f"sed -i 's/port: 80{n - 1}0/port: 80{n}0/' deploy/config.yml", "")
        a.bash("cat deploy/config.yml", f"port: 80{n}0")


@case("ok", "ls the output folder after each new file is created")
def ls_after_create(c: Case) -> None:
    a = c.agent()
    a.human("scaffold the components")
    for n in cycles(6):
        a.write(f"src/components/Widget{n}.tsx", f"export const Widget{n} = () => null;\n", created=True)
        a.bash("ls src/components", "\n".join(f"Widget{i}.tsx" for i in range(1, n + 1)))


# --- ok: pagination and crawls -------------------------------------------------------------------


@case("ok", "ten pages of one listing with curl")
def pagination_curl(c: Case) -> None:
    a = c.agent()
    a.human("collect every open issue")
    for n in cycles(10):
        a.bash(f"curl -s 'https://api.example.com/issues?state=open&page={n}'", f'[{{"id": {n * 100}}}]')


@case("ok", "web_fetch of a listing with a growing offset")
def pagination_offset(c: Case) -> None:
    a = c.agent()
    a.human("list every dataset")
    for n in range(9):
        a.fetch(
            f"https://data.example.org/api/datasets?limit=50&offset={50 * n}",
            200,
            f"datasets {50 * n}-{50 * n + 49}",
        )


@case("ok", "gh api with a cursor per page")
def pagination_cursor(c: Case) -> None:
    a = c.agent()
    a.human("count the stargazers")
    for n in cycles(8):
        a.bash(
            f"gh api 'repos/acme/app/stargazers?per_page=100&after=Y3Vyc29y{n}'",
            f"[... 100 users, cursor Y3Vyc29y{n + 1}]",
        )


@case("ok", "a crawl of fifteen different pages of one site")
def crawl_fetch(c: Case) -> None:
    a = c.agent()
    a.human("summarise the handbook")
    for n in cycles(15):
        a.fetch(f"https://handbook.example.com/chapter-{n}", 200, f"Chapter {n} ...")


@case("ok", "twelve sitemap files downloaded one by one")
def crawl_sitemaps(c: Case) -> None:
    a = c.agent()
    a.human("find every product URL")
    for n in cycles(12):
        a.bash(f"curl -sS https://shop.example.com/sitemap-{n}.xml -o /tmp/sitemaps/{n}.xml", "")


@case("ok", "status checks of eight different endpoints")
def status_checks(c: Case) -> None:
    a = c.agent()
    a.human("which services are up?")
    for name in ["auth", "billing", "search", "media", "mail", "geo", "feed", "admin"]:
        a.bash(f"curl -s -o /dev/null -w '%{{http_code}}' https://{name}.example.com/healthz", "200")


@case("ok", "many different web searches while researching")
def research_searches(c: Case) -> None:
    a = c.agent()
    a.human("compare the three queue libraries")
    for query in [
        "celery vs rq",
        "rq retry policy",
        "dramatiq rate limits",
        "celery canvas chord",
        "rq scheduler cron",
        "dramatiq middleware",
        "celery redis visibility timeout",
        "rq job dependencies",
    ]:
        a.search(query, [f"{query} - docs"])


@case("ok", "one long file read region by region")
def read_regions(c: Case) -> None:
    a = c.agent()
    a.human("review the migration script")
    for n in range(8):
        a.read("db/migrate.py", [f"# part {n}"], 1 + 200 * n, 1600)


# --- ok: polling after changes, git between commits ----------------------------------------------


@case("ok", "the dev server polled after each edit of the page")
def dev_poll_after_edits(c: Case) -> None:
    a = c.agent()
    a.human("fix the header layout")
    a.bash("npm run dev > /tmp/dev.log 2>&1 &", "")
    for n in cycles(7):
        a.edit("src/Header.vue", f"padding: {n}px", f"padding: {n + 1}px")
        a.bash("curl -s http://localhost:5173/ | grep -c header", str(n))


@case("ok", "a job's status polled with a cache-buster query (?t=N) while it advances")
def poll_cache_buster(c: Case) -> None:
    a = c.agent()
    a.human("wait for the export job and tell me when it is done")
    job = "https://jobs.example.com/api/exports/7"
    for n in cycles(8):
        a.fetch(f"{job}?t={n}", 200, f'{{"state": "running", "done": {12 * n}}}')
    a.fetch(f"{job}?t=9", 200, '{"state": "done", "done": 100}')


@case("ok", "sleep, then poll the local API, after each handler change")
def dev_poll_sleep(c: Case) -> None:
    a = c.agent()
    a.human("make /orders return totals")
    for n in cycles(6):
        a.edit("api/orders.py", f"total = {n}", f"total = {n + 1}")
        a.bash("sleep 1 && curl -s http://127.0.0.1:8000/orders", f'{{"total": {n + 1}}}')


@case("ok", "a screenshot of the local page after each CSS change")
def dev_screenshot(c: Case) -> None:
    a = c.agent()
    a.human("center the login form")
    for n in cycles(6):
        a.write("src/login.css", f".form {{ margin: {n}0px auto; }}\n")
        a.bash(
            "npx playwright screenshot http://localhost:3000/login /tmp/login.png",
            "Capturing screenshot into /tmp/login.png",
        )


@case("ok", "git status between commits of separate changes")
def git_between_commits(c: Case) -> None:
    a = c.agent()
    a.human("commit each fix separately")
    for n in cycles(5):
        a.bash("git status --short", "\n".join(f" M app/fix{i}.py" for i in range(n, 6)))
        a.bash(f"git add app/fix{n}.py", "")
        a.bash(f"git commit -m 'Fix {n}'", f"[main {n}a2b3c] Fix {n}\n 1 file changed")
    a.bash("git status --short", "")


@case("ok", "edit, git diff, commit, repeated for four features")
def git_diff_per_feature(c: Case) -> None:
    a = c.agent()
    a.human("implement the four flags")
    for n in cycles(4):
        a.edit("cli/flags.py", f"# flag {n}", f"FLAG_{n} = True")
        a.bash("git diff --stat", " cli/flags.py | 2 +-")
        a.bash("git status", "On branch main\nChanges not staged for commit:\n\tmodified:   cli/flags.py")
        a.bash(f"git commit -am 'Add flag {n}'", f"[main {n}f00d] Add flag {n}")


@case("ok", "CI status checked after each push of a fix")
def ci_after_push(c: Case) -> None:
    a = c.agent()
    a.human("get CI green")
    for n in cycles(5):
        a.edit(".github/workflows/ci.yml", f"node: {15 + n}", f"node: {16 + n}")
        a.bash(f"git commit -am 'CI: node {16 + n}'", f"[main c{n}] CI")
        a.bash("git push", "To github.com:acme/app.git\n   a1..b2  main -> main")
        a.bash(
            "gh run watch --exit-status", "X build failed" if n < 5 else "✓ build passed", 1 if n < 5 else 0
        )


@case("ok", "kubectl get pods after each manifest change is applied")
def kubectl_after_apply(c: Case) -> None:
    a = c.agent()
    a.human("get the worker running")
    for n in cycles(5):
        a.edit("k8s/worker.yml", f"memory: {n}00Mi", f"memory: {n + 1}00Mi")
        a.bash("kubectl apply -f k8s/worker.yml", "deployment.apps/worker configured")
        a.bash(
            "kubectl get pods -n jobs", "worker-x   1/1   Running" if n == 5 else "worker-x   0/1   OOMKilled"
        )


# --- ok: retries after a transient failure ---------------------------------------------------------


@case("ok", "a curl refused once while the server started, then it answered")
def transient_curl(c: Case) -> None:
    a = c.agent()
    a.human("check the service")
    a.bash("curl -s https://api.example.com/v1/ping", CURL_TIMEOUT, 28)
    a.bash("curl -s https://api.example.com/v1/ping", '{"pong": true}')
    a.bash("curl -s https://api.example.com/v1/version", '{"version": "4.2"}')


@case("ok", "npm install timed out twice on the network, the third try worked")
def transient_npm(c: Case) -> None:
    a = c.agent()
    a.human("install and test")
    a.bash(
        "npm ci",
        "npm ERR! code ETIMEDOUT\nnpm ERR! network request to https://registry.npmjs.org/react failed",
        1,
    )
    a.bash("npm ci", "npm ERR! code ECONNRESET\nnpm ERR! network aborted", 1)
    a.bash("npm ci", "added 812 packages in 21s")
    a.bash("npm test", "Tests: 44 passed")


@case("ok", "a 503 from a fetch, one retry gets 200, then on to the next page")
def transient_fetch(c: Case) -> None:
    a = c.agent()
    a.human("read the changelog")
    a.fetch("https://example.com/changelog", 503, "Service Unavailable")
    a.fetch("https://example.com/changelog", 200, "## 4.2 ...")
    a.fetch("https://example.com/changelog/4.1", 200, "## 4.1 ...")


@case("ok", "a flaky test rerun once after a timeout, then green")
def transient_flaky_test(c: Case) -> None:
    a = c.agent()
    a.human("run the e2e suite")
    a.bash("npx playwright test", "1 failed: login.spec.ts (Timeout 30000ms exceeded)", 1)
    a.bash("npx playwright test", "12 passed (48s)")
    a.bash("git status --short", "")


# --- ok: subagents and human turns ----------------------------------------------------------------


@case("ok", "a parent and two subagents each fetch the same README once, independently")
def subagents_same_fetch(c: Case) -> None:
    parent = c.agent()
    parent.human("review the library")
    parent.fetch("https://github.com/acme/lib/blob/main/README.md", 200, "# lib")
    for _ in range(2):
        parent.call("subagent", {"task": "review the API"}, "(running)")
    for topic in ["api", "tests"]:
        child = c.agent(parent)
        child.fetch("https://github.com/acme/lib/blob/main/README.md", 200, "# lib")
        child.grep(topic, "src", [f"src/{topic}.py:1:# {topic}"])


@case("ok", "three subagents run the same test suite once each on different branches of a task")
def subagents_same_tests(c: Case) -> None:
    parent = c.agent()
    parent.human("investigate the three failing areas")
    parent.bash("python -m pytest -q", "=== 3 failed, 40 passed ===", 1)
    for area in ["auth", "billing", "search"]:
        parent.call("subagent", {"task": f"fix {area}"}, "(running)")
        child = c.agent(parent)
        child.bash("python -m pytest -q", "=== 3 failed, 40 passed ===", 1)
        child.edit(f"app/{area}.py", "bug", "fix")
        child.bash(f"python -m pytest -q tests/test_{area}.py", "=== 5 passed ===")
    parent.bash("python -m pytest -q", "=== 43 passed ===")


@case("ok", "the human asks for the re-runs: four runs, 'again please', four more")
def human_asks_rerun(c: Case) -> None:
    a = c.agent()
    a.human("run the load test")
    for n in cycles(4):
        a.bash("k6 run load.js", f"http_req_duration p95={200 + n}ms")
    a.human("again please, I restarted the database")
    for n in cycles(4):
        a.bash("k6 run load.js", f"http_req_duration p95={150 + n}ms")


@case("ok", "a human turn splits two bursts of status checks of one deploy")
def human_splits_polls(c: Case) -> None:
    a = c.agent()
    a.human("watch the deploy")
    for _ in cycles(4):
        a.bash("fly status -a acme-web", "Machines: 2 started, 1 pending")
    a.human("the pending one should be up now, check again")
    for _ in cycles(3):
        a.bash("fly status -a acme-web", "Machines: 3 started")


@case("ok", "a human turn in the middle of an edit/test session")
def human_mid_session(c: Case) -> None:
    a = c.agent()
    a.human("fix the parser")
    for n in cycles(3):
        a.edit("src/parse.py", f"a{n}", f"b{n}")
        a.bash(
            "python -m pytest tests/test_parse.py -q", "1 failed" if n < 3 else "8 passed", 1 if n < 3 else 0
        )
    a.human("also handle empty input")
    for n in cycles(3):
        a.edit("src/parse.py", f"c{n}", f"d{n}")
        a.bash(
            "python -m pytest tests/test_parse.py -q", "1 failed" if n < 3 else "9 passed", 1 if n < 3 else 0
        )


# --- ok: long mixed work ------------------------------------------------------------------------


@case("ok", "a long session of varied work on one feature")
def mixed_feature(c: Case) -> None:
    a = c.agent()
    a.human("add CSV export to the reports page")
    a.grep("def report", "app", ["app/reports.py:12:def report(request):"])
    a.read("app/reports.py", ["def report(request):"], 1, 80)
    a.read("app/templates/report.html", ["{% block content %}"], 1, 40)
    a.edit("app/reports.py", "def report(request):", "def report(request, fmt='html'):")
    a.bash("python -m pytest tests/test_reports.py -q", "2 failed, 6 passed", 1)
    a.read("tests/test_reports.py", ["def test_report_csv():"], 30, 60)
    a.edit(
        "app/reports.py",
        "return render(",
        "if fmt == 'csv':\n        return csv_response(rows)\n    return render(",
    )
    a.bash("python -m pytest tests/test_reports.py -q", "1 failed, 7 passed", 1)
    a.write("app/csv_export.py", "def csv_response(rows): ...\n", created=True)
    a.bash("python -m pytest tests/test_reports.py -q", "8 passed")
    a.bash("python -m pytest -q", "120 passed")
    a.bash("ruff check app", "All checks passed!")
    a.bash("git status --short", " M app/reports.py\n?? app/csv_export.py")
    a.bash("git add -A && git commit -m 'CSV export'", "[main 9c1] CSV export")


@case("ok", "a data task: download several files, inspect, transform, re-inspect")
def mixed_data(c: Case) -> None:
    a = c.agent()
    a.human("merge the quarterly files")
    for q in cycles(4):
        a.bash(f"curl -sS https://data.example.org/sales-q{q}.csv -o data/q{q}.csv", "")
    a.bash("wc -l data/*.csv", "1201 data/q1.csv\n1188 data/q2.csv\n1302 data/q3.csv\n1250 data/q4.csv")
    a.bash("head -3 data/q1.csv", "date,region,amount")
    a.write("merge.py", "import pandas as pd\n...\n", created=True)
    a.bash("python merge.py > data/all.csv", "")
    a.bash("wc -l data/all.csv", "4938 data/all.csv")
    a.edit("merge.py", "drop_duplicates()", "drop_duplicates(subset=['date', 'region'])")
    a.bash("python merge.py > data/all.csv", "")
    a.bash("wc -l data/all.csv", "4937 data/all.csv")


@case("ok", "one module rewritten and checked three ways after each step")
def refactor_checks(c: Case) -> None:
    a = c.agent()
    a.human("split utils.py")
    for name in ["text", "dates", "paths", "numbers"]:
        a.write(f"app/utils/{name}.py", f"# {name} helpers\n", created=True)
        a.edit("app/utils/__init__.py", "# exports", f"from .{name} import *\n# exports")
        a.bash("python -c 'import app.utils'", "")
        a.bash("python -m pytest -q", "120 passed")
        a.bash("ruff check app", "All checks passed!")


@case("ok", "the same database query after each migration step")
def db_query_after_migrations(c: Case) -> None:
    a = c.agent()
    a.human("add the orders.status column")
    for n in cycles(4):
        a.write(f"migrations/00{n}_status.sql", f"-- step {n}\n", created=True)
        a.bash(f"psql -f migrations/00{n}_status.sql", "ALTER TABLE")
        a.bash("psql -c '\\d orders'", f"... {n} new columns")


@case("ok", "a log tailed after each server restart that follows a config change")
def tail_after_restart(c: Case) -> None:
    a = c.agent()
    a.human("why does the worker fail to connect?")
    for n in cycles(5):
        a.edit("config/worker.toml", f"retries = {n}", f"retries = {n + 1}")
        a.bash("systemctl --user restart worker", "")
        a.bash(
            "tail -n 20 ~/.local/state/worker.log",
            f"attempt {n}: connected" if n == 5 else f"attempt {n}: refused",
        )


# --- ok: different resources spelled alike (issue 38's controls) ------------------------------


@case("ok", "a file looked for up the tree and in each package: x.py, ../x.py, ../../x.py, a/x.py, b/x.py")
def respell_ok_search_paths(c: Case) -> None:
    a = c.agent()
    a.human("find the settings module and the shared helpers, and read them")
    for path in ["settings.py", "../settings.py", "../../settings.py", "../../../settings.py"]:
        a.call("read", {"file_path": path}, f"Error: File not found: {path}", is_error=True)
    a.read("../../../config/settings.py", ["DEBUG = False", "DATABASE_URL = env('DATABASE_URL')"])
    for package in ["a", "b", "c"]:
        a.bash(f"cat packages/{package}/x.py", f"cat: packages/{package}/x.py: No such file or directory", 1)
    for path in ["x.py", "../x.py", "../../x.py"]:
        a.bash(f"cat {path}", f"cat: {path}: No such file or directory", 1)
    a.bash("cat ../../../x.py", "def shared():\n    return 42")


@case("ok", "one API searched with queries that differ only in escapes (c%2B%2B is not c++, a%2Fb not a/b)")
def respell_ok_escaped_queries(c: Case) -> None:
    a = c.agent()
    a.human("which of our repositories mention c++ or the a/b experiment?")
    search = "https://code.example.com/api/search?q="
    queries = ["c%2B%2B", "c++", "a%2Fb", "a/b", "a%26b", "a&b", "%22a%2Fb%22", "a%20b"]
    for n, query in enumerate(queries):
        a.fetch(search + query, 200, f'{{"total": {(7 * n) % 5}, "items": ["repo-{n}"]}}')
    projects = "https://gitlab.example.com/api/v4/projects/"
    for project in ["infra%2Fdeploy", "infra/deploy", "Infra%2FDeploy", "infra%2Fdeploy-tools"]:
        a.fetch_error(projects + project, "HTTP 404 Not Found")
    for name in ["README", "readme", "Readme", "ReadMe"]:
        a.bash(f"curl -s https://files.example.com/docs/{name}", '{"error": "not found"}')
    a.fetch("https://files.example.com/docs/README.md", 200, "# Docs")


def corpus_files() -> dict[Path, bytes]:
    """Every file of the corpus (sessions/*.jsonl and labels.tsv) and its content."""
    files: dict[Path, bytes] = {}
    rows = ["# session id\tloop|ok\twhy\tloop start (call number of the looping agent)"]
    for built in CASES:
        for agent in built.agents:
            files[SESSIONS / f"{agent.session_id}.jsonl"] = agent.trajectory.to_jsonl().encode()
        start = "" if built.loop_start is None else f"\t{built.loop_start}"
        rows.append(f"{built.name}\t{built.label}\t{built.reason}{start}")
    for name, label, reason in RECORDED_CASES:
        files[SESSIONS / f"recorded-{name}.jsonl"] = _decompressed(RECORDED / f"{name}.jsonl.zstd")
        rows.append(f"recorded-{name}\t{label}\t{reason}" + ("\t1" if label == "loop" else ""))
    files[LABELS] = ("\n".join(rows) + "\n").encode()
    return files


# --- polls whose answer moves, and calls that change what later calls read -----------------------


@case("ok", "a job's status polled 20 times while its percentage climbs (each answer stamped anew)")
def poll_progress_climbs(c: Case) -> None:
    a = c.agent()
    a.human("start the export and tell me when it is done")
    for n in cycles(20):
        stamp = f"2026-12-06T02:{n:02d}:00Z"
        a.bash(
            "curl -s http://127.0.0.1:8080/jobs/7",
            f'{{"state": "running", "progress": "{5 * n}%", "at": "{stamp}"}}',
        )


@case("ok", "a task list polled 20 times while its tasks complete one by one")
def poll_tasks_complete(c: Case) -> None:
    a = c.agent()
    a.human("wait until the batch is through")
    for n in cycles(20):
        tasks = [{"task": t, "done": t <= n} for t in range(1, 21)]
        a.call("list_tasks", {"batch": "nightly"}, json.dumps({"tasks": tasks}))


@case("ok", "a build's log read 20 times while it prints")
def poll_output_grows(c: Case) -> None:
    a = c.agent()
    a.human("build the release and watch it")
    a.bash("make release > /tmp/build.log 2>&1 &", "")
    for n in cycles(20):
        a.call(
            "read",
            {"file_path": "/tmp/build.log"},
            "\n".join(f"[{k}/20] compiling unit{k}.c" for k in range(1, n + 1)),
        )


@case("loop", "a status poll whose answer changes only in its time and request id")
def poll_only_the_clock_moves(c: Case) -> None:
    a = c.agent()
    a.human("is the deploy done?")
    a.loop_starts()
    for n in cycles(20):
        a.bash(
            "curl -s http://127.0.0.1:8080/deploys/3",
            f'{{"state": "pending", "request_id": "{n:04x}beefcafe1234", "checked": "02:{n:02d}:07"}}',
        )


@case("ok", "a folder listed again after each change of folder or file (function calls)")
def listing_after_changes(c: Case) -> None:
    a = c.agent()
    a.human("tidy up the reports")
    listing = ["drafts", "reports"]
    a.call("list_folder", {}, json.dumps({"content": listing}))
    for n in cycles(4):
        a.call("change_folder", {"folder": "reports"}, json.dumps({"cwd": "reports"}))
        a.call("list_folder", {}, json.dumps({"content": [f"q{k}.txt" for k in range(n, 5)]}))
        a.call("remove_file", {"name": f"q{n}.txt"}, "None")
        a.call("change_folder", {"folder": ".."}, "{}")
        a.call("list_folder", {}, json.dumps({"content": listing}))


@case("ok", "a start refused for a new reason after each fix: fix-and-retry (function calls)")
def fix_and_retry_calls(c: Case) -> None:
    a = c.agent()
    a.human("start the pump")
    for fix, (reason, setting) in enumerate(
        [
            ("the valve must be open", "open_valve"),
            ("the tank is empty", "fill_tank"),
            ("the lid is up", "close_lid"),
        ]
    ):
        a.call(
            "start_pump", {"mode": "auto"}, json.dumps({"error": f"Cannot start: {reason}."}), is_error=True
        )
        a.call(setting, {"level": fix + 1}, json.dumps({"status": "done", "step": setting}))
    a.call("start_pump", {"mode": "auto"}, json.dumps({"state": "running"}))


@case("loop", "the same write sent again and again, the same report each time (function calls)")
def same_write_again(c: Case) -> None:
    a = c.agent()
    a.human("save the total")
    a.loop_starts()
    for _ in cycles(8):
        a.call("write_value", {"file": "total.txt", "value": "2.0153"}, "None")


@case("loop", "a cycle of folder changes and listings, the same answers each round (function calls)")
def folder_cycle_same_answers(c: Case) -> None:
    a = c.agent()
    a.human("find the budget file")
    a.loop_starts()
    for _ in cycles(6):
        a.call("change_folder", {"folder": "finance"}, json.dumps({"cwd": "finance"}))
        a.call("list_folder", {}, json.dumps({"content": ["notes.md"]}))
        a.call(
            "copy_file",
            {"source": "budget.xlsx", "to": "archive"},
            json.dumps({"error": "No such file"}),
            is_error=True,
        )
        a.call("change_folder", {"folder": ".."}, "{}")


@case("loop", "one failing API call resent with argument variants that cannot fix its error")
def failing_call_variants(c: Case) -> None:
    a = c.agent()
    a.human("book the flight")
    a.loop_starts()
    for n in cycles(8):
        a.call(
            "book_flight",
            {
                "from": "SFO",
                "to": "JFK",
                "class": ["economy", "Economy", "ECONOMY", "eco"][n % 4],
                "seats": 1 + n % 2,
            },
            "Error during execution: book_flight() missing 1 required positional argument: 'access_token'",
            is_error=True,
        )


# --- shell writes: a command that may write is a possible change to what later calls read ------

MONEY_LINES = [
    "def round_amount(value: Decimal) -> Decimal:",
    '    """Round an amount to whole cents."""',
    "    if value.is_nan():",
    '        raise ValueError("amount is not a number")',
    "\treturn round(value, 2)",
    "",
]
MONEY_FIXED = [*MONEY_LINES[:4], "\treturn value.quantize(CENT, rounding=ROUND_HALF_UP)", ""]
SPEEDUPS_FAIL = (
    "Obtaining file:///work/tally\n  Installing build dependencies ... done\n"
    "  Building editable for tally (pyproject.toml) ... error\n"
    "  error: subprocess-exited-with-error\n"
    "  src/tally/_speedups.c:3:10: fatal error: Python.h: No such file or directory\n"
    "      3 | #include <Python.h>\n  compilation terminated.\n"
    "  error: command '/usr/bin/gcc' failed with exit code 1\n"
    "ERROR: Failed building editable for tally"
)
INSTALL = "pip install -e . 2>&1 | tail -8; exit ${PIPESTATUS[0]}"
MONEY = "src/ledger/money.py"


def _patch_script(path: str, old: str, new: str, report: str = "") -> str:
    """A strong model's shell edit: a Python heredoc that rewrites a file in place."""
    tail = f"\nprint({report!r}.format(n))" if report else ""
    return (
        "python3 - <<'EOF'\nimport pathlib\n"
        f"p = pathlib.Path({path!r})\ns = p.read_text()\nn = s.count({old!r})\n"
        f"p.write_text(s.replace({old!r}, {new!r})){tail}\nEOF"
    )


@case("ok", "a change tried four ways by shell writes, the same lines re-read after each to verify it")
def verify_after_change_attempts(c: Case) -> None:
    a = c.agent()
    a.human("amounts like 2.675 round to 2.67 in the ledger; make them round half up")
    a.bash(
        "grep -n 'def round_amount' -r src/ledger",
        "src/ledger/money.py:41:def round_amount(value: Decimal) -> Decimal:",
    )
    view = "sed -n '41,46p' src/ledger/money.py"
    a.bash(view, "\n".join(MONEY_LINES))
    a.bash(_patch_script(MONEY, "    return round(value, 2)", "    return value.quantize(CENT)"))
    a.bash(view, "\n".join(MONEY_LINES))
    a.bash(
        "python3 - <<'EOF'\nimport pathlib, re\np = pathlib.Path('src/ledger/money.py')\n"
        "s, n = re.subn(r'^ +return round\\(value, ?2\\)$', '    return value.quantize(CENT, "
        "rounding=ROUND_HALF_UP)', p.read_text(), flags=re.M)\np.write_text(s)\nprint(n, 'replaced')\nEOF",
        "0 replaced",
    )
    a.bash(view, "\n".join(MONEY_LINES))
    a.bash(
        "ex -s -c '%s/^    return round(value, 2)$/    return value.quantize(CENT, rounding=ROUND_HALF_UP)/e'"
        f" -c 'wq' {MONEY}"
    )
    a.bash(view, "\n".join(MONEY_LINES))
    a.bash(
        "python3 -c \"import pathlib; p = pathlib.Path('src/ledger/money.py'); "
        "p.write_text(p.read_text().replace('return round(value,2)', 'return value.quantize(CENT)'))\""
    )
    a.bash(view, "\n".join(MONEY_LINES))
    a.bash("sed -n '45p' src/ledger/money.py | cat -A", "^Ireturn round(value, 2)$")
    a.bash(
        _patch_script(
            "src/ledger/money.py",
            "\treturn round(value, 2)",
            "\treturn value.quantize(CENT, rounding=ROUND_HALF_UP)",
            "{} replaced",
        ),
        "1 replaced",
    )
    a.bash(view, "\n".join(MONEY_FIXED))
    a.bash("python -m pytest tests/test_money.py -q", "........ \n8 passed in 0.21s")


@case("loop", "the same lines re-read to verify a change, with nothing changed in between")
def verify_read_nothing_changed(c: Case) -> None:
    a = c.agent()
    a.human("amounts like 2.675 round to 2.67 in the ledger; make them round half up")
    a.bash(_patch_script(MONEY, "    return round(value, 2)", "    return value.quantize(CENT)"))
    a.loop_starts()
    for _ in cycles(8):
        a.bash("sed -n '41,46p' src/ledger/money.py", "\n".join(MONEY_LINES))


@case("loop", "one change script rerun and the same lines re-read, the same answers every round")
def verify_cycle_same_change(c: Case) -> None:
    a = c.agent()
    a.human("amounts like 2.675 round to 2.67 in the ledger; make them round half up")
    a.write("fix_rounding.py", "import re, pathlib\n# rewrite round(value, 2) in money.py\n", created=True)
    a.loop_starts()
    for _ in cycles(6):
        a.bash("python3 fix_rounding.py", "0 replacements in src/ledger/money.py")
        a.bash("sed -n '41,46p' src/ledger/money.py", "\n".join(MONEY_LINES))


@case("ok", "an editable install failing on a C extension not being changed, rerun after each rewrite")
def setup_fails_elsewhere(c: Case) -> None:
    a = c.agent()
    a.human("add a --json flag to tally's command line")
    run = "PYTHONPATH=src python3 -m tally --json tests/data/small.csv"
    a.bash(INSTALL, SPEEDUPS_FAIL, 1)
    a.bash("sed -n '1,40p' src/tally/cli.py", "import argparse\n\nfrom tally.count import count_rows\n...")
    steps = [
        (
            _patch_script(
                "src/tally/cli.py",
                "    args = parser.parse_args(argv)",
                '    parser.add_argument("--json", action="store_true")\n    args = parser.parse_args(argv)',
            ),
            'Traceback (most recent call last):\n  File "src/tally/cli.py", line 31, in main\n'
            "    print(json.dumps(totals))\nNameError: name 'json' is not defined",
            1,
        ),
        (
            _patch_script("src/tally/cli.py", "import argparse\n", "import argparse\nimport json\n"),
            '{"rows": 3, "columns": {"a": 3, "b": 2}}\n{"rows": 3}',
            0,
        ),
        (
            _patch_script(
                "src/tally/cli.py",
                "        print(json.dumps(totals))\n    print(",
                "        print(json.dumps(totals))\n        return 0\n    print(",
            ),
            '{"rows": 3, "columns": {"a": 3, "b": 2}}',
            0,
        ),
        (
            _patch_script(
                "src/tally/cli.py", "json.dumps(totals)", "json.dumps(totals, indent=2, sort_keys=True)"
            ),
            '{\n  "columns": {\n    "a": 3,\n    "b": 2\n  },\n  "rows": 3\n}',
            0,
        ),
    ]
    for patch, output, code in steps:
        a.bash(patch)
        a.bash(INSTALL, SPEEDUPS_FAIL, 1)
        a.bash(run, output, code)
    a.bash("PYTHONPATH=src python3 -m pytest -q tests/test_cli.py", "......\n6 passed in 0.34s")


@case("loop", "an editable install failing the same way, rerun with nothing changed in between")
def setup_fails_nothing_changed(c: Case) -> None:
    a = c.agent()
    a.human("install tally for development")
    a.loop_starts()
    for n in cycles(8):
        a.bash(INSTALL, SPEEDUPS_FAIL, 1)
        if n % 2:
            a.bash("sed -n '1,30p' setup.py", "from setuptools import Extension, setup\n...")


# --- patterns from other loop detectors' bug reports and tests ----------------------------------
# Ordinary work their users reported stopped or nagged, and loops their own tests pin, each written
# here as a session of our own from the pattern; the comment above a case names where it comes from
# (repository and issue or test), and its reason ends with a short form of that.

COVERAGE_LOG = [
    "go test -coverprofile=cover.out ./...",
    "ok  \tacme/api\t4.1s\tcoverage: 71.2% of statements",
    "ok  \tacme/store\t9.8s\tcoverage: 64.0% of statements",
    "ok  \tacme/sync\t61.3s\tcoverage: 58.9% of statements",
    "total:\t(statements)\t66.4%",
]


# dimetron/pi-go#102 (a background `make test-coverage` polled through one handle, stopped after 10
# polls while it streamed) and OpenHands/OpenHands#10750 (empty commands to wait for output).
@case("ok", "a background build's log tailed while it runs, alike three times in a silent stretch (pi-go)")
def poll_background_log(c: Case) -> None:
    a = c.agent()
    a.human("run the coverage suite and tell me the total")
    a.bash("make test-coverage > /tmp/cov.log 2>&1 &", "")
    for end in [2, 3, 3, 3, 4, 5]:
        a.bash("sleep 20 && tail -n 2 /tmp/cov.log", "\n".join(COVERAGE_LOG[end - 2 : end]))


FINE_TUNE_POLL = "sleep 300 && curl -s https://api.example.com/v1/fine_tuning/jobs/ftjob-7"
FINE_TUNE_RUNNING = '{"object": "fine_tuning.job", "status": "running", "fine_tuned_model": null}'


# OpenHands/software-agent-sdk#762: told to poll a long job every 5 minutes for up to 15 minutes,
# the agent ran the same poll 4 times (0, 5, 10, 15 minutes) and was stopped as stuck.
@case("ok", "a job polled every 5 minutes for 15 minutes as asked, 'running' each time (OpenHands sdk)")
def poll_asked_for_fifteen_minutes(c: Case) -> None:
    a = c.agent()
    a.human("poll the fine-tuning job every 5 minutes for up to 15 minutes, then tell me where it stands")
    for _ in cycles(4):
        a.bash(FINE_TUNE_POLL, FINE_TUNE_RUNNING)


# The same report, for a job that runs longer than four polls.
@case("ok", "the same job polled every 5 minutes for 40 minutes as asked, done at the 7th (OpenHands sdk)")
def poll_asked_for_forty_minutes(c: Case) -> None:
    a = c.agent()
    a.human("poll the fine-tuning job every 5 minutes for up to 40 minutes and tell me when it is done")
    for _ in cycles(6):
        a.bash(FINE_TUNE_POLL, FINE_TUNE_RUNNING)
    a.bash(FINE_TUNE_POLL, FINE_TUNE_RUNNING.replace('"running", "fine_tuned_model": null', '"succeeded"'))


def _module_lines(first: int) -> str:
    """A debugger's chunk of module loads, new from ``first`` on."""
    return "\n".join(
        f"ModLoad: 00007ff8`{k:04x}0000   C:\\Windows\\System32\\mod{k}.dll" for k in range(first, first + 3)
    )


# RooCodeInc/Roo-Code#9502: an MCP tool's output read with 50+ identical calls, a new chunk each.
@case("ok", "one stream read through an MCP tool 24 times, a new chunk each time (Roo Code)")
def mcp_stream_chunks(c: Case) -> None:
    a = c.agent()
    a.human("attach the debugger to app.exe and list the modules it loads")
    a.call("start_session", {"command": "cdb -p 4412"}, json.dumps({"session_id": "pty-3"}))
    for n in cycles(24):
        a.call("read_output", {"session_id": "pty-3"}, _module_lines(3 * n))
    a.call("read_output", {"session_id": "pty-3"}, "0:000> ")


# The other side of RooCodeInc/Roo-Code#9502: the stream ended and the same read keeps answering alike.
@case("loop", "the same MCP read of a stream that ended, the same prompt each time (Roo Code)")
def mcp_stream_ended(c: Case) -> None:
    a = c.agent()
    a.human("attach the debugger to app.exe and list the modules it loads")
    a.call("start_session", {"command": "cdb -p 4412"}, json.dumps({"session_id": "pty-3"}))
    for n in cycles(4):
        a.call("read_output", {"session_id": "pty-3"}, _module_lines(3 * n))
    a.loop_starts()
    for _ in cycles(10):
        a.call("read_output", {"session_id": "pty-3"}, "0:000> ")


# google-gemini/gemini-cli#5873: moving files one by one and updating their imports (search, git mv,
# search, edit) was halted as a loop.
@case("ok", "components moved one by one with git mv, their imports found and fixed after each (Gemini CLI)")
def move_files_update_imports(c: Case) -> None:
    a = c.agent()
    a.human("move the shared components into src/ui/ and fix the imports")
    names = ["Button", "Card", "Modal", "Tabs", "Tooltip"]
    for n, name in enumerate(names):
        users = [f"src/pages/Page{n}.tsx", f"src/pages/Page{n + 1}.tsx"]
        a.bash(
            f'grep -rn "components/{name}\'" src',
            "\n".join(f"{user}:3:import {{ {name} }} from '../components/{name}'" for user in users),
        )
        a.bash(f"git mv src/components/{name}.tsx src/ui/{name}.tsx")
        for user in users:
            a.edit(user, f"'../components/{name}'", f"'../ui/{name}'")
        left = names[n + 1 :]
        errors = [
            f"src/app.tsx({k}, 10): error TS2307: Cannot find module './components/{m}'"
            for k, m in enumerate(left)
        ]
        a.bash("npx tsc --noEmit", "\n".join(errors), 1 if left else 0)


CHART_UPLOAD = "curl -fsS -X POST --data-binary @web-1.4.0.tgz https://charts.example.com/api/charts"


# Intrect-io/OpenSwarm#262 (a repeating infrastructure error is a retryable outage, not a stuck loop)
# and open-octo/octo-agent#737 (retrying a flaky tool stopped after 3 identical batches).
@case("ok", "a flaky registry retried with a growing wait: 503 three times, then saved (OpenSwarm, octo)")
def retry_backoff_then_success(c: Case) -> None:
    a = c.agent()
    a.human("publish the chart to the registry")
    a.bash("helm package charts/web", "Successfully packaged chart and saved it to: web-1.4.0.tgz")
    for prefix in ["", "sleep 10 && ", "sleep 30 && "]:
        a.bash(prefix + CHART_UPLOAD, "curl: (22) The requested URL returned error: 503", 22)
    a.bash("sleep 60 && " + CHART_UPLOAD, '{"saved": true}')


# BenchBox-dev/BenchBox#2029 and Dave-London/Pare#930: a PR's checks read on a schedule (a sleep
# between reads) while CI runs. `gh pr checks` exits 8 while a check is pending.
@case("ok", "a PR's checks read after a wait each time while they finish one by one (BenchBox, Pare)")
def ci_checks_on_a_schedule(c: Case) -> None:
    a = c.agent()
    a.human("push the fix and merge when CI is green")
    a.bash(
        "git push origin fix/retry-header",
        "To github.com:acme/web.git\n   4c1d2e0..9ab77f3  fix/retry-header",
    )
    states = [("pending", "pending", "pending")] * 3 + [("pass", "pending", "pending")] * 3 + [("pass",) * 3]
    for build, test, e2e in states:
        a.bash(
            "sleep 60 && gh pr checks 42",
            f"build\t{build}\t2m\ntest\t{test}\t6m\ne2e\t{e2e}\t11m",
            0 if e2e == "pass" else 8,
        )
    a.bash("gh pr merge 42 --squash", "✓ Squashed and merged pull request #42")


# google-gemini/gemini-cli#7950 and #8234: loading and reading blocks of data one after another
# halted as a loop.
@case("ok", "a large CSV analysed block by block, one range after another (Gemini CLI)")
def data_blocks_analysis(c: Case) -> None:
    a = c.agent()
    a.human("summarise refunds per region in exports/orders.csv (2.4M rows)")
    for n in cycles(12):
        start = (n - 1) * 200000 + 1
        a.bash(
            f"python3 analyze.py exports/orders.csv --rows {start}:{start + 199999}",
            f"rows {start}-{start + 199999}: refunds EU {310 + n} US {402 - n} APAC {97 + 2 * n}",
        )


# RooCodeInc/Roo-Code, src/core/tools/ToolRepetitionDetector.ts and its spec: browser scroll actions
# are exempt from repetition detection, as reading a page needs them.
@case("ok", "a long page read by scrolling down, new text each time (Roo Code's scroll exemption)")
def browser_scroll_reading(c: Case) -> None:
    a = c.agent()
    a.human("read the changelog page and list the breaking changes since 4.0")
    a.call("browser_action", {"action": "launch", "url": "http://localhost:4000/changelog"}, "Page loaded")
    for n in cycles(10):
        a.call("browser_action", {"action": "scroll_down"}, f"## 4.{10 - n}.0\n- changed option `mode{n}`")


# The blind spot of that exemption: scrolling at the page's bottom, the same text each time.
@case("loop", "a scroll at the page's bottom repeated, the same text each time (Roo Code's scroll exemption)")
def browser_scroll_at_bottom(c: Case) -> None:
    a = c.agent()
    a.human("find the 3.x migration notes on the changelog page")
    a.call("browser_action", {"action": "launch", "url": "http://localhost:4000/changelog"}, "Page loaded")
    for n in cycles(3):
        a.call("browser_action", {"action": "scroll_down"}, f"## 4.{3 - n}.0\n- fixed #{900 + n}")
    a.loop_starts()
    for _ in cycles(10):
        a.call(
            "browser_action", {"action": "scroll_down"}, "## 4.0.0\n- first release of the 4.x line\n(end)"
        )


# defilantech/LLMKube#569: the same bash call 58 times in a row, each returning empty stdout.
@case("loop", "one pipeline that prints nothing, rerun as is (LLMKube)")
def empty_answer_pipeline(c: Case) -> None:
    a = c.agent()
    a.human("was issue 449 already fixed on its branch?")
    a.bash("git branch -a | grep 449", "  remotes/origin/foreman/issue-449")
    a.loop_starts()
    for _ in cycles(12):
        a.bash('git log foreman/issue-449 --oneline | grep -i "449" | head -10')


# RooCodeInc/Roo-Code#2231: a 512-line file read 500 lines at a time, the model cycling on reading
# "the last 500 lines" until told to use tail.
@case("loop", "the head and the tail of one 512-line file read in turn, alike each round (Roo Code)")
def read_head_tail_cycle(c: Case) -> None:
    a = c.agent()
    a.human("add a retry option to the sync client in src/sync/client.ts")
    a.loop_starts()
    for _ in cycles(6):
        a.read(
            "src/sync/client.ts", ["import { fetch } from 'undici'", "", "export class SyncClient {"], 1, 512
        )
        a.read("src/sync/client.ts", ["  close(): void {", "    this.pool.destroy()", "  }"], 13, 512)


# OpenHands/OpenHands tests/unit/controller/test_is_stuck.py: one code cell run again and again, the
# same syntax error each time (stuck at its 4th).
@case("loop", "the same patch script rerun, the same SyntaxError each time (OpenHands' stuck tests)")
def same_script_syntax_error(c: Case) -> None:
    a = c.agent()
    a.human("make total() return 0 for an empty basket")
    script = (  # a newline inside a string literal of the heredoc: the same error on every run
        "python3 - <<'EOF'\nimport pathlib\np = pathlib.Path('book_store.py')\ns = p.read_text()\n"
        "n = s.count('def total(basket):\n')\np.write_text(s.replace('    return sum(', '    if not basket:"
        "\n        return 0\n    return sum('))\nEOF"
    )
    error = (
        '  File "<stdin>", line 4\n    n = s.count(\'def total(basket):\n                ^\n'
        "SyntaxError: unterminated string literal (detected at line 4)"
    )
    a.loop_starts()
    for _ in cycles(6):
        a.bash(script, error, 1)


# The same tests: one action repeated with an error each time, "not necessarily the same error".
@case(
    "loop", "one failing command rerun unchanged, its error text different each time (OpenHands' stuck tests)"
)
def same_command_errors_differ(c: Case) -> None:
    a = c.agent()
    a.human("run the e2e suite")
    a.loop_starts()
    for n in cycles(8):
        profile = f"/tmp/playwright_chromiumdev_profile-{n * 7919 % 100000:05d}"
        a.bash(
            "npx playwright test",
            f"Error: browserType.launch: Failed to launch chromium: profile {profile} is locked",
            1,
        )


# QwenLM/qwen-code#3236: five parallel reads in a model's first turn on a new project tripped a
# read-file loop rule.
@case("ok", "a new project opened: its files read together in one turn, then searched and edited (Qwen Code)")
def parallel_reads_first_turn(c: Case) -> None:
    a = c.agent()
    a.human("summarise what this project is and what each source file does")
    files = ["README.md", "package.json", "src/config.ts", "src/index.ts", "src/utils.ts"]
    a.together([("read", {"file_path": path}, f"<path>{path}</path>\n1: // {path}") for path in files])
    a.together(
        [
            ("grep", {"pattern": name, "path": "src"}, f"src/index.ts:3:import {{ {name} }}")
            for name in ("load", "run")
        ]
    )
    a.edit("README.md", "# app", "# app\n\nA small CLI that syncs notes.")


# google-gemini/gemini-cli#20701: batch work across files (adding headers to many files) flagged as
# an unproductive loop.
@case("ok", "a license header added to twelve files, each read then edited (Gemini CLI)")
def license_headers_across_files(c: Case) -> None:
    a = c.agent()
    a.human("add the SPDX license header to every source file under src/")
    for n in cycles(12):
        path = f"src/module_{n}.py"
        a.read(path, [f'"""Module {n}."""', "", "import os"], 1, 40)
        a.edit(path, f'"""Module {n}."""', f'# SPDX-License-Identifier: MIT\n"""Module {n}."""')
    a.bash("grep -L SPDX-License-Identifier -r src", "")


# itayinbarr/little-coder#81: a build script fails, the model edits the source, runs the same script
# again, and is told it made the exact same call.
@case("ok", "one build script rerun after each source edit, a different error each time (little-coder)")
def build_script_after_edits(c: Case) -> None:
    a = c.agent()
    a.human("get the firmware building again")
    errors = [
        "src/uart.c:41:5: error: implicit declaration of function 'uart_flush'",
        "src/uart.c:88:12: error: 'BAUD_115200' undeclared",
        "src/main.c:17:3: error: too few arguments to function 'uart_init'",
    ]
    for n, error in enumerate(errors):
        a.bash("./scripts/build.sh", f"[build] compiling 14 files\n{error}", 2)
        a.edit(f"src/{error.split(':')[0].split('/')[1]}", f"line{n}", f"line{n} fixed")
    a.bash("./scripts/build.sh", "[build] compiling 14 files\n[build] firmware.bin 41872 bytes")


# QwenLM/qwen-code#5932: an edit already applied is sent again; 'old_string not found' each time,
# and the agent keeps resending it instead of reading the file.
@case("loop", "an edit that already landed sent again and again, not found each time (Qwen Code)")
def reapply_landed_edit(c: Case) -> None:
    a = c.agent()
    a.human("the file list flickers when filtering; fix it")
    a.edit("src/Finder.tsx", "useEffect(() => filter(q))", "useEffect(() => filter(q), [q])")
    a.edit("src/LogListView.tsx", "key={index}", "key={row.id}")
    a.loop_starts()
    for _ in cycles(6):
        a.edit("src/Finder.tsx", "useEffect(() => filter(q))", "useEffect(() => filter(q), [q])", found=False)


# makecindy/cindy#2721: two near-identical greps run in turn about 70 times each for 50 minutes, the
# same results every time (only an interface reference, never the implementation).
@case("loop", "two near-identical searches run in turn, the same results each round (cindy)")
def alternating_greps(c: Case) -> None:
    a = c.agent()
    a.human("find where getShellCommandPolicy is implemented")
    found = "src/main/base-agent.ts:731:  getShellCommandPolicy(): ShellCommandPolicy"
    a.loop_starts()
    for _ in cycles(10):
        a.bash("cd ~/work/desk && grep -rn 'getShellCommandPolicy' apps/desktop/src", found)
        a.bash('cd ~/work/desk && grep -rn "getShellCommandPolicy" apps/desktop/src --include=*.ts', found)


# kubernetes/kubernetes#40224: `kubectl rollout status` timing out ("error: timed out waiting for the
# condition") while a slow rollout still advances; a CI job that waited on it failed.
@case(
    "ok", "a slow rollout waited on with a bounded blocking wait, timing out three times as it advances (k8s)"
)
def rollout_wait_times_out(c: Case) -> None:
    a = c.agent()
    a.human("deploy the new image and tell me when it is live")
    a.bash("kubectl set image deployment/app app=acme/app:1.9.2", "deployment.apps/app image updated")
    wait = "kubectl rollout status deployment/app --timeout=120s"
    for updated in (2, 3, 5):
        a.bash(
            wait,
            f'Waiting for deployment "app" rollout to finish: {updated} out of 6 new replicas have been'
            " updated...\nerror: timed out waiting for the condition",
            1,
        )
    a.bash(wait, 'deployment "app" successfully rolled out')


# aitoolsguidebook.com, "agent loops without progress": to tell a flaky test from a broken one, run
# it three times without touching the code (pass, fail, pass), then fix what makes it flaky.
@case("ok", "a suspected flaky test rerun three times unchanged (pass, fail, pass), then fixed (guide)")
def flaky_test_check(c: Case) -> None:
    a = c.agent()
    a.human("test_export_snapshot fails on CI about half the time; find out why")
    check = "npx jest src/export.test.ts -t 'export snapshot'"
    snapshot_fail = (
        '✕ export snapshot (31 ms)\n  - "exportedAt": "2026-12-06"\n  + "exportedAt": "2026-12-07"'
    )
    for output, code in [
        ("✓ export snapshot (12 ms)", 0),
        (snapshot_fail, 1),
        ("✓ export snapshot (11 ms)", 0),
    ]:
        a.bash(check, output, code)
    a.edit("src/export.test.ts", "exportSummary(rows)", "exportSummary(rows, { now: FIXED_DATE })")
    for _ in cycles(3):
        a.bash(check, "✓ export snapshot (10 ms)")


# deepseek-ai/DeepSeek-V3#15: a function-calling model calls the same function again and again after
# its result came back, the same answer each time.
@case("loop", "one function called again and again with its answer already in hand (DeepSeek-V3)")
def function_called_again(c: Case) -> None:
    a = c.agent()
    a.human("what is the weather in Hangzhou today?")
    a.loop_starts()
    for _ in cycles(10):
        a.call(
            "get_weather", {"location": "Hangzhou"}, json.dumps({"temperature": 24, "condition": "cloudy"})
        )


CHALLENGE = "Page: Just a moment...\nVerify you are human\n[3] checkbox  [5] link Privacy  [7] link Terms"


# browser-use/browser-use PR #3979 (its tests: a page-stuck pattern, the same action type on one
# URL again and again, e.g. a Cloudflare challenge): clicks on different elements, the page unchanged.
@case("loop", "clicks on different elements of a challenge page that never changes (browser-use)")
def browser_challenge_clicks(c: Case) -> None:
    a = c.agent()
    a.human("download the March report from the vendor portal")
    a.call("browser_action", {"action": "launch", "url": "https://portal.example.com/reports"}, CHALLENGE)
    a.loop_starts()
    for n in cycles(10):
        a.call("browser_action", {"action": "click", "index": [3, 5, 7][n % 3]}, CHALLENGE)


# The ordinary side of the same tests: different elements clicked, the page answering anew each time.
@case("ok", "a multi-step form filled by clicks and typing, each step a new page (browser-use)")
def browser_form_steps(c: Case) -> None:
    a = c.agent()
    a.human("open a support ticket about the failed export")
    a.call(
        "browser_action",
        {"action": "launch", "url": "http://localhost:3000/support/new"},
        "Step 1 of 4: topic",
    )
    for n in cycles(4):
        a.call("browser_action", {"action": "click", "index": 4}, f"Step {n} of 4 saved\nStep {n + 1} of 4")
        a.call(
            "browser_action", {"action": "type", "index": 2, "text": f"detail {n}"}, f"Step {n + 1}: typed"
        )


def write_corpus() -> None:
    """Rewrite sessions/ and labels.tsv."""
    replace_sessions(SESSIONS, corpus_files())


def replace_sessions(folder: Path, files: dict[Path, bytes]) -> None:
    """Write ``files``, after removing every session file of ``folder`` (a dropped case leaves none)."""
    folder.mkdir(exist_ok=True)
    for stale in folder.glob("*.jsonl"):
        stale.unlink()
    for path, content in files.items():
        path.write_bytes(content)


#: Real dsh 0.1.0-rc.8 sessions from the compat harness (see examples/sessions/README.md).
RECORDED_CASES = [
    ("loop-a-identical", "loop", "real dsh: the same append command six times"),
    ("loop-b-decoy", "loop", "real dsh: description and timeoutMs churn around one command"),
    ("loop-c-pingpong", "loop", "real dsh: host spelling and --max-time ping-pong, every fetch refused"),
    ("local-loop", "loop", "real dsh: one local health endpoint through seven pipelines"),
    ("pagination", "ok", "real dsh: eight pages of one listing"),
]


def _decompressed(path: Path) -> bytes:
    """A dsh log is a series of zstd frames; the corpus keeps it as plain JSON lines."""
    data, text = path.read_bytes(), b""
    while data:
        frame = zstandard.ZstdDecompressor().decompressobj()
        text += frame.decompress(data)
        data = frame.unused_data
    return b"".join(
        json.dumps(json.loads(line)).encode() + b"\n" for line in text.splitlines() if line.strip()
    )


if __name__ == "__main__":
    write_corpus()
    loops = sum(1 for built in CASES if built.label == "loop")
    print(
        f"{len(CASES)} cases ({loops} loop, {len(CASES) - loops} ok) + {len(RECORDED_CASES)} recorded",
        file=sys.stderr,
    )

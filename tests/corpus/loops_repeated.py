"""Corpus cases: loops of one action repeated (the seed's A, B and C, decoy churn, ping-pong,
failing commands retried unchanged, flip-flop edits, alternation, spread cycles).

Registered in the order build.py imports the modules (``casebook.case``)."""

from __future__ import annotations

from casebook import CURL_DNS, CURL_REFUSED, CURL_TIMEOUT, PYTEST_FAIL, Case, case, cycles

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

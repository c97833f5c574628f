"""Corpus cases: ordinary work (polling after changes, retries after a transient failure,
subagents and human turns, long mixed work, different resources spelled alike).

Registered in the order build.py imports the modules (``casebook.case``)."""

from __future__ import annotations

from casebook import CURL_TIMEOUT, Case, case, cycles

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

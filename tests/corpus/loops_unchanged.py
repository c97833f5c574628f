"""Corpus cases: loops where nothing changes between the calls (read-only actions, changes
that are no change, subagents and human turns, one resource respelled each time).

Registered in the order build.py imports the modules (``casebook.case``)."""

from __future__ import annotations

from casebook import CURL_REFUSED, Case, case, cycles

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

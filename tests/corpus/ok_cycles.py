"""Corpus cases: ordinary work that repeats a call with progress between (edit/test and
build/fix cycles, reading after writing, pagination and crawls).

Registered in the order build.py imports the modules (``casebook.case``)."""

from __future__ import annotations

from casebook import Case, case, cycles

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

"""Corpus cases from other loop detectors' bug reports and tests, each written as a session of
our own from the pattern.

Registered in the order build.py imports the modules (``casebook.case``)."""

from __future__ import annotations

import json

from casebook import Case, case, cycles

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

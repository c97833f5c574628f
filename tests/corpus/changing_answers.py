"""Corpus cases: polls whose answer moves, and calls that change what later calls read
(shell writes among them).

Registered in the order build.py imports the modules (``casebook.case``)."""

from __future__ import annotations

import json

from casebook import Case, case, cycles

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

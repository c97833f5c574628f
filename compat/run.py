"""Boot a real dsh against the scripted mock model and assert what the breaker did.

Each scenario scripts a loop for the mock model, runs one headless dsh turn (bounded by a
timeout, in its own process group), then judges the run from dsh's own session log
(`session.jsonl.zstd`: `tool/call` and `tool/result` events), from side effects on disk and
from what the mock model was sent back. It prints a short trajectory and a PASS/FAIL line.

    python compat/run.py --home /tmp/dsh-compat/rc8-dir        # all scenarios
    python compat/run.py --home ... --scenario loop-a-identical --save-sessions examples/sessions

`--home` is a DSH_HOME prepared by compat/setup.sh (it reads `compat.env` there). The scenarios
are compat/scenarios.py's; one run and what its log says, compat/dsh_run.py's.
Exit status: 0 when every scenario passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dsh_run import DshRun, Outcome, Target, attempts_of, find_session, read_events, run_dsh
from mock_model import MockModel, Script
from scenarios import SCENARIOS, Scenario, finished_in_time

HIT_LINE = re.compile(r"^- (\w+:.*) (\d+/\d+)$")


def print_trajectory(o: Outcome) -> None:
    """One line per attempt; a denial also lists the fingerprints it names (`- key n/cap` lines)."""
    for n, a in enumerate(o.attempts, 1):
        command = str(a.arguments.get("command", a.arguments))
        label = f"{command[:50]}…{command[-45:]}" if len(command) > 96 else command
        decoys = ", ".join(f"{k}={a.arguments[k]}" for k in ("description", "timeoutMs") if k in a.arguments)
        print(f"  attempt {n}: {a.name} {label}   [{decoys}]")
        verdict = "STOPPED" if a.is_error and a.text.startswith("Error:") else "ran    "
        print(f"             {verdict} isError={a.is_error} | {a.headline[:120]}")
        hits = [f"{m[1][:60]} {m[2]}" for m in map(HIT_LINE.match, a.text.splitlines()) if m]
        if hits:
            print(f"             hits: {'; '.join(hits)}")


def expect_model_saw_the_logged_text(o: Outcome) -> None:
    """What the mock model was sent back is, call by call, exactly the text the log records."""
    sent = {r["tool_call_id"]: r["content"] for r in o.received}
    o.expect(
        len(sent) == len(o.attempts), f"the model got {len(sent)} tool results for {len(o.attempts)} calls"
    )
    for n, a in enumerate(o.attempts, 1):
        o.expect(
            sent.get(a.call_id, a.text) == a.text,
            f"attempt {n}: the model was sent other text than the log's",
        )


def play(
    target: Target,
    scenario: Scenario,
    save_sessions: Path | None = None,
    quiet: bool = False,
    work_root: Path | None = None,
) -> Outcome:
    """Run one scenario and judge it; the outcome holds the run, the session log and any failures.

    ``quiet``: print nothing (the demo tells the story itself). ``work_root``: where the scenario's
    working folder goes (default: the dsh home's ``work``)."""
    work = (work_root or target.home / "work") / scenario.name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    calls = scenario.calls(work, target.mock_port)
    model = MockModel(
        Script(tuple(calls), final="compat run complete"),
        port=target.mock_port,
        record_path=work / "received.json",
    ).start()
    started = time.time()
    try:
        with retuned(target, scenario.config) as patch_args:
            run = run_dsh(target, [*patch_args, f"compat scenario {scenario.name}"], work, scenario.env)
    finally:
        model.stop()
    session = find_session(target.home, work, started - 1)
    events = read_events(session) if session else []
    outcome = Outcome(
        target,
        work,
        run,
        session,
        events,
        attempts_of(events),
        model.received.tool_results,
        model.received.health_hits,
    )
    if not quiet:
        print(f"=== {scenario.name}: {scenario.summary} ({run.seconds:.1f} s)")
        print_trajectory(outcome)
    finished_in_time(outcome)
    if session is None:
        outcome.failures.append("no session log was written")
    else:
        scenario.check(outcome)
        expect_model_saw_the_logged_text(outcome)
        if save_sessions is not None:
            save_sessions.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(session, save_sessions / f"{scenario.name}.jsonl.zstd")
    return outcome


def run_scenario(target: Target, scenario: Scenario, save_sessions: Path | None) -> bool:
    outcome = play(target, scenario, save_sessions)
    if any(NO_FRONTEND_LINE.match(line) for line in outcome.run.stderr.splitlines()):
        outcome.failures.append("the plugin said the profile has no frontend, in a profile that has one")
    return report(scenario.name, outcome.failures, outcome.run)


def report(name: str, failures: list[str], run: DshRun) -> bool:
    for failure in failures:
        print(f"  - {failure}")
    if failures and run.stderr.strip():
        print("  dsh stderr (tail):")
        for line in run.stderr.strip().splitlines()[-8:]:
            print(f"    {line}")
    print(f"{'PASS' if not failures else 'FAIL'}: {name}")
    return not failures


# --- boot-level checks: the composed tree, and a config that must not boot ----------------

ROW = "- id: repeat-tool-breaker"
#: Bad values, each with what its line must hold: the key, the value, what is allowed.
INVALID_CONFIGS = (
    ("limits: { exact: 1 }", ("limits.exact", "got 1", ">= 2")),
    ("window: -3", ("window", "got -3", ">= 4")),
)
#: What the plugin's line must start with and hold, as `rtb check` prints it.
PLUGIN_LINE = re.compile(r"^repeat-tool-breaker: .*\. Fix: .*cordis\.patch\.yml")
#: A stack frame in the plugin's own code, which a config error must not show.
OWN_FRAME = re.compile(r"^\s*at .*(node-shim|breaker)/")


def provenance_of_row(dump: str) -> str | None:
    """The `# == <layer>` header in force where the breaker's row is printed."""
    header = None
    for line in dump.splitlines():
        if line.startswith("# == "):
            header = line[len("# == ") :]
        elif line.strip() == ROW:
            return header
    return None


def check_dump_config(target: Target) -> bool:
    work = target.home / "work"
    run = run_dsh(target, ["--dump-config"], work, {}, timeout=60)
    print(f"=== dump-config: the composed tree shows the row and where it came from ({run.seconds:.1f} s)")
    failures = []
    if run.returncode != 0:
        failures.append(f"--dump-config exited with {run.returncode}")
    layer = provenance_of_row(run.stdout)
    print(f"  row layer: {layer}")
    expected_layer = str(target.patch) if target.patch else "dsh-repeat-tool-breaker"
    if layer is None:
        failures.append("no repeat-tool-breaker row in the composed tree")
    elif not layer.startswith(expected_layer):
        failures.append(f"the row's layer is {layer!r}, expected it to start with {expected_layer!r}")
    return report("dump-config", failures, run)


@contextlib.contextmanager
def retuned(target: Target, config: str) -> Iterator[list[str]]:
    """The row reconfigured with `config` (a `config:` body) while the block runs; yields dsh args.

    Bundle modes retune through the profile's own patch; with an overlay mount the row only
    exists after the overlay, so the retune goes in a second overlay after it.
    """
    if not config:
        yield []
        return
    row = f"{ROW}\n  config:\n" + "".join(f"    {line}\n" for line in config.splitlines())
    if target.patch is not None:
        retune = target.home / "retune.yml"
        retune.write_text(row)
        yield ["--patch", str(retune)]
        return
    original = target.profile_patch.read_text()
    target.profile_patch.write_text(original + row)
    try:
        yield []
    finally:
        target.profile_patch.write_text(original)


def check_invalid_config(target: Target) -> bool:
    """A bad value must stop the boot loudly: the plugin's line first on the terminal, alone."""
    work = target.home / "work" / "invalid-config"
    work.mkdir(parents=True, exist_ok=True)
    failures: list[str] = []
    for config, parts in INVALID_CONFIGS:
        model = MockModel(Script(calls=(), final="ok"), port=target.mock_port).start()
        try:
            with retuned(target, config) as patch_args:
                run = run_dsh(target, [*patch_args, "reply ok"], work, {}, timeout=60, merged=True)
        finally:
            model.stop()
        # stdout and stderr through one pipe, in the order a terminal shows them
        lines = [line for line in run.stdout.splitlines() if line.strip()]
        first = lines[0] if lines else ""
        print(f"=== invalid-config: {config} must fail the boot ({run.seconds:.1f} s)")
        print(f"  exit {run.returncode} | first line: {first.strip()[:300]}")
        if run.returncode in (0, None):
            failures.append(f"{config}: dsh exited with {run.returncode}, expected a non-zero exit")
        if not PLUGIN_LINE.match(first):
            failures.append(f"{config}: the first line on the terminal is not the plugin's: {first[:120]!r}")
        elif not all(part in first for part in parts):
            failures.append(f"{config}: the line does not name the key, the value and what is allowed")
        own_frames = [line.strip() for line in lines if OWN_FRAME.search(line)]
        if own_frames:
            failures.append(f"{config}: dsh printed frames of the plugin's own code: {own_frames[:2]}")
    return report("invalid-config", failures, run)


#: What the plugin says in a profile with no frontend, where dsh itself waits without a word.
NO_FRONTEND_LINE = re.compile(
    r"^\[repeat-tool-breaker\] this dsh profile has no frontend to run a task .*Fix: "
)
NO_FRONTEND_WAIT_S = 8


@contextlib.contextmanager
def without_headless(target: Target) -> Iterator[None]:
    """The profile's bundles without `@deepseek-ai/dsh-headless` while the block runs."""
    manifest = target.profile_dir / "package.json"
    original = manifest.read_text()
    document = json.loads(original)
    bundles = document["dsh"]["profile"]["bundles"]
    document["dsh"]["profile"]["bundles"] = [b for b in bundles if b != "@deepseek-ai/dsh-headless"]
    manifest.write_text(json.dumps(document))
    try:
        yield
    finally:
        manifest.write_text(original)


def check_no_frontend(target: Target) -> bool:
    """A profile without the headless bundle: dsh waits silently; the plugin must say why and the fix."""
    work = target.home / "work" / "no-frontend"
    work.mkdir(parents=True, exist_ok=True)
    with without_headless(target):
        run = run_dsh(target, ["reply ok"], work, {}, timeout=NO_FRONTEND_WAIT_S)
    said = [line for line in run.stderr.splitlines() if NO_FRONTEND_LINE.match(line)]
    print(f"=== no-frontend: a profile without dsh-headless ({run.seconds:.1f} s, exit {run.returncode})")
    print(f"  {said[0][:200] if said else '(nothing said)'}")
    failures = []
    if len(said) != 1:
        failures.append(f"the plugin said {len(said)} times what is missing, expected once")
    return report("no-frontend", failures, run)


#: A row for the plugin under a misspelt id: dsh ignores it without a word; the plugin names it.
MISSPELT_ROW = "- id: repeat-tool-braker\n  config:\n    limits: { exact: 3 }\n"
STRAY_LINE = re.compile(
    r"^\[repeat-tool-breaker\] the row 'repeat-tool-braker' is not this plugin's row .*Fix: "
)


def check_misspelt_row(target: Target) -> bool:
    """A row whose id is one edit from the plugin's: the boot says so in one line and goes on."""
    work = target.home / "work" / "misspelt-row"
    work.mkdir(parents=True, exist_ok=True)
    original = target.profile_patch.read_text()
    target.profile_patch.write_text(original + MISSPELT_ROW)
    model = MockModel(Script(calls=(), final="ok"), port=target.mock_port).start()
    try:
        run = run_dsh(target, ["reply ok"], work, {}, timeout=60)
    finally:
        model.stop()
        target.profile_patch.write_text(original)
    said = [line for line in run.stderr.splitlines() if STRAY_LINE.match(line)]
    print(f"=== misspelt-row: repeat-tool-braker in the profile ({run.seconds:.1f} s, exit {run.returncode})")
    print(f"  {said[0][:200] if said else '(nothing said)'}")
    failures = []
    if len(said) != 1:
        failures.append(f"the plugin named the misspelt row {len(said)} times, expected once")
    if run.returncode != 0:
        failures.append(f"dsh exited with {run.returncode}: the boot must go on, on the defaults")
    return report("misspelt-row", failures, run)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--home", type=Path, required=True, help="a DSH_HOME prepared by compat/setup.sh")
    names = [s.name for s in SCENARIOS] + ["dump-config", "invalid-config", "misspelt-row", "no-frontend"]
    parser.add_argument("--scenario", action="append", choices=names, help="run only these (repeatable)")
    parser.add_argument("--save-sessions", type=Path, help="copy each scenario's session log here")
    args = parser.parse_args()
    target = Target.load(args.home.resolve())
    selected = args.scenario or names
    print(f"##### dsh {target.version}, plugin mounted by '{target.mode}', DSH_HOME {target.home}")
    results = []
    if "dump-config" in selected:
        results.append(check_dump_config(target))
    for scenario in SCENARIOS:
        if scenario.name in selected:
            results.append(run_scenario(target, scenario, args.save_sessions))
    if "invalid-config" in selected:
        results.append(check_invalid_config(target))
    if "misspelt-row" in selected:
        results.append(check_misspelt_row(target))
    if "no-frontend" in selected:
        results.append(check_no_frontend(target))
    passed = sum(results)
    print(
        f"COMPAT {target.version} {target.mode}: {'PASS' if passed == len(results) else 'FAIL'} "
        f"({passed}/{len(results)} passed)"
    )
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())

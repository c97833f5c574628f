"""The ways a user installs the plugin, each ending in a real dsh boot that gates, or fails loud.

compat/run.py judges what the breaker does once it runs; this judges what it takes to get it
running: the worker environment the first boot prepares in the per-user cache (announced once,
reused after), an upgrade whose Python dependencies changed, a first boot that cannot prepare
one (no package index; no Python; a Python older than 3.10), and `rtb` where the user looks for it (`npx
rtb` in the profile; a `pip install` of the same package), straight after each install.

    python compat/install_paths.py --home HOME --check first-boot [--check pip-rtb]

`--home` is a DSH_HOME prepared by compat/setup.sh with an empty cache (the default there).
Exit status: 0 when every check passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dsh_run import DshRun, Outcome, Target, run_dsh
from mock_model import MockModel, Script
from run import play, report
from scenarios import SCENARIOS, counter_lines

LOOP_A = next(scenario for scenario in SCENARIOS if scenario.name == "loop-a-identical")
PREPARING = re.compile(r"no worker environment for dsh-repeat-tool-breaker (\S+) yet: preparing (\S+)")
READY = re.compile(r"worker environment ready after (\d+\.\d) s")
RTB_TIMEOUT_S = 300.0
# A Python 3.9 to point RTB_PYTHON at: on PATH, or where pyenv keeps it on these machines.
OLD_PYTHONS = ("python3.9", f"{os.environ.get('PYENV_ROOT', '/root/.pyenv')}/versions/3.9.18/bin/python3")


def environments(target: Target) -> list[Path]:
    """The complete worker environments in the target's cache (partial folders excluded)."""
    folder = target.cache / "dsh-repeat-tool-breaker"
    return (
        sorted(p for p in folder.glob("*") if (p / "rtb-environment.json").is_file())
        if folder.is_dir()
        else []
    )


def leftovers(target: Target) -> list[Path]:
    """Anything in the plugin's cache folder that is not a complete environment (or the record of
    which installed copy uses which, `users/`)."""
    folder = target.cache / "dsh-repeat-tool-breaker"
    found = set(folder.glob("*")) if folder.is_dir() else set()
    return sorted(found - set(environments(target)) - {folder / "users"})


def announcements(run: DshRun) -> tuple[list[re.Match[str]], list[re.Match[str]]]:
    """The plugin's "preparing" and "ready after" lines on dsh's stderr."""
    lines = run.stderr.splitlines()
    return [m for m in map(PREPARING.search, lines) if m], [m for m in map(READY.search, lines) if m]


def offline(target: Target) -> dict[str, str]:
    """pip with no package index to reach: what a boot without network finds."""
    return {
        "PIP_NO_INDEX": "1",
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_FIND_LINKS": str(target.home / "no-wheels"),
    }


def gated_boot(target: Target, failures: list[str], label: str, env: dict[str, str] | None = None) -> Outcome:
    """Loop A on a real boot (with `env` added); its failures are added to `failures` under `label`."""
    outcome = play(target, replace(LOOP_A, env=env or {}))
    failures.extend(f"{label}: {failure}" for failure in outcome.failures)
    return outcome


def expect_one_preparation(run: DshRun, version: str, failures: list[str], label: str) -> Path | None:
    """The boot announced exactly one preparation, for `version`, and how long it took."""
    preparing, ready = announcements(run)
    if len(preparing) != 1 or len(ready) != 1:
        failures.append(
            f"{label}: expected one 'preparing' and one 'ready after' line, got {len(preparing)}/{len(ready)}"
        )
        return None
    print(f"  {label}: prepared {preparing[0][2]} in {ready[0][1]} s")
    if preparing[0][1] != version:
        failures.append(f"{label}: prepared an environment for {preparing[0][1]}, expected {version}")
    return Path(preparing[0][2])


def rtb_command(target: Target) -> tuple[list[str], Path]:
    """`npx --no rtb` where the user has it: the profile, or the checkout itself for a path mount.

    `--no` keeps npx from ever fetching a package of that name from the registry.
    """
    cwd = target.plugin_dir if target.mode == "overlay" else target.profile_dir
    return ["npx", "--no", "rtb"], cwd


def user_env(target: Target) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RTB_PYTHON"}
    env["XDG_CACHE_HOME"] = str(target.cache)
    return env


def replay_output(
    command: list[str], session: Path, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*command, "replay", str(session)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=RTB_TIMEOUT_S,
    )


def expect_rtb_replays(target: Target, session: Path | None, failures: list[str], label: str) -> str:
    """`rtb replay` on the boot's own `.jsonl.zstd` log shows loop A: 4 executed, 2 blocked, no difference."""
    if session is None:
        failures.append(f"{label}: no session log to replay")
        return ""
    command, cwd = rtb_command(target)
    result = replay_output(command, session, cwd, user_env(target))
    rows = [line for line in result.stdout.splitlines() if "recorded:" in line or "replayed" in line]
    shown = " / ".join(line.strip() for line in rows)
    print(f"  {label}: {' '.join(command)} replay <session> -> exit {result.returncode}: {shown}")
    if result.returncode != 0:
        failures.append(f"{label}: rtb exited with {result.returncode}: {result.stderr.strip()[-300:]}")
    elif not re.search(
        r"recorded: 4 executed, 2 blocked\n\s+replayed\s+2 denied, first at #5; "
        r"differs from the recording on 0 calls",
        result.stdout,
    ):
        failures.append(f"{label}: rtb replay did not show loop A as recorded and replayed:\n{result.stdout}")
    return result.stdout


def expect_rtb_from_anywhere(target: Target, failures: list[str]) -> None:
    """docs/rtb.md's `npx --no --prefix <profile> rtb replay`, run outside the profile with no path:
    it finds dsh's sessions folder ($DSH_HOME/sessions) and shows loop A's stop."""
    if target.mode == "overlay":
        return
    command = ["npx", "--no", "--prefix", str(target.profile_dir), "rtb"]
    env = {**user_env(target), "DSH_HOME": str(target.home)}
    result = subprocess.run(
        [*command, "replay"],
        cwd=target.home / "work",
        env=env,
        capture_output=True,
        text=True,
        timeout=RTB_TIMEOUT_S,
    )
    print(f"  rtb from anywhere: {' '.join(command)} replay -> exit {result.returncode}")
    if result.returncode != 0 or "2 denied, first at #5" not in result.stdout:
        failures.append(f"rtb replay outside the profile, no path: {result.stdout}{result.stderr[-300:]}")


# --- the checks ------------------------------------------------------------------------------


def check_first_boot(target: Target) -> bool:
    """An empty cache: the first boot prepares the environment, says so once with the time it took,
    and gates; `rtb replay` reads that boot's log; the next boot, offline, reuses it silently."""
    print("=== first-boot: an empty cache; the boot prepares its own environment")
    failures: list[str] = []
    if environments(target):
        failures.append("the cache already holds an environment; this check needs an empty one")
    package = target.plugin_dir if target.mode == "overlay" else installed_package(target)
    files_before = files_under(package)
    first = gated_boot(target, failures, "first boot")
    version = json_version(package)
    expect_one_preparation(first.run, version, failures, "first boot")
    if len(environments(target)) != 1 or leftovers(target):
        found = [*environments(target), *leftovers(target)]
        failures.append(f"expected one environment and nothing half-made in the cache: {found}")
    expect_rtb_replays(target, first.session, failures, "rtb")
    expect_rtb_from_anywhere(target, failures)
    second = gated_boot(target, failures, "second boot, offline", offline(target))
    if any(announcements(second.run)):
        failures.append("the second boot prepared an environment again instead of reusing it")
    expect_this_plugin(target, package, failures)
    if target.mode not in ("dir", "overlay", "plugin-dir"):  # a copy, not the checkout being tested
        added = sorted(files_under(package) - files_before)
        if added:
            failures.append(f"the boots and rtb wrote into the installed package: {added[:3]}")
    return report("first-boot", failures, first.run)


def expect_this_plugin(target: Target, package: Path, failures: list[str]) -> None:
    """What was installed is this plugin, from the spec given, not the npm package of that name."""
    if not (package / "breaker" / "worker.py").is_file():
        failures.append(f"{package} is not this plugin (no breaker/worker.py)")
    if target.mode == "overlay":
        return
    manifest = json.loads((target.profile_dir / "package.json").read_text())
    spec = manifest.get("dependencies", {}).get("dsh-repeat-tool-breaker", "")
    print(f"  the profile depends on dsh-repeat-tool-breaker {spec or '(not listed)'}")
    expected = {"plugin-dir": "link:", "plugin-git": "git+file://"}.get(target.mode)
    if expected and not spec.startswith(expected):
        failures.append(f"the profile's dependency is {spec!r}, expected it to start with {expected!r}")


def files_under(folder: Path) -> set[Path]:
    """Every file below `folder` (following the link a package manager may have put there) but
    Python's own bytecode cache, which Python writes beside the sources wherever it may."""
    return {p for p in folder.resolve().rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def installed_package(target: Target) -> Path:
    return target.profile_dir / "node_modules" / "dsh-repeat-tool-breaker"


def json_version(package: Path) -> str:
    version: str = json.loads((package / "package.json").read_text())["version"]
    return version


def check_upgrade(target: Target) -> bool:
    """An upgrade to a version whose Python dependencies changed gets a fresh environment, and the
    old one, which lacks the new dependency and which no installed copy uses any more, is removed."""
    print("=== upgrade: the next version needs a new Python dependency (six)")
    failures: list[str] = []
    if target.upgrade_tarball is None:
        return report(
            "upgrade",
            ["this target has no UPGRADE_TARBALL (compat/setup.sh ... upgrade)"],
            DshRun(0, "", "", 0),
        )
    before = gated_boot(target, failures, "before the upgrade")
    old = expect_one_preparation(
        before.run, json_version(installed_package(target)), failures, "before the upgrade"
    )
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", str(target.upgrade_tarball)],
        cwd=target.profile_dir,
        check=True,
        timeout=RTB_TIMEOUT_S,
    )
    after = gated_boot(target, failures, "after the upgrade")
    new = expect_one_preparation(
        after.run, json_version(installed_package(target)), failures, "after the upgrade"
    )
    if old and new:
        print(f"  environments: {old.name} before, {new.name} (six: {has_module(new, 'six')}) after")
        if old == new or not has_module(new, "six"):
            failures.append(f"expected a new environment with six: {old.name} -> {new.name}")
        if environments(target) != [new]:
            failures.append(f"the old environment, unused, is still there: {environments(target)}")
    expect_rtb_replays(target, after.session, failures, "rtb after the upgrade")
    return report("upgrade", failures, after.run)


def check_shared_environment(target: Target) -> bool:
    """A next version with the same Python dependency list boots on the environment the installed
    one prepared: nothing is prepared again, nothing is removed, one environment in the cache."""
    print("=== shared-environment: the next version keeps the Python dependency list")
    failures: list[str] = []
    gated_boot(target, failures, "before the upgrade")  # prepares the environment if the cache is empty
    package = installed_package(target)
    found = environments(target)
    old = found[0] if len(found) == 1 else None
    if old is None:
        failures.append(f"expected one environment before the upgrade: {found}")
    next_version = target.home / "next-same-dependencies"
    subprocess.run(["rm", "-rf", str(next_version)], check=True)
    subprocess.run(["cp", "-rL", str(package), str(next_version)], check=True)
    manifest = json.loads((next_version / "package.json").read_text())
    major, minor, patch = (int(part) for part in manifest["version"].split("-")[0].split("."))
    manifest["version"] = f"{major}.{minor}.{patch + 1}"
    (next_version / "package.json").write_text(json.dumps(manifest, indent=2))
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", str(next_version)],
        cwd=target.profile_dir,
        check=True,
        timeout=RTB_TIMEOUT_S,
    )
    after = gated_boot(target, failures, "after the upgrade")
    print(f"  {json_version(installed_package(target))} boots on {[p.name for p in environments(target)]}")
    if any(announcements(after.run)):
        failures.append("the next version prepared an environment although its dependency list is the same")
    if old is not None and environments(target) != [old]:
        failures.append(f"expected the one environment {old.name} to be shared: {environments(target)}")
    return report("shared-environment", failures, after.run)


def has_module(environment: Path, module: str) -> bool:
    probe = subprocess.run(
        [str(environment / "bin" / "python"), "-c", f"import {module}"], capture_output=True
    )
    return probe.returncode == 0


def failed_boot(target: Target, extra_env: dict[str, str]) -> tuple[DshRun, int]:
    """A boot that must fail: its run, and how many of loop A's side effects happened anyway."""
    work = target.home / "work" / "failed-boot"
    work.mkdir(parents=True, exist_ok=True)
    model = MockModel(
        Script(tuple(LOOP_A.calls(work, target.mock_port)), final="done"), port=target.mock_port
    )
    model.start()
    try:
        run = run_dsh(target, ["compat scenario failed-boot"], work, extra_env, timeout=RTB_TIMEOUT_S)
    finally:
        model.stop()
    return run, counter_lines(work)


def expect_loud_failure(run: DshRun, ran: int, pattern: str, failures: list[str]) -> None:
    message = next((line for line in (run.stderr + run.stdout).splitlines() if re.search(pattern, line)), "")
    print(f"  exit {run.returncode} | {message.strip()[:220]}")
    if run.returncode in (0, None):
        failures.append(
            f"dsh exited with {run.returncode}: the boot must fail rather than run without a gate"
        )
    if not message:
        failures.append(f"no output line matches {pattern!r}")
    if ran:
        failures.append(f"{ran} tool calls ran although the boot had no gate")


def check_offline_boot(target: Target) -> bool:
    """No package index and no cache: the boot fails loud, naming what failed and the command that
    fixes it, runs no tool call, and leaves nothing half-made in the cache."""
    print("=== offline-boot: an empty cache and no package index")
    failures: list[str] = []
    run, ran = failed_boot(target, offline(target))
    pattern = r"installing the worker's Python packages .* failed"
    expect_loud_failure(run, ran, pattern, failures)
    if not re.search(r"With network access, run `node \S+/node-shim/setup\.js`", run.stderr):
        failures.append("the failure does not name the command that fixes it")
    if environments(target) or leftovers(target):
        failures.append(f"the failed preparation left something in the cache: {leftovers(target)}")
    return report("offline-boot", failures, run)


def check_no_python(target: Target) -> bool:
    """No Python on PATH at all: the boot fails loud, saying what to install, and runs no tool."""
    print("=== no-python: an empty cache and no Python on PATH")
    failures: list[str] = []
    run, ran = failed_boot(target, {"PATH": str(target.node_dir)})
    pattern = r"the worker needs Python >= 3\.10 and none is on PATH .* Install it"
    expect_loud_failure(run, ran, pattern, failures)
    if any(announcements(run)):
        failures.append("a preparation was announced although it could not start")
    return report("no-python", failures, run)


def check_old_python(target: Target) -> bool:
    """RTB_PYTHON pointing at Python 3.9: "needs Python >= 3.10", not a traceback."""
    print("=== old-python: RTB_PYTHON is a Python 3.9")
    old = next(
        (p for p in OLD_PYTHONS if subprocess.run([p, "-V"], capture_output=True).returncode == 0), None
    )
    if old is None:
        print("SKIP: old-python (no Python 3.9 on this machine)")
        return True
    failures: list[str] = []
    run, ran = failed_boot(target, {"RTB_PYTHON": old})
    expect_loud_failure(
        run, ran, r"the worker needs Python >= 3\.10, but .* \(from RTB_PYTHON\) is Python 3\.9", failures
    )
    return report("old-python", failures, run)


def check_pip_rtb(target: Target) -> bool:
    """`pip install` of the packed package gives the same `rtb` as `npx --no rtb`: same replay and output."""
    print("=== pip-rtb: rtb from a pip install of the same package")
    failures: list[str] = []
    tarballs = sorted(target.home.glob("dsh-repeat-tool-breaker-*.tgz"))
    boot = gated_boot(target, failures, "boot")
    if not tarballs or boot.session is None:
        return report(
            "pip-rtb", [*failures, "needs a packed tarball (pack modes) and a session log"], boot.run
        )
    venv = target.home / "pip-rtb"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=RTB_TIMEOUT_S)
    # pip's cache inside the throwaway home: the wheel it builds of the package is not left behind
    install = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(tarballs[0])],
        capture_output=True,
        text=True,
        timeout=RTB_TIMEOUT_S,
        env={**os.environ, "PIP_CACHE_DIR": str(target.home / "pip-cache")},
    )
    if install.returncode != 0:
        return report(
            "pip-rtb", [f"pip install {tarballs[0].name} failed: {install.stderr[-400:]}"], boot.run
        )
    env = user_env(target)
    # both in the profile folder, so both read the profile's configuration (and say so alike)
    command, cwd = rtb_command(target)
    pip_rtb = replay_output([str(venv / "bin" / "rtb")], boot.session, cwd, env)
    npx_rtb = replay_output(command, boot.session, cwd, env)
    print(f"  pip's rtb exit {pip_rtb.returncode}, npx --no rtb exit {npx_rtb.returncode}")
    if pip_rtb.returncode != 0 or pip_rtb.stdout != npx_rtb.stdout or "2 blocked" not in pip_rtb.stdout:
        pip_said = pip_rtb.stdout + pip_rtb.stderr
        failures.append(f"the two rtb differ or failed:\n--- pip\n{pip_said}\n--- npx\n{npx_rtb.stdout}")
    return report("pip-rtb", failures, boot.run)


CHECKS: dict[str, Callable[[Target], bool]] = {
    "offline-boot": check_offline_boot,
    "no-python": check_no_python,
    "old-python": check_old_python,
    "first-boot": check_first_boot,
    "upgrade": check_upgrade,
    "shared-environment": check_shared_environment,
    "pip-rtb": check_pip_rtb,
}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--home", type=Path, required=True, help="a DSH_HOME prepared by compat/setup.sh")
    parser.add_argument(
        "--check", action="append", choices=list(CHECKS), required=True, help="in the order given"
    )
    args = parser.parse_args()
    target = Target.load(args.home.resolve())
    print(f"##### dsh {target.version}, installed by '{target.mode}', cache {target.cache}")
    results = [CHECKS[name](target) for name in args.check]
    verdict = "PASS" if all(results) else "FAIL"
    print(f"INSTALL {target.version} {target.mode}: {verdict} ({sum(results)}/{len(results)} passed)")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())

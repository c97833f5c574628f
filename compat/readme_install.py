"""The README's install, exactly as written: from nothing to a denied call in a real headless dsh.

Runs the README's marked shell blocks verbatim, in the clone, as a new user on a fresh machine:
a scratch HOME (so no dsh, no profile, no worker environment, no pnpm yet) and a DSH_HOME
elsewhere than ``~/.dsh``, with whatever Node is on PATH (the install brings Node 22).

1. the README's ``settings`` lines for a local OpenAI-compatible server, its address made the
   scripted model's (compat/mock_model.py), into ``$DSH_HOME/settings.yaml``;
2. ``install``: dsh, Node 22 and pnpm from the committed lock, fix 2 in the headless profile,
   ``dsh plugin --profile headless add "$PWD"``;
3. a row of the user's own in the profile (``limits: { exact: 3 }``), then a headless dsh turn
   against that model: the same ``cat`` 7 times, the 3rd on denied; the first boot prepares
   the worker environment;
4. ``replay``: ``rtb replay`` in the profile folder must agree with the recording on every call
   (it reads the profile's configuration);
5. ``try``: ``npm run demo``, with no key, in that profile on that dsh (no second dsh installed):
   its calls stopped, and the ``rtb replay`` command its last line prints agreeing with them;
6. ``uninstall``: the plugin, its bundle, its link and ``rtb``, its cache folders are gone
   (``npx --no rtb`` is not found in the profile); ``~/.dsh`` never appeared.

It prints how long the README's route took from nothing to the demo's replay (no time is
asserted: a figure, as benchmarks print).

    python compat/readme_install.py [--keep]

Exit status: 0 when every step did what the README says, 1 otherwise. Nothing is left: the
scratch folder is removed at the end (``--keep`` keeps it and says where).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dsh_run import BLOCKED, PROXY_VARIABLES, Outcome, Target
from mock_model import ScriptedCall
from run import play, report
from scenarios import Scenario

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PROFILE = "headless"
STEP_TIMEOUT_S = 900.0
#: A README block run verbatim: ```sh between <!-- NAME:begin --> and <!-- NAME:end -->.
BLOCK = re.compile(r"<!-- (?P<name>[a-z-]+):begin -->\n```sh\n(?P<body>.*?)```\n<!-- (?P=name):end -->", re.S)
#: What the user's shell reports after the install block (appended, the block itself untouched).
AFTER_INSTALL = '\nprintf "\\nPATH=%s\\n" "$PATH"\n'
#: Where the worker environment and the plugin's cache folder go for a user with no XDG_CACHE_HOME.
CACHE_FOLDER = Path(".cache") / "dsh-repeat-tool-breaker"
#: The user's own environment variables that a fresh machine does not have.
NOT_ON_A_FRESH_MACHINE = ("DSH_HOME", "RTB_PYTHON", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME")
#: The README blocks run, in this order (tests/test_readme.py keeps the README marking them).
BLOCKS_RUN = ("install", "replay", "try", "uninstall")
#: What the scripted model calls until it is stopped: the same file read the same way.
REPEATS = 7
#: The row a user adds to the profile's cordis.patch.yml (README, Configure): a cap unlike the
#: defaults', so the live stop shows it was in force and ``rtb replay`` agrees only if it reads it.
PROFILE_ROW = "- id: repeat-tool-breaker\n  config:\n    limits: { exact: 3 }\n"
FIRST_STOP = 3


def readme_blocks() -> dict[str, str]:
    return {m["name"]: m["body"] for m in BLOCK.finditer(README.read_text(encoding="utf-8"))}


def npm_cache() -> str:
    """The machine's npm download cache: a fresh HOME would otherwise fetch dsh's 450 packages again."""
    found = subprocess.run(["npm", "config", "get", "cache"], capture_output=True, text=True, check=False)
    return found.stdout.strip()


def fresh_environment(scratch: Path) -> dict[str, str]:
    """A new user's environment: HOME in the scratch folder, DSH_HOME elsewhere than ~/.dsh."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in NOT_ON_A_FRESH_MACHINE and k.lower() not in PROXY_VARIABLES and not k.startswith("npm_")
    }
    cache = npm_cache()
    env.update(
        HOME=str(scratch / "home"), DSH_HOME=str(scratch / "elsewhere" / "dsh"), TMPDIR=str(scratch / "tmp")
    )
    if cache:
        env["npm_config_cache"] = cache
    env["npm_config_update_notifier"] = "false"
    return env


def shell(script: str, env: dict[str, str], label: str) -> subprocess.CompletedProcess[str]:
    """Run a README block in bash from the clone, as the user would paste it; print what it said."""
    print(f"=== README {label}:\n" + "".join(f"    $ {line}\n" for line in script.strip().splitlines()))
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=STEP_TIMEOUT_S,
        check=False,
    )
    tail = (done.stdout + done.stderr).strip().splitlines()[-6:]
    print(f"  exit {done.returncode}" + "".join(f"\n  | {line}" for line in tail))
    return done


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


#: The README's lines for a local OpenAI-compatible server, and the address they name.
SETTINGS = re.compile(r"<!-- settings:begin -->\n```yaml\n(?P<body>.*?)```\n<!-- settings:end -->", re.S)
README_SERVER = re.compile(r"http://127\.0\.0\.1:\d+/v1")


def declare_the_model(dsh_home: Path, port: int, env: dict[str, str]) -> bool:
    """The README's settings lines for a local server, its address made the scripted model's, and
    the variable they read its key from exported, as the README says (any text)."""
    found = SETTINGS.search(README.read_text(encoding="utf-8"))
    key = re.search(r"apiKeyEnv: (\w+)", found["body"]) if found else None
    if found is None or key is None or not README_SERVER.search(found["body"]):
        print("FAIL: readme-install: the README has no marked settings block for a server on 127.0.0.1")
        return False
    dsh_home.mkdir(parents=True, exist_ok=True)
    (dsh_home / "settings.yaml").write_text(README_SERVER.sub(f"http://127.0.0.1:{port}/v1", found["body"]))
    env[key[1]] = "no-key-needed"
    return True


def same_read(work: Path, port: int) -> list[ScriptedCall]:
    notes = work / "notes.txt"
    notes.write_text("the answer is 42\n")
    call = ScriptedCall("bash", {"command": f"cat {notes}", "description": "Read the notes"})
    return [call] * REPEATS


def check_denied_after_running(o: Outcome) -> None:
    """The profile's cap was in force: the calls before it ran, from it on every call was denied."""
    if o.expect_attempts(REPEATS):
        o.expect_executed(range(1, FIRST_STOP))
        o.expect_denied(range(FIRST_STOP, REPEATS + 1), BLOCKED)


SCENARIO = Scenario(
    "readme-install",
    "the same read until the plugin stops it, in the profile the README made",
    same_read,
    check_denied_after_running,
)


def bundles(profile: Path) -> list[str]:
    manifest = json.loads((profile / "package.json").read_text())
    listed: list[str] = manifest.get("dsh", {}).get("profile", {}).get("bundles", [])
    return listed + list(manifest.get("dependencies", {}))


def files_left(home: Path) -> list[str]:
    """What is in the scratch HOME, two levels down: what the README's steps leave a user."""
    return sorted(str(p.relative_to(home)) for p in home.glob("*/*")) + sorted(
        str(p.relative_to(home)) for p in home.glob("*") if p.is_file()
    )


def run_all(scratch: Path) -> bool:
    began = time.monotonic()
    env = fresh_environment(scratch)
    home, dsh_home = Path(env["HOME"]), Path(env["DSH_HOME"])
    home.mkdir(parents=True)
    Path(env["TMPDIR"]).mkdir()
    blocks = readme_blocks()
    failures: list[str] = []
    missing = set(BLOCKS_RUN) - set(blocks)
    if missing:
        print(f"FAIL: readme-install: the README has no marked block {sorted(missing)}")
        return False
    port = free_port()
    if not declare_the_model(dsh_home, port, env):
        return False

    # npm's and pnpm's update notices as a new user gets them: the install must turn pnpm's off
    notified = {k: v for k, v in env.items() if k != "npm_config_update_notifier"}
    installed = shell(blocks["install"] + AFTER_INSTALL, notified, "install")
    if installed.returncode != 0:
        print("FAIL: readme-install: the README's install block failed")
        return False
    env["PATH"] = installed.stdout.rsplit("\nPATH=", 1)[1].strip()
    dsh = shutil.which("dsh", path=env["PATH"])
    node = shutil.which("node", path=env["PATH"])
    if dsh is None or node is None:
        print(f"FAIL: readme-install: after the install, dsh is {dsh} and node is {node} on PATH")
        return False
    if "Update available" in installed.stdout + installed.stderr:
        failures.append("dsh plugin add showed pnpm's update notice")

    profile = dsh_home / "profiles" / PROFILE
    with (profile / "cordis.patch.yml").open("a") as patch:
        patch.write(PROFILE_ROW)
    # The turn, in the shell the README left: its PATH, its HOME, its DSH_HOME.
    os.environ.clear()
    os.environ.update(env)
    target = Target(
        home=dsh_home,
        version="0.1.0-rc.8",
        mode="readme",
        dsh_bin=Path(dsh),
        node_dir=Path(node).parent,
        mock_port=port,
        patch=None,
        profile=PROFILE,
        cache=home / ".cache",
        plugin_dir=ROOT,
        upgrade_tarball=None,
    )
    outcome = play(target, SCENARIO)
    failures += outcome.failures
    ready = [line for line in outcome.run.stderr.splitlines() if "worker environment ready after" in line]
    print(f"  first boot: {ready[0].strip() if ready else 'no environment prepared'}")
    if not ready:
        failures.append("the first boot did not prepare the worker environment in the new HOME")

    replayed = shell(blocks["replay"], env, "replay")
    agreed = re.findall(r"differs from the recording on (\d+) call", replayed.stdout)
    if replayed.returncode != 0 or agreed != ["0"]:
        failures.append(f"rtb replay in the profile does not agree with the recording:\n{replayed.stdout}")

    failures += try_it(blocks["try"], env, began)

    removed = shell(blocks["uninstall"], env, "uninstall")
    if removed.returncode != 0:
        failures.append("the README's uninstall block failed")
    failures += left_of_the_plugin(home, profile, env)
    print("  left in HOME: " + ", ".join(files_left(home)))
    return report(SCENARIO.name, failures, outcome.run)


def try_it(block: str, env: dict[str, str], began: float) -> list[str]:
    """The README's try block (the demo, no key) in the profile the install made, then the replay
    command its last line prints: the stops it told, agreed with."""
    failures = []
    demo = shell(block, env, "try")
    said = demo.stdout.strip().splitlines()
    if demo.returncode != 0 or not said or "npx --no rtb replay" not in said[-1]:
        return [f"npm run demo failed or did not end with the rtb replay command:\n{demo.stdout[-1500:]}"]
    if "Running in your headless profile" not in demo.stdout:
        failures.append("the demo did not run in the headless profile the install made")
    if "Setting up dsh" in demo.stdout:
        failures.append("the demo set up a dsh of its own instead of the one the install made")
    replayed = shell(said[-1], env, "replay the demo printed")
    agreed = re.findall(r"differs from the recording on (\d+) call", replayed.stdout)
    if replayed.returncode != 0 or agreed != ["0"] or " denied" not in replayed.stdout:
        failures.append(f"the demo's rtb replay does not show its stops:\n{replayed.stdout[-1500:]}")
    print(
        f"  the README's route, from nothing to the demo's denials replayed: {time.monotonic() - began:.0f} s"
    )
    return failures


def left_of_the_plugin(home: Path, profile: Path, env: dict[str, str]) -> list[str]:
    """What of the plugin the uninstall left, and whether ``npx --no rtb`` still finds it."""
    failures = []
    if "dsh-repeat-tool-breaker" in bundles(profile):
        failures.append("after the uninstall the profile still lists dsh-repeat-tool-breaker")
    for path in (
        profile / "node_modules" / "dsh-repeat-tool-breaker",
        profile / "node_modules" / ".bin" / "rtb",
    ):
        if path.is_symlink() or path.exists():
            failures.append(f"after the uninstall {path} is still there")
    if (home / CACHE_FOLDER).exists():
        failures.append(f"after the uninstall ~/{CACHE_FOLDER} is still there")
    private = list(Path(env["TMPDIR"]).glob("dsh-repeat-tool-breaker-*"))
    if private:
        failures.append(f"after the uninstall the temporary folder holds {private}")
    if (home / ".dsh").exists():
        failures.append("~/.dsh was written to although DSH_HOME is elsewhere")
    npx = subprocess.run(
        ["npx", "--no", "rtb", "check"], cwd=profile, env=env, capture_output=True, text=True, timeout=120
    )
    print(f"  npx --no rtb check in the profile after the uninstall: exit {npx.returncode}")
    if npx.returncode == 0 or "repeat-tool-breaker" in npx.stdout:
        failures.append(f"npx --no rtb still runs the plugin's rtb in the profile:\n{npx.stdout}")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="rtb-readme-install-"))
    try:
        passed = run_all(scratch)
    finally:
        if args.keep:
            print(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())

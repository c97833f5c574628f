"""The README's route for a user without a key, its own commands run against a real dsh.

From a fresh HOME and a fresh DSH_HOME: the Install block's `dsh plugin add` line (on the dsh
compat installed from the committed lock, standing in for the block's first two lines, which
compat/readme_install.py runs too, npm install included), the `try` block (`npm run demo`: a
scripted model, no key) in that profile, the `rtb replay` command the demo's last line prints,
then the `uninstall` block: nothing of the plugin is left and `npx --no rtb` finds nothing.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from fnmatch import fnmatch
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMPAT = ROOT / "compat"
sys.path.insert(0, str(COMPAT))

pytest.importorskip("zstandard", reason="reading session logs needs zstandard")
import readme_install  # noqa: E402

PINNED_BIN = COMPAT / "dsh-0.1.0-rc.8" / "node_modules" / ".bin"


def _tree(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*")) if folder.exists() else []


def _left_undocumented(env: dict[str, str], profile: Path) -> list[str]:
    """What the uninstall left in the user's home, dsh home, profile and temporary folder that the
    table of docs/install.md's "What an uninstall leaves" does not name."""
    page = (ROOT / "docs" / "install.md").read_text()
    named = re.findall(r"`([^`]+)`", page.split("## What an uninstall leaves", 1)[1].split("\n## ", 1)[0])
    home, dsh_home, tmp = Path(env["HOME"]), Path(env["DSH_HOME"]), Path(env["TMPDIR"])
    places = {home / name[2:] for name in named if name.startswith("~/")}
    places |= {dsh_home / name.removeprefix("$DSH_HOME/") for name in named if name.startswith("$DSH_HOME/")}
    bare = [name.rstrip("/") for name in named if "/" not in name.rstrip("/")]

    def documented(path: Path) -> bool:
        for at in (path, *path.parents):
            if at in places or (at.parent in (profile, tmp) and any(fnmatch(at.name, name) for name in bare)):
                return True
        return any(path in place.parents for place in places) or path in (profile, tmp)

    left = []
    for top in (home, dsh_home, tmp):
        for folder, folders, files in os.walk(top):
            for name in [*files, *(f for f in folders if not os.listdir(Path(folder, f)))]:
                if not documented(Path(folder, name)):
                    left.append(str(Path(folder, name)))
    return left


def test_npm_in_the_clone_prints_no_update_notice_after_the_demos_last_line(tmp_path: Path) -> None:
    """The demo's last line is its `rtb replay` command: npm's notice of a newer npm, printed after
    a script's output, is turned off for this clone by its .npmrc (a user's own npm settings kept)."""
    env = readme_install.fresh_environment(tmp_path)
    del env["npm_config_update_notifier"]
    Path(env["HOME"]).mkdir()
    asked = subprocess.run(
        ["npm", "config", "get", "update-notifier"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert asked.stdout.strip() == "false"


@pytest.mark.skipif(
    not (PINNED_BIN / "dsh").exists(),
    reason="the pinned dsh 0.1.0-rc.8 is not installed (compat/setup.sh or compat/run-all.sh installs it)",
)
def test_the_readme_takes_a_user_without_a_key_to_a_denial_in_their_profile_and_back_out(
    tmp_path: Path,
) -> None:
    env = readme_install.fresh_environment(tmp_path)
    home, dsh_home = Path(env["HOME"]), Path(env["DSH_HOME"])
    home.mkdir()
    Path(env["TMPDIR"]).mkdir()
    env["PATH"] = f"{PINNED_BIN}:{env['PATH']}"  # the install block's export, for this dsh
    blocks = readme_install.readme_blocks()
    add = next(line for line in blocks["install"].splitlines() if line.startswith("dsh plugin "))
    # what `npm run install-dsh` does for the profile: fix 2, pnpm's update notice off
    subprocess.run([str(COMPAT / "headless-profile.sh")], env=env, check=True, capture_output=True)
    added = readme_install.shell(add, env, "install, its plugin line")
    assert added.returncode == 0 and "Update available" not in added.stdout + added.stderr

    kept_before = _tree(ROOT / ".demo")
    demo = readme_install.shell(blocks["try"], env, "try")
    said = demo.stdout.strip().splitlines()
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-2000:]
    assert _tree(ROOT / ".demo") == kept_before, "in the user's profile the demo keeps nothing in the clone"
    assert not list(Path(env["TMPDIR"]).glob("rtb-demo.*")), "nor in the temporary folder"
    assert "Running in your headless profile" in demo.stdout and "Setting up dsh" not in demo.stdout
    assert said[-1].startswith("cd ") and "npx --no rtb replay" in said[-1]
    assert "was denied before it ran" in demo.stdout
    replayed = readme_install.shell(said[-1], env, "the replay the demo printed")
    assert replayed.returncode == 0
    assert "differs from the recording on 0 calls" in replayed.stdout and " denied" in replayed.stdout
    assert str(dsh_home / "sessions") in said[-1], "the session is in the user's dsh home"

    patch = dsh_home / "profiles" / readme_install.PROFILE / "cordis.patch.yml"
    patch.write_text(patch.read_text() + "- id: repeat-tool-breaker\n  config:\n    window: 0\n")
    refused = readme_install.shell(blocks["try"], env, "try, under a configuration the boot refuses")
    assert refused.returncode != 0
    said_first = (
        "What dsh said first:\n    repeat-tool-breaker: window must be a whole number >= 4, got 0. Fix:"
    )
    assert said_first in refused.stdout, "the demo shows why dsh did not run: " + refused.stdout[-1500:]

    removed = readme_install.shell(blocks["uninstall"], env, "uninstall")
    assert removed.returncode == 0, removed.stderr
    profile = dsh_home / "profiles" / readme_install.PROFILE
    assert _left_undocumented(env, profile) == [], "docs/install.md names all an uninstall leaves"
    assert readme_install.left_of_the_plugin(home, profile, env) == []


@pytest.mark.skipif(not (PINNED_BIN / "dsh").exists(), reason="the pinned dsh 0.1.0-rc.8 is not installed")
def test_without_a_profile_the_demo_runs_in_its_own_home_on_the_dsh_on_path(tmp_path: Path) -> None:
    """No headless profile with the plugin: the demo makes its own dsh home, on the dsh the README's
    install made (first on PATH), not on a second dsh installed in the clone."""
    env = readme_install.fresh_environment(tmp_path)
    Path(env["HOME"]).mkdir()
    Path(env["TMPDIR"]).mkdir()
    prefix = tmp_path / "dsh-0.1.0-rc.8"  # as `npm run install-dsh -- PREFIX` leaves it
    prefix.mkdir()
    for name in ("package.json", "package-lock.json"):
        (prefix / name).write_bytes((PINNED_BIN.parents[1] / name).read_bytes())
    (prefix / "node_modules").symlink_to(PINNED_BIN.parent)
    env["PATH"] = f"{prefix / 'node_modules' / '.bin'}:{env['PATH']}"
    demo = readme_install.shell("npm run demo", env, "demo, no profile")
    assert demo.returncode == 0, demo.stdout[-2000:]
    assert f"(the dsh in {prefix}; " in demo.stdout
    assert f"Kept for the replay and the next run: {ROOT / '.demo'} (that dsh home" in demo.stdout
    assert "node_modules (~500 MB)" not in demo.stdout, "no second dsh was installed"
    compat_env = (ROOT / ".demo" / "dsh-home" / "compat.env").read_text()
    assert f"DSH_BIN={prefix}/node_modules/.bin/dsh" in compat_env
    assert "npx --no rtb replay" in demo.stdout.strip().splitlines()[-1]

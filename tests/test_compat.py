"""The compat harness itself: the scripted mock model, the session-log reading, and one real boot.

The full matrix (every pinned dsh x every mount mode x every scenario) is `compat/run-all.sh`;
here the harness's own parts are checked quickly, plus one boot of the pinned dsh when it is
installed, so a broken harness fails in pytest rather than as a confusing compat FAIL.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMPAT = ROOT / "compat"
sys.path.insert(0, str(COMPAT))

from mock_model import TITLE_TEXT, MockModel, Script, ScriptedCall  # noqa: E402

zstandard = pytest.importorskip("zstandard", reason="reading session logs needs zstandard")
import dsh_run  # noqa: E402
import run  # noqa: E402

PINNED = "0.1.0-rc.8"
PINNED_DSH = COMPAT / f"dsh-{PINNED}" / "node_modules" / "@deepseek-ai" / "dsh" / "package.json"
EXAMPLES = ROOT / "examples" / "sessions"


@pytest.fixture
def model(tmp_path: Path) -> Iterator[MockModel]:
    script = Script(
        calls=(
            ScriptedCall("bash", {"command": "echo one", "description": "first"}),
            ScriptedCall("read", {"file_path": "/tmp/x"}),
        ),
        final="all done",
    )
    mock = MockModel(script, record_path=tmp_path / "received.json").start()
    yield mock
    mock.stop()


def post(model: MockModel, body: dict[str, Any]) -> bytes:
    request = urllib.request.Request(
        f"http://127.0.0.1:{model.port}/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return bytes(response.read())


def chat(model: MockModel, results: int) -> dict[str, Any]:
    """A non-streamed request carrying `results` tool results so far."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    messages += [{"role": "tool", "tool_call_id": f"c{n}", "content": f"out {n}"} for n in range(results)]
    choice: dict[str, Any] = json.loads(post(model, {"tools": [{}], "messages": messages}))["choices"][0]
    return choice


def test_the_step_is_the_number_of_tool_results_so_a_retry_replays_it(model: MockModel) -> None:
    first = chat(model, 0)
    assert first["finish_reason"] == "tool_calls"
    call = first["message"]["tool_calls"][0]["function"]
    assert call["name"] == "bash"
    assert json.loads(call["arguments"]) == {"command": "echo one", "description": "first"}
    assert chat(model, 0)["message"]["tool_calls"][0]["function"]["name"] == "bash"
    assert chat(model, 1)["message"]["tool_calls"][0]["function"]["name"] == "read"
    final = chat(model, 2)
    assert (final["finish_reason"], final["message"]["content"]) == ("stop", "all done")


def test_received_tool_results_are_recorded(model: MockModel, tmp_path: Path) -> None:
    chat(model, 2)
    recorded = json.loads((tmp_path / "received.json").read_text())
    assert recorded["tool_results"] == [
        {"tool_call_id": "c0", "content": "out 0"},
        {"tool_call_id": "c1", "content": "out 1"},
    ]


def test_a_request_without_tools_gets_a_title(model: MockModel) -> None:
    answer = json.loads(post(model, {"messages": [{"role": "user", "content": "title this"}]}))
    assert answer["choices"][0]["message"]["content"] == TITLE_TEXT
    assert model.received.side_requests == 1
    assert chat(model, 0)["message"]["tool_calls"]


def test_a_streamed_tool_call_arrives_as_sse_chunks(model: MockModel) -> None:
    body = post(model, {"stream": True, "tools": [{}], "messages": [{"role": "user", "content": "go"}]})
    events = [line[len("data: ") :] for line in body.decode().splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    calls = [tc for c in chunks for ch in c["choices"] for tc in ch["delta"].get("tool_calls", [])]
    assert [tc["function"]["name"] for tc in calls] == ["bash"]
    finishes = [ch["finish_reason"] for c in chunks for ch in c["choices"] if ch["finish_reason"]]
    assert finishes == ["tool_calls"]
    assert "usage" in chunks[-1]


def test_models_and_health_are_served(model: MockModel) -> None:
    base = f"http://127.0.0.1:{model.port}"
    with urllib.request.urlopen(f"{base}/v1/models", timeout=5) as response:
        assert json.loads(response.read())["data"][0]["id"] == "mock-model"
    for _ in range(2):
        with urllib.request.urlopen(f"{base}/health", timeout=5) as response:
            assert response.read() == b"ok\n"
    assert model.received.health_hits == 2


def test_a_recorded_session_pairs_calls_with_results() -> None:
    attempts = dsh_run.attempts_of(dsh_run.read_events(EXAMPLES / "loop-a-identical.jsonl.zstd"))
    assert [a.is_error for a in attempts] == [False] * 4 + [True] * 2
    assert all(a.text.startswith(dsh_run.BLOCKED) for a in attempts[4:])
    assert {a.arguments["command"].split(" >> ")[0] for a in attempts} == {"echo tick"}


def test_the_row_provenance_is_the_layer_header_in_force() -> None:
    dump = "# == @deepseek-ai/dsh-base\n- id: tools\n# == dsh-repeat-tool-breaker\n" + run.ROW + "\n"
    assert run.provenance_of_row(dump) == "dsh-repeat-tool-breaker"
    assert run.provenance_of_row("# == x\n- id: tools\n") is None


@pytest.mark.skipif(
    not PINNED_DSH.exists(),
    reason=f"the pinned dsh {PINNED} is not installed (compat/setup.sh or compat/run-all.sh installs it)",
)
def test_a_real_dsh_boot_stops_loop_a_refuses_a_bad_config_and_names_a_misspelt_row(tmp_path: Path) -> None:
    home = tmp_path / "dsh-home"
    subprocess.run([str(COMPAT / "setup.sh"), PINNED, "dir", str(home)], check=True, timeout=300)
    scenarios = [
        "--scenario",
        "loop-a-identical",
        "--scenario",
        "invalid-config",
        "--scenario",
        "misspelt-row",
    ]
    result = subprocess.run(
        [sys.executable, str(COMPAT / "run.py"), "--home", str(home), *scenarios],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASS: loop-a-identical" in result.stdout and "PASS: misspelt-row" in result.stdout

"""The real worker process over its pipe: ``python -m breaker.worker`` spawned as the shim does."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from breaker import load_config
from breaker.core.history.agents import OPERATIONS
from breaker.core.history.results import RESULT_TEXT_CHARS
from breaker.core.reading.canonical import CONDENSED_CHARS, condensed
from breaker.core.reading.names import grouping
from breaker.core.reading.news import BREAKS, digest
from breaker.core.reading.outcomes import FACT_FIELDS, FACT_TEXT_CHARS
from breaker.core.wording.unavailable import WORKER_FAILURE_DENIAL
from tests.worker_pipe import bash, configured, frame, worker

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    """The worker is what is under test; one event loop for the test side is enough."""
    return "asyncio"


async def test_configure_answers_the_settings_the_shim_needs() -> None:
    breaks = json.loads(json.dumps(BREAKS._asdict()))  # tuples as lists, as msgpack carries them
    async with worker() as pipe:
        reply = await pipe.call("configure", config={"exclude": ["todo_*"], "guardTimeoutMs": 250})
        assert reply == {
            "id": 1,
            "ok": True,
            "settings": {
                "countedTools": reply["settings"]["countedTools"],
                "onWorkerFailure": "allow",
                "guardTimeoutMs": 250,
                "startTimeoutMs": 10000,
                "window": 16,
                "maxAgents": 10000,
                "logDenials": False,
                "notices": False,
                "condensedChars": CONDENSED_CHARS,
                "operations": {
                    op: {"recent": effect.recent, "changes": effect.changes}
                    for op, effect in OPERATIONS.items()
                },
                "resultTextChars": RESULT_TEXT_CHARS,
                "factFields": list(FACT_FIELDS),
                "factTextChars": FACT_TEXT_CHARS,
                "breaks": breaks,
                "grouping": json.loads(
                    json.dumps(
                        grouping(load_config(None).ignoreArgs, load_config(None).url_calls_grouped, 16)
                    )
                ),
                "workerFailureDenial": WORKER_FAILURE_DENIAL,
                "strays": [],
            },
        }
        assert reply["settings"]["operations"]["preflight"] == {"recent": True, "changes": "when it asks"}
        assert "todo" in reply["settings"]["countedTools"]


async def test_configure_names_the_rows_meant_for_the_plugin_under_another_id() -> None:
    """The patch rows the shim sends (`{id, keys}`): a misspelt id gets one line, with the fix;
    what cannot be a row is skipped, never an error."""
    rows = [
        {"id": "hmr", "keys": ["root"]},
        {"id": "repeat-tool-braker", "keys": ["limits"]},
        {"id": 3},
        "not a row",
        {"id": "agent", "keys": ["failLimit", 7]},
        {"id": "rtb", "keys": ["limits"], "name": "dsh-repeat-tool-breaker"},
    ]
    async with worker() as pipe:
        reply = await pipe.call("configure", config=None, rows=rows)
        strays = reply["settings"]["strays"]
        assert len(strays) == 2
        assert strays[0].startswith("the row 'repeat-tool-braker' is not this plugin's row")
        assert strays[0].endswith("Fix: write its id as repeat-tool-breaker")
        assert "'agent' carries keys of this plugin's config (failLimit)" in strays[1]


async def test_a_commit_with_no_verdict_kept_is_an_error_the_shim_hears_and_commits_nothing() -> None:
    async with configured({"limits": {"exact": 2}}) as pipe:
        refused = await pipe.call("commit", agent=1, call="never-prechecked")
        assert refused["ok"] is False
        assert "no verdict kept" in refused["error"]
        preflight = await pipe.call("preflight", **bash(1, "c1", "ls"))
        assert preflight["decided"] is True
        await pipe.call("result", agent=1, call="other", text="x")  # a change: the plan is dropped
        assert (await pipe.call("commit", agent=1, call="c1"))["ok"] is False
        assert (await pipe.call("guard", **bash(1, "c2", "ls")))["deny"] is None, "nothing was committed"


async def test_a_long_call_asked_for_its_stand_in_gets_one_that_counts_the_same() -> None:
    content = "€" * CONDENSED_CHARS
    write = {"agent": 1, "name": "write", "args": {"path": "big.txt", "content": content}, "standIn": True}
    async with configured({"limits": {"exact": 3}}) as pipe:
        first = await pipe.call("guard", call="c1", **write)
        assert first["standIn"] == {"path": "big.txt", "content": condensed(content)}
        assert len(first["standIn"]["content"]) < 200
        # The stand-in, decided in the original's place, is the same call: the third is denied.
        assert (await pipe.call("guard", **{**write, "call": "c2", "args": first["standIn"]}))["deny"] is None
        assert (await pipe.call("guard", call="c3", **write))["deny"] is not None
        # A long shell command is read as it is: it has no stand-in.
        long_command = "echo " + "x" * CONDENSED_CHARS
        reply = await pipe.call("preflight", standIn=True, **bash(2, "c4", long_command))
        assert "standIn" not in reply
        # Not asked, not computed.
        assert "standIn" not in await pipe.call("guard", **{**write, "call": "c5", "standIn": None})


async def test_a_rejected_config_is_an_error_naming_the_key_and_the_worker_keeps_serving() -> None:
    async with worker() as pipe:
        rejected = await pipe.call("configure", config={"windw": 12})
        assert rejected["ok"] is False
        assert "unknown config key 'windw'; did you mean 'window'?" in rejected["error"]
        removed = await pipe.call("configure", config={"denyAfter": 3})
        assert removed["error"].startswith("denyAfter is a key of the unrelated npm plugin")
        assert (await pipe.call("configure", config="not a map"))["ok"] is False
        assert (await pipe.call("configure", config=None))["ok"] is True


async def test_other_ops_before_configure_are_errors() -> None:
    async with worker() as pipe:
        for op, fields in (("guard", bash(1, "c", "ls")), ("human", {"agent": 1}), ("stats", {})):
            reply = await pipe.call(op, **fields)
            assert reply["ok"] is False
            assert reply["error"] == f"{op} before a successful configure"


async def test_the_fifth_identical_call_is_denied_quoting_the_previous_result() -> None:
    async with configured({"preset": "seed"}) as pipe:
        for index in range(4):
            call = bash(1, f"c{index}", "cat /etc/hostname", description=f"#{index}")
            reply = await pipe.call("guard", **call)
            # Each repeat spends a pass: after the fourth, none is left. Beyond them, calls by
            # their group (reading.groups): a shell call has none, the window names none.
            by_group = {
                "passes": 3 - index,
                "digests": [],
                "groups": [],
                "room": 4,
                "window": [-1] * (index + 1),
            }
            assert reply == {
                "id": reply["id"],
                "ok": True,
                "deny": None,
                "passes": 3 - index,
                "conditional": by_group,
            }
            assert (await pipe.call("result", agent=1, call=f"c{index}", text=f"host-{index}"))["ok"]
        denied = await pipe.call("guard", **bash(1, "c4", "cat /etc/hostname", description="#4"))
        assert denied["deny"].startswith("REPEAT_TOOL_BLOCKED:")
        assert "host-3" in denied["deny"]
        other_agent = await pipe.call("guard", **bash(2, "d0", "cat /etc/hostname"))
        assert other_agent["deny"] is None
        assert (await pipe.call("human", agent=1))["ok"]
        assert (await pipe.call("guard", **bash(1, "c5", "cat /etc/hostname")))["deny"] is None
        assert (await pipe.call("forget", agent=2))["ok"]
        stats = await pipe.call("stats")
        assert stats["ok"] is True
        assert isinstance(stats["stats"], dict)


async def test_preflight_answers_ask_for_a_local_repeat_only() -> None:
    async with configured() as pipe:
        for index in range(4):
            call = bash(1, f"c{index}", f"curl -s http://localhost:8080/health | head -n {index}")
            assert (await pipe.call("preflight", **call))["ask"] is None
            assert (await pipe.call("guard", **call))["deny"] is None
        fifth = bash(1, "c4", "curl -s http://localhost:8080/health | head -n 9")
        asked = await pipe.call("preflight", **fifth)
        assert isinstance(asked["ask"], str)
        public = bash(1, "c5", "curl -s https://example.org/ | head -n 1")
        assert (await pipe.call("preflight", **public))["ask"] is None


async def test_replies_say_how_many_calls_may_pass_and_a_passed_call_is_answered_only_on_error() -> None:
    async with configured({"preset": "seed"}) as pipe:
        first = await pipe.call("preflight", **bash(1, "c0", "cat /etc/hostname"))
        assert (first["decided"], first["deny"], first["passes"]) == (True, None, 4)  # c0 not committed yet
        # c0 goes through on a pass: its guard is an event
        await pipe.send("guard", reply="errors", **bash(1, "c0", "cat /etc/hostname"))
        second = await pipe.call("guard", **bash(1, "c1", "cat /etc/hostname"))
        assert (second["deny"], second["passes"]) == (None, 2)  # the passed c0 was counted before it


async def test_an_awaited_result_brings_the_passes_as_of_once_it_is_recorded() -> None:
    async with configured() as pipe:
        await pipe.call("guard", **bash(1, "c0", "make test"))
        guarded = await pipe.call("guard", **bash(1, "c1", "make test"))
        assert guarded["passes"] == 0  # two results still to come, each maybe the same again
        # While the results to come are news, only the caps limit the calls: 5 - 1 - 2 (twice).
        assert guarded["conditional"] == {
            "passes": 2,
            "digests": [],
            "groups": [],
            "room": 4,
            "window": [-1, -1],
        }
        recorded = await pipe.call("result", agent=1, call="c0", text="2 passed")
        # c1's still to come; news is not what c0 returned
        news = {
            "passes": 2,
            "digests": [digest("bash", "2 passed")],
            "groups": [],
            "room": 4,
            "window": [-1, -1],
        }
        assert recorded == {"id": recorded["id"], "ok": True, "passes": 0, "conditional": news}
        recorded = await pipe.call("result", agent=1, call="c1", text="2 passed")
        # the next call, whatever it is; two while the results are news
        assert recorded == {"id": recorded["id"], "ok": True, "passes": 1, "conditional": news}
        await pipe.send("result", reply="errors", agent=1, call="c0", text="again")
        assert (await pipe.call("stats"))["ok"]  # an event's reply is written only when it fails


async def test_results_read_at_once_bring_the_passes_once_per_agent_with_the_last() -> None:
    async with configured() as pipe:
        for call in ("c0", "c1", "c2"):
            await pipe.call("guard", **bash(1, call, f"make test {call}"))
        await pipe.call("guard", **bash(2, "d0", "make test"))
        # A worker behind an agent reads several of its results in one read (one write here, under
        # the pipe's atomic size): only the agent's last reply brings the passes, as of then.
        results = [(1, "c0", "2 passed"), (2, "d0", "1 passed"), (1, "c1", "3 passed"), (1, "c2", "4 passed")]
        await pipe.write(
            b"".join(
                frame({"id": 100 + n, "op": "result", "agent": agent, "call": call, "text": text})
                for n, (agent, call, text) in enumerate(results)
            )
        )
        replies = [await pipe.reply() for _ in results]
        assert [reply["id"] for reply in replies] == [100, 101, 102, 103]
        assert replies[0] == {"id": 100, "ok": True}
        assert replies[2] == {"id": 102, "ok": True}
        assert replies[1]["passes"] == 1  # agent 2's only result
        digests = sorted(digest("bash", text) for text in ("2 passed", "3 passed", "4 passed"))
        assert replies[3] == {
            "id": 103,
            "ok": True,
            "passes": 1,
            # distinct calls: 5 - 1 - 1; by group, 4 of a group the window does not name (its three
            # shell lines fetch nothing: of no group named)
            "conditional": {"passes": 3, "digests": digests, "groups": [], "room": 4, "window": [-1] * 3},
        }


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads CPU time from /proc")
async def test_an_idle_worker_sleeps_after_a_short_poll() -> None:
    """The worker polls its input briefly after a batch (POLL_BEFORE_SLEEP_S), then sleeps: idle,
    it spends no CPU (a worker still polling would spend all of the half second)."""
    async with configured() as pipe:
        assert (await pipe.call("guard", **bash(1, "c0", "ls")))["ok"]
        await anyio.sleep(0.05)
        before = _cpu_seconds(pipe.process.pid)
        await anyio.sleep(0.5)
        assert _cpu_seconds(pipe.process.pid) - before < 0.1


async def test_pipelined_requests_are_answered_in_order() -> None:
    async with configured() as pipe:
        ids = [await pipe.send("guard", **bash(1, f"c{index}", f"echo {index}")) for index in range(50)]
        replies = [await pipe.reply() for _ in ids]
        assert [reply["id"] for reply in replies] == ids
        assert all(reply["ok"] for reply in replies)


async def test_a_configured_worker_refuses_a_second_configure_and_keeps_its_caps() -> None:
    async with configured() as pipe:
        refused = await pipe.call("configure", config={"limits": {"exact": None}})
        assert refused["ok"] is False
        assert refused["error"] == "configure: this worker is configured already"
        calls = [bash(1, f"c{index}", "cat notes.txt") for index in range(5)]
        verdicts = [(await pipe.call("guard", **call))["deny"] for call in calls]
        assert verdicts[:4] == [None] * 4
        assert verdicts[4].startswith("REPEAT_TOOL_BLOCKED:")


async def test_input_ending_inside_a_frame_is_reported_then_the_worker_exits_cleanly() -> None:
    async with configured() as pipe:
        await pipe.write(frame({"id": 9, "op": "stats"})[:-2])
        await pipe.stdin.aclose()
        assert await pipe.reply() == {"id": None, "ok": False, "error": "input ended inside a frame"}
        assert await pipe.exit_code() == 0


async def test_end_of_input_and_shutdown_both_exit_zero() -> None:
    async with configured() as pipe:
        await pipe.stdin.aclose()
        assert await pipe.exit_code() == 0
    async with configured() as pipe:
        await pipe.write(frame({"id": 5, "op": "shutdown"}) + frame({"id": 6, "op": "stats"}))
        assert await pipe.reply() == {"id": 5, "ok": True}
        assert await pipe.exit_code() == 0


async def test_the_state_aware_mode_stops_the_same_answer_a_fifth_time_through_the_pipe() -> None:
    """No progress reaches the core through the result op, as the failure track does: the live
    gate decides what tests/test_same_results.py's replay of the same calls decides (a variant,
    then the same flag again and again, "Wrong flag!" each time: the 4th identical one stops)."""
    async with configured({"identity": "state-aware"}) as pipe:
        verdicts = []
        for index, flag in enumerate(["flat{x}"] + ["flag{x}"] * 5):
            call = {"agent": 1, "call": f"s{index}", "name": "submit", "args": {"flag": flag}}
            reply = await pipe.call("guard", **call)
            verdicts.append(reply["deny"])
            text = "Error: " + reply["deny"] if reply["deny"] else "Wrong flag!"
            assert (await pipe.call("result", agent=1, call=f"s{index}", text=text))["ok"]
        assert [deny is None for deny in verdicts] == [True, True, True, True, False, False]
        assert "returned the identical result" in verdicts[4]

"""What canonical JSON keeps between values changes nothing it writes: the encoder built once, and
the long texts it remembers by object (one call's texts are written for its key, its target and
what it asks)."""

from __future__ import annotations

import json

from breaker.core.reading.canonical import CONDENSED_CHARS, canonical_json, condensed


def _plain(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_long_texts_written_again_and_again_in_turns_stay_exact() -> None:
    # More texts than are remembered, each written several times, equal texts as other objects.
    texts = [
        "line\n" * 400,
        'a "quoted" \\ path\t' * 100,
        "é ✓ 日本 " * 300,
        "ctrl \x01\x1f " * 200,
        "plain " * 300,
        "".join(["x" * 1024, "y"]),
        "\ud800 lone " * 200,
    ]
    for _ in range(3):
        for index, text in enumerate(texts):
            copy = "".join(list(text))  # an equal text, another object
            assert copy is not text
            for value in (text, copy):
                arguments = {"path": f"/src/{index}.py", "old_string": value, "new_string": texts[index - 1]}
                assert canonical_json(arguments) == _plain(arguments)


def test_a_text_long_enough_to_condense_is_condensed_each_time() -> None:
    huge, other = "a" * CONDENSED_CHARS, "b" * CONDENSED_CHARS
    for _ in range(3):
        for text in (huge, other, "c" * 2048, "d" * 2048, "e" * 2048, "f" * 2048):
            expected = _plain({"content": condensed(text)})
            assert canonical_json({"content": text}) == expected


def test_plain_values_of_every_shape_match_the_json_module() -> None:
    values: list[object] = [
        {"b": [1, 2.5, None, True], "a": {"z": "é", "y": float("inf")}},
        [{"k": "v"}, [], {}],
        {"pattern": "def f", "limit": 10, "flag": False, "nothing": None, "ratio": -0.0},
        "text",
        7,
        float("nan"),
    ]
    for value in values:
        assert canonical_json(value) == _plain(value)

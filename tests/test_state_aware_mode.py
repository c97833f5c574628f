"""identity: state-aware is one key: it brings the window and limits measured best for it.

A profile that says ``identity: state-aware`` gets the mode as measured (docs/decision-quality.md)
without restating three keys; any key it does restate wins. The defaults stay the seed's.
"""

from __future__ import annotations

from breaker.core.config import DEFAULTS, MODE_DEFAULTS, default_config, load_config


def test_the_mode_brings_its_own_window_and_limits() -> None:
    config = load_config({"identity": "state-aware"})
    assert (config.window, config.failLimit, config.sameResultLimit) == (16, 3, 4)
    assert config.limits["exact"] == config.limits["sink"] == 5


def test_a_key_the_profile_restates_wins_over_the_mode() -> None:
    config = load_config({"identity": "state-aware", "window": 12, "failLimit": None, "sameResultLimit": 6})
    assert (config.window, config.failLimit, config.sameResultLimit) == (12, None, 6)


def test_the_defaults_are_still_the_seeds() -> None:
    config = default_config()
    mode = (config.identity, config.window, config.failLimit, config.sameResultLimit)
    assert mode == ("exact", 12, None, None)
    assert load_config({"identity": "exact"}) == config


def test_the_mode_table_only_names_keys_of_the_defaults_table() -> None:
    for mode, overrides in MODE_DEFAULTS.items():
        assert load_config({"identity": mode}).identity == mode
        assert set(overrides) <= set(DEFAULTS)

"""The defaults are the behaviour measured safest on real sessions; ``preset: seed`` is the seed's.

``{}`` reads calls by the workspace state and reads results (window 16, ``failLimit: 3``,
``sameResultLimit: 4``: docs/decision-quality.md). One key, ``preset: seed``, gives every value of
the seed README's defaults table; keys set beside a preset override it.
"""

from __future__ import annotations

import pytest

from breaker.core.config import DEFAULTS, PRESETS, ConfigError, default_config, load_config

#: The seed README's defaults table, key by key (../shared/spec: Configuration).
SEED = {
    "window": 12,
    "localHosts": "ask",
    "exclude": ("todo_write",),
    "include": (),
    "hostAliases": {"open-data.canada.ca": "open.canada.ca"},
    "previewChars": 400,
    "resultPreviewChars": 800,
}
SEED_LIMITS = {"exact": 5, "cmd": 5, "net": 5, "sink": 5, "host": None, "site": None}


def test_the_defaults_read_the_workspace_and_the_results() -> None:
    config = default_config()
    mode = (config.identity, config.window, config.failLimit, config.sameResultLimit)
    assert mode == ("state-aware", 16, 3, 4)
    assert config.limits["exact"] == config.limits["sink"] == 5
    assert load_config({"identity": "state-aware"}) == config


def test_preset_seed_is_the_seed_readmes_defaults_table() -> None:
    config = load_config({"preset": "seed"})
    assert (config.identity, config.failLimit, config.sameResultLimit) == ("exact", None, None)
    for key, value in SEED.items():
        assert getattr(config, key) == value, key
    for key, cap in SEED_LIMITS.items():
        assert config.limits[key] == cap, key
    assert config.limits["family:http-fetch"] is None and config.limits["verb:curl"] is None


def test_a_key_beside_a_preset_overrides_it() -> None:
    config = load_config({"preset": "seed", "window": 20, "sameResultLimit": 6})
    assert (config.identity, config.window, config.sameResultLimit) == ("exact", 20, 6)
    assert load_config({"preset": "seed", "limits": {"exact": 3}}).limits["cmd"] == 5


def test_the_presets_only_name_keys_of_the_defaults_table() -> None:
    for name, values in PRESETS.items():
        assert set(values) <= set(DEFAULTS)
        assert load_config({"preset": name}).preset == name


@pytest.mark.parametrize("value", ["sed", "Seed", 1, "recommended"])
def test_an_unknown_preset_fails_loud_naming_the_choices(value: object) -> None:
    with pytest.raises(ConfigError, match=r"preset must be one of seed \| null"):
        load_config({"preset": value})


def test_a_misspelt_preset_gets_a_suggestion() -> None:
    with pytest.raises(ConfigError, match="did you mean 'seed'"):
        load_config({"preset": "sed"})

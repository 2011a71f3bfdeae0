"""Whether the open-set stage runs: only when the config's ``openset.enabled`` says so."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

NOT_ENABLED = (
    "openset: the block does not set `enabled`, so the open-set stage stays off; add "
    "`enabled: true` to run it, or `enabled: false` to keep it off without this warning"
)


def openset_enabled(settings: Mapping[str, Any], warn: Callable[[str], None]) -> bool:
    """``settings["enabled"]``, or ``False`` with :data:`NOT_ENABLED` passed to ``warn``.

    The stage fits the whole candidate grid on every tuning fold of every dataset, so it starts
    only when asked for by name: a block that sets sub-options (``known_folds``, a grid) but
    not ``enabled`` is more likely a half-finished edit than a request for hours of fitting,
    and it used to switch the stage on because the schema defaulted ``enabled`` to true inside
    a given block. The schema gives ``enabled: false`` when the block is absent, so only a
    block without the key reaches the warning.
    """
    if "enabled" in settings:
        return bool(settings["enabled"])
    warn(NOT_ENABLED)
    return False

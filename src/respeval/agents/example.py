"""The small ADK eval set shipped with respeval (``respeval agent --example``)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["example_paths"]


def example_paths() -> tuple[Path, list[Path]]:
    """(expected eval set, [run 1, run 2]) of the shipped weather-assistant example."""
    root = Path(__file__).resolve().parent.parent / "data" / "agents"
    expected = root / "weather.evalset.json"
    if not expected.is_file():
        raise FileNotFoundError(f"the shipped example is missing: {expected} (reinstall respeval)")
    return expected, [root / "weather_run1.evalset.json", root / "weather_run2.evalset.json"]

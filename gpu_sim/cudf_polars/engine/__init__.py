"""Multi-GPU frontend execution modes (simulated: ``DaskEngine`` and ``HardwareBindingPolicy`` only)."""

from __future__ import annotations

__all__: list[str] = []

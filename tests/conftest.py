"""Fixtures shared by the unit tests."""

from __future__ import annotations

import pytest

from utils.dataset import Dataset, ensure_dataset


@pytest.fixture(scope="session")
def tiny_dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    """A private tiny dataset (not the repository's data/), generated once per test run."""
    return ensure_dataset("tiny", tmp_path_factory.mktemp("data"))

"""A room shares one pre-generated data folder: each learner's throw-away copies go to their own
``COURSE_SCRATCH_DIR``, and a scratch folder that cannot be written says so in one line."""

from __future__ import annotations

import pytest

from utils.base.paths import SCRATCH_ENV_VAR, SCRATCH_NAME
from utils.dataset import Dataset


def test_scratch_defaults_to_the_data_folder(tiny_dataset, monkeypatch):
    monkeypatch.delenv(SCRATCH_ENV_VAR, raising=False)
    assert tiny_dataset.scratch_dir == tiny_dataset.path.parent / SCRATCH_NAME


def test_each_learner_can_have_their_own_scratch(tiny_dataset, monkeypatch, tmp_path):
    monkeypatch.setenv(SCRATCH_ENV_VAR, str(tmp_path / "ada" / "scratch"))
    shared = Dataset(tiny_dataset.path)
    assert shared.scratch_dir == tmp_path / "ada" / "scratch" and shared.scratch_dir.is_dir()


def test_an_unwritable_scratch_names_the_fix(tiny_dataset, monkeypatch, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(SCRATCH_ENV_VAR, str(blocker / "scratch"))
    with pytest.raises(PermissionError, match=f"cannot write scratch copies to .*; set {SCRATCH_ENV_VAR}"):
        _ = tiny_dataset.scratch_dir

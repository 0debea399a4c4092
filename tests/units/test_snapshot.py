"""The dashboard snapshot is optional: where no browser exists it says why and how to install
one, writes nothing, and lets the notebook go on (the browser itself: test_dashboard_browser.py)."""

from __future__ import annotations

import pytest

from utils import snapshot


def test_a_named_but_missing_chromium_is_reported_with_the_fix(monkeypatch, tmp_path):
    monkeypatch.setenv(snapshot.CHROMIUM_ENV_VAR, str(tmp_path / "no-such-chromium"))
    assert snapshot.chromium_executable() is None
    reason = snapshot.unavailable()
    if reason is not None and reason.startswith("Playwright is not installed"):
        pytest.skip(reason)  # the other half of the message; checked where Playwright exists
    assert reason.startswith("no Chromium found") and "apt-get install chromium" in reason


def test_the_snapshot_is_skipped_with_a_message_and_writes_nothing(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(snapshot.CHROMIUM_ENV_VAR, str(tmp_path / "no-such-chromium"))
    target = tmp_path / "reports" / "status.png"
    assert snapshot.snapshot_or_skip(client=None, path=target) is None
    out = capsys.readouterr().out
    assert out.startswith("dashboard snapshot skipped: ") and out.count("\n") == 1
    assert not target.exists() and not target.parent.exists()
    with pytest.raises(snapshot.BrowserUnavailable), snapshot.browser_page():
        pass


def test_chromium_can_be_named_explicitly(monkeypatch, tmp_path):
    fake = tmp_path / "my-chromium"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv(snapshot.CHROMIUM_ENV_VAR, str(fake))
    assert snapshot.chromium_executable() == str(fake)

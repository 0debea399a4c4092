"""The maintainers' tools answer bad input in one line (exit 2), never with a traceback."""

from __future__ import annotations

import socket

import pytest

from tools import external_pass, lab_setup, notebook_format
from tools.site import __main__ as site_cli
from tools.site.layout import BuildDirs


def _one_line(text: str) -> str:
    assert text.count("\n") == 1 and "Traceback" not in text, text
    return text


def test_notebook_format_on_a_file_that_is_not_json(tmp_path, capsys):
    broken = tmp_path / "03_broken.ipynb"
    broken.write_text("not json\n")
    assert notebook_format.main([str(broken)]) == 2
    assert _one_line(capsys.readouterr().err).startswith(f"error: {broken} is not a notebook (not JSON")


def test_lab_setup_refuses_unknown_arguments(capsys):
    with pytest.raises(SystemExit) as stop:
        lab_setup.main(["--bogus"])
    assert stop.value.code == 2 and "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_lab_setup_on_a_read_only_folder_says_so_in_one_line(monkeypatch, capsys):
    def read_only(*_args, **_kwargs):
        raise PermissionError(13, "Permission denied", "/course/workspace")

    monkeypatch.setattr(lab_setup, "install_overrides", read_only)
    assert lab_setup.main([]) == 2
    err = _one_line(capsys.readouterr().err)
    assert "Permission denied (/course/workspace)" in err and "must be writable" in err


@pytest.mark.parametrize("port", ["99999", "0", "eighty"])
def test_site_serve_refuses_a_port_out_of_range(port, capsys):
    with pytest.raises(SystemExit) as stop:
        site_cli.main(["serve", "--port", port])
    assert stop.value.code == 2 and "is not a port: give a number from 1 to 65535" in capsys.readouterr().err


def test_site_serve_on_a_port_in_use_says_so_in_one_line(tmp_path, capsys):
    dirs = BuildDirs(tmp_path)
    dirs.html.mkdir(parents=True)
    (dirs.html / "index.html").write_text("<html></html>")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert site_cli._serve(dirs, port) == 2
    assert _one_line(capsys.readouterr().err).startswith(f"error: cannot serve on 127.0.0.1:{port}")


@pytest.mark.parametrize("argv", [["--workers", "0"], ["--workers", "-1"], ["--workers", "two"], ["--threads", "0"]])
def test_external_pass_refuses_a_count_below_one_in_one_line(argv, monkeypatch, capsys):
    def no_cluster(**_kwargs):
        raise AssertionError("a cluster was started for a refused argument")

    monkeypatch.setattr(external_pass, "external_cluster", no_cluster)
    with pytest.raises(SystemExit) as stop:
        external_pass.main(argv)
    err = _one_line(capsys.readouterr().err)
    assert stop.value.code == 2 and err.startswith(f"error: argument {argv[0]}: {argv[1]!r} is not"), err
    assert "give a whole number of 1 or more" in err

"""The generator as a tool: killed, interrupted, misused, short of disk or memory, or fed data files
that changed after generation, it ends in one line and leaves no process or half-written folder."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from utils.base.paths import REPO_ROOT, SCRATCH_ENV_VAR, default_data_dir
from utils.base.units import human_bytes
from utils.datagen import build, cli, sizes, writers
from utils.datagen.manifest import is_complete
from utils.datagen.params import make_params
from utils.datagen.scales import SCALES
from utils.dataset import ensure_dataset

# A run far too big to finish before it is killed (it is killed within seconds, after its first
# part files appear), in small partitions so that the workers are busy from the start.
LONG_RUN = ["--scale", "tiny", "--rows", "20000000", "--partitions", "400", "--customers", "500",
            "--formats", "parquet", "--workers", "2"]


def _start_cli(*args: str, env: dict | None = None, cwd: Path | None = None,
               new_session: bool = False) -> subprocess.Popen:
    """``new_session``: the generator leads its own process group, as a command in a terminal does,
    so that ``os.killpg`` reaches it and its workers together, the way Ctrl-C does."""
    return subprocess.Popen(
        [sys.executable, "-m", "utils.datagen", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **(env or {})}, cwd=cwd, start_new_session=new_session,
    )


def _cli(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "utils.datagen", *args],
        capture_output=True, text=True, env={**os.environ, **(env or {})}, cwd=cwd, timeout=120,
    )


def _reap(processes: list[psutil.Process]) -> list[psutil.Process]:
    """Wait a little for ``processes`` to end; kill and return those still alive (test failures)."""
    _, alive = psutil.wait_procs(processes, timeout=10)
    for process in alive:
        process.kill()
    return alive


def _one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{stderr}"
    assert not stderr.lstrip().startswith("usage:")
    return lines[0]


def _wait_for_parts(data_dir: Path, proc: subprocess.Popen) -> list[psutil.Process]:
    """Block until the generator's workers are writing part files; return its process tree."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        if any(data_dir.glob(".transactions-tiny.tmp-*/parquet/*.parquet")):
            children = psutil.Process(proc.pid).children(recursive=True)
            if len(children) >= 2:
                return children
        time.sleep(0.05)
    proc.kill()
    pytest.fail("the generator never started writing")


# --- 1. killing the generator -------------------------------------------------------------------

def test_kill_9_takes_the_workers_and_resource_tracker_with_it(tmp_path):
    proc = _start_cli(*LONG_RUN, "--data-dir", str(tmp_path))
    children = _wait_for_parts(tmp_path, proc)
    proc.kill()
    proc.communicate(timeout=30)
    survivors = _reap(children)
    assert not survivors, f"orphaned: {[p.pid for p in survivors]}"


@pytest.mark.parametrize(
    ("sig", "code", "word"), [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")]
)
def test_sigterm_and_ctrl_c_clean_up_and_end_in_one_line(tmp_path, sig, code, word):
    proc = _start_cli(*LONG_RUN, "--data-dir", str(tmp_path))
    children = _wait_for_parts(tmp_path, proc)
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=60)
    survivors = _reap(children)
    assert proc.returncode == code, stderr
    assert word in _one_line(stderr)
    assert not survivors, f"orphaned: {[p.pid for p in survivors]}"
    assert list(tmp_path.iterdir()) == [], "a temporary folder was left behind"


# --- 2. a dead run's temporaries --------------------------------------------------------------

def test_stale_temporaries_are_removed_before_free_space_is_measured(tmp_path, monkeypatch):
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    dead = tmp_path / f".transactions-small.tmp-{finished.pid}-deadbeef"
    (dead / "csv").mkdir(parents=True)
    (dead / "csv" / "part-00000.csv").write_bytes(b"x" * 3_000_000)
    live_owner = psutil.Process(os.getppid())  # alive and older than the folder: a running generator
    live = tmp_path / f".transactions-tiny.tmp-{live_owner.pid}-cafecafe"
    live.mkdir()
    need = sizes.estimated_bytes(make_params("tiny"))
    usage = shutil.disk_usage(tmp_path)

    def disk_usage(path):  # a disk with room for the dataset once the dead run's 3 MB are gone
        held = sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file())
        return usage._replace(free=need + 100_000 - held)

    monkeypatch.setattr(build.shutil, "disk_usage", disk_usage)
    ds = ensure_dataset("tiny", tmp_path)
    assert ds.rows == 20_000
    assert not dead.exists(), "the dead run's temporary must go (any scale)"
    assert live.exists(), "a running generator's temporary must stay"


def test_a_recycled_pid_does_not_keep_a_dead_runs_temporary(tmp_path):
    young = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stale = tmp_path / f".transactions-tiny.tmp-{young.pid}-0badf00d"
        (stale / "csv").mkdir(parents=True)
        an_hour_ago = time.time() - 3600
        os.utime(stale, (an_hour_ago, an_hour_ago))  # made long before that process started
        build.remove_stale_temporaries(tmp_path)
        assert not stale.exists()
    finally:
        young.kill()
        young.wait()


def test_sizes_are_shown_in_units_that_fit(tmp_path, monkeypatch):
    assert [human_bytes(n) for n in (0, 999, 1_000, 740_000, 1_640_000, 12_300_000_000)] == [
        "0 B", "999 B", "1.0 kB", "740 kB", "1.6 MB", "12.3 GB",
    ]
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(build.shutil, "disk_usage", lambda _: usage._replace(free=1000))
    with pytest.raises(ValueError, match=r"needs about 1\.4 MB, 1\.0 kB free"):
        ensure_dataset("tiny", tmp_path)


# --- 3. a script without a __main__ guard ------------------------------------------------------

SCRIPT = """\
from utils.dataset import ensure_dataset
{indent}ds = ensure_dataset("tiny", {data!r}, workers=2, progress=False)
{indent}print("rows", ds.rows)
"""


@pytest.mark.parametrize("guarded", [False, True], ids=["unguarded", "guarded"])
def test_a_script_calling_ensure_dataset_at_import_time(tmp_path, guarded):
    data = tmp_path / "data"
    body = SCRIPT.format(indent="    " if guarded else "", data=str(data))
    if guarded:
        lines = body.splitlines()
        body = "\n".join([lines[0], 'if __name__ == "__main__":', *lines[1:]]) + "\n"
    script = tmp_path / "analysis.py"
    script.write_text(body)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=tmp_path)
    try:
        stdout, stderr = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        tree = psutil.Process(proc.pid).children(recursive=True)
        proc.kill()
        _reap(tree)
        pytest.fail("the script hung (its workers re-imported it and waited for the parent's lock)")
    if guarded:
        assert proc.returncode == 0, stderr
        assert "rows 20000" in stdout
    else:
        assert proc.returncode != 0
        last = stderr.strip().splitlines()[-1]
        assert last.startswith("ValueError: ensure_dataset() ran again inside a generator worker")
        assert 'if __name__ == "__main__":' in last and str(script) in last
        assert not data.exists() or not any(data.iterdir()), "nothing may be left behind"


def test_readme_troubleshooting_explains_the_guard():
    text = (REPO_ROOT / "README.md").read_text()
    section = text[text.index("## Troubleshooting"):]
    assert "ran again inside a generator worker" in section


# --- 4. checksums ------------------------------------------------------------------------------

def test_manifest_lists_every_file_with_size_and_sha256(tiny_dataset):
    files = tiny_dataset.manifest["files"]
    on_disk = sorted(
        p.relative_to(tiny_dataset.path).as_posix()
        for p in tiny_dataset.path.rglob("*")
        if p.is_file() and p.name != "manifest.json"
    )
    assert sorted(files) == on_disk
    assert "ground_truth/customers.parquet" in files and "ground_truth/store_category.parquet" in files
    for rel, entry in files.items():
        content = (tiny_dataset.path / rel).read_bytes()
        assert entry == {"bytes": len(content), "sha256": hashlib.sha256(content).hexdigest()}
    assert tiny_dataset.verify() == []


def test_file_lists_come_from_the_manifest(tmp_path):
    ds = ensure_dataset("tiny", tmp_path)
    (ds.path / "csv" / "part-99999.csv").write_text("stray\n")
    (ds.path / "parquet" / "stray.parquet").write_bytes(b"PAR1")
    assert [p.name for p in ds.csv_files] == [f"part-{i:05d}.csv" for i in range(4)]
    assert [p.name for p in ds.parquet_files] == [f"part-{i:05d}.parquet" for i in range(4)]
    assert all(isinstance(p, Path) and p.is_file() for p in ds.csv_files + ds.parquet_files)


@pytest.mark.parametrize(
    "damage",
    ["stray csv", "missing ground truth", "resized parquet", "old format"],
)
def test_reuse_checks_the_file_list_and_sizes(tmp_path, damage):
    ds = ensure_dataset("tiny", tmp_path)
    if damage == "stray csv":
        (ds.path / "csv" / "part-00004.csv").write_text("transaction_id\n1\n")
    elif damage == "missing ground truth":
        (ds.path / "ground_truth" / "customers.parquet").unlink()
    elif damage == "resized parquet":
        with open(ds.path / "parquet" / "part-00001.parquet", "ab") as handle:
            handle.write(b"\0")
    else:
        manifest = json.loads((ds.path / "manifest.json").read_text())
        manifest["params"]["format_version"] = 1
        (ds.path / "manifest.json").write_text(json.dumps(manifest))
    assert not is_complete(ds.path)
    again = ensure_dataset("tiny", tmp_path)
    assert again.verify() == []
    assert not (again.path / "csv" / "part-00004.csv").exists()


def _flip_a_byte(path: Path) -> None:
    content = bytearray(path.read_bytes())
    content[len(content) // 2] ^= 0xFF
    path.write_bytes(bytes(content))


def test_verify_finds_a_same_size_change_that_reuse_does_not_look_for(tmp_path):
    ds = ensure_dataset("tiny", tmp_path)
    _flip_a_byte(ds.path / "csv" / "part-00002.csv")
    assert ds.verify(checksums=False) == []
    assert ds.verify() == ["csv/part-00002.csv: content changed (checksum differs)"]
    (ds.path / "csv" / "extra.csv").write_text("x\n")
    (ds.path / "ground_truth" / "store_category.parquet").unlink()
    assert ds.verify() == [
        "csv/extra.csv: not part of the dataset (extra file)",
        "csv/part-00002.csv: content changed (checksum differs)",
        "ground_truth/store_category.parquet: missing",
    ]


def test_cli_verify(tmp_path):
    ok_empty = _cli("--verify", "--scale", "tiny", "--data-dir", str(tmp_path))
    assert ok_empty.returncode == 2
    assert _one_line(ok_empty.stderr).startswith("error: no complete dataset in")
    ds = ensure_dataset("tiny", tmp_path)
    ok = _cli("--verify", "--scale", "tiny", "--data-dir", str(tmp_path))
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("ok: all 15 files") and len(ok.stdout.strip().splitlines()) == 1
    _flip_a_byte(ds.path / "parquet" / "part-00003.parquet")
    bad = _cli("--verify", "--scale", "tiny", "--data-dir", str(tmp_path))
    assert bad.returncode == 2
    line = _one_line(bad.stderr)
    assert "transactions-tiny/parquet/part-00003.parquet: content changed" in line
    assert f"python -m utils.datagen --scale tiny --data-dir {tmp_path} --force" in line
    refused = _cli("--verify", "--rows", "5", "--data-dir", str(tmp_path))
    assert refused.returncode == 2 and "--verify takes only --scale and --data-dir" in _one_line(refused.stderr)


def test_regenerate_command_reproduces_the_parameters(tmp_path, monkeypatch):
    ds = ensure_dataset("tiny", tmp_path, seed=7, rows=9_000)
    assert ds.regenerate_command == (
        f"python -m utils.datagen --scale tiny --rows 9000 --seed 7 --data-dir {tmp_path} --force"
    )
    monkeypatch.setenv("COURSE_DATA_DIR", str(tmp_path))
    assert ds.regenerate_command == "python -m utils.datagen --scale tiny --rows 9000 --seed 7 --force"


# --- 5. errors that used to end in tracebacks --------------------------------------------------

def test_disk_full_while_writing_is_one_line_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    real, calls = writers.write_buffer, []

    def fill_up(path, buffer):
        calls.append(path)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, buffer)

    monkeypatch.setattr(writers, "write_buffer", fill_up)
    code = cli.main(["--scale", "tiny", "--data-dir", str(tmp_path), "--workers", "1"])
    assert code == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("error: the disk filled up while writing transactions-tiny")
    assert list(tmp_path.iterdir()) == []


def test_memory_error_is_one_line_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    def oversized(*args):
        raise MemoryError()

    monkeypatch.setattr(writers, "generate_partition", oversized)
    code = cli.main(["--scale", "tiny", "--data-dir", str(tmp_path), "--workers", "1"])
    assert code == 2
    assert _one_line(capsys.readouterr().err).startswith("error: out of memory generating partitions of 5,000 rows")
    assert list(tmp_path.iterdir()) == []


def test_partitions_that_cannot_fit_in_memory_are_refused_before_writing(tmp_path, monkeypatch):
    params = make_params("tiny")
    peak = sizes.partition_peak_bytes(params)
    assert peak == sizes.PEAK_BYTES_FIXED + 5_000 * sizes.PEAK_BYTES_PER_ROW + 500 * sizes.PEAK_BYTES_PER_CUSTOMER
    monkeypatch.setattr(build, "available_memory", lambda: peak - 1)
    with pytest.raises(ValueError, match=r"a partition of 5,000 rows needs about .* use more --partitions \(at least"):
        ensure_dataset("tiny", tmp_path)
    parents_customers = 500 * sizes.PEAK_BYTES_PER_CUSTOMER  # its copy while the workers start
    monkeypatch.setattr(build, "available_memory", lambda: 2 * peak + parents_customers)
    with pytest.raises(ValueError, match=r"4 workers .* use --workers 2 or more --partitions"):
        ensure_dataset("tiny", tmp_path, workers=4)
    monkeypatch.setattr(build, "available_memory", lambda: 2 * peak + parents_customers - 1)
    with pytest.raises(ValueError, match=r"4 workers .* use --workers 1 or more --partitions"):
        ensure_dataset("tiny", tmp_path, workers=4)
    assert list(tmp_path.iterdir()) == []


def test_memory_constants_are_a_safe_upper_bound_of_the_real_peak(tmp_path):
    """Re-measure the peak the way the comment on PEAK_BYTES_PER_ROW says, in a fresh process."""
    code = textwrap.dedent("""
        import pathlib, resource, sys
        import psutil
        from utils.datagen.params import make_params
        from utils.datagen.writers import write_partition
        d = pathlib.Path(sys.argv[1])  # pytest's tmp_path: removed after a passing run
        (d / "csv").mkdir(); (d / "parquet").mkdir()
        write_partition(str(d), make_params("tiny", rows=20_000, partitions=1, customers=500), 0)
        own = psutil.Process().memory_full_info().uss
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        write_partition(str(d), make_params("tiny", rows=500_000, partitions=1, customers=20_000), 0)
        print(own + resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base)
    """)
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    bound = sizes.partition_peak_bytes(make_params("tiny", rows=500_000, partitions=1, customers=20_000))
    assert int(done.stdout) < bound


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (["--workers", "0"], "error: argument --workers: must be a positive integer, got 0"),
        (["--workers", "-2"], "error: argument --workers: must be a positive integer, got -2"),
        (["--scale", "huge"], "error: argument --scale: invalid choice: 'huge'"),
        (["--rows", "many"], "error: argument --rows: invalid int value: 'many'"),
        (["--bogus"], "error: unrecognized arguments: --bogus"),
    ],
)
def test_argument_errors_are_one_line_without_usage(tmp_path, args, start):
    done = _cli("--data-dir", str(tmp_path / "d"), *args)
    assert done.returncode == 2
    assert _one_line(done.stderr).startswith(start)
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize("workers", [0, -1, 1.5, True])
def test_ensure_dataset_rejects_bad_worker_counts(tmp_path, workers):
    with pytest.raises(ValueError, match="workers must be a positive integer"):
        ensure_dataset("tiny", tmp_path, workers=workers)
    assert list(tmp_path.iterdir()) == []


def test_relative_course_data_dir_is_relative_to_the_repository_root(tmp_path, monkeypatch):
    relative = os.path.relpath(tmp_path / "shared", REPO_ROOT)
    monkeypatch.setenv("COURSE_DATA_DIR", relative)
    monkeypatch.chdir(REPO_ROOT / "notebooks")  # where notebooks run
    assert default_data_dir() == tmp_path / "shared"
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    done = _cli("--scale", "tiny", env={"COURSE_DATA_DIR": relative, "PYTHONPATH": str(REPO_ROOT)}, cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "shared" / "transactions-tiny" / "manifest.json").is_file()
    assert list(elsewhere.iterdir()) == []


# --- 6. scratch space and leftovers ------------------------------------------------------------

def test_scratch_dir_is_one_well_known_place(tiny_dataset, monkeypatch):
    monkeypatch.delenv(SCRATCH_ENV_VAR, raising=False)  # the default, not a caller's own folder
    scratch = tiny_dataset.scratch_dir
    assert scratch == tiny_dataset.path.parent / "scratch" and scratch.is_dir()
    assert tiny_dataset.scratch_dir == scratch


def test_generated_data_and_scratch_are_git_ignored():
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    paths = ["data/scratch/copy/part.0.parquet", "data/parquet-copy-123/part.0.parquet",
             "data/transactions-tiny/manifest.json", "data/.transactions-tiny.tmp-1-ab/x"]
    done = subprocess.run(["git", "check-ignore", *paths], cwd=REPO_ROOT, capture_output=True, text=True)
    assert done.stdout.split() == paths
    kept = subprocess.run(["git", "check-ignore", "-q", "data/README.md"], cwd=REPO_ROOT)
    assert kept.returncode == 1


# --- 7. cores -----------------------------------------------------------------------------------

def test_default_workers_follow_the_course_cpu_count(monkeypatch):
    monkeypatch.setattr(build, "CPU_COUNT", 3)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert build.choose_workers(make_params("small"), None) == 3
    assert build.choose_workers(make_params("tiny"), None) == 1  # too small to be worth processes


def test_a_hanging_cleanup_after_a_signal_still_ends_the_process():
    """A signal can interrupt the pool while it holds a lock; the exit must not depend on the cleanup."""
    script = (
        "import time\n"
        "from utils.datagen import cli\n"
        "cli.CLEANUP_DEADLINE_S = 0.5\n"
        "cli.exit_if_cleanup_hangs(143)\n"
        "time.sleep(60)  # a cleanup that never finishes\n"
    )
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert done.returncode == 143
    assert time.monotonic() - started < 20
    assert "the next run removes the temporary folder" in done.stderr


# --- issue 27, item 9: refusals leave nothing, an empty --data-dir, worker suggestions, overrides --

def test_a_refused_run_leaves_no_empty_data_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "available_memory", lambda: 1)
    with pytest.raises(ValueError, match="needs about"):
        ensure_dataset("tiny", tmp_path / "new" / "data")
    assert not (tmp_path / "new" / "data").exists()
    existing = tmp_path / "mine"
    existing.mkdir()
    with pytest.raises(ValueError, match="needs about"):
        ensure_dataset("tiny", existing)
    assert existing.is_dir()  # a folder that was there before stays


def test_an_empty_data_dir_argument_is_refused(tmp_path):
    done = _cli("--scale", "tiny", "--data-dir", "", cwd=tmp_path)
    assert done.returncode == 2
    assert _one_line(done.stderr).startswith("error: argument --data-dir: empty")
    assert list(tmp_path.iterdir()) == []


def test_more_workers_than_partitions_are_capped_and_suggestions_too(monkeypatch):
    params = make_params("tiny")  # 4 partitions
    peak = sizes.partition_peak_bytes(params)
    customers = params.customers * sizes.PEAK_BYTES_PER_CUSTOMER
    monkeypatch.setattr(build, "available_memory", lambda: 175 * peak + customers)
    assert build.choose_workers(params, 100_000) == 4
    monkeypatch.setattr(build, "available_memory", lambda: 3 * peak + customers)
    with pytest.raises(ValueError, match=r"use --workers 3 or more --partitions") as error:
        build.choose_workers(params, 100_000)
    assert "100000" not in str(error.value).replace(",", "")


def test_overridden_rows_are_reported_as_overridden(tmp_path, monkeypatch):
    import collections

    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(build.shutil, "disk_usage", lambda path: usage(10, 10, 1))
    with pytest.raises(ValueError) as error:
        ensure_dataset("tiny", tmp_path, rows=6_000)
    assert "6,000 rows (--rows overrides scale 'tiny')" in str(error.value)
    assert "for scale 'tiny'" not in str(error.value)


# --- issue 27, item 8: say why a dataset is regenerated, and that a second generator waits --------

def test_regenerating_a_damaged_dataset_says_why(tmp_path, tiny_dataset, capsys):
    copy = shutil.copytree(tiny_dataset.path, tmp_path / tiny_dataset.path.name)
    (copy / "csv" / "part-00001.csv").unlink()
    capsys.readouterr()
    ensure_dataset("tiny", tmp_path)
    said = [line for line in capsys.readouterr().out.splitlines() if "regenerat" in line]
    assert len(said) == 1 and "csv/part-00001.csv" in said[0] and str(copy) in said[0], said
    capsys.readouterr()
    ensure_dataset("tiny", tmp_path)  # complete now: reused silently
    assert capsys.readouterr().out == ""


def test_a_second_generator_says_that_it_waits(tmp_path, capsys):
    import fcntl

    target = tmp_path / "transactions-tiny"
    holder = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)  # another generator at work in this folder
    import threading

    release = threading.Timer(1.0, lambda: os.close(holder))
    release.start()
    with build.generation_lock(target):
        pass
    release.join()
    out = capsys.readouterr().out
    assert "waiting" in out and "another" in out and str(tmp_path) in out and len(out.splitlines()) == 1


def _dead_pid() -> int:
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    return finished.pid


def test_a_dead_runs_temporary_goes_even_when_the_dataset_is_reused(tmp_path, tiny_dataset):
    shutil.copytree(tiny_dataset.path, tmp_path / tiny_dataset.path.name)
    stale = tmp_path / f".transactions-tiny.tmp-{_dead_pid()}-0123abcd"
    (stale / "csv").mkdir(parents=True)
    (stale / "csv" / "part-00000.csv").write_text("half written")
    other = tmp_path / ".transactions-tiny.tmp-notapid-0123abcd"  # not the course's naming: kept
    other.mkdir()
    ensure_dataset("tiny", tmp_path)
    assert not stale.exists() and other.exists()


@pytest.mark.skipif(not Path("/dev/shm").is_dir() or not Path("/proc/self/maps").exists(), reason="Linux only")
def test_orphaned_semaphores_of_killed_runs_are_removed_and_used_ones_kept():
    """A SIGKILLed generator leaves multiprocessing's named semaphores in /dev/shm (their resource
    tracker dies with it). Old and mapped by no process: removed; in use or young: kept."""
    import _multiprocessing
    import uuid as uuid_module

    from utils.base.lifetime import remove_orphaned_semaphores

    def semaphore(keep: bool):
        name = f"/mp-coursetest{uuid_module.uuid4().hex[:8]}"
        lock = _multiprocessing.SemLock(1, 1, 1, name, False)  # kind, value, maxvalue, name, unlink
        path = Path("/dev/shm") / f"sem{name[1:].join(['.', ''])}"
        return (lock if keep else None), path

    _, orphan = semaphore(keep=False)  # closed on collection, never unlinked: what a killed run leaves
    in_use, used = semaphore(keep=True)
    _, young = semaphore(keep=False)
    try:
        old = time.time() - 3600
        for path in (orphan, used):
            os.utime(path, (old, old))
        removed = remove_orphaned_semaphores()
        assert orphan.name in removed and not orphan.exists()
        assert used.exists() and young.exists(), "a mapped or recent semaphore must stay"
        assert in_use is not None
    finally:
        for path in (orphan, used, young):
            path.unlink(missing_ok=True)


# --- Ctrl-C at any moment, a damaged manifest, a file in the dataset's place, too many partitions --

INTERRUPTED = "error: interrupted; nothing half-written was kept"
# Partitions of 200,000 rows; the cleanup after a Ctrl-C, which lets the running ones finish, takes
# about 0.3 s on a quiet machine.
SLOW_PARTS_RUN = ["--scale", "tiny", "--rows", "20000000", "--partitions", "100", "--customers", "500",
                  "--formats", "parquet", "--workers", "2"]
BETWEEN_CTRL_CS_S = 0.1
SECOND_CTRL_C_ATTEMPTS = 4


def _running_in_group(group: int) -> list[psutil.Process]:
    """The processes of process group ``group`` that still run (zombies waiting to be reaped do not)."""
    running = []
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) == group and process.status() != psutil.STATUS_ZOMBIE:
                running.append(process)
        except (ProcessLookupError, psutil.Error):
            continue
    return running


def _left_running(group: int) -> list[psutil.Process]:
    """Wait a little for the group's processes to end; kill and return those still running."""
    deadline = time.monotonic() + 10
    while (running := _running_in_group(group)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for process in running:
        with contextlib.suppress(psutil.Error):
            process.kill()
    return running


def _wait_for_starting_workers(proc: subprocess.Popen) -> None:
    """Block until the generator has started a worker process (whose interpreter then loads for a
    second or more before the pool's initializer runs in it)."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            children = psutil.Process(proc.pid).children()
            if any("spawn_main" in " ".join(child.cmdline()) for child in children):
                return
        except psutil.Error:
            pass
        time.sleep(0.01)
    proc.kill()
    pytest.fail("the generator never started a worker")


@pytest.mark.parametrize("moment", [0.3, 0.8, 1.5, "workers starting", "workers writing"])
def test_one_ctrl_c_at_any_moment_is_one_line_and_leaves_nothing(tmp_path, moment):
    """Ctrl-C reaches the whole process group: the generator and its workers. The early moments fall
    while the generator loads its modules or starts its pool (the message gives the time); then
    while a worker's interpreter loads, before the pool's initializer has run in it; then while the
    workers write part files."""
    started = time.monotonic()
    proc = _start_cli(*LONG_RUN, "--data-dir", str(tmp_path), new_session=True)
    if moment == "workers starting":
        _wait_for_starting_workers(proc)
        time.sleep(0.3)
    elif moment == "workers writing":
        _wait_for_parts(tmp_path, proc)
    else:
        time.sleep(moment)
    assert proc.poll() is None, proc.communicate()
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    took = time.monotonic() - sent
    left = _left_running(proc.pid)
    when = f"Ctrl-C {sent - started:.2f} s after the start"
    assert "Traceback" not in stderr and "Fatal Python error" not in stderr, f"{when}:\n{stderr}"
    assert _one_line(stderr) == INTERRUPTED, when
    assert proc.returncode == 130, when
    assert took < 10, f"{when}: it took {took:.1f} s to stop"
    assert not left, f"{when}: still running: {[p.pid for p in left]}"
    assert list(tmp_path.iterdir()) == [], f"{when}: something half-written was left"


def _ctrl_c_twice(data_dir: Path) -> tuple[str, int, float, list[psutil.Process]] | None:
    """Ctrl-C while the workers write, and another while the cleanup runs: the second's stderr, exit
    code, seconds to stop and leftover processes. None when the second did not count: the cleanup
    had ended, or both came before Python ran its handler for the first (a pending signal is a flag,
    not a count), which a loaded machine does now and then."""
    data_dir.mkdir()
    proc = _start_cli(*SLOW_PARTS_RUN, "--data-dir", str(data_dir), new_session=True)
    _wait_for_parts(data_dir, proc)
    os.killpg(proc.pid, signal.SIGINT)
    time.sleep(BETWEEN_CTRL_CS_S)
    if proc.poll() is not None:
        proc.communicate()
        return None
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    took = time.monotonic() - sent
    if _one_line(stderr) == INTERRUPTED:
        return None
    return stderr, proc.returncode, took, _left_running(proc.pid)


def test_a_second_ctrl_c_during_the_cleanup_stops_at_once_in_one_line(tmp_path):
    for attempt in range(SECOND_CTRL_C_ATTEMPTS):
        data_dir = tmp_path / f"attempt-{attempt}"
        if (stopped := _ctrl_c_twice(data_dir)) is not None:
            break
        assert list(data_dir.iterdir()) == [], "the first Ctrl-C's cleanup left something"
    else:
        pytest.fail(f"in {SECOND_CTRL_C_ATTEMPTS} tries a second Ctrl-C during the cleanup never ended the "
                    f"generator in its own line (each time only {INTERRUPTED!r})")
    stderr, returncode, took, left = stopped
    assert "Traceback" not in stderr, stderr
    line = _one_line(stderr)
    assert line.startswith("error: interrupted again; stopped before the cleanup finished") and "next run" in line
    assert returncode == 130
    assert took < 5, f"the second Ctrl-C took {took:.1f} s to stop the generator"
    assert not left, f"still running: {[p.pid for p in left]}"
    build.remove_stale_temporaries(data_dir)  # what the next run does first, as the line says
    assert list(data_dir.iterdir()) == []


def _damage_manifest(path: Path, field: str, value) -> None:
    manifest = json.loads((path / "manifest.json").read_text())
    manifest[field] = value
    (path / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [("params", None, "params is not an object"), ("rows", "x", "rows is not a whole number")],
)
def test_a_hand_damaged_manifest_is_one_line_for_readers_and_regenerated(tmp_path, tiny_dataset, field, value,
                                                                         problem):
    from utils.dataset import Dataset

    copy = shutil.copytree(tiny_dataset.path, tmp_path / tiny_dataset.path.name)
    _damage_manifest(copy, field, value)
    expected = (f"the manifest {copy / 'manifest.json'} is damaged ({problem}): run "
                f"`python -m utils.datagen --scale tiny --data-dir {tmp_path} --force` to make the data again")
    with pytest.raises(ValueError) as error:
        Dataset(copy).rows  # noqa: B018 (reading the property is the test)
    assert str(error.value) == expected
    verify = _cli("--verify", "--scale", "tiny", "--data-dir", str(tmp_path))
    assert verify.returncode == 2
    assert _one_line(verify.stderr) == f"error: {expected}"
    # The generator treats a manifest it cannot read as no dataset (why_incomplete), and makes it again.
    done = _cli("--scale", "tiny", "--data-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert f"regenerating {copy}: its manifest is damaged ({problem})" in done.stdout
    assert Dataset(copy).verify() == []
    assert [p.name for p in tmp_path.iterdir()] == ["transactions-tiny"]


@pytest.mark.parametrize("kind", ["file", "link"])
def test_a_file_or_link_where_the_dataset_goes_is_never_touched(tmp_path, kind):
    data = tmp_path / "data"
    data.mkdir()
    mine = data / "transactions-tiny"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("my notes\n")
    if kind == "file":
        mine.write_text("my notes\n")
    else:
        mine.symlink_to(elsewhere)
    line = (f"{mine} is a {kind}, not a dataset folder the course made: move or remove it, "
            "or pass another --data-dir")
    done = _cli("--scale", "tiny", "--data-dir", str(data))
    assert done.returncode == 2
    assert _one_line(done.stderr) == f"error: {line}"
    with pytest.raises(ValueError) as error:
        ensure_dataset("tiny", data, force=True)
    assert str(error.value) == line
    assert [p.name for p in data.iterdir()] == ["transactions-tiny"], "nothing moved aside or left"
    if kind == "file":
        assert mine.read_text() == "my notes\n"
    else:
        assert mine.is_symlink() and mine.resolve() == elsewhere
    assert [p.name for p in elsewhere.iterdir()] == ["notes.txt"]


def test_regenerating_over_an_older_course_dataset_leaves_no_old_copy(tmp_path, tiny_dataset):
    copy = shutil.copytree(tiny_dataset.path, tmp_path / tiny_dataset.path.name)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["params"]["format_version"] = 1
    (copy / "manifest.json").write_text(json.dumps(manifest))
    done = _cli("--scale", "tiny", "--data-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "regenerating" in done.stdout and "older generator" in done.stdout
    forced = _cli("--scale", "tiny", "--data-dir", str(tmp_path), "--force")
    assert forced.returncode == 0, forced.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["transactions-tiny"], "an .old-* copy was left"
    assert is_complete(copy)


def test_too_many_partitions_for_the_rows_are_refused_up_front(tmp_path):
    for name, scale in SCALES.items():  # every preset, and what the course's tests override, stays allowed
        assert make_params(name).partitions == scale.partitions
    for overrides in ({"rows": 6_000}, {"rows": 9_000, "partitions": 3}, {"partitions": 20},
                      {"rows": 999, "partitions": 1}):
        make_params("tiny", **overrides)
    with pytest.raises(ValueError) as error:
        make_params("tiny", partitions=21)
    assert str(error.value) == (
        "partitions (21) too many for 20,000 rows: each would hold 952 rows, and a partition needs at "
        "least 1,000 to be worth its own files; use at most 20 partitions"
    )
    with pytest.raises(ValueError, match=r"use at most 1 partition$"):
        make_params("tiny", rows=999, partitions=2)
    started = time.monotonic()
    done = _cli("--scale", "tiny", "--partitions", "20000", "--data-dir", str(tmp_path / "d"))
    assert done.returncode == 2
    assert _one_line(done.stderr) == (
        "error: partitions (20,000) too many for 20,000 rows: each would hold 1 row, and a partition needs "
        "at least 1,000 to be worth its own files; use at most 20 partitions"
    )
    assert time.monotonic() - started < 30
    assert not (tmp_path / "d").exists()

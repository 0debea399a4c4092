"""The partition-size rule and the memory-budget helpers behind notebook 05."""

from __future__ import annotations

import dask
import dask.dataframe as dd
import pytest
from distributed import wait
from support.clusters import course_client

from utils.memory import demo_budget, in_memory_bytes, spilled_partitions, worker_memory
from utils.partitions import MAX_CPU_PARTITION_BYTES, MIN_PARTITION_BYTES, recommended_partition_bytes

GiB, MiB = 2**30, 2**20


@pytest.mark.parametrize(
    ("memory", "threads", "expected"),
    [
        (8 * GiB, 4, 256 * MiB),
        (1 * GiB, 2, 64 * MiB),
        (64 * GiB, 1, MAX_CPU_PARTITION_BYTES),
        (256 * 2**10, 1, MIN_PARTITION_BYTES),
    ],
)
def test_cpu_rule_fits_threads_times_copies_in_half_the_memory(memory, threads, expected):
    assert recommended_partition_bytes(memory, threads).bytes == expected


def test_gpu_rule_is_the_middle_of_1_32_to_1_16_of_the_device():
    advice = recommended_partition_bytes(80 * 10**9, backend="gpu")
    assert (advice.low, advice.high) == (2_500_000_000, 5_000_000_000)
    assert advice.low < advice.bytes < advice.high


def test_blocksize_turns_memory_into_csv_bytes_and_bad_input_is_refused():
    advice = recommended_partition_bytes(8 * GiB, 4)
    assert advice.blocksize(2.0) == 128 * MiB
    with pytest.raises(ValueError):
        advice.blocksize(0)
    with pytest.raises(ValueError):
        recommended_partition_bytes(0, 1)
    with pytest.raises(ValueError):
        recommended_partition_bytes(GiB, 1, backend="tpu")


def test_demo_budget_sets_the_target_fraction_to_the_budget():
    budget = demo_budget(3_000_000, ratio=3, workers=2)
    assert budget.budget_bytes == 1_000_000 and budget.per_worker == 500_000
    config = budget.config()
    assert config["distributed.worker.memory.target"] * budget.worker_limit == pytest.approx(500_000)
    assert "device_memory_limit" not in budget.cluster_kwargs()
    on_gpus = demo_budget(3_000_000, ratio=3, backend="gpu", workers=2).cluster_kwargs()
    assert on_gpus["device_memory_limit"] == 500_000 and on_gpus["n_workers"] == 2
    assert on_gpus["enable_cudf_spill"] is False  # else cudf objects bypass the device budget
    with pytest.raises(ValueError):
        demo_budget(1000, ratio=1)
    with pytest.raises(ValueError):
        demo_budget(1000, backend="tpu")


def test_a_gpu_demo_budget_has_no_more_workers_than_gpus(monkeypatch):
    """One worker per GPU: LocalCUDACluster refuses more workers than devices."""
    import utils.memory

    monkeypatch.setattr(utils.memory, "gpu_count", lambda: 1)
    assert demo_budget(3_000_000, backend="gpu").workers == 1
    monkeypatch.setattr(utils.memory, "gpu_count", lambda: 8)
    assert demo_budget(3_000_000, backend="gpu").workers == 2
    assert demo_budget(3_000_000).workers == 2


def test_in_memory_estimate_is_close_to_the_real_size(tiny_dataset):
    real = dd.read_parquet(tiny_dataset.parquet_dir).memory_usage(deep=True).sum().compute(scheduler="sync")
    assert in_memory_bytes(tiny_dataset) == pytest.approx(real, rel=0.05)


def test_persisting_more_than_the_budget_spills_and_the_workers_say_so(tiny_dataset):
    budget = demo_budget(in_memory_bytes(tiny_dataset), ratio=3)
    cluster_kwargs = budget.cluster_kwargs()
    with (
        dask.config.set(budget.config()),
        course_client(quiet=True, backend="cpu", local=True, **cluster_kwargs) as client,
    ):
        memory = worker_memory(client)
        assert (memory["budget"] == budget.per_worker).all()
        frame = dd.read_csv(tiny_dataset.csv_files, blocksize=64 * 2**10, **tiny_dataset.csv_kwargs)
        small = frame[["store_id"]].astype("int16").persist()
        wait(small)
        assert spilled_partitions(client, small) == (0, frame.npartitions)
        everything = frame.persist()
        wait(everything)
        spilled, total = spilled_partitions(client, everything)
        assert total == frame.npartitions and spilled > 0
        assert worker_memory(client)["spilled"].sum() > 0

"""The data generator: synthetic customer transactions, the customers table and the exact ground
truth, deterministic from ``(seed, partition)``.

It stands apart from the rest of ``utils`` (it imports nothing outside this subpackage but the
base floor ``utils.base``; a test holds that), so ``python -m utils.datagen`` and its worker
processes load only what generating needs. Readers of a dataset go through the contract in ``manifest``.

- ``cli``: ``python -m utils.datagen`` (generate, ``--verify``)
- ``build``: ``ensure_generated``: reuse or build a dataset, in parallel, published atomically
- ``params``, ``scales``: what determines a dataset (scale presets plus overrides)
- ``customers``, ``transactions``: the customers and one partition of transactions, pure functions
- ``groundtruth``: the exact answers, in integer cents, summed while generating
- ``writers``, ``arrow_columns``: CSV and Parquet files, hashed as they are written
- ``manifest``: a dataset's folder, what a complete one holds, how to rebuild it
- ``sizes``: disk and memory a dataset needs
- ``clean``: ``make clean-data``: delete only what the course made (datasets, temporaries, scratch copies)
"""

"""The real-GPU wing of the maintainer tooling: what proves the course on an NVIDIA GPU.

- ``python -m tools.gpu.check`` (``make gpu-check``): refuses without a GPU, else runs ``tests/gpu``
  and writes ``reports/gpu-check.md`` and ``.json``;
- ``python -m tools.gpu.report``: the pytest plugin behind those reports, and the step-by-step report
  of the offline run;
- ``python -m tools.gpu.preflight``: before any GPU work on a machine without network access, every
  module imports at the versions ``device/packages.txt`` names;
- ``python -m tools.gpu.resolve`` (``make gpu-resolve``, run by CI): the pip GPU environments, CUDA 12
  and 13, resolve against the package index on wheel metadata only;
- ``python -m tools.gpu.rapids_release``: a new RAPIDS release's pins and what to re-check
  (``docs/upgrading.md``);
- ``device/``: the shell scripts that fetch the wheels, run the offline check on a GPU machine and
  rehearse it here (``docs/gpu-validation.md``).

The simulated RAPIDS stack (``gpu_sim/``) is the other half of the GPU work: it runs the notebooks in
GPU mode where no GPU is, and proves code paths, never speed or memory; this package never imports it.
"""

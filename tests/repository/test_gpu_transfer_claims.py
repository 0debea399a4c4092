"""What the course says about moving GPU data between workers matches the released libraries.

Over distributed's default TCP comm, a cudf object is sent through its Dask serializer, which copies
it to host memory (cudf 26.10.2 ``cudf/comm/serialize.py``: ``dask_serialize`` -> ``host_serialize``);
only UCX (distributed-ucxx, ``cuda_serialize`` -> ``device_serialize``) moves device buffers directly.
So a sentence that has cudf data travel "GPU to GPU" must say that this takes UCX.
"""

from __future__ import annotations

import json
import re

import pytest

from utils.base.paths import REPO_ROOT
from utils.notebook_grammar import course_notebooks

GPU_TO_GPU = re.compile(r"GPU[- ]to[- ]GPU", re.IGNORECASE)
TRANSFER = re.compile(r"\b(travel|travels|move|moves|moved|copied|copies|sent|shuffle|task results?)\b", re.IGNORECASE)


def course_texts() -> dict[str, str]:
    """The course's prose: notebooks' markdown, the review bank, README and docs."""
    texts = {}
    for path in course_notebooks():
        cells = json.loads(path.read_text())["cells"]
        texts[path.name] = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    for path in [REPO_ROOT / "utils" / "review_bank.yaml", REPO_ROOT / "README.md",
                 *sorted((REPO_ROOT / "docs").glob("*.md"))]:
        texts[str(path.relative_to(REPO_ROOT))] = path.read_text()
    return texts


def sentences(text: str) -> list[str]:
    flat = re.sub(r"\s+", " ", text)
    return re.split(r"(?<=[.;:!?])\s+(?=[A-Z0-9`*(])", flat)


def unqualified_claims(text: str) -> list[str]:
    """Sentences that have GPU data move GPU to GPU without naming UCX."""
    return [s for s in sentences(text) if GPU_TO_GPU.search(s) and TRANSFER.search(s) and "UCX" not in s]


@pytest.mark.parametrize("name", sorted(course_texts()))
def test_gpu_to_gpu_transfers_are_said_to_need_ucx(name):
    assert unqualified_claims(course_texts()[name]) == []


def test_the_rule_catches_the_claim_it_was_written_for():
    before = ("The tasks shuffle moves cudf partitions as ordinary task results, GPU to GPU. "
              "The plan shows it.")
    claim = "The tasks shuffle moves cudf partitions as ordinary task results, GPU to GPU."
    assert unqualified_claims(before) == [claim]
    assert unqualified_claims("Between workers they travel through host memory over TCP; only UCX moves "
                              "them GPU-to-GPU.") == []
    assert unqualified_claims("the map of deployment options, GPU-to-GPU communication.") == []

"""The label on every rendered notebook: which backend and scale made its outputs, and how to run it.

A learner comparing the site with their own run must not mistake the site's numbers for what a
GPU prints; so every page says what produced it (read from the executed setup cell, not assumed),
and offers Binder, ``make lab`` and the notebook itself.
"""

from __future__ import annotations

import re

import nbformat

from tools.course_index import Notebook
from tools.site.layout import binder_url
from utils.base.paths import WORKSPACE_DIR
from utils.notebook_grammar import TITLE

BUILD_SCALE = "tiny"
BACKEND_LINE = re.compile(r"^Backend\s*:\s*(.+?)\s*$", re.M)
CLUSTER_LINE = re.compile(r"^Cluster\s*:\s*(.+?)\s*$", re.M)
LABEL_CLASS = "course-run-label"
CPU_BACKEND_LINE = "cpu (pandas)"  # how the setup cell's "Backend : ..." line starts on the CPU backend


class DishonestLabel(RuntimeError):
    """The executed notebook ran on another backend than the label would say."""


def output_text(nb: nbformat.NotebookNode) -> str:
    """Everything the code cells printed or displayed as text, in order."""
    parts = []
    for cell in nb.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            parts.append(output.get("text", "") if output.get("output_type") == "stream"
                         else output.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def executed_backend(nb: nbformat.NotebookNode) -> str | None:
    """The first ``Backend : ...`` line the notebook printed (``utils.start_client``), if any."""
    match = BACKEND_LINE.search(output_text(nb))
    return match.group(1) if match else None


def executed_cluster(nb: nbformat.NotebookNode) -> str | None:
    match = CLUSTER_LINE.search(output_text(nb))
    return match.group(1) if match else None


def label(notebook: Notebook, nb: nbformat.NotebookNode, day: str, rows: int, repository: str | None,
          download: str) -> str:
    """The MyST admonition shown under the notebook's title; ``download`` is the page-relative link to
    the notebook as committed (the header's download button serves the same file). Without a
    configured ``repository`` (``layout.repository_url``) it links neither Binder nor the repository."""
    backend = executed_backend(nb)
    if backend is not None and not backend.startswith(CPU_BACKEND_LINE):
        raise DishonestLabel(f"{notebook.file} ran on '{backend}', but the site says CPU (pandas)")
    cluster = executed_cluster(nb)
    where = f"on the cluster its setup cell reports ({cluster})" if cluster else "(this notebook starts no cluster)"
    path = f"{WORKSPACE_DIR.name}/{notebook.file}"  # the learner's copy that `make lab` and Binder open
    binder = f"[launch it on Binder]({binder_url(repository, path)}) · " if repository else ""
    clone = f"[the repository]({repository})" if repository else "the repository"
    return "\n".join([
        f"```{{admonition}} Outputs from the CPU backend (pandas) at the {BUILD_SCALE} scale",
        f":class: note {LABEL_CLASS}",
        "",
        f"The outputs on this page come from running the notebook top to bottom while the site was built "
        f"({day}): **CPU backend (pandas)** {where}, **`{BUILD_SCALE}` scale** ({rows:,} synthetic "
        f"transactions). Your run differs: other scales change the numbers and plots, timings depend "
        f"on the machine, and on NVIDIA GPUs (cudf backend, one worker per GPU) the outputs differ, "
        f"from the printed backend and cluster to partition counts, memory figures and timings.",
        "",
        f"**Run it yourself**: {binder}on your machine, "
        f"`make lab` in a clone of {clone}, then open `{path}` · "
        f'<a href="{download}" download>download the notebook</a> (as the course ships it).',
        "```",
    ])


def with_label(nb: nbformat.NotebookNode, text: str) -> nbformat.NotebookNode:
    """``nb`` with ``text`` right under the title line of its first cell (the page's title stays first)."""
    first = nb.cells[0]
    title, _, rest = first.source.partition("\n")
    if first.cell_type != "markdown" or not TITLE.match(title):
        raise ValueError("a notebook's first cell starts with its '# NN · Title' line")
    first.source = f"{title}\n\n{text}\n\n{rest.lstrip()}"
    return nb

"""What the dashboard drew, read from a live page: the task stream's rectangles in Bokeh's data
and the coloured pixels of a screenshot of the plot (the browser tests' evidence that a blank
plot is not mistaken for a working one)."""

from __future__ import annotations

import io
import time
from dataclasses import dataclass
from typing import Any

from utils.snapshot import LOAD_TIMEOUT_S

# Runs in the page: the live task-stream plot of a Bokeh dashboard page, found by its data source
# (the columns distributed's TaskStream gives it), the visible rectangles in it (the plot starts
# with one invisible placeholder) and where the plot's canvas is on the page.
TASK_STREAM_JS = """() => {
  const isTaskStream = (s) => s && s.data && ('worker_thread' in s.data) && ('duration' in s.data);
  const seen = new Set(), stack = Object.values(window.Bokeh.index);
  while (stack.length) {
    const view = stack.pop();
    if (!view || seen.has(view)) continue;
    seen.add(view);
    for (const child of view.child_views ?? []) stack.push(child);
    for (const child of view.renderer_views?.values() ?? []) stack.push(child);
    const model = view.model;
    if (model?.type === 'GlyphRenderer' && isTaskStream(model.data_source)) {
      const alpha = model.data_source.data.alpha;
      const visible = Array.from(alpha).filter((a) => a > 0).length;
      const box = (view.parent.canvas_view?.el ?? view.parent.el).getBoundingClientRect();
      return {rectangles: visible, glyph: model.glyph.type, box: [box.x, box.y, box.width, box.height]};
    }
  }
  return null;
}"""

@dataclass(frozen=True)
class TaskStreamDrawing:
    """What the dashboard's task stream shows: visible task rectangles in its data, the glyph
    that draws them, and coloured pixels counted in a screenshot of the plot."""

    rectangles: int
    glyph: str
    coloured_pixels: int


def coloured_pixels(png: bytes) -> int:
    """Pixels that are clearly coloured (not white, grey or black): the task rectangles."""
    import numpy as np
    from PIL import Image

    hsv = np.asarray(Image.open(io.BytesIO(png)).convert("HSV"))
    return int(((hsv[..., 1] > 80) & (hsv[..., 2] > 60)).sum())


def task_stream_drawing(page: Any) -> TaskStreamDrawing | None:
    """The task stream on an open dashboard page, or None when the page has none."""
    found = page.evaluate(TASK_STREAM_JS)
    if found is None:
        return None
    x, y, width, height = found["box"]
    png = page.screenshot(clip={"x": x, "y": y, "width": max(1, width), "height": max(1, height)})
    return TaskStreamDrawing(found["rectangles"], found["glyph"], coloured_pixels(png))


def wait_for_task_stream(page: Any, minimum: int = 1, timeout_s: float = LOAD_TIMEOUT_S) -> TaskStreamDrawing:
    """Wait until the live task stream has drawn at least ``minimum`` tasks (the plot updates
    about every 100 ms); ``TimeoutError`` saying what was seen otherwise."""
    deadline = time.monotonic() + timeout_s
    drawing = task_stream_drawing(page)
    while drawing is None or drawing.rectangles < minimum or drawing.coloured_pixels == 0:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the dashboard's task stream drew no task within {timeout_s:g} s (saw {drawing})")
        page.wait_for_timeout(200)
        drawing = task_stream_drawing(page)
    return drawing

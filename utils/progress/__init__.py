"""Exercise progress without an LMS: every check records its outcome locally, a learner sees a
table per notebook, an instructor merges anonymous exports into a room table and chart.

``store`` (the one progress file in the learner's scratch folder, append-only under a lock),
``catalogue`` (the course's exercises, read from the notebooks), ``record`` (what ``checks.grade``
calls; never raises), ``report`` (the learner's table: ``make progress``, notebook 09), ``room``
(export and collect) and ``cli`` (``python -m utils.progress``). Nothing is sent anywhere.
"""

"""The floor of ``utils``: what every other layer (and ``tools``, ``tests``, ``benchmarks``) may
import, and which itself imports nothing else of the course and no third-party package at module
level (a test holds both), so the generator's worker processes and the stdlib-only tools load it
for free.

- ``paths``: the repository, the notebooks, the data and the scratch folders
- ``units``: sizes in words (``human_bytes``)
- ``lifetime``: processes that die with their parent; what killed runs left behind
"""

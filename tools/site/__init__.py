"""The course site: every notebook rendered with the outputs of a real run, and the README and docs/ as pages.

    python -m tools.site build    # make site: execute the notebooks (tiny scale, CPU), render, check links
    python -m tools.site serve    # make site-serve: the built site on http://127.0.0.1:8000/
    python -m tools.site check    # the link check alone, on the built site
    python -m tools.site badge    # the README's Binder line for [project.urls] Repository

The build executes copies of the notebooks as committed (``git show HEAD:...``; a learner's edits
in ``notebooks/`` never reach the site) in ``build/site/``, lays out a
Sphinx source tree whose table of contents comes from ``notebooks/index.yml``, renders it with
MyST-NB and sphinx-book-theme (``site/conf.py``; any warning fails the build) into
``build/site/html/``, and checks every internal link and anchor (external links are listed in
``reports/site/links.txt``, never fetched).
"""

"""``python -m tools.site build | serve | check`` (see the package's docstring)."""

from __future__ import annotations

import argparse
import contextlib
import sys

from tools.site import __doc__ as DOC
from tools.site.build import LINK_REPORT, SiteError, build
from tools.site.layout import BUILD_DIR, BuildDirs, first_notebook, readme_launch_line, repository_url
from tools.site.linkcheck import check_site, write_report
from tools.site.serve import server
from utils.base.paths import REPO_ROOT


def _build(dirs: BuildDirs, reuse: bool) -> int:
    try:
        build(dirs, reuse=reuse)
    except SiteError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


def _port(text: str) -> int:
    """A TCP port for argparse: a bad one is refused in one line (exit 2), not a traceback from bind()."""
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port: give a number from 1 to 65535")
    return int(text)


def _serve(dirs: BuildDirs, port: int) -> int:
    try:
        httpd = server(dirs.html, port, quiet=False)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # the port is taken, or not ours to use
        print(f"error: cannot serve on 127.0.0.1:{port} ({error.strerror or error}): choose another --port",
              file=sys.stderr)
        return 2
    print(f"serving {dirs.html.relative_to(REPO_ROOT)} on http://127.0.0.1:{httpd.server_address[1]}/ (Ctrl-C stops)")
    with contextlib.suppress(KeyboardInterrupt), httpd:
        httpd.serve_forever()
    return 0


def _check(dirs: BuildDirs) -> int:
    if not (dirs.html / "index.html").is_file():
        print(f"error: no site in {dirs.html.relative_to(REPO_ROOT)}: build it first (make site)", file=sys.stderr)
        return 1
    report = check_site(dirs.html)
    write_report(report, LINK_REPORT)
    print(f"link check: {report.summary()} (list: {LINK_REPORT.relative_to(REPO_ROOT)})")
    for page, link, why in report.broken:
        print(f"  broken: {page}: {link} ({why})")
    return 1 if report.broken else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.site", description=DOC.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build_command = commands.add_parser("build", help="execute the notebooks, build the site into build/site/html")
    build_command.add_argument("--fresh", action="store_true",
                               help="execute every notebook again, even one with a reusable copy (the test "
                                    "suite's CPU pass, or an earlier build, of the same notebook)")
    serve_command = commands.add_parser("serve", help="serve the built site on 127.0.0.1")
    serve_command.add_argument("--port", type=_port, default=8000, help="port on 127.0.0.1 (default 8000)")
    commands.add_parser("check", help="check the built site's internal links and anchors; list external links")
    commands.add_parser("badge", help="print the README's launch line for [project.urls] Repository in "
                                      "pyproject.toml: the Binder badge, or how to get one")
    args = parser.parse_args(argv)
    if args.command == "badge":
        print(readme_launch_line(repository_url(), first_notebook()))
        return 0
    dirs = BuildDirs(BUILD_DIR)
    if args.command == "build":
        return _build(dirs, reuse=not args.fresh)
    if args.command == "serve":
        return _serve(dirs, args.port)
    return _check(dirs)


if __name__ == "__main__":
    sys.exit(main())

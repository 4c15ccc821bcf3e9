"""``relay-nb``: the command line, on the same code paths as the library and its tests.

    relay-nb check FILE          parse + InferType; print the typed program or the errors
    relay-nb fmt FILE [--anf]    print the program canonically (graph form or A-normal form)
    relay-nb demo                check and print the bundled example programs

Exit codes: 0 ok, 1 the program has errors, 2 bad usage or unreadable file.
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from typing import Optional, Sequence

from .errors import RelayError


def _read(path: str) -> tuple[str, str]:
    """(text, source name) of ``path`` ('-' is standard input)."""
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    with open(path, encoding="utf-8") as f:
        return f.read(), path


def _check(text: str, name: str, form: str, out) -> int:
    from .syntax.parser import parse
    from .transform.infer_type import InferType

    mod = InferType()(parse(text, source_name=name))
    out.write(mod.astext(form=form, show_types=True))
    out.write("\n")
    return 0


def _fmt(text: str, name: str, form: str, out) -> int:
    from .syntax.parser import parse

    out.write(parse(text, source_name=name).astext(form=form))
    out.write("\n")
    return 0


def _demo(out) -> int:
    """Check and print every bundled example, in graph form then A-normal form."""
    examples = sorted(
        (p for p in resources.files("relay_nb.examples").iterdir() if p.name.endswith(".relay")),
        key=lambda p: p.name,
    )
    for path in examples:
        text = path.read_text(encoding="utf-8")
        out.write(f"// ===== {path.name}: typed, graph form =====\n")
        _check(text, path.name, "graph", out)
        out.write(f"// ===== {path.name}: A-normal form =====\n")
        _fmt(text, path.name, "anf", out)
        out.write("\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="relay-nb", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="parse and type-check a Relay file")
    check.add_argument("file", help="a .relay file, or - for standard input")
    check.add_argument("--anf", action="store_true", help="print in A-normal form")
    fmt = sub.add_parser("fmt", help="print a Relay file canonically")
    fmt.add_argument("file", help="a .relay file, or - for standard input")
    fmt.add_argument("--anf", action="store_true", help="print in A-normal form (let)")
    sub.add_parser("demo", help="check and print the bundled example programs")
    return parser


def main(argv: Optional[Sequence[str]] = None, out=None, err=None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        if args.command == "demo":
            return _demo(out)
        try:
            text, name = _read(args.file)
        except OSError as exc:
            err.write(f"relay-nb: cannot read {args.file}: {exc.strerror}\n")
            return 2
        form = "anf" if args.anf else "graph"
        if args.command == "check":
            return _check(text, name, form, out)
        return _fmt(text, name, form, out)
    except RelayError as exc:
        err.write(f"{exc}\n")
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

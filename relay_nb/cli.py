"""``relay-nb``: the command line, on the same code paths as the library and its tests.

    relay-nb check FILE          parse + InferType; print the typed program or the errors
    relay-nb fmt FILE [--anf]    print the program canonically (graph form or A-normal form)
    relay-nb run FILE [ARGS...]  evaluate @main (or --entry NAME); ARGS are numbers or .npy files
    relay-nb opt FILE --passes FoldConstant,FuseOps|O3 [--opt-level 3] [--print-after-all] [--time]
    relay-nb import MODEL.onnx [-o OUT.relay] [--shape NAME=1,3,224,224] [--params P.npz]
                                 import an ONNX model and print it as Relay text
    relay-nb demo                check and print the bundled example programs

``import`` freezes the weights into the program by default (its ``#[metadata]`` section,
so the text is complete and reads back with ``relay.parse``); ``--params P.npz`` keeps them
as parameters named after the ONNX initializers and writes their values to ``P.npz``
(``np.load(P)[name]``; ``@main`` takes the model inputs, then the parameters in file order).

Exit codes: 0 ok, 1 the program has errors, 2 bad usage or unreadable file.
"""

from __future__ import annotations

import argparse
import codecs
import sys
from importlib import resources
from typing import Optional, Sequence

from .errors import RelayError


def _read(path: str) -> tuple[str, str]:
    """(text, source name) of ``path`` ('-' is standard input).

    Relay files are UTF-8; one with a byte-order mark (a UTF-16 export from an editor,
    UTF-8 with BOM) is decoded by it.  Anything else that is not UTF-8 — a binary file —
    raises UnicodeDecodeError, which ``main`` reports in one line."""
    if path == "-":
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:  # a text stream given by the caller
            return sys.stdin.read(), "<stdin>"
        data, name = stream.read(), "<stdin>"
    else:
        with open(path, "rb") as f:
            data, name = f.read(), path
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16"), name
    return data.decode("utf-8-sig"), name


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


def _argument(text: str):
    """A command-line argument: a ``.npy`` file, or a number (int if it looks like one)."""
    import numpy as np

    if text.endswith(".npy"):
        try:
            return np.load(text, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise RelayError(f"cannot load argument {text}: {exc}") from None
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise RelayError(f"argument {text!r} is neither a number nor a .npy file") from None


def _run(text: str, name: str, entry: str, args: list[str], out, kind: str = "interpreter") -> int:
    from .eval.executor import create_executor
    from .eval.values import format_value
    from .syntax.parser import parse

    mod = parse(text, source_name=name)
    executor = create_executor(kind, mod=mod)
    func = executor.evaluate(mod.get_global_var(entry) if entry != "main" else None)
    out.write(format_value(func(*[_argument(a) for a in args])) + "\n")
    return 0


def _opt(text: str, name: str, passes: str, opt_level: int, print_after_all: bool, timing: bool, form: str, out) -> int:
    from .notebook.trace import resolve_passes
    from .syntax.parser import parse
    from .transform.infra import PassContext, Sequential
    from .transform.instrument import PassRecorder, PassTimingInstrument

    mod = parse(text, source_name=name)
    # The same resolution as %%relay --passes: registered names, or O0..O3 (relay.optimize).
    pipeline = resolve_passes(passes)
    timer = PassTimingInstrument()
    recorder = PassRecorder(leaves_only=True)
    instruments: list = [recorder] if print_after_all else []
    if timing:
        instruments.append(timer)
    try:
        if pipeline.opt_level is not None:
            mod = pipeline.run(mod, instruments=instruments)
        else:
            with PassContext(opt_level=opt_level, instruments=instruments):
                mod = Sequential(pipeline.passes, name="pipeline")(mod)
    finally:  # after a failing pass, the steps up to it are what helps
        last = _print_steps(recorder.records, passes, form, out) if print_after_all else None
    result = mod.astext(form=form)
    if result != last:  # the last step printed is already the result
        out.write(result + "\n")
    if timing:
        out.write("/*\n" + timer.render() + "\n*/\n")
    return 0


def _print_steps(records: list, passes: str, form: str, out) -> Optional[str]:
    """``--print-after-all``: the program after each pass that ran (composites skipped, the
    InferType runs that other passes require skipped unless InferType was asked for: they
    only add the types the final program shows anyway); a pass of an O0..O3 pipeline that
    left the text as it was gets one line.  Returns the last text printed."""
    asked = {p.strip() for p in passes.split(",")}
    last = None
    for record in records:
        if record.name == "InferType" and "InferType" not in asked:
            continue
        text = record.after.astext(form=form)
        if record.name not in asked and text == record.before.astext(form=form):
            out.write(f"// after {record.name}: unchanged\n")
            continue
        last = text
        out.write(f"// after {record.name}\n{last}\n")
    return last


def _shapes(items: Sequence[str]) -> dict:
    """``["input=1,3,224,224", "mask=1,?"]`` -> ``{"input": (1, 3, 224, 224), "mask": (1, -1)}``."""
    shapes = {}
    for item in items:
        name, eq, dims = item.rpartition("=")
        try:
            if not eq or not name:
                raise ValueError
            shapes[name] = tuple(-1 if d.strip() in ("?", "-1") else int(d) for d in dims.split(",") if d.strip())
        except ValueError:
            raise RelayError(f"--shape expects NAME=D1,D2,... (? for a dynamic dim), got {item!r}") from None
    return shapes


def _import(path: str, output: Optional[str], shapes: Sequence[str], params_path: Optional[str], opset: Optional[int], form: str, out) -> int:
    import numpy as np

    from .frontend.onnx import from_onnx

    mod, params = from_onnx(path, shape=_shapes(shapes), opset=opset, freeze_params=params_path is None)
    text = mod.astext(form=form, show_types=True) + "\n"
    if params_path is not None:
        np.savez(params_path, **params)
    if output is None:
        out.write(text)
    else:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
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
    run = sub.add_parser("run", help="evaluate a function of a Relay file (interpreter or JIT)")
    run.add_argument("file", help="a .relay file, or - for standard input")
    run.add_argument("args", nargs="*", help="arguments: numbers, True/False, or .npy files")
    run.add_argument("--entry", default="main", help="the global function to run (default: main)")
    run.add_argument(
        "--exec", dest="kind", choices=("interpreter", "jit"), default="interpreter",
        help="run with the reference interpreter (default) or the llvmlite JIT",
    )
    opt = sub.add_parser("opt", help="run passes on a Relay file and print the result")
    opt.add_argument("file", help="a .relay file, or - for standard input")
    opt.add_argument(
        "--passes", required=True,
        help="comma-separated pass names, e.g. FoldConstant,FuseOps, or an opt level O0..O3 "
        "(the default pipeline at that level, as %%%%relay --passes O3)",
    )
    opt.add_argument(
        "--opt-level", type=int, default=2,
        help="PassContext opt_level for a list of names (default 2; O0..O3 set their own)",
    )
    opt.add_argument("--print-after-all", action="store_true", help="print the module after every pass")
    opt.add_argument("--time", action="store_true", help="report the time each pass took")
    opt.add_argument("--anf", action="store_true", help="print in A-normal form")
    imp = sub.add_parser("import", help="import an ONNX model and print it as Relay text")
    imp.add_argument("file", help="an .onnx file")
    imp.add_argument("-o", "--output", help="write the program here instead of standard output")
    imp.add_argument(
        "--shape", action="append", default=[], metavar="NAME=D1,D2,...",
        help="override an input's shape (repeatable; ? for a dynamic dim)",
    )
    imp.add_argument(
        "--params", metavar="FILE.npz",
        help="keep the weights as named parameters and write their values to FILE.npz",
    )
    imp.add_argument("--opset", type=int, help="convert as this opset instead of the model's")
    imp.add_argument("--anf", action="store_true", help="print in A-normal form")
    sub.add_parser("demo", help="check and print the bundled example programs")
    return parser


def main(argv: Optional[Sequence[str]] = None, out=None, err=None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # `run FILE --entry f 1 2`: arguments after an option still belong to run
        if args.command != "run" or any(e.startswith("--") for e in extra):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.args = [*args.args, *extra]
    try:
        if args.command == "demo":
            return _demo(out)
        if args.command == "import":
            import os

            if not os.path.isfile(args.file):
                err.write(f"relay-nb: cannot read {args.file}: no such file\n")
                return 2
            form = "anf" if args.anf else "graph"
            return _import(args.file, args.output, args.shape, args.params, args.opset, form, out)
        try:
            text, name = _read(args.file)
        except OSError as exc:
            err.write(f"relay-nb: cannot read {args.file}: {exc.strerror}\n")
            return 2
        except UnicodeDecodeError as exc:
            err.write(
                f"relay-nb: cannot read {args.file}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} "
                f"at offset {exc.start}); Relay files are UTF-8\n"
            )
            return 2
        if args.command == "run":
            return _run(text, name, args.entry, args.args, out, args.kind)
        form = "anf" if args.anf else "graph"
        if args.command == "opt":
            return _opt(text, name, args.passes, args.opt_level, args.print_after_all, args.time, form, out)
        if args.command == "check":
            return _check(text, name, form, out)
        return _fmt(text, name, form, out)
    except RelayError as exc:
        err.write(f"{exc}\n")
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

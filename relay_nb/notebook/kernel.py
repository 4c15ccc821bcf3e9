"""The Relay kernel: a Jupyter kernel whose cells are Relay text.

Each cell is parsed, type-checked and displayed exactly as a ``%%relay`` cell is (it runs
:func:`~relay_nb.notebook.magic.run_relay_cell` through the IPython shell, so widgets, rich
display, execution counts and clean error reports all work as in the Python kernel).
Leading ``// key: value`` comment lines configure the cell (see
:mod:`relay_nb.notebook.cells`)::

    // passes: FoldConstant, FuseOps
    // run: 3, 4
    def @main(%x: int32, %y: int32) { %x * %y + 1 }

``_`` is the program of the previous successful Relay cell (after its passes): a cell whose
code is just ``_`` re-displays it, and its header options apply to it — ``// passes:``
transforms it, ``// run:`` runs it, ``// show: graph`` draws it.  A failed cell leaves ``_``
unchanged.  Each program is also stored in the Python namespace (``mod``, or the name
given by ``// name:``), where ``// python`` cells — plain Python — can use it; ``np`` and
``relay`` are predefined for ``// run:`` arguments.

Tab completes operator names, the attributes of the op being called, globals and
constructors defined so far, pass names and header options; Shift-Tab shows an operator's
documentation and type relation, or a global's type.

Start it with ``python -m relay_nb.notebook.kernel -f CONNECTION_FILE`` (what the
``relay`` kernelspec does).
"""

from __future__ import annotations

from typing import Any, Optional

from ipykernel.ipkernel import IPythonKernel
from IPython.core.magic import Magics, cell_magic, magics_class

from .. import __version__
from ..errors import RelayError
from .cells import parse_cell, previous_text, python_code
from .complete import complete, inspect
from .magic import RelayCellError, run_relay_cell

# The private cell magic every Relay cell is run through (its body is the cell, verbatim).
_CELL_MAGIC = "relay_kernel_cell"


class RelaySession:
    """What the kernel remembers between cells: ``_`` and the names defined so far."""

    def __init__(self) -> None:
        self.previous: Any = None  # the IRModule of the last successful Relay cell
        self.globals: dict[str, str] = {}  # global name -> its type, as text
        self.constructors: set[str] = set()

    def record(self, mod: Any) -> None:
        from ..typing.text import type_text

        self.previous = mod
        for gv, func in mod.functions.items():
            ty = getattr(func, "checked_type", None)
            self.globals[gv.name_hint] = type_text(ty) if ty is not None else "(not type-checked)"
        self.constructors.update(mod.constructors())


@magics_class
class _KernelCellMagics(Magics):
    """The cell magic behind every Relay cell; not meant to be typed by users."""

    def __init__(self, shell: Any, session: RelaySession):
        super().__init__(shell=shell)
        self.relay_session = session

    @cell_magic(_CELL_MAGIC)
    def relay_kernel_cell(self, line: str, cell: str) -> None:
        import sys

        from IPython.display import display

        try:
            cfg = parse_cell(cell)
            for warning in cfg.warnings:
                print(f"warning: {warning}", file=sys.stderr)
            if cfg.is_empty:
                if cfg.options:
                    raise RelayError(
                        "this cell has options but no program; write `_` below them to "
                        "apply them to the previous cell's program"
                    )
                return  # only comments: nothing to do, `_` stays
            text = previous_text(self.relay_session.previous) if cfg.is_previous else cell
            # line_offset=0: the cell has no %%relay line, its first line is line 1.
            outcome = run_relay_cell(text, cfg.magic_options(), self.shell.user_ns, line_offset=0)
        except RelayError as exc:
            raise RelayCellError(exc) from None
        self.relay_session.record(outcome.mod)
        for obj in outcome.outputs:
            display(obj)


class RelayKernel(IPythonKernel):
    """An IPython kernel whose cells are Relay programs (see the module docstring)."""

    implementation = "relay_nb"
    implementation_version = __version__
    language_info = {
        "name": "relay",
        "version": "0.0.5",  # the text format's version
        "mimetype": "text/x-relay",
        "file_extension": ".relay",
        # The editor language that relay_nb's JupyterLab extension (labextension/)
        # registers; exports use relay_nb's own Pygments lexer.
        "codemirror_mode": "relay",
        "pygments_lexer": "relay",
    }

    @property
    def banner(self) -> str:  # type: ignore[override]
        return (
            f"Relay (relay_nb {__version__}): every cell is Relay text.\n"
            "Header comments configure a cell: // passes: A, B | // run: 1, 2 | // show: graph "
            "| // exec: jit | // name: mod | // time | // step | // python.\n"
            "`_` alone is the previous cell's program."
        )

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        import numpy as np

        import relay_nb

        self.relay_session = RelaySession()
        self.shell.register_magics(_KernelCellMagics(self.shell, self.relay_session))
        # %%relay and %relay also work inside `// python` cells.
        relay_nb.load_ipython_extension(self.shell)
        self.shell.user_ns.setdefault("np", np)
        self.shell.user_ns.setdefault("relay", relay_nb)

    def _translate(self, code: str) -> str:
        """The IPython cell that runs a Relay kernel cell."""
        if not code.strip():
            return code
        try:
            cfg = parse_cell(code)
        except RelayError:
            cfg = None  # the magic reports the bad header, with its location
        if cfg is not None and cfg.is_python:
            return python_code(cfg)
        return f"%%{_CELL_MAGIC}\n{code}"

    async def do_execute(  # type: ignore[override]
        self,
        code: str,
        silent: bool,
        store_history: bool = True,
        user_expressions: Optional[dict] = None,
        allow_stdin: bool = False,
        *,
        cell_meta: Optional[dict] = None,
        cell_id: Optional[str] = None,
    ) -> dict:
        return await super().do_execute(
            self._translate(code),
            silent,
            store_history=store_history,
            user_expressions=user_expressions,
            allow_stdin=allow_stdin,
            cell_meta=cell_meta,
            cell_id=cell_id,
        )

    def _is_python(self, code: str) -> bool:
        try:
            return parse_cell(code).is_python
        except RelayError:
            return False

    def _passes(self) -> list[str]:
        from .. import transform

        user = [k for k, v in self.shell.user_ns.items() if isinstance(v, transform.Pass) and not k.startswith("_")]
        return sorted(set(transform.PASSES) | set(user) | {"O0", "O1", "O2", "O3"})

    def do_complete(self, code: str, cursor_pos: Optional[int]) -> dict:  # type: ignore[override]
        if self._is_python(code):
            return super().do_complete(code, cursor_pos)
        cursor_pos = len(code) if cursor_pos is None else cursor_pos
        try:
            found = complete(
                code, cursor_pos, self.relay_session.globals, self.relay_session.constructors, passes=self._passes()
            )
        except RelayError:
            found = None
        if found is None:
            return {"matches": [], "cursor_start": cursor_pos, "cursor_end": cursor_pos, "metadata": {}, "status": "ok"}
        return {
            "matches": found.matches,
            "cursor_start": found.start,
            "cursor_end": found.end,
            "metadata": {},
            "status": "ok",
        }

    def do_inspect(self, code: str, cursor_pos: int, detail_level: int = 0, omit_sections: Any = ()) -> dict:  # type: ignore[override]
        if self._is_python(code):
            return super().do_inspect(code, cursor_pos, detail_level, omit_sections)
        try:
            text = inspect(code, cursor_pos, self.relay_session.globals)
        except RelayError:
            text = None
        if text is None:
            return {"status": "ok", "found": False, "data": {}, "metadata": {}}
        return {"status": "ok", "found": True, "data": {"text/plain": text}, "metadata": {}}


def main() -> None:
    """Launch the kernel (``python -m relay_nb.notebook.kernel -f CONNECTION_FILE``)."""
    from ipykernel.kernelapp import IPKernelApp

    IPKernelApp.launch_instance(kernel_class=RelayKernel)


__all__ = ["RelayKernel", "RelaySession", "main"]

if __name__ == "__main__":
    # Launch the class of the imported module, not of this __main__ copy.
    from relay_nb.notebook.kernel import main as _main

    _main()

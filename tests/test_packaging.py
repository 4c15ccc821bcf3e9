"""``import relay_nb`` works with only the core runtime dependencies (numpy, lark, llvmlite):
parsing, typing, printing and running need nothing else (``graphviz``, the fourth runtime
dependency, is imported only by ``relay.viz``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# Run in a fresh interpreter in which the optional packages cannot be imported.
SCRIPT = textwrap.dedent(
    """
    import sys

    BLOCKED = {"IPython", "ipywidgets", "ipykernel", "graphviz", "pygraphviz", "jupyterlab", "scipy"}

    class Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"{name} is blocked in this test")
            return None

    sys.meta_path.insert(0, Block())

    import numpy as np
    import relay_nb as relay

    mod = relay.parse("def @main(%x: Tensor[(3), float32]) { %1 = log(%x); add(%1, erf(%1)) }")
    mod = relay.transform.InferType()(mod)
    text = mod.astext(form="anf")
    out = relay.create_executor("interpreter", mod=mod).evaluate()(np.ones(3, "float32"))
    assert out.shape == (3,) and "let" in text
    print("ok", sorted(k for k in sys.modules if k.split(".")[0] in BLOCKED))
    """
)


def test_import_parse_infer_print_and_run_with_runtime_dependencies_only():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok []"

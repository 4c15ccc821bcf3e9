"""The course notebooks: in sync with their sources, stripped, executed headlessly (the CI
check of issue 6), and their answer checks really check."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

import relay_nb as relay

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "tutorials"


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


build = load(TUTORIALS / "build.py", "tutorials_build")
runner = load(ROOT / "scripts" / "run_tutorials.py", "run_tutorials")
checks = load(TUTORIALS / "checks.py", "tutorial_checks")

SOURCES = build.sources()
NOTEBOOKS = sorted(TUTORIALS.glob("[0-9][0-9]_*.ipynb"))


# --- sources and committed notebooks -------------------------------------------------------------


def test_the_course_track_has_its_numbered_notebooks():
    assert [p.stem for p in SOURCES] == [p.stem for p in NOTEBOOKS]
    assert [p.name[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04", "05", "06", "07", "08", "09"]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_notebook_is_in_sync_with_its_source(source):
    assert not build.is_stale(source), f"{build.target(source).name} is stale: run python tutorials/build.py"


def _opened_by_a_front_end(path: Path) -> None:
    """What JupyterLab writes back on opening a notebook: its kernel's language_info and
    cell metadata (the cells' kind and text unchanged)."""
    nb = nbformat.read(path, as_version=4)
    nb.metadata["language_info"] = {
        "codemirror_mode": {"name": "ipython", "version": 3},
        "file_extension": ".py",
        "mimetype": "text/x-python",
        "name": "python",
        "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3",
        "version": "3.11.9",
    }
    for cell in nb.cells:
        cell.metadata["trusted"] = True
    nbformat.write(nb, path)


def test_sync_check_ignores_front_end_metadata_but_not_cells(tmp_path, monkeypatch):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "09_x.py").write_text("# %% [markdown]\n# # Title\n\n# %%\nx = 1\n")
    monkeypatch.setattr(build, "HERE", tmp_path)
    monkeypatch.setattr(build, "SRC", tmp_path / "src")
    assert build.main([]) == 0
    notebook = tmp_path / "09_x.ipynb"
    _opened_by_a_front_end(notebook)
    assert build.main(["--check"]) == 0
    source = tmp_path / "src" / "09_x.py"
    source.write_text(source.read_text() + "\n# %%\ny = 2\n")
    assert build.main(["--check"]) == 1  # a new cell in the source is staleness
    assert build.main([]) == 0
    assert notebook.read_text() == build.notebook_text(source)  # rewriting restores the canonical bytes


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_notebook_has_no_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    assert nb.metadata.kernelspec.name == "python3"


def test_build_check_mode_detects_a_stale_notebook(tmp_path, monkeypatch):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "09_x.py").write_text("# %% [markdown]\n# # Title\n\n# %%\nx = 1\n")
    monkeypatch.setattr(build, "HERE", tmp_path)
    monkeypatch.setattr(build, "SRC", tmp_path / "src")
    assert build.main(["--check"]) == 1  # no notebook yet
    assert build.main([]) == 0
    assert build.main(["--check"]) == 0
    (tmp_path / "09_x.ipynb").write_text((tmp_path / "09_x.ipynb").read_text().replace("x = 1", "x = 2"))
    assert build.main(["--check"]) == 1


def test_percent_format_conversion():
    nb = build.notebook_from_source(
        "# %% [markdown]\n# # Title\n#\n# text\n\n"
        "# %%\n# %load_ext relay_nb\nimport numpy as np\n# a comment stays\n\n"
        "# %%\n# %%relay -n m --run 1\n# def @main(%x: int32) {\n#   %x  // id\n# }\n"
    )
    kinds = [c.cell_type for c in nb.cells]
    assert kinds == ["markdown", "code", "code"]
    assert nb.cells[0].source == "# Title\n\ntext"
    assert nb.cells[1].source == "%load_ext relay_nb\nimport numpy as np\n# a comment stays"
    assert nb.cells[2].source == "%%relay -n m --run 1\ndef @main(%x: int32) {\n  %x  // id\n}"


# --- execution (the CI check) --------------------------------------------------------------------


def _check_calls(nb) -> int:
    return sum(
        line.lstrip().startswith("check_")
        for cell in nb.cells
        if cell.cell_type == "code"
        for line in cell.source.splitlines()
    )


def stream_text(cell) -> str:
    """A cell's stdout and stderr as one string, however many stream messages carried it."""
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.output_type == "stream")


def _outputs_text(nb) -> str:
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            parts.extend(str(v) for v in out.get("data", {}).values())
            parts.extend(out.get("traceback", []))
    return "\n".join(parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_tutorial_runs_headlessly_and_its_answers_are_correct(path, tmp_path):
    nb, error, _ = runner.execute(path, tmp_path)
    assert error is None, error
    written = nbformat.read(tmp_path / path.name, as_version=4)
    assert all(c.execution_count for c in written.cells if c.cell_type == "code")
    text = _outputs_text(nb)
    assert checks.NO not in text
    assert text.count(checks.OK) == _check_calls(nb) >= 2
    assert "Traceback" not in text
    for cell in nb.cells:  # a check ending a cell prints its verdict and displays nothing more
        if cell.cell_type == "code" and cell.source.splitlines()[-1].startswith("check_"):
            # Only the joined text counts: one print() may reach the kernel's client as one
            # stream message or as several (the text, then "\n"), depending on load.
            assert {(o.output_type, o.get("name")) for o in cell.outputs} == {("stream", "stdout")}
            verdict = stream_text(cell).rstrip("\n").splitlines()[-1]  # after what the cell printed
            assert verdict.startswith(checks.OK), stream_text(cell)


def test_stream_text_joins_a_print_split_across_messages():
    """Under load one print() can reach the client as the text, then "\\n": the checks
    above read the joined text, never the number of messages."""
    cell = nbformat.v4.new_code_cell("check_x()")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="some output\n"),
        nbformat.v4.new_output("stream", name="stdout", text=checks.OK + ": fine"),
        nbformat.v4.new_output("stream", name="stdout", text="\n"),
    ]
    assert stream_text(cell) == f"some output\n{checks.OK}: fine\n"


def test_runner_reports_a_failing_notebook(tmp_path, monkeypatch, capsys):
    good = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
    bad = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 / 0")])
    for name, nb in (("01_good.ipynb", good), ("02_bad.ipynb", bad)):
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(nb, tmp_path / name)
    monkeypatch.setattr(runner, "TUTORIALS", tmp_path)
    out = tmp_path / "out"
    assert runner.main([str(out), "--only", "01"]) == 0
    assert runner.main([str(out)]) == 1
    captured = capsys.readouterr()
    assert "ok     01_good.ipynb" in captured.out and "FAILED 02_bad.ipynb" in captured.out
    assert "ZeroDivisionError" in captured.err
    executed = json.loads((out / "01_good.ipynb").read_text())
    assert "".join(executed["cells"][0]["outputs"][0]["text"]) == "42\n"
    assert runner.main([str(out), "--only", "99"]) == 1  # nothing to run is an error


# --- the checks reject wrong answers -------------------------------------------------------------


def verdict(capsys, ok: bool) -> str:
    text = capsys.readouterr().out
    assert text.startswith(checks.OK if ok else checks.NO), text
    return text


def test_check_let_program(capsys):
    good = "def @main(%x: Tensor[(3), float32]) { let %y = add(%x, 1f); multiply(%y, %x) }"
    assert checks.check_let_program(good)
    verdict(capsys, True)
    no_let = "def @main(%x: Tensor[(3), float32]) { multiply(add(%x, 1f), %x) }"
    assert not checks.check_let_program(no_let)
    assert "let" in verdict(capsys, False)
    wrong = "def @main(%x: Tensor[(3), float32]) { let %y = add(%x, 2f); multiply(%y, %x) }"
    assert not checks.check_let_program(wrong)
    verdict(capsys, False)
    assert not checks.check_let_program("def @main(%x: Tensor[(3), float32]) { let %y = ; %y }")
    assert "parse error" in verdict(capsys, False)
    assert not checks.check_let_program("def @main(%x: Tensor[(2), float32]) { let %y = %x; %y }")
    assert "should have type" in verdict(capsys, False)


def test_check_prediction(capsys):
    assert checks.check_prediction(4, "let %a = 1; let %b = 2 * %a; let %a = %a + %a; %a + %b")
    verdict(capsys, True)
    assert not checks.check_prediction(3, "let %a = 1; let %b = 2 * %a; let %a = %a + %a; %a + %b")
    assert "shadows" in verdict(capsys, False)
    assert not checks.check_prediction(..., "1")
    verdict(capsys, False)


def test_check_same_program(capsys):
    text = "def @main(%p: Tensor[(2), float32]) { exp(%p) }"
    p = relay.var("p", shape=(2,))
    assert checks.check_same_program(relay.Function([p], relay.exp(p)), text)
    verdict(capsys, True)
    assert not checks.check_same_program(relay.Function([p], relay.log(p)), text)
    verdict(capsys, False)
    assert not checks.check_same_program(relay.exp(p), text)
    assert "relay.Function" in verdict(capsys, False)


def test_check_type_prediction(capsys):
    program = "def @main(%a: Tensor[(3, 1), float32], %b: Tensor[(4), float32]) { add(%a, %b) }"
    assert checks.check_type_prediction("Tensor[(3, 4), float32]", program)
    verdict(capsys, True)
    assert not checks.check_type_prediction("Tensor[(3, 1), float32]", program)
    assert "Broadcasting" in verdict(capsys, False)
    assert not checks.check_type_prediction("Tensor[(3, 4), float64]", program)
    verdict(capsys, False)
    assert not checks.check_type_prediction("Tensor[(3, 4", program)
    assert "parse error" in verdict(capsys, False)


def test_check_factorial(capsys):
    off_by_one = "def @fact(%n: int32) -> int32 { if (%n == 0) { 0 } else { %n * @fact(%n - 1) } }"
    assert not checks.check_factorial(off_by_one)
    assert "fact(0) should be 1" in verdict(capsys, False)
    assert not checks.check_factorial("def @f(%n: int32) -> int32 { %n }")
    assert "@fact" in verdict(capsys, False)
    seed = "def @fact(%x: Tensor[(2), int32]) -> Tensor[(2), int32] { %x }"
    assert not checks.check_factorial(seed)
    assert "should have type" in verdict(capsys, False)


def test_check_twice(capsys):
    monomorphic = "def @twice(%f: fn (int32) -> int32, %x: int32) -> int32 { %f(%f(%x)) }"
    assert not checks.check_twice(monomorphic)
    assert "polymorphic" in verdict(capsys, False)
    once = "def @twice[A](%f: fn (A) -> A, %x: A) -> A { %f(%x) }"
    assert not checks.check_twice(once)
    assert "f(f(x))" in verdict(capsys, False)


NAT = """
type Nat { Z, S(Nat), }
type List[A] { Cons(A, List[A]), Nil, }
type Tree[A] { Leaf, Node(Tree[A], A, Tree[A]), }
"""


def test_check_double(capsys):
    identity = relay.parse(NAT + "def @double(%n: Nat[]) -> Nat[] { %n }")
    assert not checks.check_double(identity)
    assert "should have 2 S's" in verdict(capsys, False)
    plus_one = relay.parse(NAT + "def @double(%n: Nat[]) -> Nat[] { S(%n) }")
    assert not checks.check_double(plus_one)
    verdict(capsys, False)
    assert not checks.check_double(relay.parse(NAT))
    verdict(capsys, False)


def test_check_sum_list(capsys):
    length = relay.parse(NAT + "def @sum_list(%l: List[int32]) -> int32 { match (%l) { Cons(_, %r) => 1 + @sum_list(%r), Nil => 0 } }")
    assert not checks.check_sum_list(length)
    verdict(capsys, False)
    head = relay.parse(NAT + "def @sum_list(%l: List[int32]) -> int32 { match (%l) { Cons(%x, _) => %x, Nil => 0 } }")
    assert not checks.check_sum_list(head)
    verdict(capsys, False)


def test_check_depth(capsys):
    size = relay.parse(NAT + "def @depth[A](%t: Tree[A]) -> int32 { match (%t) { Leaf => 0, Node(%l, _, %r) => 1 + @depth(%l) + @depth(%r) } }")
    assert not checks.check_depth(size)
    verdict(capsys, False)
    ints_only = relay.parse(NAT + "def @depth(%t: Tree[int32]) -> int32 { match (%t) { Leaf => 0, Node(%l, _, %r) => 1 + maximum(@depth(%l), @depth(%r)) } }")
    assert not checks.check_depth(ints_only)
    assert "type error" in verdict(capsys, False)


def test_check_count_ops(capsys):
    class Naive:
        """Counts along every path: a shared node counts twice."""

        def __init__(self):
            self.counts = {}

        def visit(self, e):
            if isinstance(e, relay.Function):
                return self.visit(e.body)
            if isinstance(e, relay.Let):
                self.visit(e.value)
                return self.visit(e.body)
            if isinstance(e, relay.Tuple):
                return [self.visit(f) for f in e.fields]
            if isinstance(e, relay.Call):
                if isinstance(e.op, relay.Op):
                    self.counts[e.op.name] = self.counts.get(e.op.name, 0) + 1
                else:
                    self.visit(e.op)
                for a in e.args:
                    self.visit(a)

    assert not checks.check_count_ops(Naive)
    assert "counted twice" in verdict(capsys, False)

    class Nothing(relay.ExprVisitor):
        counts: dict = {}

    assert not checks.check_count_ops(Nothing)
    verdict(capsys, False)


def _times_two_pass(memoize: bool, replacement):
    class Rewrite(relay.ExprMutator):
        def visit_call(self, call):
            new = super().visit_call(call)
            if isinstance(new.op, relay.Op) and new.op.name == "multiply" and isinstance(new.args[1], relay.Constant):
                if float(new.args[1].data) == 2.0:
                    return replacement(new.args[0])
            return new

    def rebuild_without_memo(e):
        """A recursive rebuild with no memo map: a shared node is rewritten once per use."""
        if isinstance(e, relay.Function):
            return relay.Function(e.params, rebuild_without_memo(e.body), e.ret_type)
        if isinstance(e, relay.Let):
            return relay.Let(e.var, rebuild_without_memo(e.value), rebuild_without_memo(e.body))
        if isinstance(e, relay.Tuple):
            return relay.Tuple([rebuild_without_memo(f) for f in e.fields])
        if isinstance(e, relay.Call):
            args = [rebuild_without_memo(a) for a in e.args]
            op = rebuild_without_memo(e.op) if not isinstance(e.op, relay.Op) else e.op
            new = relay.Call(op, args, e.attrs)
            if isinstance(op, relay.Op) and op.name == "multiply" and isinstance(args[1], relay.Constant):
                if float(args[1].data) == 2.0:
                    return replacement(args[0])
            return new
        return e

    @relay.transform.function_pass(opt_level=0)
    def rewrite(func, mod, ctx):
        return Rewrite().visit(func) if memoize else rebuild_without_memo(func)

    return rewrite


def test_check_double_pass(capsys):
    assert checks.check_double_pass(_times_two_pass(True, lambda e: relay.add(e, e)))
    verdict(capsys, True)
    assert not checks.check_double_pass(_times_two_pass(True, lambda e: relay.multiply(e, e)))
    assert "computes something else" in verdict(capsys, False)
    assert not checks.check_double_pass(_times_two_pass(False, lambda e: relay.add(e, e)))
    assert "memoize" in verdict(capsys, False)
    assert not checks.check_double_pass(lambda mod: mod)
    assert "function_pass" in verdict(capsys, False)
    identity = relay.transform.function_pass(lambda f, m, c: f, opt_level=0, name="Id")
    assert not checks.check_double_pass(identity)
    assert "still there" in verdict(capsys, False)


def test_check_finite_difference(capsys):
    def forward(f, x, eps=1e-5):
        return np.array([(np.sum(f(x + eps * e)) - np.sum(f(x))) / eps for e in np.eye(x.size)])

    def central(f, x, eps=1e-5):
        return np.array([(np.sum(f(x + eps * e)) - np.sum(f(x - eps * e))) / (2 * eps) for e in np.eye(x.size)])

    assert checks.check_finite_difference(central)
    verdict(capsys, True)
    assert not checks.check_finite_difference(forward)  # O(eps) error: too coarse for rtol 1e-4
    assert "both ways" in verdict(capsys, False)
    assert not checks.check_finite_difference(lambda f, x, eps: np.zeros(3))
    assert "shape" in verdict(capsys, False)


def test_check_loss_gradient(capsys):
    w, x, y = np.array([0.5, -1.0]), np.array([1.0, 2.0]), np.array([0.0, 1.0])
    text = "def @main(%w: Tensor[(2), float64], %x: Tensor[(2), float64], %y: Tensor[(2), float64]) { %0 = %w * %x - %y; sum(%0 * %0) }"
    assert checks.check_loss_gradient(text, 2 * (w * x - y) * x, w, x, y)
    verdict(capsys, True)
    assert not checks.check_loss_gradient(text, (w * x - y) * x, w, x, y)
    assert "dw should be" in verdict(capsys, False)
    absolute = text.replace("sum(%0 * %0)", "sum(abs(%0))")
    assert not checks.check_loss_gradient(absolute, 2 * (w * x - y) * x, w, x, y)
    assert "loss at w" in verdict(capsys, False)


# --- tutorials 02, 06, 07 ----------------------------------------------------------------------


def test_check_count_shared(capsys):
    class Uses(relay.ExprVisitor):
        def __init__(self):
            super().__init__()
            self.uses = {}

        def visit_call(self, call):
            for a in call.args:
                if isinstance(a, relay.Call):
                    self.uses[a] = self.uses.get(a, 0) + 1
            super().visit_call(call)

    def right(func):
        v = Uses()
        v.visit(func)
        return sum(n > 1 for n in v.uses.values())

    assert checks.check_count_shared(right)
    verdict(capsys, True)

    def by_tree(func):
        """Recursion without a memo: a node under a shared node is counted once per path."""
        uses = {}

        def walk(e):
            if isinstance(e, relay.Call):
                for a in e.args:
                    if isinstance(a, relay.Call):
                        uses[a] = uses.get(a, 0) + 1
                    walk(a)

        walk(func.body)
        return sum(n > 1 for n in uses.values())

    assert not checks.check_count_shared(by_tree)
    assert "Too many" in verdict(capsys, False)

    def by_text(func):
        """Equal-looking calls counted as one node: wrong on two separately written log(%x)."""
        seen = {}
        relay.post_order_visit(func, lambda e: seen.setdefault(str(e), []).append(e) if isinstance(e, relay.Call) else None)
        return right(func) + sum(len(v) > 1 for v in seen.values())

    assert not checks.check_count_shared(by_text)
    verdict(capsys, False)


SCOPE_PUZZLE = """
def @main(%x: Tensor[(3), float32], %c: bool) {
  %0 = exp(%x);
  %1 = log(%x);
  %2 = sqrt(%x);
  %3 = if (%c) { add(%0, %1) } else { multiply(%0, 2f) };
  %4 = fn (%y: Tensor[(3), float32]) { multiply(%y, %2) };
  %4(%3)
}
"""


def test_check_scope_prediction(capsys):
    right = {"exp": "outside", "log": "if", "sqrt": "fn", "add": "if"}  # every op called once
    assert checks.check_scope_prediction(right, SCOPE_PUZZLE)
    verdict(capsys, True)
    assert not checks.check_scope_prediction({**right, "exp": "if"}, SCOPE_PUZZLE)
    assert "innermost scope" in verdict(capsys, False)
    assert not checks.check_scope_prediction(dict.fromkeys(right, "outside"), SCOPE_PUZZLE)
    verdict(capsys, False)
    assert not checks.check_scope_prediction({"exp": "outside", "log": "if", "add": "if"}, SCOPE_PUZZLE)
    assert "missing: sqrt" in verdict(capsys, False)
    assert not checks.check_scope_prediction({**right, "exp": "out"}, SCOPE_PUZZLE)
    assert "use one of" in verdict(capsys, False)
    let_version = SCOPE_PUZZLE.replace("%1 = log(%x);", "let %v = log(%x);").replace("add(%0, %1)", "add(%0, %v)")
    assert checks.check_scope_prediction({**right, "log": "outside"}, let_version)
    verdict(capsys, True)


def test_check_pipeline_prediction(capsys):
    o1 = ["SimplifyInference", "SimplifyExpr", "SimplifyExpr", "DeadCodeElimination", "FuseOps"]
    assert checks.check_pipeline_prediction(o1, opt_level=1)
    verdict(capsys, True)
    assert not checks.check_pipeline_prediction(o1, opt_level=1, disabled=["DeadCodeElimination"])
    assert "does not run" in verdict(capsys, False)
    assert not checks.check_pipeline_prediction(o1[:-1], opt_level=1)
    assert "FuseOps runs too" in verdict(capsys, False)
    assert not checks.check_pipeline_prediction(o1[:1] + o1[2:], opt_level=1)  # one SimplifyExpr short
    assert "count or order" in verdict(capsys, False)


def _call_counter(count_after: bool = True, skip=()):
    def calls(mod):
        found = []
        relay.post_order_visit(mod["main"], lambda e: found.append(e) if isinstance(e, relay.Call) else None)
        return len(found)

    class Counter(relay.transform.PassInstrument):
        def __init__(self):
            self.records = []
            self.before = None

        def run_before_pass(self, mod, info):
            self.before = calls(mod)

        def run_after_pass(self, mod, info):
            if info.name not in skip:
                self.records.append((info.name, calls(mod) if count_after else self.before))

    return Counter


def test_check_call_counter(capsys):
    assert checks.check_call_counter(_call_counter())
    verdict(capsys, True)
    assert not checks.check_call_counter(_call_counter(count_after=False))
    assert "call nodes" in verdict(capsys, False)
    assert not checks.check_call_counter(_call_counter(skip=("optimize", "FoldScaleAxis")))
    assert "composite" in verdict(capsys, False)


FUSION_PROGRAMS = [
    "def @main(%x: Tensor[(4, 4), float32]) { %0 = exp(%x); %1 = multiply(%0, 2f); nn.relu(%1) }",
    "def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(4, 8), float32]) { %0 = nn.dense(%x, %w); %1 = nn.relu(%0); %2 = sum(%1, axis=[1]); exp(%2) }",
]


def test_check_fusion_prediction(capsys):
    assert checks.check_fusion_prediction([1, 3], FUSION_PROGRAMS)
    verdict(capsys, True)
    assert not checks.check_fusion_prediction([3, 3], FUSION_PROGRAMS)  # one kernel per op
    assert "program 1" in verdict(capsys, False)
    assert not checks.check_fusion_prediction([1, 2], FUSION_PROGRAMS)  # exp fused into the sum
    assert "reduction takes none" in verdict(capsys, False)
    assert not checks.check_fusion_prediction([1], FUSION_PROGRAMS)
    verdict(capsys, False)


SILU = "def @main(%x: Tensor[(64, 64), float32], %b: Tensor[(64), float32]) { %0 = add(%x, %b); multiply(%0, sigmoid(%0)) }"


def test_check_one_kernel(capsys):
    assert checks.check_one_kernel(SILU)
    verdict(capsys, True)
    assert not checks.check_one_kernel(SILU.replace("sigmoid(%0)", "tanh(%0)"))
    assert "differ" in verdict(capsys, False)
    two_kernels = SILU.replace("multiply(%0, sigmoid(%0))", "%1 = multiply(%0, sigmoid(%0)); sum(%1, axis=[1], keepdims=True) + %1")
    assert not checks.check_one_kernel(two_kernels)
    assert "kernels" in verdict(capsys, False)
    assert not checks.check_one_kernel(SILU.replace("(64, 64)", "(32, 64)"))
    assert "should have type" in verdict(capsys, False)

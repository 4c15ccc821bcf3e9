"""Import time of ``relay.frontend.from_onnx`` on full-size models (target: <= 2 s each).

    python benchmarks/bench_import.py [--quick]

The models are built here with ``onnx.helper`` and random weights, shaped as the ONNX
exports of torchvision's ResNet-50 (224x224, bottlenecks [3, 4, 6, 3], 25.6 M weights) and
of BERT-base (12 layers, hidden 768, 12 heads, sequence 128, vocabulary 30522, with the
exporters' ``Shape -> Gather -> Concat -> Reshape`` chains and decomposed LayerNorm); no
download.  The time is wall-clock ``from_onnx`` (parse/check, convert, fold, InferType),
best of a few runs, with frozen weights and with weights as parameters.  ``--quick`` uses
2 BERT layers and ResNet's first two stages.

``--errors`` also prints, for every test model of ``tests/onnx_models.py``, the maximum
relative error of the interpreter and of the JIT against onnxruntime (target <= 1e-4).
"""

from __future__ import annotations

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

import onnx_models as M  # noqa: E402  (the tests' model builders)

sys.path.insert(0, HERE)
import models  # noqa: E402  (the full-size models, shared with bench_models.py)

import relay_nb as relay  # noqa: E402


def resnet50(stages=(3, 4, 6, 3)):
    return models.resnet50(stages=stages)[0]


def bert_base(layers=12):
    return models.bert_base(layers=layers)[0]


def _time(model, freeze, repeat):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        relay.frontend.from_onnx(model, freeze_params=freeze)
        best = min(best, time.perf_counter() - t)
    return best


def errors():
    print(f"{'model':34} {'nodes':>5} {'interpreter':>12} {'JIT':>9}")
    for name, build in M.MODELS.items():
        model, feeds = build()
        mod, _ = relay.frontend.from_onnx(model)
        want = M.run_onnxruntime(model, feeds)
        args = [feeds[v.name_hint] for v in mod["main"].params]
        errs = []
        for kind in ("debug", "jit"):
            got = relay.create_executor(kind, mod).evaluate()(*args)
            got = list(got) if isinstance(got, (tuple, list)) else [got]
            errs.append(max(M.rel_error(g, w) for g, w in zip(got, want)))
        print(f"{name:34} {len(model.graph.node):5d} {errs[0]:12.1e} {errs[1]:9.1e}")


def main(argv=None):
    argv = argv if argv is not None else sys.argv[1:]
    if "--errors" in argv:
        errors()
    quick = "--quick" in argv
    models = [
        ("ResNet-50", lambda: resnet50(stages=(3, 4) if quick else (3, 4, 6, 3))),
        ("BERT-base (12 layers)" if not quick else "BERT (2 layers)", lambda: bert_base(2 if quick else 12)),
    ]
    repeat = 1 if quick else 3
    print(f"{'model':24} {'nodes':>6} {'weights':>9} {'frozen s':>9} {'params s':>9}  target")
    for name, build in models:
        model = build()
        n_weights = sum(int(M.numpy_helper.to_array(t).size) for t in model.graph.initializer)
        frozen = _time(model, True, repeat)
        unfrozen = _time(model, False, repeat)
        ok = "ok" if max(frozen, unfrozen) <= 2.0 else "SLOW"
        print(f"{name:24} {len(model.graph.node):6d} {n_weights / 1e6:8.1f}M {frozen:9.2f} {unfrozen:9.2f}  <= 2 s {ok}")


if __name__ == "__main__":
    main()

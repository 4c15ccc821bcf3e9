#!/usr/bin/env bash
# The main job, from a fresh checkout: install relay_nb with its notebook extra and its two
# Jupyter kernels, then open the course tutorials in JupyterLab.
#   bash scripts/main.sh              # JupyterLab on copies of the tutorials in workspace/
#   bash scripts/main.sh --headless   # execute every tutorial into build/tutorials/ instead
#
# The Python used is chosen by scripts/python_env.sh: the active virtualenv/conda env, else
# .venv/ in the checkout (created on first use); RELAY_NB_USE_ACTIVE_PYTHON=1 uses the
# `python` on PATH instead.
# JupyterLab opens copies (scripts/lab_workspace.py): it rewrites every notebook it opens,
# and tutorials/*.ipynb are generated and committed clean.  Your edits in workspace/ are kept.
# As root (containers, Binder-like hosts) JupyterLab refuses to start without --allow-root;
# it is passed then, and the script says so.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python_env.sh
PYTHON=$RELAY_NB_PYTHON
"$PYTHON" -m pip install -q --disable-pip-version-check -e ".[notebook]"
"$PYTHON" -m relay_nb.kernelspec install --sys-prefix
if [[ "${1:-}" == "--headless" ]]; then
    exec "$PYTHON" scripts/run_tutorials.py "${2:-build/tutorials}"
fi
"$PYTHON" scripts/lab_workspace.py workspace
LAB_ARGS=(--notebook-dir=workspace)
if [[ "$(id -u)" == "0" ]]; then
    echo "main.sh: running as root, so JupyterLab is started with --allow-root" >&2
    LAB_ARGS+=(--allow-root)
fi
# `python -m jupyter lab` would run the first jupyter-lab on PATH, maybe another environment's.
exec "$PYTHON" -m jupyterlab "${LAB_ARGS[@]}" "${@}"

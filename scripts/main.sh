#!/usr/bin/env bash
# The main job, from a fresh checkout: install relay_nb with its notebook extra and its two
# Jupyter kernels, then open the course tutorials in JupyterLab.
#   bash scripts/main.sh              # JupyterLab on tutorials/ (prints the URL)
#   bash scripts/main.sh --headless   # execute every tutorial into build/tutorials/ instead
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q -e ".[notebook]"
python -m relay_nb.kernelspec install --sys-prefix
if [[ "${1:-}" == "--headless" ]]; then
    exec python scripts/run_tutorials.py "${2:-build/tutorials}"
fi
exec jupyter lab --notebook-dir=tutorials "${@}"

#!/usr/bin/env bash
# Build the JupyterLab extension that highlights Relay (labextension/src) into
# labextension/prebuilt/, the folder the wheel ships as
# share/jupyter/labextensions/relay-nb-highlight/.  The build output is committed, so
# installing relay_nb never needs Node.js; only changing labextension/src does.
#
#   scripts/build_labextension.sh     # needs Node.js >= 18 and a Python with jupyterlab>=4
#
# Node.js: $NODE if set, else `node` on PATH.  Python: as main.sh and test.sh choose it
# (scripts/python_env.sh; RELAY_NB_USE_ACTIVE_PYTHON=1 for the python on PATH).  jlpm
# (JupyterLab's bundled yarn) installs the npm packages into labextension/node_modules.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$HERE/labextension"
say() { echo "build_labextension: $*" >&2; }

NODE=${NODE:-$(command -v node || true)}
if [ -z "$NODE" ] || ! "$NODE" --version >/dev/null 2>&1; then
    say "Node.js is missing: building the extension needs Node.js >= 18 (e.g. apt-get install" \
        "nodejs, conda install -c conda-forge nodejs, or https://nodejs.org), on PATH or as \$NODE."
    say "Installing relay_nb does not need it: labextension/prebuilt/ is already built."
    exit 1
fi
major=$("$NODE" -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
    say "Node.js $("$NODE" --version) at $NODE is too old: JupyterLab 4's builder needs >= 18"
    exit 1
fi
export PATH="$(dirname "$NODE"):$PATH"

source "$HERE/scripts/python_env.sh"
PYTHON=$RELAY_NB_PYTHON
# The core's package.json of the JupyterLab the extension is built against: it says which
# packages are shared singletons (CodeMirror, @jupyterlab/*) and so are not bundled.
if ! CORE=$("$PYTHON" -c 'import jupyterlab, os; print(os.path.join(os.path.dirname(jupyterlab.__file__), "staging"))' 2>/dev/null); then
    say "$PYTHON has no jupyterlab: pip install 'jupyterlab>=4' (or relay_nb[notebook]) first"
    exit 1
fi
say "Node.js $("$NODE" --version), $("$PYTHON" -m jupyterlab --version 2>/dev/null | head -1 | sed 's/^/JupyterLab /')"

# jlpm sits next to that Python (jupyter_builder's in JupyterLab 4.6, jupyterlab's before).
JLPM="$("$PYTHON" -c 'import os, sys; print(os.path.join(os.path.dirname(sys.executable), "jlpm"))')"
[ -x "$JLPM" ] || JLPM=$(command -v jlpm || true)
[ -n "$JLPM" ] || { say "no jlpm next to $PYTHON nor on PATH (it comes with jupyterlab)"; exit 1; }

cd "$SRC"
"$JLPM" install
"$JLPM" run clean
node_modules/.bin/tsc
"$PYTHON" -m jupyterlab.labextensions build --core-path "$CORE" .
rm -rf lib tsconfig.tsbuildinfo  # tsc's output is bundled into prebuilt/static
# What the bundle was built from (tests/test_labextension.py checks it is not stale).
"$PYTHON" "$HERE/scripts/labextension_hash.py" "$SRC" > "$SRC/prebuilt.sha256"
say "built $(du -sh prebuilt | cut -f1) in labextension/prebuilt"

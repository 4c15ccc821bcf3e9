# Sourced by main.sh, test.sh and ensure_browser.sh: choose the Python that they install
# relay_nb into and run, export it as RELAY_NB_PYTHON, and say which one it is.
#
#   - an active virtualenv ($VIRTUAL_ENV) or conda environment ($CONDA_PREFIX): its python;
#   - RELAY_NB_USE_ACTIVE_PYTHON=1: the `python` on PATH, whatever it is (a CI image, Binder,
#     a pyenv or system Python you manage yourself) — the opt-out from the default below;
#   - otherwise (the default) .venv/ in the checkout, created on first use with
#     `python3 -m venv`, so the scripts never pip-install into a system or user-wide Python.
#
# A script started by another (ensure_browser.sh from test.sh) inherits RELAY_NB_PYTHON and
# so uses the same interpreter.

_relay_nb_env_say() { echo "python env: $*" >&2; }

if [ -n "${RELAY_NB_PYTHON:-}" ]; then
    :
elif [ -n "${VIRTUAL_ENV:-}" ] || [ -n "${CONDA_PREFIX:-}" ]; then
    RELAY_NB_PYTHON=python
    _relay_nb_env_say "using the active environment ${VIRTUAL_ENV:-$CONDA_PREFIX}"
elif [ "${RELAY_NB_USE_ACTIVE_PYTHON:-0}" = "1" ]; then
    RELAY_NB_PYTHON=python
    _relay_nb_env_say "using $(command -v python) (RELAY_NB_USE_ACTIVE_PYTHON=1)"
else
    _relay_nb_venv="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.venv"
    RELAY_NB_PYTHON="$_relay_nb_venv/bin/python"
    if ! "$RELAY_NB_PYTHON" -c "" 2>/dev/null; then
        _relay_nb_base=$(command -v python3 || command -v python)
        _relay_nb_env_say "creating $_relay_nb_venv with $_relay_nb_base (no virtualenv is active;" \
            "set RELAY_NB_USE_ACTIVE_PYTHON=1 to install into $_relay_nb_base instead)"
        if ! "$_relay_nb_base" -m venv --clear "$_relay_nb_venv"; then
            _relay_nb_env_say "could not create $_relay_nb_venv (on Debian/Ubuntu: apt-get install" \
                "python3-venv), or set RELAY_NB_USE_ACTIVE_PYTHON=1 to use $_relay_nb_base"
            exit 1
        fi
    fi
    _relay_nb_env_say "using $_relay_nb_venv (set RELAY_NB_USE_ACTIVE_PYTHON=1 to use the python on PATH)"
fi
export RELAY_NB_PYTHON

#!/bin/sh
# The Python package's tests (python/tests) with pytest, against the module this build made.
#   python_test.sh PYTHON [pytest arguments]
# PYTHON is the interpreter the module was built for (empty when the build has no module).
# Skipped with a message where the module, numpy or pytest is missing; under CI=true that
# is a failure.
py="$1"
shift
why=""
if [ -z "$py" ]; then
  why="the build has no Python module (configure with -DGREENSCHED_PYTHON=ON -DPython_EXECUTABLE=VENV/bin/python, VENV with pybind11, numpy and pytest)"
elif ! "$py" -c "import numpy, pytest" >/dev/null 2>&1; then
  why="numpy or pytest is missing for $py (pip install numpy pytest pandas)"
elif ! "$py" -c "import greensched._core" >/dev/null 2>&1; then
  why="greensched._core does not import with PYTHONPATH=$PYTHONPATH"
fi
if [ -n "$why" ]; then
  if [ "$CI" = true ]; then
    echo "CI=true but $why"
    exit 1
  fi
  echo "SKIPPED: $why"
  exit 0
fi
PYTHONDONTWRITEBYTECODE=1 exec "$py" -m pytest -q -p no:cacheprovider "$@"

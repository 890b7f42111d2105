#!/usr/bin/env bash
# Builds the Python package baracuda (host and sim devices; no nvcc kernels) into a virtual environment of
# Debian's python3, which sees Debian's python3-torch (PyTorch 1.13, CPU), and runs its pytest suite.
#   python/check.sh [VENV]     (default: build/python-venv; the CMake build tree is build/python)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv=${1:-build/python-venv}
python=${BARACUDA_PYTHON:-/usr/bin/python3}
[[ -x "$venv/bin/python" ]] || "$python" -m venv --system-site-packages "$venv"
# numpy < 2: Debian's torch is built against numpy 1 (Debian's python3-numpy), which pip must not replace.
# jax (CPU) for the framework tests: its last release that takes numpy 1.
"$venv/bin/python" -m pip install -q --disable-pip-version-check "scikit-build-core>=0.10" "nanobind>=2.4" pytest \
  "numpy<2" "ml_dtypes<0.5" "jax[cpu]==0.4.30"
# No build isolation: the build uses the venv's scikit-build-core and nanobind (and CMake's own ccache).
# -O1 (the package's own Release flags are -O3): the check is of the bindings and the library's behaviour, which
# the `ci` build also tests at -O1, and it halves the sim kernels' compile time (BARACUDA_PYTHON_CXX_FLAGS: others).
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation \
  --config-settings=cmake.define.BARACUDA_CUDA_KERNELS=OFF \
  "--config-settings=cmake.define.CMAKE_CXX_FLAGS_RELEASE=${BARACUDA_PYTHON_CXX_FLAGS:--O1 -DNDEBUG}" .
cd python/tests  # not the repository root: `import baracuda` must find the installed package
"../../$venv/bin/python" -m pytest -q -p no:cacheprovider .

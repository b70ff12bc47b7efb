#!/usr/bin/env bash
# The GPU tests and the GPU benchmark in one command (needs an NVIDIA GPU and CuPy; no network).
#   bench/gpu.sh [--quick] [--no-tests] [--repeat N] [--only NAME...]
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY=python3
exec timeout 480 "$PY" bench/gpu.py "$@"

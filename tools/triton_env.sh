#!/usr/bin/env bash
# Usage: tools/triton_env.sh DIR
#
# Builds, in DIR, what the tests and benchmarks that run NVIDIA's own tools need:
# - the real Triton server with its Python backend, from the nvidia-pytriton wheel, in the
#   virtual environment DIR/venv, with this project installed there (a model.py run by the
#   Python backend imports oipcodec from the stub's Python, the first `python` on PATH);
# - perf_analyzer, the binary inside the tritonclient 2.41.0 wheel (later perf-analyzer wheels
#   need glibc 2.38), with the CUDA runtime it links from the nvidia-cuda-runtime-cu12 wheel;
# - DIR/backends/python: the backend library, its utilities and the Python 3.11 stub side by
#   side, as the server looks for them (the wheel keeps the stubs apart);
# - DIR/triton.env: the variables the tests read (OIPCODEC_TRITON_HOME=DIR finds it).
# Debian's libb64-0d must be installed (perf_analyzer links it): apt-get install libb64-0d.
# Reuses DIR when it is complete. About 2 minutes and 400 MB the first time.
set -euo pipefail
dir="$(mkdir -p "$1" && cd "$1" && pwd)"
project="$(cd "$(dirname "$0")/.." && pwd)"
[ -f "$dir/triton.env" ] && exit 0

python3 -m venv "$dir/venv"
"$dir/venv/bin/python" -m pip install --quiet --upgrade pip
# numpy 1.x: the Python backend's stub corrupts BYTES inputs with numpy 2 (seen with and
# without oipcodec).
"$dir/venv/bin/python" -m pip install --quiet nvidia-pytriton "numpy<2" nvidia-cuda-runtime-cu12 \
    "$project"
site="$("$dir/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
server="$site/pytriton/tritonserver"

mkdir -p "$dir/backends/python"
cp "$server/backends/python/libtriton_python.so" "$server/backends/python/triton_python_backend_utils.py" \
    "$server/python_backend_stubs/3.11/triton_python_backend_stub" "$dir/backends/python/"

"$dir/venv/bin/python" -m pip download --quiet --no-deps --only-binary=:all: tritonclient==2.41.0 \
    -d "$dir/wheel"
"$dir/venv/bin/python" -m zipfile -e "$dir"/wheel/tritonclient-2.41.0-*.whl "$dir/wheel/x"
mkdir -p "$dir/bin"
cp "$dir/wheel/x/tritonclient-2.41.0.data/data/bin/perf_analyzer" "$dir/bin/perf_analyzer.bin"
chmod +x "$dir/bin/perf_analyzer.bin"
cat >"$dir/bin/perf_analyzer" <<SH
#!/bin/sh
LD_LIBRARY_PATH="$site/nvidia/cuda_runtime/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$dir/bin/perf_analyzer.bin" "\$@"
SH
chmod +x "$dir/bin/perf_analyzer"
rm -rf "$dir/wheel"

libpython="$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR"))')"
cat >"$dir/triton.env" <<ENV
OIPCODEC_TRITONSERVER=$server/bin/tritonserver
OIPCODEC_TRITON_BACKENDS=$dir/backends
OIPCODEC_TRITON_PATH=$dir/venv/bin
OIPCODEC_TRITON_LD_LIBRARY_PATH=$libpython:$site/nvidia_pytriton.libs
OIPCODEC_PERF_ANALYZER=$dir/bin/perf_analyzer
ENV
echo "Triton server and perf_analyzer ready in $dir (OIPCODEC_TRITON_HOME=$dir)"

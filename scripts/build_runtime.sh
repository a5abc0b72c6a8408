#!/usr/bin/env bash
# Builds the embedded runtime (xllamacpp, with llama.cpp inside) from its source on PyPI for
# this CPU, when the CPU has vector units the prebuilt wheel leaves unused: the wheel is built
# for AVX2, and AVX-512 or AMX go idle. Measured on a 2-core AMD EPYC with AVX-512, the build
# for the CPU evaluated prompts 1.5x as fast (benchmarks/runtime_speed.py). The build takes
# about 8 minutes on 2 cores, once: the wheel is kept in the cache directory under a key of the
# CPU's model and flags, so a new clone on the same machine installs it at once. Any other CPU
# keeps the prebuilt wheel, and so does a failed build (a warning says why).
# Usage: bash scripts/build_runtime.sh [PYTHON]   MINLOOP_NATIVE=0 keeps the prebuilt wheel.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-.venv/bin/python}

[ "${MINLOOP_NATIVE:-1}" != 0 ] || exit 0
[ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] || exit 0
flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
case " $flags " in
  *" avx512f "* | *" amx_tile "*) ;;
  *) exit 0 ;; # the prebuilt wheel's AVX2 is all this CPU has
esac
info=$("$python" -c 'import xllamacpp; print(xllamacpp.get_system_info())')
case "$info" in
  *"AMX"*) ;;                # built before with AMX kernels (see below): built again
  *"AVX512 = 1"*) exit 0 ;; # already built for this CPU
esac

version=$("$python" -c 'from importlib.metadata import version; print(version("xllamacpp"))')
# The CPU's own instruction sets, named one by one (not -march=native): without AMX, whose
# matrix kernels crashed on loading the model on a 2-core Intel Xeon with AMX (in
# ggml_backend_amx_mul_mat), while the same build without them ran.
on() { for f in "$@"; do case " $flags " in *" $f "*) ;; *) echo OFF; return ;; esac; done; echo ON; }
arch="-DGGML_NATIVE=OFF -DGGML_SSE42=$(on sse4_2) -DGGML_AVX=$(on avx) -DGGML_AVX2=$(on avx2)
  -DGGML_FMA=$(on fma) -DGGML_F16C=$(on f16c) -DGGML_BMI2=$(on bmi2) -DGGML_AVX_VNNI=$(on avx_vnni)
  -DGGML_AVX512=$(on avx512f avx512cd avx512vl avx512dq avx512bw) -DGGML_AVX512_VBMI=$(on avx512vbmi)
  -DGGML_AVX512_VNNI=$(on avx512_vnni) -DGGML_AVX512_BF16=$(on avx512_bf16)
  -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
key=$( (grep -m1 '^model name' /proc/cpuinfo || true; echo "$flags $arch") | sha256sum | cut -c1-16)
cache="${MINLOOP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/minloop}/runtime/xllamacpp-$version-$key"
wheel=$(ls "$cache"/*.whl 2>/dev/null | head -n 1 || true)
[ ! -f "$cache/broken" ] || exit 0 # built before and failed to run: the prebuilt wheel stays

if [ -z "$wheel" ]; then
  for tool in cmake g++ make; do
    if ! command -v "$tool" >/dev/null; then
      echo "warning: keeping the prebuilt runtime: building it for this CPU needs $tool" >&2
      exit 0
    fi
  done
  echo "Building the llama.cpp runtime for this CPU (AVX-512/AMX), once, about 8 minutes on 2 cores ..."
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  # llguidance needs Rust crates from the network and BoringSSL a download. Without llguidance
  # compact decisions use llama.cpp's own grammar engine (minloop.models.local.grammar).
  if ! CMAKE_ARGS="$(echo $arch) -DLLAMA_LLGUIDANCE=OFF -DLLAMA_BUILD_BORINGSSL=OFF -DLLAMA_OPENSSL=OFF" \
    CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "$python" -m pip wheel --quiet --no-cache-dir --no-deps --no-binary xllamacpp \
    "xllamacpp==$version" -w "$work" >"$work/build.log" 2>&1; then
    tail -n 20 "$work/build.log" >&2
    echo "warning: keeping the prebuilt runtime: the build for this CPU failed (above)" >&2
    exit 0
  fi
  mkdir -p "$cache"
  mv "$work"/xllamacpp-*.whl "$cache"/
  wheel=$(ls "$cache"/*.whl | head -n 1)
fi
"$python" -m pip install --quiet --no-deps --force-reinstall "$wheel"

# The build is kept only if it loads the bundled model and answers; otherwise the prebuilt wheel
# goes back, and this CPU's build is not tried again (a file beside the wheel says why).
smoke='import threading
from minloop.models.local.gguf import ensure_gguf
from minloop.models.local.runtime import complete, load
server = load(str(ensure_gguf("qwen2.5-coder-0.5b")), 1024, 2)
complete(server, threading.Lock(), {"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 4})'
status=0
"$python" -c "$smoke" >"$cache/smoke.log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  echo "the runtime built for this CPU failed to run the model (exit $status)" >>"$cache/smoke.log"
  mv "$cache/smoke.log" "$cache/broken"
  echo "warning: keeping the prebuilt runtime: the build for this CPU failed to run ($cache/broken)" >&2
  "$python" -m pip install --quiet --no-deps --force-reinstall "xllamacpp==$version"
  exit 0
fi
"$python" -c 'import xllamacpp; print("runtime:", xllamacpp.get_system_info().strip())'

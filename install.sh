#!/usr/bin/env bash
# Builds and installs wright into ~/.local/bin, then runs `wright ARGS...` if any are given.
#   ./install.sh                                   install only
#   ./install.sh run --sandbox none -C ~/proj "the test test_export_csv fails, fix it"
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix=${WRIGHT_PREFIX:-$HOME/.local}

need_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# A C compiler and git, which the build and the agent's work need.
missing=()
command -v cc >/dev/null 2>&1 || missing+=(build-essential)
command -v git >/dev/null 2>&1 || missing+=(git)
command -v curl >/dev/null 2>&1 || missing+=(curl ca-certificates)
# The embedded engine builds llama.cpp: CMake, a C++ compiler, and libclang for its bindings.
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v c++ >/dev/null 2>&1 || missing+=(g++)
compgen -G '/usr/lib/llvm-*/lib/libclang.so*' >/dev/null || compgen -G '/usr/lib/*/libclang-[0-9]*.so*' >/dev/null || missing+=(libclang-dev)
if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
  need_root apt-get update -q >/dev/null
  need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
fi

# Rust through rustup: Debian's own cargo is too old for wright's dependencies.
if ! command -v cargo >/dev/null 2>&1; then
  [ -x "$HOME/.cargo/bin/cargo" ] || curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal >&2
  export PATH="$HOME/.cargo/bin:$PATH"
fi

echo "building wright (release)..." >&2
# Built on the machine it runs on: for its CPU, which also compiles the embedded engine's
# llama.cpp with the SIMD it has (AVX2, FMA…) instead of the baseline x86-64 set.
RUSTFLAGS="${RUSTFLAGS:--C target-cpu=native}" \
  cargo install --quiet --locked --force --path "$here/crates/wright-cli" --root "$prefix" >&2
echo "installed $prefix/bin/wright" >&2
case ":$PATH:" in *":$prefix/bin:"*) ;; *) echo "add $prefix/bin to your PATH to call wright directly" >&2 ;; esac

if [ $# -gt 0 ]; then
  exec "$prefix/bin/wright" "$@"
fi

#!/usr/bin/env bash
# Runs wright's whole test suite. Installs what the tests need when it is missing
# (Rust via rustup; git, python3, a C/C++ compiler, CMake and libclang via apt; as root
# also Docker, Chromium, the reference MCP server and Go, see .ci/test-deps.sh). No model and
# no network needed beyond the package registries.
set -euo pipefail
cd "$(dirname "$0")"

need_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
missing=()
command -v cc >/dev/null 2>&1 || missing+=(build-essential)
command -v git >/dev/null 2>&1 || missing+=(git)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
command -v bash >/dev/null 2>&1 || missing+=(bash)
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
# The embedded engine builds llama.cpp: CMake, a C++ compiler, and libclang for its bindings.
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v c++ >/dev/null 2>&1 || missing+=(g++)
compgen -G '/usr/lib/llvm-*/lib/libclang.so*' >/dev/null || compgen -G '/usr/lib/*/libclang-[0-9]*.so*' >/dev/null || missing+=(libclang-dev)
if [ ${#missing[@]} -gt 0 ]; then
  need_root apt-get update -q >/dev/null
  need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null 2>&1; then
  [ -x "$HOME/.cargo/bin/cargo" ] || curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
  export PATH="$HOME/.cargo/bin:$PATH"
fi

if [ "$(id -u)" -eq 0 ]; then
  # shellcheck source=.ci/test-deps.sh
  . .ci/test-deps.sh
  setup_test_deps
else
  echo "test.sh: not root: Docker, Chromium and the MCP reference server are used only if they are already there; their tests skip loudly otherwise (run as root to install them)" >&2
fi

cargo test --workspace --locked "$@"

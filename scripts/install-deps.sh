#!/usr/bin/env bash
# Installs, with apt-get, the Debian 12 packages ax builds and tests with —
# only those missing. Used by ./run and ./test.
set -euo pipefail
packages=(
  cmake ninja-build g++ clang libclang-rt-14-dev  # toolchains (clang: libFuzzer)
  libgtest-dev libgmock-dev libbenchmark-dev       # tests, micro-benchmarks
  libabsl-dev                                      # time zones (CCTZ on tzdata)
  tzdata
  libconcurrentqueue-dev                           # lock-free hand-off to workers
  libcli11-dev                                     # the ax command line
  libsqlite3-dev                                   # durable store
  libboost-dev                                     # Asio/Beast: HTTP server+client
  nlohmann-json3-dev                               # the HTTP API's JSON
  libspdlog-dev libfmt-dev                         # structured logs
  libjemalloc-dev                                  # the daemon's allocator
  curl python3                                     # integration tests
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ "${#missing[@]}" -eq 0 ] && exit 0
echo "installing: ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2

#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz preset, clang) and runs each for a short
# smoke of N seconds (default 20) from its seed corpus. Any crash, hang or
# sanitizer report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"
shopt -s nullglob
status=0
for fuzzer in build/fuzz/fuzz/*_fuzz build/fuzz/fuzz/*/*_fuzz; do
  name=$(basename "$fuzzer")
  corpus="fuzz/corpus/$name"
  work=$(mktemp -d)
  [ -d "$corpus" ] && cp -r "$corpus"/. "$work"/
  echo "fuzz smoke: $name for ${seconds}s" >&2
  if ! "$fuzzer" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 "$work" \
       >"$work.log" 2>&1; then
    tail -40 "$work.log" >&2
    status=1
  fi
  grep -E "^(#[0-9]+\s+DONE|Done [0-9]+ runs)" "$work.log" >&2 || true
  rm -rf "$work" "$work.log"
done
exit "$status"

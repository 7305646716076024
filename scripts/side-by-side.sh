#!/usr/bin/env bash
# ax beside the peers of shared/peers/run, interleaved: each repetition runs
# every system on W1, W2 and W3 back to back, so that a slow spell of a
# shared VM's host hits all of them alike (docs/performance.md).
#   scripts/side-by-side.sh [OUT_DIR] [REPEATS] [W1_EXTRA]
#                                       (default: side-by-side, 3, 10)
# Writes OUT_DIR/peers.jsonl (each line with "host_steal_pct" added, as ax's
# own lines carry it), ax.jsonl, ax-slack.jsonl (W4 with 1 ms of timer
# slack), ax-probe.jsonl (W2 --probe), ax-pinned.jsonl (W3 and W4 with
# --pin-workers), peers10m.jsonl and ax10m.jsonl (W1 at
# 10 M jobs; and ax's W3 beside 10 M). W1 at 1 M, the quickest workload and
# the one whose ratios swing most from minute to minute, gets W1_EXTRA more
# interleaved rounds in the same files. Summarise with:
#   ../shared/peers/summarize --range OUT_DIR/peers.jsonl OUT_DIR/ax.jsonl
#   ../shared/peers/summarize --range OUT_DIR/peers10m.jsonl OUT_DIR/ax10m.jsonl
# and the ratio to the best peer round by round with:
#   scripts/round-ratios.py OUT_DIR/peers.jsonl OUT_DIR/ax.jsonl
#   scripts/round-ratios.py OUT_DIR/peers.jsonl OUT_DIR/ax-probe.jsonl
# (the second: W2 while ax also answers calls, which the peers are not asked).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-side-by-side}
repeats=${2:-3}
w1_extra=${3:-10}
peers=../shared/peers/run
ax=build/release/ax
cmake --workflow --preset release >&2  # incremental: never a stale ax
"$peers" build >&2
mkdir -p "$out"

# The machine's CPU ticks in all and stolen by the hypervisor (/proc/stat).
ticks() { awk '/^cpu /{t = 0; for (i = 2; i <= 9; i++) t += $i; print t, $9}' /proc/stat; }
# Runs a peer and adds the steal during its run to its JSON line.
peer() {
  local t0 s0 t1 s1 line pct
  read -r t0 s0 < <(ticks)
  line=$("$peers" "$@" 2>/dev/null) || true
  read -r t1 s1 < <(ticks)
  pct=$(awk -v a="$t0" -v b="$t1" -v c="$s0" -v d="$s1" \
    'BEGIN { printf "%.1f", (b > a) ? 100 * (d - c) / (b - a) : 0 }')
  [ -n "$line" ] && printf '%s, "host_steal_pct": %s}\n' "${line%\}}" "$pct"
  return 0
}

for _ in $(seq "$repeats"); do
  for w in W1 W2 W3; do
    for p in asio libuv go naive; do peer "$p" "$w" >> "$out/peers.jsonl"; done
    "$ax" bench "$w" >> "$out/ax.jsonl" || true
    # The same storm while a thread makes calls, right after the plain one so
    # that both meet the host in the same state.
    if [ "$w" = W2 ]; then "$ax" bench W2 --probe >> "$out/ax-probe.jsonl" || true; fi
  done
  "$ax" bench W4 >> "$out/ax.jsonl" || true
  "$ax" bench W4 --timer-slack-ms 1 >> "$out/ax-slack.jsonl" || true
  "$ax" bench W3 --pin-workers >> "$out/ax-pinned.jsonl" || true
  "$ax" bench W4 --pin-workers >> "$out/ax-pinned.jsonl" || true
done
for _ in $(seq "$w1_extra"); do
  for p in asio libuv go naive; do peer "$p" W1 >> "$out/peers.jsonl"; done
  "$ax" bench W1 >> "$out/ax.jsonl" || true
done
"$ax" bench idle >> "$out/ax.jsonl" || true
# W1 at 10 M jobs, every system, interleaved the same way.
for _ in $(seq "$repeats"); do
  for p in asio libuv go naive; do peer "$p" W1 --n 10000000 >> "$out/peers10m.jsonl"; done
  "$ax" bench W1 --n 10000000 >> "$out/ax10m.jsonl" || true
done
"$ax" bench W3 --background 10000000 >> "$out/ax10m.jsonl" || true

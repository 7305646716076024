#!/usr/bin/env python3
"""ax against the best peer of each round, from scripts/side-by-side.sh output.

    scripts/round-ratios.py PEERS.jsonl AX.jsonl

The k-th line of a (system, workload, n) in each file is round k. For every
key an issue 3 target names, prints ax's median, the best peer's median, and
ax / best peer: its median over the rounds and its range. The best peer is
picked in each round (lowest time or lateness, most fires per second); CPU
is set against the peer picked on fires/s (W2) or p99 (W3). A ratio below 1
is ax ahead for times, lateness and CPU; above 1 for fires/s.
"""
import json
import statistics
import sys
from collections import defaultdict

# Groups of keys: the first picks the best peer of a round (True when higher
# is better), the rest are set against that same peer.
TARGETS = {
    "W1": [("schedule_ns_per_op", False), ("cancel_ns_per_op", False)],
    "W2": [("fires_per_s", True, "cpu_ms")],
    "W3": [("lateness_us_p99", False, "cpu_ms"), ("lateness_us_p999", False)],
}


def rounds(path):
    """{(workload, n): {system: [line of round 0, round 1, ...]}}"""
    out = defaultdict(lambda: defaultdict(list))
    with open(path) as f:
        for text in f:
            text = text.strip()
            if not text.startswith("{"):
                continue
            line = json.loads(text)
            if line.get("error") or line.get("workload") not in TARGETS:
                continue
            out[(line["workload"], line["n"])][line["system"]].append(line)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    peers, ax = rounds(sys.argv[1]), rounds(sys.argv[2])
    for (workload, n), systems in sorted(ax.items()):
        mine = systems.get("ax", [])
        others = {s: lines for s, lines in peers.get((workload, n), {}).items() if s != "ax"}
        if not mine or not others:
            continue
        count = min([len(mine)] + [len(v) for v in others.values()])
        print(f"{workload} n={n}: {count} rounds")
        for first, higher, *rest in TARGETS[workload]:
            best = []  # the best peer's system in each round
            for k in range(count):
                offers = [(lines[k][first], s) for s, lines in others.items() if first in lines[k]]
                best.append((max(offers) if higher else min(offers))[1])
            for key in [first] + rest:
                rows = [(mine[k][key], others[best[k]][k][key]) for k in range(count)
                        if key in mine[k] and key in others[best[k]][k]]
                if not rows:
                    continue
                ratios = [a / b if b else float("inf") for a, b in rows]
                print(f"  {key}: ax {statistics.median(a for a, _ in rows):,.1f}, "
                      f"best peer {statistics.median(b for _, b in rows):,.1f} "
                      f"({'/'.join(sorted(set(best)))}), ax/peer "
                      f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    main()

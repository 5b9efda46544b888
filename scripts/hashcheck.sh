#!/usr/bin/env bash
# hashcheck.sh OLD NEW: the trace hash of every run of 300 seeds per
# system, moderate and heavy faults (1,800 runs), by two fencesim builds:
# "hashes identical" when every one agrees, else the number that differ
# per system and fault level. Run it before and after a change that must
# not alter a run (a speed-up): the same seed must give the same trace.
# The hashes are version 2 when both builds can write it, else version 1.
#   bash scripts/hashcheck.sh /tmp/fencesim-before bin/fencesim
set -euo pipefail
old=${1:?usage: hashcheck.sh OLD NEW}
new=${2:?usage: hashcheck.sh OLD NEW}
runs=${RUNS:-300}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Both builds hash with one version (explore --per-seed-hash): 2 when both
# have the flag, else 1, what a build from before hash versions writes.
has() { "$1" explore -h 2>/dev/null | grep -q -- -per-seed-hash; }
version=1
if has "$old" && has "$new"; then version=2; fi
for side in old new; do
  bin=${!side}
  hashflag=()
  if has "$bin"; then hashflag=(--per-seed-hash "$version"); fi
  for f in moderate heavy; do
    "$bin" explore --system all --faults "$f" --runs "$runs" --per-seed "$out/$side-$f.jsonl" "${hashflag[@]}" --artifacts 0 --audit 0 --json >/dev/null 2>&1 || [ $? -eq 1 ]
    jq -r 'select(.seed != null) | "\(.system) \(.seed) \(.hash)"' "$out/$side-$f.jsonl" | sort >"$out/$side-$f.txt"
  done
done
differ=0
for f in moderate heavy; do
  n=$(wc -l <"$out/old-$f.txt")
  [ "$n" -gt 0 ] || { echo "hashcheck.sh: $old wrote no per-seed records" >&2; exit 2; }
  d=$(join <(awk '{print $1"/"$2, $3}' "$out/old-$f.txt") <(awk '{print $1"/"$2, $3}' "$out/new-$f.txt") |
    awk '$2 != $3 {split($1, a, "/"); c[a[1]]++} END {for (s in c) print s, c[s]}')
  m=$(wc -l <"$out/new-$f.txt")
  [ "$n" -eq "$m" ] || { echo "$f: $n runs by OLD, $m by NEW"; differ=1; }
  if [ -n "$d" ]; then
    echo "$d" | while read -r s c; do echo "$f $s: $c of $runs differ"; done
    differ=1
  fi
done
[ "$differ" -eq 0 ] && echo "hashes identical ($((2 * $(wc -l <"$out/old-moderate.txt"))) runs)"
exit "$differ"

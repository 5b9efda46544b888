#!/usr/bin/env bash
# verdicts.sh BIN [RUNS]: the failing seeds and their properties, per system,
# on the default design and under every knob of the registry, one line each:
#   system knob seed property,property,...
# Run it with the build before a change and after, then diff the two files:
# a change that must not move verdicts (a speed-up) shows no difference.
#   bash scripts/verdicts.sh bin/fencesim 2000 > after.txt
set -euo pipefail
bin=${1:?usage: verdicts.sh BIN [RUNS]}
runs=${2:-2000}
workers=${WORKERS:-2}
knobs=$("$bin" mutants --json --budget 1 --minimize-budget 1 --workers 1 2>/dev/null | jq -r '.mutants[] | "\(.system) \(.knob)"' || true)
[ -n "$knobs" ] || { echo "verdicts.sh: $bin mutants listed no knobs" >&2; exit 2; }
run() { # system knob
  local args=(--system "$1" --runs "$runs" --json --artifacts 0 --audit 0 --workers "$workers")
  [ "$2" = default ] || args+=(--knob "$2")
  local out
  out=$("$bin" explore "${args[@]}" 2>/dev/null) || [ $? -eq 1 ]
  echo "$out" | jq -r --arg s "$1" --arg k "$2" \
    '.systems[0] as $x | "\($s) \($k) runs=\($x.runs) failed=\($x.failed_runs)", ($x.failures // [] | .[] | "\($s) \($k) \(.seed) \(.properties | join(","))")'
}
for s in arbiter outbox twopc; do run "$s" default; done
while read -r s k; do run "$s" "$k"; done <<<"$knobs"

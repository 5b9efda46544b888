#!/usr/bin/env bash
# steersweep.sh BIN [SETS] [RUNS] [SEED]: the default design of every system
# in worlds made for it: SETS random lever sets per system (each lever of
# `fencesim levers` pulled with probability 1/3), RUNS steered seeds each
# (`explore --steer`), at --faults ${FAULTS:-heavy}. One line per set:
#   system [levers] runs=N failed=F undecided=U
# and, under it, every failing or undecided seed (it replays with
# `fencesim run --system S --faults F --seed N`). The same SEED picks the
# same sets; EXTRA adds explore flags (EXTRA='--knob K' sweeps a knob).
# Exit 1 when a run failed.
#   bash scripts/steersweep.sh bin/fencesim 25 2000 20261203
set -euo pipefail
bin=${1:?usage: steersweep.sh BIN [SETS] [RUNS] [SEED]}
sets=${2:-25}
runs=${3:-2000}
RANDOM=${4:-1}
faults=${FAULTS:-heavy}
workers=${WORKERS:-2}
failed=0
for sys in ${SYSTEMS:-arbiter outbox twopc}; do
  mapfile -t levers < <("$bin" levers --system "$sys" --json | jq -r '.[0].levers[].name')
  [ ${#levers[@]} -gt 0 ] || { echo "steersweep.sh: $bin lists no levers for $sys" >&2; exit 2; }
  for _ in $(seq 1 "$sets"); do
    pick=()
    for l in "${levers[@]}"; do
      if (( RANDOM % 3 == 0 )); then pick+=("$l"); fi
    done
    [ ${#pick[@]} -gt 0 ] || pick=("${levers[RANDOM % ${#levers[@]}]}")
    steer=$(IFS=,; echo "${pick[*]}")
    # The text output: jq would round seeds past 2^53 (a steered seed's top bit is set).
    out=$("$bin" explore --system "$sys" --faults "$faults" --steer "$steer" --runs "$runs" --workers "$workers" --audit 0 --artifacts 0 ${EXTRA:-} 2>&1) || [ $? -eq 1 ]
    f=$(sed -n 's/^runs: [0-9]*, failed: \([0-9]*\) .*/\1/p' <<<"$out")
    u=$(sed -n 's/^undecided runs: \([0-9]*\) .*/\1/p' <<<"$out")
    echo "$sys [$steer] runs=$runs failed=${f:-?} undecided=${u:-0}"
    sed -n 's/^failing seeds: /  failing: /p; s/^first failure: /  first: /p; s/^undecided runs: .*; seeds: /  undecided: /p' <<<"$out"
    [ "${f:-1}" = 0 ] || failed=1
  done
done
exit $failed

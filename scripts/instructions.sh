#!/usr/bin/env bash
# instructions.sh BIN... : the instructions a run of explore executes, per
# system and binary, counted by valgrind (callgrind's Ir) with one P and no
# asynchronous preemption. Unlike CPU time, the count does not move with
# the machine's load: on two shared cores, where CPU seconds vary by 10%
# from one repetition to the next, it repeats within about 2% (the garbage
# collector's share varies). Use it to compare builds in small steps; it
# counts instructions, not cache misses, so confirm a gain in CPU time too
# (scripts/speedtab.sh).
#   bash scripts/instructions.sh /tmp/fencesim-before bin/fencesim
# SYSTEMS (default "arbiter outbox twopc") and RUNS (default 40; a run of A
# under valgrind takes about 0.1 s of CPU times 50) choose what is counted;
# PERSEED=1 counts --per-seed runs (every event hashed) instead.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: instructions.sh BIN..." >&2; exit 2; }
command -v valgrind >/dev/null || { echo "instructions.sh: needs valgrind (Debian: apt install valgrind)" >&2; exit 2; }
runs=${RUNS:-40}
systems=${SYSTEMS:-arbiter outbox twopc}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
extra=()
[ "${PERSEED:-}" = 1 ] && extra=(--per-seed "$t/per-seed.jsonl")
for s in $systems; do
  for b in "$@"; do
    ir=
    # valgrind's callgrind sometimes aborts on a Go binary (a signal it
    # mishandles): try again.
    for _ in 1 2 3 4; do
      GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        "$b" explore --system "$s" --runs "$runs" --workers 1 --audit 0 --json --artifacts 0 "${extra[@]}" >/dev/null 2>"$t/err" || true
      ir=$(grep 'I *refs' "$t/err" | tr -d , | awk '{print $NF}')
      [ -n "$ir" ] && break
    done
    [ -n "$ir" ] || { echo "instructions.sh: valgrind failed on $b ($s) four times" >&2; exit 1; }
    awk -v s="$s" -v b="$b" -v ir="$ir" -v n="$runs" 'BEGIN { printf "%-7s %-40s %.2fM instructions a run\n", s, b, ir/n/1e6 }'
  done
done

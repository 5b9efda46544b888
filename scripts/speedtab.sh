#!/usr/bin/env bash
# speedtab.sh OLD NEW [REPS]: explore's runs per CPU-second on each system's
# drawn world (one worker, no audit, no artifacts; A 1,000 runs, B and C
# 2,000), the two binaries alternated, REPS repetitions (default 2), user+sys
# CPU and peak RSS from /usr/bin/time. Compare builds in one sitting on a
# quiet machine: absolute figures move with the machine's load.
#   bash scripts/speedtab.sh /tmp/fencesim-before bin/fencesim
set -euo pipefail
old=${1:?usage: speedtab.sh OLD NEW [REPS]}
new=${2:?usage: speedtab.sh OLD NEW [REPS]}
reps=${3:-2}
command -v /usr/bin/time >/dev/null || { echo "speedtab.sh: needs /usr/bin/time (Debian: apt install time)" >&2; exit 2; }
t=$(mktemp)
trap 'rm -f "$t"' EXIT
for rep in $(seq "$reps"); do
  for s in arbiter outbox twopc; do
    n=2000; [ "$s" = arbiter ] && n=1000
    for b in "$old" "$new"; do
      /usr/bin/time -f "%U %S %M" -o "$t" "$b" explore --system "$s" --runs "$n" --workers 1 --audit 0 --json --artifacts 0 >/dev/null 2>&1
      read -r u sy m < "$t"
      awk -v r="$rep" -v s="$s" -v b="$b" -v n="$n" -v u="$u" -v sy="$sy" -v m="$m" \
        'BEGIN { printf "rep%s %-7s %-40s cpu=%.2fs runs/cpu-s=%.1f rss=%dMB\n", r, s, b, u+sy, n/(u+sy), m/1024 }'
    done
  done
done

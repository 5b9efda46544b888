#!/usr/bin/env bash
# pg.sh: a throw-away PostgreSQL server for fencesim's conformance tests.
#
#   scripts/pg.sh install         install Debian's PostgreSQL server if missing (quiet)
#   eval "$(scripts/pg.sh start)" start a fresh cluster (or reuse the running one) and
#                                 export FENCESIM_PG_URL; prints exactly one line
#   scripts/pg.sh stop            stop the cluster and delete its directory
#   scripts/pg.sh restart         fast restart (clean shutdown, then start)
#   scripts/pg.sh crash-restart   immediate restart (what a crash looks like: WAL recovery)
#   scripts/pg.sh status          print the export line and exit 0 when running, else exit 1
#   scripts/pg.sh psql [args]     psql connected to the cluster
#
# The cluster listens on 127.0.0.1 only, on a free port, with trust auth, superuser
# "postgres" and a database "fencesim". Its data lives in a fresh /tmp/fencesim-pg-data.*
# directory; the state file (default /tmp/fencesim-pg/env, directory overridable with
# FENCESIM_PG_STATE) records URL, data directory, pg_ctl and log so that stop, restart and
# internal/pgtest.Restart can find it. As root, the server runs as the "postgres" user.
# Settings for speed, not durability: fsync, synchronous_commit and full_page_writes off
# (FENCESIM_PG_DURABLE=1 keeps PostgreSQL's durable defaults: fencesim live sets it).
# track_commit_timestamp is on: internal/pgexec's commit capture orders commits by it.
# max_prepared_transactions is 20 (FENCESIM_PG_MAX_PREPARED=N: N; fencesim live gives a 2PC
# participant's server the design's max_prepared).
set -euo pipefail

STATE_DIR="${FENCESIM_PG_STATE:-/tmp/fencesim-pg}"
STATE_FILE="$STATE_DIR/env"
DB_NAME=fencesim
SUPERUSER=postgres

die() { echo "pg.sh: $*" >&2; exit 1; }
note() { echo "pg.sh: $*" >&2; }

# run_pg CMD...: run a server-side command as the cluster's owner. The lock's fd 9 is
# closed for it: a postmaster that inherited it would hold the lock for its lifetime.
run_pg() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@" 9>&-
	else
		"$@" 9>&-
	fi
}

# pg_bin: the newest installed server's bin directory (FENCESIM_PG_BIN overrides).
pg_bin() {
	if [ -n "${FENCESIM_PG_BIN:-}" ]; then
		[ -x "$FENCESIM_PG_BIN/initdb" ] || die "FENCESIM_PG_BIN=$FENCESIM_PG_BIN has no initdb"
		echo "$FENCESIM_PG_BIN"
		return
	fi
	# Only directories with initdb count: a client-only version also has a bin/.
	local d
	# shellcheck disable=SC2012
	d=$(ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1 || true)
	d=${d%/initdb}
	[ -n "$d" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ] && { echo "$d"; return; }
	return 1
}

cmd_install() {
	if pg_bin >/dev/null; then
		return 0
	fi
	[ "$(id -u)" -eq 0 ] || die "PostgreSQL server not installed and not root: run 'sudo apt-get install -y postgresql'"
	command -v apt-get >/dev/null || die "PostgreSQL server not installed and no apt-get here"
	export DEBIAN_FRONTEND=noninteractive
	local apt=(apt-get -qq -y -o Dpkg::Use-Pty=0 -o DPkg::Lock::Timeout=120 --no-install-recommends install postgresql)
	local log
	log=$(mktemp /tmp/fencesim-pg-install.XXXXXX)
	# Try without refreshing the package lists first; refresh only when that fails
	# (no lists on a new machine, or lists so old their versions are gone).
	# A failing update (say, one unreachable third-party source) is not fatal by
	# itself: the install that follows decides.
	# fd 9 (the state lock) is closed for apt: a server its scripts start must not hold it.
	if ! "${apt[@]}" >"$log" 2>&1 9>&-; then
		apt-get -qq update >>"$log" 2>&1 9>&- || note "apt-get update reported errors; trying the install anyway"
		"${apt[@]}" >>"$log" 2>&1 9>&- || { tail -n 30 "$log" >&2; die "apt-get install postgresql failed (log above)"; }
	fi
	rm -f "$log"
	pg_bin >/dev/null || die "postgresql installed, but no initdb under /usr/lib/postgresql/*/bin"
}

# load_state: read the state file into PG_* variables; returns 1 when there is none.
load_state() {
	[ -f "$STATE_FILE" ] || return 1
	# The file is ours, written by cmd_start: plain KEY='value' lines.
	# shellcheck disable=SC1090
	. "$STATE_FILE"
	# shellcheck disable=SC2015
	[ -n "${FENCESIM_PG_DIR:-}" ] && [ -n "${FENCESIM_PG_DATA:-}" ] && [ -n "${FENCESIM_PG_CTL:-}" ] ||
		die "state file $STATE_FILE is malformed; remove it"
}

export_line() { echo "export FENCESIM_PG_URL='$FENCESIM_PG_URL'"; }

# alive: the recorded cluster's postmaster runs and accepts connections.
alive() {
	[ -d "$FENCESIM_PG_DATA" ] || return 1
	"$(dirname "$FENCESIM_PG_CTL")/pg_isready" -q -h 127.0.0.1 -p "$FENCESIM_PG_PORT" -U "$SUPERUSER" -d postgres -t 2 >/dev/null 2>&1
}

# port_in_use PORT: something listens on 127.0.0.1/0.0.0.0/:: at PORT (per /proc/net/tcp*).
port_in_use() {
	local hex
	hex=$(printf '%04X' "$1")
	# column 2 is local_address (ADDR:PORT in hex), column 4 the state (0A = LISTEN)
	awk -v p=":$hex" 'NR > 1 && $4 == "0A" && substr($2, length($2) - 4) == p { found = 1 } END { exit !found }' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null
}

free_port() {
	local p i
	for i in $(seq 1 200); do
		# below the kernel's ephemeral range (32768-60999), where outgoing
		# connections take their local ports
		p=$((20000 + RANDOM % 12000))
		port_in_use "$p" || { echo "$p"; return 0; }
	done
	die "no free TCP port found in 20000-31999"
}

# stop_recorded MODE: stop the recorded cluster (ignoring a dead one) and remove its files.
stop_recorded() {
	if [ -f "$FENCESIM_PG_DATA/postmaster.pid" ]; then
		run_pg "$FENCESIM_PG_CTL" stop -D "$FENCESIM_PG_DATA" -m "$1" -w -t 30 >/dev/null 2>&1 ||
			run_pg "$FENCESIM_PG_CTL" stop -D "$FENCESIM_PG_DATA" -m immediate -w -t 30 >/dev/null 2>&1 || true
	fi
	case "$FENCESIM_PG_DIR" in
	/tmp/fencesim-pg-data.*) rm -rf -- "$FENCESIM_PG_DIR" ;;
	*) note "not removing unexpected directory $FENCESIM_PG_DIR" ;;
	esac
	rm -f "$STATE_FILE"
}

lock_state() {
	mkdir -p "$STATE_DIR"
	exec 9>"$STATE_DIR/lock"
	flock -w 120 9 || die "timed out waiting for $STATE_DIR/lock"
}

cmd_start() {
	cmd_install
	lock_state
	if load_state; then
		if alive; then
			export_line
			return 0
		fi
		note "recorded cluster in $FENCESIM_PG_DIR is not running; starting a fresh one"
		stop_recorded immediate
	fi
	local bin dir data log port attempt out
	# durability: the conformance tests' speed settings, or, with
	# FENCESIM_PG_DURABLE=1 (a live run, whose faults crash the server),
	# PostgreSQL's own: a crash must not lose what was acknowledged.
	durability() {
		if [ "${FENCESIM_PG_DURABLE:-}" = 1 ]; then
			printf 'fsync = on\nsynchronous_commit = on\nfull_page_writes = on\n'
		else
			printf 'fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n'
		fi
	}
	bin=$(pg_bin) || die "no PostgreSQL server found under /usr/lib/postgresql/*/bin"
	dir=$(mktemp -d /tmp/fencesim-pg-data.XXXXXX)
	data="$dir/data"
	log="$dir/postgres.log"
	if [ "$(id -u)" -eq 0 ]; then
		id postgres >/dev/null 2>&1 || die "no 'postgres' user to run the server as (is the server installed?)"
		chown postgres: "$dir"
	fi
	chmod 700 "$dir"
	if ! out=$(run_pg "$bin/initdb" -D "$data" -U "$SUPERUSER" -A trust -E UTF8 --no-locale \
		--no-sync --no-instructions 2>&1); then
		echo "$out" >&2
		rm -rf -- "$dir"
		die "initdb failed"
	fi
	cat >>"$data/postgresql.conf" <<EOF

# --- fencesim throw-away test cluster (scripts/pg.sh) ---
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
max_connections = 100
max_prepared_transactions = ${FENCESIM_PG_MAX_PREPARED:-20}
track_commit_timestamp = on
$(durability)
timezone = 'UTC'
log_timezone = 'UTC'
log_line_prefix = '%m [%p] %q%a '
logging_collector = off
EOF
	# A port can be taken between the check and the bind: retry with another.
	for attempt in 1 2 3 4 5; do
		port=$(free_port)
		sed -i '/^port = /d' "$data/postgresql.conf"
		echo "port = $port" >>"$data/postgresql.conf"
		if run_pg "$bin/pg_ctl" start -D "$data" -l "$log" -w -t 60 >/dev/null 2>&1; then
			break
		fi
		if [ "$attempt" -eq 5 ] || ! grep -q 'could not bind\|Address already in use' "$log" 2>/dev/null; then
			tail -n 20 "$log" >&2 2>/dev/null || true
			run_pg "$bin/pg_ctl" stop -D "$data" -m immediate >/dev/null 2>&1 || true
			rm -rf -- "$dir"
			die "server did not start (log above)"
		fi
		note "port $port taken, retrying"
	done
	local i
	for i in $(seq 1 100); do
		"$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -U "$SUPERUSER" -d postgres -t 1 && break
		[ "$i" -eq 100 ] && { tail -n 20 "$log" >&2; die "server on port $port not ready after 10s"; }
		sleep 0.1
	done
	if ! out=$("$bin/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U "$SUPERUSER" -d postgres \
		-c "CREATE DATABASE $DB_NAME" 2>&1); then
		echo "$out" >&2
		die "could not create database $DB_NAME"
	fi
	FENCESIM_PG_URL="postgres://$SUPERUSER@127.0.0.1:$port/$DB_NAME?sslmode=disable"
	local tmp="$STATE_FILE.tmp.$$"
	cat >"$tmp" <<EOF
FENCESIM_PG_URL='$FENCESIM_PG_URL'
FENCESIM_PG_PORT='$port'
FENCESIM_PG_DIR='$dir'
FENCESIM_PG_DATA='$data'
FENCESIM_PG_LOG='$log'
FENCESIM_PG_CTL='$bin/pg_ctl'
FENCESIM_PG_OWNER='$(stat -c %U "$dir")'
EOF
	mv "$tmp" "$STATE_FILE"
	export_line
}

cmd_stop() {
	lock_state
	if ! load_state; then
		note "no cluster recorded in $STATE_FILE; nothing to stop"
		return 0
	fi
	stop_recorded fast
}

# cmd_restart MODE: fast or immediate.
cmd_restart() {
	lock_state
	load_state || die "no cluster recorded in $STATE_FILE: run 'scripts/pg.sh start' first"
	[ -d "$FENCESIM_PG_DATA" ] || die "data directory $FENCESIM_PG_DATA is gone: run 'scripts/pg.sh start'"
	# -l keeps the server's output in its log: without it the new postmaster would hold
	# this script's stdout open.
	local out
	if ! out=$(run_pg "$FENCESIM_PG_CTL" restart -D "$FENCESIM_PG_DATA" -m "$1" -l "$FENCESIM_PG_LOG" -w -t 60 2>&1); then
		echo "$out" >&2
		tail -n 20 "$FENCESIM_PG_LOG" >&2 2>/dev/null || true
		die "restart (-m $1) failed"
	fi
	alive || die "server did not accept connections after restart"
}

cmd_status() {
	if load_state && alive; then
		export_line
		return 0
	fi
	note "not running"
	return 1
}

cmd_psql() {
	load_state || die "no cluster recorded in $STATE_FILE: run 'scripts/pg.sh start' first"
	exec "$(dirname "$FENCESIM_PG_CTL")/psql" -X "$FENCESIM_PG_URL" "$@"
}

usage() {
	sed -n '2,11s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

case "${1:-}" in
install) cmd_install ;;
start) cmd_start ;;
stop) cmd_stop ;;
restart) cmd_restart fast ;;
crash-restart) cmd_restart immediate ;;
status) cmd_status ;;
psql) shift; cmd_psql "$@" ;;
-h | --help | help) usage ;;
*) [ -n "${1:-}" ] && echo "pg.sh: unknown command '$1'" >&2; usage ;;
esac

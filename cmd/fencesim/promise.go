package main

// promiseMetrics are each system's metrics that measure a promise the
// design makes (the arbiter's MA1, MA2, MA3 and MA5, the outbox's retry
// load and give-ups, two-phase commit's blocking and leftover prepared
// transactions). Worse is up for every one of them.
var promiseMetrics = map[string][]string{
	"arbiter": {"extra_latency (MA1)", "wasted_judgings (MA2)", "false_system_errors (MA3)", "outage_retry_load (MA5)"},
	"outbox":  {"deliveries (retry load)", "gave_up"},
	"twopc":   {"blocked_max", "still_prepared"},
}

func isPromise(system, metric string) bool {
	return contains(promiseMetrics[system], metric)
}

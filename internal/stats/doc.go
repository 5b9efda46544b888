// Package stats owns the statistics that fencesim's diff and compare print
// and judge by: a metric's spread on one side (Spread: mean with its
// interval, nearest-rank quantiles, exact counts of runs), the unpaired
// difference of two sides (WelchCI), and the seed-by-seed comparison of
// paired samples (Paired: the sign test and the paired t interval), with
// the warning rule that reads it (Worse).
//
// It computes from plain numbers only: it knows no system, metric name,
// flag or output format (besides the JSON of its own values, where a
// statistic without samples is null). cmd/fencesim drives it.
package stats

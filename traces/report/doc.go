// Package report renders one run of the simulator as a single self-contained
// HTML page: the failure report that `fencesim explore` writes next to a
// failing trace, and that a property test may write on failure.
//
// It owns the page: a timeline with a lane per node (crashes, pauses and
// nodes not yet started shaded; partitions and cuts tinted per group; network
// bursts on a strip; starts, crashes and faults marked), the messages between
// nodes as a Lamport diagram (an arrow from each send to its delivery, matched
// by the kernel's "#<msgid>"; drops end in an X with the reason on hover;
// duplicates dashed; messages still in flight dotted), model notes (db
// statements, client calls, verdicts) as small marks with their text on
// hover, the violation (property, message, the offending events by Seq,
// highlighted on the timeline and listed with the events around them), the
// minimized schedule, the probe table, checker timings, the trace header
// (system, seed, design, workload, limits), the trace hash and the command
// that replays the run.
//
// A failure's story, when the caller gives one: the timeline opens on
// Input.Window (the first needed fault to the violation); the needed faults
// (Input.Needed) are labelled in words on the lanes they hit ("arbiter-1
// paused", "home-1 -> arbiter-1 stalled 40 s"); Input.Story is a lane of
// its own at the top (the key's state over time, each step a mark with its
// words, the bad one in red) and a list under the timeline; the messages
// that mattered (Input.Mattered) are drawn over the others; lanes the story
// does not touch start folded (a click on a lane's name folds or unfolds
// it); a filter keeps the events that mention a key. The violation card
// shows Violation.Explanation and links each of Violation.Links to its
// event. Events are shown in words (the kind once, times as "75.123 s"),
// each with its trace line as JSON behind a toggle.
//
// The linearization: porcupine's page (Input.Linearization) is not framed
// (in the report's frame its labels were drawn over each other, though the
// same page on its own renders well); the report reads the data porcupine's
// page carries and draws its own view, one row per operation with its place in
// the longest linearization and the state after it, each row a link to the
// timeline. A page without that data is shown in a sandboxed frame as it
// is. Any trusted HTML goes in Input.Extra.
//
// The API is one call:
//
//	err := report.Write(w, report.Input{Header: h, Events: evs, Violations: ...})
//
// The page's inline script draws the timeline from a JSON copy of the trace
// model and lets the reader zoom (wheel, buttons), pan (drag, overview strip),
// filter event kinds or by key, fold lanes, and jump from a listed event to
// its place. The address may say "#whole" (open on the whole run),
// "#key=K" (open filtered by K) or "#selftest" (work every control once,
// for the browser test). The page checks its own drawing and says so in
// attributes of its body that the browser test reads: data-view (the first
// view), data-rendered (what it drew, overlapping labels, marks cut by the
// frame), data-lin (the linearization view's labels and their overlaps). A trace
// longer than Input.MaxEvents (DefaultMaxEvents) is drawn around its
// violation and the page says how many events it left out; crash, pause and
// partition shading always covers the whole run. With more items in view
// than the page can draw one by one, it draws them as a single path and asks
// the reader to zoom in.
//
// It must never: reference anything outside the file (no URLs, CDNs, fonts
// or images from elsewhere; the page opens from disk, offline); read the wall
// clock or iterate a map in an order that reaches the output (the same Input
// gives the same bytes); put text into the page unescaped (all text goes
// through html/template, the timeline data through json.Marshal, which
// escapes "<", ">" and "&"); or change what it is given. It does not run
// checkers, read trace files or decide pass or fail: it shows what its caller
// found.
//
// Who drives it: the command line (explore, replay) and the property-test
// harness, after the checkers have run; they pass the header and events of
// the trace (traces.ReadAll or traces.Memory), the violations, the minimized
// schedule as lines (sim.Action.String), probes and checker timings.
//
// The kernel's texts it parses (package sim): send and deliver
// "#<id> <from>-><to>[ conn=<n>] <body>", drop "#<id> <reason>", dup
// "#<id> copied as #<id2>", start and restart "incarnation <n>", crash
// "<why>", and fault events whose data is the sim.Action as JSON (kind, node,
// peer, groups, for). Events it does not recognise are drawn as notes.
package report

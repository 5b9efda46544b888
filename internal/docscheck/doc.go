// Package docscheck keeps the design documents in docs/ in step with the
// code. Its test collects every id the repository cites (in Go source,
// comments, messages and test names; in README.md and docs/; in golden
// files): the properties and metrics (PA1, PB3, PC2, MA5, ...), the
// scenarios (A-S1 ... A-S9) and the sections of the source documents (A.2,
// B.3, C.8a, ...), and fails when one is not defined in docs/properties.md
// (properties and metrics) or docs/systems.md (scenarios and sections). It
// also holds the knob registries and parameter lists of the three systems
// against docs/systems.md, and the ids the registries say catch a knob
// against docs/properties.md.
//
// It owns no code besides its test. It only reads files and never changes
// them; it is not used by the simulation. Driven by go test (make test).
package docscheck

// Package hist is the vocabulary of the notes that models write into traces
// and checkers read back: client calls and returns, and each system's own
// facts (judgings, worker disks, alerts). It is the contract between model/
// and checker/, which never import each other: models encode these structs
// as an event's Data, checkers decode them.
//
// It holds plain data only: no behaviour, no dependency but the standard
// library, nothing that reads the clock.
package hist

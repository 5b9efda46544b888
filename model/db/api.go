package db

// This file is the database's client-facing contract: statements as data,
// results, errors, and the request/response protocol spoken over a
// connection. Every model (arbiter, outbox, 2PC) is written against it; the
// engine behind it lives in the rest of the package.

import (
	"fmt"
	"time"
)

// Value is a column value: nil (SQL NULL), int64, string, bool or clock.Time
// (a timestamp). Nothing else may be stored. Go ints of other sizes (int,
// int32, ...) are accepted in statements and converted to int64. In an
// INSERT's Values, and as a Column's Default, a value may also be an Expr
// without column references (Now(), NowPlus(d)), evaluated at insert time.
type Value = any

// Row is a row as a map from column name to value. Rows returned to clients
// are copies.
type Row map[string]Value

// ColType is a column's type.
type ColType uint8

// Column types.
const (
	Int ColType = iota + 1
	Text
	Bool
	Timestamp
)

// Column is one column of a table.
type Column struct {
	Name    string
	Type    ColType
	NotNull bool
	Default Value // used when an insert omits the column
	Serial  bool  // Int column filled from a per-table sequence when omitted
}

// Table is a table's definition.
type Table struct {
	Name       string
	Columns    []Column
	PrimaryKey []string
	Unique     [][]string // unique indexes; each may span several columns
	// Indexes are non-unique indexes (CREATE INDEX), each on one or more
	// columns. They change no result, only the cost: a statement whose
	// WHERE has "col = constant" for every column of one (and fixes no
	// unique index) visits only the rows listed under that key, in the
	// order a full scan would visit them.
	Indexes [][]string
}

// Schema is the set of tables a database starts with.
type Schema struct {
	Tables []Table
}

// ---- expressions and predicates ----

// ExprKind says what an Expr computes.
type ExprKind uint8

// Expression kinds.
const (
	EConst    ExprKind = iota + 1 // Val
	ECol                          // the row's column Col
	ENow                          // now(): the transaction's start time on the database's clock
	EAdd                          // Args[0] + Args[1] (ints), or timestamp + interval (Args[1] an EInterval)
	EInterval                     // Dur, an interval
	EGreatest                     // greatest(Args...)
	EStmtNow                      // statement_timestamp(): the current statement's start on the database's clock
	ECase                         // CASE WHEN Args[0] THEN Args[1] ELSE Args[2] END (Args[0] a boolean)
)

// Expr is a scalar expression. Build it with Const, Col, Now, Plus, Greatest.
type Expr struct {
	Kind ExprKind
	Val  Value
	Col  string
	Dur  time.Duration
	Args []Expr
}

// Const is a literal value.
func Const(v Value) Expr { return Expr{Kind: EConst, Val: v} }

// Col is a column of the row being read or written.
func Col(name string) Expr { return Expr{Kind: ECol, Col: name} }

// Now is now(): the transaction's start time.
func Now() Expr { return Expr{Kind: ENow} }

// NowPlus is now() + interval d.
func NowPlus(d time.Duration) Expr { return Plus(Now(), Interval(d)) }

// Case is CASE WHEN cond THEN a ELSE b END; cond is a boolean (a column),
// NULL counting as false.
func Case(cond, a, b Expr) Expr { return Expr{Kind: ECase, Args: []Expr{cond, a, b}} }

// StatementNow is statement_timestamp(): when the current statement began,
// later than now() in a transaction that has run for a while.
func StatementNow() Expr { return Expr{Kind: EStmtNow} }

// StatementNowPlus is statement_timestamp() + interval d.
func StatementNowPlus(d time.Duration) Expr { return Plus(StatementNow(), Interval(d)) }

// Interval is an interval literal.
func Interval(d time.Duration) Expr { return Expr{Kind: EInterval, Dur: d} }

// Plus is a + b (integers, or timestamp + interval).
func Plus(a, b Expr) Expr { return Expr{Kind: EAdd, Args: []Expr{a, b}} }

// Greatest is greatest(args...), ignoring NULLs as PostgreSQL does.
func Greatest(args ...Expr) Expr { return Expr{Kind: EGreatest, Args: args} }

// Op is a comparison operator.
type Op string

// Comparison operators. Comparisons with NULL are never true (IsNull aside).
const (
	Eq        Op = "="
	Ne        Op = "<>"
	Lt        Op = "<"
	Le        Op = "<="
	Gt        Op = ">"
	Ge        Op = ">="
	IsNull    Op = "IS NULL"
	IsNotNull Op = "IS NOT NULL"
	In        Op = "IN" // Right is ignored; Set holds the values
)

// Cond is one comparison: Col Op Right.
type Cond struct {
	Col   string
	Op    Op
	Right Expr
	Set   []Value // for In
}

// Where is a conjunction of conditions (all must hold); empty means every row.
type Where []Cond

// W builds a one-condition Where: W("status", Eq, "judging").
func W(col string, op Op, v Value) Cond {
	if e, ok := v.(Expr); ok {
		return Cond{Col: col, Op: op, Right: e}
	}
	return Cond{Col: col, Op: op, Right: Const(v)}
}

// Assign sets a column to an expression.
type Assign struct {
	Col  string
	Expr Expr
}

// Set builds an Assign from a value or an Expr.
func Set(col string, v Value) Assign {
	if e, ok := v.(Expr); ok {
		return Assign{Col: col, Expr: e}
	}
	return Assign{Col: col, Expr: Const(v)}
}

// Order is one ORDER BY key.
type Order struct {
	Col  string
	Desc bool
}

// ---- statements ----

// StmtKind says what a statement does.
type StmtKind uint8

// Statement kinds.
const (
	SBegin StmtKind = iota + 1
	SCommit
	SRollback
	SInsert           // Table, Values, OnConflictDoNothing, Returning
	SUpdate           // Table, Assigns, Where, Returning
	SDelete           // Table, Where
	SSelect           // Table, Where, OrderBy, Limit, Lock (ForUpdate, SkipLocked, NoWait)
	SSetLockTimeout   // Dur (0 = wait forever); session-level, not undone by ROLLBACK (see doc.go)
	STryAdvisoryLock  // Key: pg_try_advisory_lock(Key), Result.Locked
	SAdvisoryUnlock   // Key: pg_advisory_unlock(Key), Result.Locked = was held
	SPrepare          // GID: PREPARE TRANSACTION
	SCommitPrepared   // GID
	SRollbackPrepared // GID
	SPreparedXacts    // SELECT ... FROM pg_prepared_xacts: rows with transaction (int64), gid, prepared (clock.Time), age (int64 ns: now() - prepared)
	SVacuum           // Table: VACUUM; Result.Vacuum ("" = every table, summed)
	SSelectNow        // SELECT now(): one row, "now", the transaction's start (the statement's time outside a transaction)
)

// Lock is a SELECT's row-locking clause.
type Lock uint8

// Locking clauses.
const (
	NoLock Lock = iota
	ForUpdate
	ForUpdateSkipLocked
	ForUpdateNoWait
)

// Stmt is one statement. Build it with the helpers below.
type Stmt struct {
	Kind                StmtKind
	Table               string
	Values              Row // SInsert
	Assigns             []Assign
	Where               Where
	OrderBy             []Order
	Limit               int // 0: no limit
	Lock                Lock
	OnConflictDoNothing bool
	Returning           bool          // SInsert/SUpdate/SDelete: return the new (deleted) rows
	Key                 int64         // advisory lock key
	GID                 string        // prepared transaction id
	Dur                 time.Duration // lock_timeout
	// Name labels the statement in crash points and traces ("pick-pending");
	// it is not part of the SQL.
	Name string
}

// Statement constructors.
func Begin() Stmt    { return Stmt{Kind: SBegin} }
func Commit() Stmt   { return Stmt{Kind: SCommit} }
func Rollback() Stmt { return Stmt{Kind: SRollback} }
func Insert(table string, values Row) Stmt {
	return Stmt{Kind: SInsert, Table: table, Values: values}
}
func InsertOrNothing(table string, values Row) Stmt {
	return Stmt{Kind: SInsert, Table: table, Values: values, OnConflictDoNothing: true}
}
func Update(table string, set []Assign, where ...Cond) Stmt {
	return Stmt{Kind: SUpdate, Table: table, Assigns: set, Where: where}
}
func Delete(table string, where ...Cond) Stmt {
	return Stmt{Kind: SDelete, Table: table, Where: where}
}
func Select(table string, where ...Cond) Stmt {
	return Stmt{Kind: SSelect, Table: table, Where: where}
}
func SetLockTimeout(d time.Duration) Stmt { return Stmt{Kind: SSetLockTimeout, Dur: d} }
func TryAdvisoryLock(key int64) Stmt      { return Stmt{Kind: STryAdvisoryLock, Key: key} }
func AdvisoryUnlock(key int64) Stmt       { return Stmt{Kind: SAdvisoryUnlock, Key: key} }
func Prepare(gid string) Stmt             { return Stmt{Kind: SPrepare, GID: gid} }
func CommitPrepared(gid string) Stmt      { return Stmt{Kind: SCommitPrepared, GID: gid} }
func RollbackPrepared(gid string) Stmt    { return Stmt{Kind: SRollbackPrepared, GID: gid} }
func PreparedXacts() Stmt                 { return Stmt{Kind: SPreparedXacts} }
func Vacuum(table string) Stmt            { return Stmt{Kind: SVacuum, Table: table} }
func SelectNow() Stmt                     { return Stmt{Kind: SSelectNow} }

// Builder methods (return a modified copy).
func (s Stmt) Named(name string) Stmt    { s.Name = name; return s }
func (s Stmt) OrderedBy(o ...Order) Stmt { s.OrderBy = o; return s }
func (s Stmt) Limited(n int) Stmt        { s.Limit = n; return s }
func (s Stmt) Locking(l Lock) Stmt       { s.Lock = l; return s }
func (s Stmt) WithReturning() Stmt       { s.Returning = true; return s }

var stmtWords = [...]string{"?", "begin", "commit", "rollback", "insert", "update", "delete", "select",
	"set-lock-timeout", "try-advisory-lock", "advisory-unlock", "prepare", "commit-prepared", "rollback-prepared",
	"pg-prepared-xacts", "vacuum", "select-now"}

// Label names the statement: its Name, else its command and table
// ("update judge_submissions").
func (s Stmt) Label() string {
	if s.Name != "" {
		return s.Name
	}
	w := "?"
	if int(s.Kind) < len(stmtWords) {
		w = stmtWords[s.Kind]
	}
	if s.Table != "" {
		return w + " " + s.Table
	}
	return w
}

// ---- results and errors ----

// SQLSTATE codes the model produces, as PostgreSQL does.
const (
	CodeUniqueViolation   = "23505"
	CodeLockNotAvailable  = "55P03"
	CodeDeadlock          = "40P01"
	CodeInFailedTx        = "25P02"
	CodeUndefinedObject   = "42704" // e.g. COMMIT PREPARED of an unknown gid
	CodeDuplicateObject   = "42710" // PREPARE TRANSACTION with a gid in use
	CodeObjectNotInState  = "55000" // prepared transactions are disabled (max = 0)
	CodeTooManyPrepared   = "53200" // maximum number of prepared transactions reached (PostgreSQL raises it as out_of_memory)
	CodeNoActiveTx        = "25P01" // a warning, never an error: reported in Result.Notice
	CodeActiveTx          = "25001" // COMMIT PREPARED, ROLLBACK PREPARED or VACUUM inside a transaction block; an atomic batch on a session with an open transaction
	CodeNotNullViolation  = "23502"
	CodeUndefinedTable    = "42P01"
	CodeUndefinedColumn   = "42703"
	CodeDatatypeMismatch  = "42804" // a value or expression of the wrong type for its column or operator
	CodeInvalidText       = "22P02" // a string value for a column of another type (PostgreSQL would parse the literal; the model refuses it)
	CodeConnectionFailure = "08006" // the client's view of a broken connection: outcome unknown
)

// Error is a database error with its SQLSTATE.
type Error struct {
	Code string
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("ERROR %s: %s", e.Code, e.Msg) }

// VacuumStats is what VACUUM VERBOSE reports for a table.
type VacuumStats struct {
	Removed          int // dead row versions removed
	Remain           int // row versions left (live + dead not removable)
	DeadNotRemovable int // dead but still visible to the oldest running or prepared transaction
}

// Result is the outcome of one statement.
type Result struct {
	Err      *Error
	Tag      string // PostgreSQL's command tag: "INSERT 0 1", "UPDATE 2", "SELECT 1", "COMMIT", "ROLLBACK", ...
	Notice   string // a warning PostgreSQL would print ("WARNING 25P01: there is no transaction in progress")
	Rows     []Row  // SSelect, Returning, SPreparedXacts
	Affected int    // rows inserted, updated, deleted or returned by a SELECT
	Inserted bool   // SInsert: a row was inserted (false when ON CONFLICT DO NOTHING skipped it)
	Locked   bool   // advisory lock results
	// RolledBack: a COMMIT or PREPARE TRANSACTION found the transaction
	// failed (after an error) and rolled it back instead; the command tag
	// is then "ROLLBACK", as in PostgreSQL. Err is nil.
	RolledBack bool
	Vacuum     VacuumStats
}

// Request is what a client sends on its connection: statements run in order,
// each as PostgreSQL would run it on that session (in the open transaction, or
// autocommit). With Atomic, the statements run as one transaction (BEGIN ...
// COMMIT around them, ROLLBACK at the first error): a one-round-trip batch.
// Execution stops at the first error. An atomic batch sent while the session
// has a transaction open (or failed) is refused with 25001 before any
// statement runs (one result carries the error). A batch that ends with
// PREPARE TRANSACTION leaves its transaction prepared instead of committed.
// Requests on one connection run one after another, in the order sent.
type Request struct {
	ID     uint64
	Stmts  []Stmt
	Atomic bool
}

// Response answers a Request. Results has one entry per statement run (the
// last one carries the error, if any). A client that loses its connection
// before the Response arrives cannot know whether the statements ran: the
// Client helper reports that as a single result with CodeConnectionFailure.
type Response struct {
	ID      uint64
	Results []Result
}

// ReplyKey names the request a response answers (sim.Keyed).
func (r Response) ReplyKey() uint64 { return r.ID }

// RequestOf returns a message body's request: the database's clients send
// a *Request (a pointer is boxed without an allocation), a Request works
// as well.
func RequestOf(body any) (Request, bool) { return bodyOf[Request](body) }

// ResponseOf returns a message body's response: the database node sends a
// *Response, a live run's driver a Response.
func ResponseOf(body any) (Response, bool) { return bodyOf[Response](body) }

// bodyOf returns a body of type T, sent as a T or a non-nil *T.
func bodyOf[T any](body any) (T, bool) {
	switch b := body.(type) {
	case *T:
		if b != nil {
			return *b, true
		}
	case T:
		return b, true
	}
	var zero T
	return zero, false
}

// Err returns the error of the last result, or nil.
func (r Response) Err() *Error {
	if len(r.Results) == 0 {
		return nil
	}
	return r.Results[len(r.Results)-1].Err
}

// Config tunes a database node.
type Config struct {
	MaxPreparedTransactions int              // 0 disables PREPARE TRANSACTION, as in PostgreSQL
	LockTimeout             time.Duration    // session default; 0 waits forever
	DeadlockTimeout         time.Duration    // how long a waiter waits before checking for a deadlock; 0 means PostgreSQL's default, 1s
	Seed                    map[string][]Row // initial rows per table, committed (as transaction 0) when the node first starts on an empty disk
}

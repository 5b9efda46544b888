package main

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fencesim/fencesim/internal/revision"
)

// A recordCache keeps the per-seed records of a diff's base between
// diffs: the base does not change while a user edits and diffs again,
// and a run is a function of the binary, its flags and its seed (runs
// replay bit for bit), so a seed the same base binary already ran with the
// same flags is not run again. The key is a hash of the binary's bytes
// (a counting build's targets are in them), of every flag but the seeds,
// workers and output (--per-seed-hash included), and of the content of a
// --design file. It lives in the build cache's directory (records/KEY/,
// the 16 newest keys kept), and FENCESIM_BUILD_CACHE=off turns it off.
// Only the base's records are kept: the working tree changes between
// diffs.
type recordCache struct {
	dir  string
	mu   sync.Mutex
	recs map[recKey]seedRecord
}

type recKey struct {
	system string
	seed   uint64
}

// recordsKeep is how many keys (base binaries and flags) are kept.
const recordsKeep = 16

// recordsMaxFiles: a key's directory with more files is compacted to one.
const recordsMaxFiles = 32

// keptRecords opens the record cache of a runner's base: its binary,
// with the flags its children get but the seeds, workers, shard and the
// records' file.
func keptRecords(sr *sideRunner) *recordCache {
	args := append(append(append(childArgs(""), sr.common...), worldFlag(sr.world, sr.names)...), sr.hashArgs[0]...)
	design := ""
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--design" {
			design = args[i+1]
		}
	}
	return openRecordCache(sr.bins[0], args, design)
}

// openRecordCache opens the records of bin run with args (design: the
// --design file, "" for none); nil when there is no build cache or the
// key cannot be made.
func openRecordCache(bin string, args []string, design string) *recordCache {
	root := revision.CacheDir()
	if root == "" {
		return nil
	}
	h := sha256.New()
	f, err := os.Open(bin)
	if err != nil {
		return nil
	}
	_, err = io.Copy(h, f)
	f.Close()
	if err != nil {
		return nil
	}
	fmt.Fprintf(h, "\x00%s\x00%q\x00", perSeedFormat, args)
	if design != "" {
		b, err := os.ReadFile(design)
		if err != nil {
			return nil
		}
		h.Write(b)
	}
	top := filepath.Join(root, revision.RecordsDir)
	rc := &recordCache{dir: filepath.Join(top, hex.EncodeToString(h.Sum(nil))[:32]), recs: map[recKey]seedRecord{}}
	rc.load()
	now := time.Now()
	_ = os.Chtimes(rc.dir, now, now) // the newest are kept
	trimRecords(top)
	return rc
}

// load reads the key's files; a file that does not read whole is left
// out (another diff may be writing it: they are renamed into place). The
// records are kept as the base's explore wrote them (their lines), so that
// a later fencesim reads them as it reads its children's. A temporary file
// an hour old is a killed diff's and goes.
func (rc *recordCache) load() {
	if tmps, _ := filepath.Glob(filepath.Join(rc.dir, "tmp-*")); len(tmps) > 0 {
		for _, t := range tmps {
			if st, err := os.Stat(t); err == nil && time.Since(st.ModTime()) > time.Hour {
				os.Remove(t)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(rc.dir, "*.jsonl"))
	slices.Sort(files)
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		rs, err := readPerSeedLines(bytes.NewReader(b), file, true)
		if err != nil {
			continue
		}
		for _, r := range rs {
			r.kept = true // an earlier diff's
			rc.recs[recKey{r.System, r.Seed}] = r
		}
	}
	if len(files) > recordsMaxFiles {
		all := make([]seedRecord, 0, len(rc.recs))
		for _, r := range rc.recs {
			all = append(all, r)
		}
		slices.SortFunc(all, func(a, b seedRecord) int {
			return cmp.Or(strings.Compare(a.System, b.System), cmp.Compare(a.Seed, b.Seed))
		})
		if rc.write(all) == nil {
			for _, file := range files {
				os.Remove(file)
			}
		}
	}
}

// lookup returns the kept records of p's seeds of the systems names, and
// the seeds of p that some system lacks (nil when none), whose kept
// records are left out so that they run whole. A record an earlier diff
// ran is marked kept; one this diff ran and stored (its base's seeds run
// ahead while the working tree built, which a focused diff's search may
// pick later) is served as it is: this diff ran it.
func (rc *recordCache) lookup(p plan, names []string) (served []seedRecord, missing []uint64) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return serve(p, names, rc.recs)
}

// serve returns the records of have for p's seeds of the systems names,
// by seed, and the seeds of p that some system lacks (nil when none),
// whose records are left out so that they run again whole.
func serve(p plan, names []string, have map[recKey]seedRecord) (served []seedRecord, missing []uint64) {
	p.each(func(s uint64) bool {
		n := len(served)
		for _, name := range names {
			if r, ok := have[recKey{name, s}]; ok {
				served = append(served, r)
			}
		}
		if len(served)-n != len(names) {
			served = served[:n]
			missing = append(missing, s)
		}
		return true
	})
	return served, missing
}

// store keeps new records (a cache that cannot be written is no error).
func (rc *recordCache) store(rs []seedRecord) {
	if len(rs) == 0 {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, r := range rs {
		r.kept = false // this diff's
		rc.recs[recKey{r.System, r.Seed}] = r
	}
	_ = rc.write(rs)
}

// write writes records to a new file of the key, atomically.
func (rc *recordCache) write(rs []seedRecord) error {
	_, err := os.Stat(rc.dir)
	if os.IsNotExist(err) {
		if err := os.MkdirAll(rc.dir, 0o755); err != nil {
			return err
		}
		defer trimRecords(filepath.Dir(rc.dir))
	}
	tmp, err := os.CreateTemp(rc.dir, "tmp-*")
	if err != nil {
		return err
	}
	w := bufio.NewWriter(tmp)
	for _, r := range rs {
		line := r.line
		if line == nil { // not read from a child's file (tests)
			r.Side = ""
			b, err := json.Marshal(r)
			if err != nil {
				tmp.Close()
				os.Remove(tmp.Name())
				return err
			}
			line = b
		}
		w.Write(line)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	name := filepath.Join(rc.dir, fmt.Sprintf("%d-%d.jsonl", time.Now().UnixNano(), os.Getpid()))
	if err := os.Rename(tmp.Name(), name); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// trimRecords keeps the newest keys.
func trimRecords(top string) { revision.TrimNewest(top, recordsKeep, "") }

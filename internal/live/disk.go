package live

import (
	"bytes"
	"encoding/gob"
	"errors"
	"os"
	"path/filepath"
	"sync"

	"github.com/fencesim/fencesim/sim"
)

// diskFile holds a node's durable disk: a gob of its keys and values,
// replaced atomically (written aside, fsynced, renamed, directory fsynced)
// whenever a step changed it.
const diskFile = "disk.gob"

var gobOnce sync.Map

func registerGob(v any) {
	if _, done := gobOnce.LoadOrStore(v, true); !done {
		gob.Register(v)
	}
}

// readDisk reads a node's disk from its directory (empty when new).
func readDisk(dir string) (*sim.Disk, int, error) {
	m := map[string]any{}
	b, err := os.ReadFile(filepath.Join(dir, diskFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, 0, err
	default:
		if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&m); err != nil {
			return nil, 0, err
		}
	}
	return sim.LoadDisk(m, true), 0, nil
}

// loadDisk reads a node's disk from its directory (empty when new) and
// counts the node's incarnations there.
func loadDisk(dir string) (*sim.Disk, int, error) {
	disk, _, err := readDisk(dir)
	if err != nil {
		return nil, 0, err
	}
	inc := 1
	if b, err := os.ReadFile(filepath.Join(dir, "incarnations")); err == nil {
		inc = len(b) + 1
	}
	f, err := os.OpenFile(filepath.Join(dir, "incarnations"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err == nil {
		f.Write([]byte{'.'})
		f.Close()
	}
	return disk, inc, nil
}

// saveDisk writes a node's durable disk.
func saveDisk(dir string, d *sim.Disk) error {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(d.Snapshot()); err != nil {
		return err
	}
	tmp := filepath.Join(dir, diskFile+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, diskFile)); err != nil {
		return err
	}
	if dh, err := os.Open(dir); err == nil {
		dh.Sync()
		dh.Close()
	}
	return nil
}

package revision

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The binaries diff builds are kept between runs, by what they are built
// from: a revision's by its commit, the working tree's by a hash of the
// content of every file git tracks or would track (untracked, not ignored),
// each with the Go toolchain and environment that built it. A diff of an
// unchanged base, or a second diff of the same working tree, builds
// nothing. FENCESIM_BUILD_CACHE names the directory (default: the user's
// cache directory's fencesim/bin; "off" disables the cache).

// keep is how many binaries the cache keeps (the newest).
const keep = 16

// RecordsDir is the cache's subdirectory where diff keeps its base's
// per-seed records (cmd/fencesim's recordCache); trim leaves it alone.
const RecordsDir = "records"

// CacheDir is the cache's directory, "" when there is none.
func CacheDir() string { return cacheDir() }

// cacheDir is the cache's directory, "" when there is none.
func cacheDir() string {
	if d := os.Getenv("FENCESIM_BUILD_CACHE"); d != "" {
		if d == "off" {
			return ""
		}
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "fencesim", "bin")
}

// toolKey is what of the toolchain and environment a build depends on.
func toolKey(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "env", "GOVERSION", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "GOFLAGS", "CGO_ENABLED", "GOEXPERIMENT")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// treeKey hashes the working tree's content: every file git tracks or
// would track, by path and content (a deleted tracked file counts as
// gone).
func treeKey(root string) (string, error) {
	ls := exec.Command("git", "ls-files", "-co", "--exclude-standard", "-z")
	ls.Dir = root
	out, err := ls.Output()
	if err != nil {
		return "", err
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		if f == "" {
			continue
		}
		fh, err := os.Open(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return "", err
		}
		st, err := fh.Stat()
		if err != nil || st.IsDir() {
			fh.Close()
			continue
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f, st.Size())
		_, err = io.Copy(h, fh)
		fh.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// cached is a build's entry in the cache: where its binary is.
func cached(dir, what, tool string) string {
	sum := sha256.Sum256([]byte(what + "\x00" + tool))
	return filepath.Join(dir, hex.EncodeToString(sum[:16]), "fencesim")
}

// fetch copies a cached binary to dst; false when there is none.
func fetch(entry, dst string) bool {
	src, err := os.Open(entry)
	if err != nil {
		return false
	}
	defer src.Close()
	if err := copyTo(src, dst); err != nil {
		return false
	}
	now := time.Now()
	_ = os.Chtimes(filepath.Dir(entry), now, now) // the newest are kept
	return true
}

// store puts a built binary in the cache (atomically: another diff may
// read it at once) and trims the cache to its newest entries. A cache
// that cannot be written is no error: the next diff builds again.
func store(bin, entry string) {
	if err := os.MkdirAll(filepath.Dir(entry), 0o755); err != nil {
		return
	}
	src, err := os.Open(bin)
	if err != nil {
		return
	}
	defer src.Close()
	tmp := entry + ".tmp" + fmt.Sprint(os.Getpid())
	if err := copyTo(src, tmp); err != nil {
		os.Remove(tmp)
		return
	}
	if err := os.Rename(tmp, entry); err != nil {
		os.Remove(tmp)
		return
	}
	trim(filepath.Dir(filepath.Dir(entry)))
}

func copyTo(src io.Reader, dst string) error {
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, src); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// trim keeps the newest entries of the cache.
func trim(dir string) { TrimNewest(dir, keep, RecordsDir) }

// TrimNewest keeps the keep most recently modified directories of dir
// and removes the others, but the one named skip (a cache's sections).
func TrimNewest(dir string, keep int, skip string) {
	es, err := os.ReadDir(dir)
	if err != nil || len(es) <= keep {
		return
	}
	type entry struct {
		name string
		t    int64
	}
	var all []entry
	for _, e := range es {
		if info, err := e.Info(); err == nil && e.IsDir() && e.Name() != skip {
			all = append(all, entry{e.Name(), info.ModTime().UnixNano()})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].t > all[j].t })
	for _, e := range all[min(keep, len(all)):] {
		os.RemoveAll(filepath.Join(dir, e.name))
	}
}

// Package browsertest loads generated HTML reports in headless Chromium for
// tests: the report's own tests (traces/report) and the command line's
// (a live run's report opens). Without Chromium a test skips, except under
// CI=true, where it fails.
package browsertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// InstallHint says how to get Chromium.
const InstallHint = "install it with: apt-get update && apt-get install -y chromium (Debian package chromium), or set CHROMIUM to its path"

// Chromium returns the browser's path; it skips the test without one (fails
// it under CI=true).
func Chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("headless Chromium is needed for the report's browser test and CI=true: %s", InstallHint)
	}
	t.Skipf("headless Chromium not found; %s", InstallHint)
	return ""
}

// Browse runs headless Chromium on a page with extra flags and returns its
// stdout and stderr. It may run on any goroutine: it reports errors instead
// of failing the test.
func Browse(bin, page string, flags ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	profile, err := os.MkdirTemp("", "report-chromium-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(profile)
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio",
		"--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
		"--virtual-time-budget=5000",
	}, flags...)
	args = append(args, "file://"+page)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("chromium %s: %w; stderr:\n%s", strings.Join(flags, " "), err, stderr.String())
	}
	return stdout.String(), stderr.String(), nil
}

// ConsoleErrors picks the lines of Chromium's log that report page errors.
func ConsoleErrors(stderr string) []string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "Uncaught") || strings.Contains(line, ":CONSOLE") || strings.Contains(line, "CONSOLE(") {
			out = append(out, line)
		}
	}
	return out
}

var attr = regexp.MustCompile(`<body[^>]*\bdata-rendered="([^"]*)"`)

// Rendered reads the body's data-rendered counts (what the page's script
// drew) from a dumped DOM.
func Rendered(t *testing.T, dom string) map[string]int {
	t.Helper()
	m := attr.FindStringSubmatch(dom)
	require.Len(t, m, 2, "the dumped DOM must have a body with data-rendered")
	out := map[string]int{}
	for _, kv := range strings.Fields(m[1]) {
		k, v, ok := strings.Cut(kv, "=")
		require.True(t, ok, "data-rendered %q", m[1])
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "data-rendered %q", m[1])
		out[k] = n
	}
	return out
}

// BodyAttr reads an attribute of the dumped DOM's body ("" when absent).
func BodyAttr(t *testing.T, dom, name string) string {
	t.Helper()
	m := regexp.MustCompile(`<body[^>]*\b` + name + `="([^"]*)"`).FindStringSubmatch(dom)
	if len(m) != 2 {
		return ""
	}
	return m[1]
}

// PageErrors reads the errors the page's script caught (data-errors).
func PageErrors(t *testing.T, dom string) string {
	t.Helper()
	m := regexp.MustCompile(`<html[^>]*\bdata-errors="([^"]*)"`).FindStringSubmatch(dom)
	require.Len(t, m, 2, "the dumped DOM must have the data-errors attribute")
	return m[1]
}

package netproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Wait bounds one change to a link (a toxic added or removed, a restart):
// past it the change is abandoned and the link is reported wedged.
const Wait = 5 * time.Second

// Link is one directed client->server path: From dials To, whose real
// address is Upstream.
type Link struct {
	From, To string
	Upstream string
}

// Name is the link's proxy name, "from>to".
func (l Link) Name() string { return l.From + ">" + l.To }

// Net is the set of proxies of a live run. Its methods are safe for
// concurrent use.
type Net struct {
	mu     sync.Mutex
	server *toxiproxy.ApiServer
	links  []*link // in Start's order
	byName map[string]*link
	seq    int            // numbers timed faults, for their toxics' names
	bursts map[int]*burst // timed faults still on
	timers sync.WaitGroup // timer callbacks scheduled or running
	closed bool
}

type link struct {
	Link
	addr   string
	proxy  *toxiproxy.Proxy
	toxics map[string]bool // names of the toxics on it
	wedged error           // set when a change did not finish within Wait
}

// target is one stream of one link.
type target struct {
	l      *link
	stream string // "upstream" (From -> To) or "downstream" (To -> From)
}

type burst struct {
	timer   *time.Timer
	targets []target
	name    string
}

// toxic is toxiproxy's JSON form of a toxic.
type toxic struct {
	Name       string           `json:"name"`
	Type       string           `json:"type"`
	Stream     string           `json:"stream"`
	Toxicity   float32          `json:"toxicity"`
	Attributes map[string]int64 `json:"attributes"`
}

// Start starts one proxy per link, each listening on a free port of
// 127.0.0.1. Link names must be distinct and nodes named.
func Start(links []Link) (*Net, error) {
	n := &Net{
		server: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()),
		byName: map[string]*link{},
		bursts: map[int]*burst{},
	}
	for _, l := range links {
		if l.From == "" || l.To == "" || l.Upstream == "" {
			n.Close()
			return nil, fmt.Errorf("netproxy: link %q needs From, To and Upstream", l.Name())
		}
		if n.byName[l.Name()] != nil {
			n.Close()
			return nil, fmt.Errorf("netproxy: link %s given twice", l.Name())
		}
		p := toxiproxy.NewProxy(n.server, l.Name(), "127.0.0.1:0", l.Upstream)
		if err := n.server.Collection.Add(p, true); err != nil {
			n.Close()
			return nil, fmt.Errorf("netproxy: link %s: %w", l.Name(), err)
		}
		k := &link{Link: l, addr: p.Listen, proxy: p, toxics: map[string]bool{}}
		n.links = append(n.links, k)
		n.byName[l.Name()] = k
	}
	return n, nil
}

// Addr returns the address the client from dials to reach to, or "" when
// no link from>to was started.
func (n *Net) Addr(from, to string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if k := n.byName[Link{From: from, To: to}.Name()]; k != nil {
		return k.addr
	}
	return ""
}

// Links returns the links in Start's order.
func (n *Net) Links() []Link {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]Link, len(n.links))
	for i, k := range n.links {
		out[i] = k.Link
	}
	return out
}

// Close ends every timed fault and stops every proxy, closing their
// listeners and connections. It waits for the timers' callbacks.
func (n *Net) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	for id, b := range n.bursts {
		if b.timer.Stop() {
			n.timers.Done()
		}
		delete(n.bursts, id)
	}
	var errs []error
	for _, k := range n.links {
		k.wedged = nil // try even a wedged link: Stop does not take its toxics' lock
		if err := bounded(k, "stop", func() error { stop(k); return nil }); err != nil {
			errs = append(errs, err)
		}
	}
	n.mu.Unlock()
	n.timers.Wait()
	return errors.Join(errs...)
}

// match reports whether a fault's node pattern names node ("" names all).
func match(pattern, node string) bool { return pattern == "" || pattern == node }

// targets returns the streams that carry data from -> to.
func (n *Net) targets(from, to string) []target {
	var out []target
	for _, k := range n.links {
		if match(from, k.From) && match(to, k.To) {
			out = append(out, target{k, "upstream"})
		}
		if match(from, k.To) && match(to, k.From) {
			out = append(out, target{k, "downstream"})
		}
	}
	return out
}

// between returns the links between a and b, in either direction.
func (n *Net) between(a, b string) []*link {
	var out []*link
	for _, k := range n.links {
		if (match(a, k.From) && match(b, k.To)) || (match(a, k.To) && match(b, k.From)) {
			out = append(out, k)
		}
	}
	return out
}

func (n *Net) check() error {
	if n.closed {
		return errors.New("netproxy: closed")
	}
	return nil
}

// bounded runs one change to k, giving up after Wait.
func bounded(k *link, what string, f func() error) error {
	if k.wedged != nil {
		return k.wedged
	}
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("netproxy: link %s: %s: %w", k.Name(), what, err)
		}
		return nil
	case <-time.After(Wait):
		k.wedged = fmt.Errorf("netproxy: link %s wedged: %s did not finish within %v", k.Name(), what, Wait)
		return k.wedged
	}
}

func (n *Net) add(t target, x toxic) error {
	x.Stream = t.stream
	body, err := json.Marshal(x)
	if err != nil {
		panic(fmt.Sprintf("netproxy: toxic %+v does not marshal: %v", x, err))
	}
	err = bounded(t.l, "add "+x.Name, func() error {
		_, err := t.l.proxy.Toxics.AddToxicJson(bytes.NewReader(body))
		return err
	})
	if err == nil {
		t.l.toxics[x.Name] = true
	}
	return err
}

func (n *Net) remove(k *link, name string) error {
	if !k.toxics[name] {
		return nil
	}
	err := bounded(k, "remove "+name, func() error {
		return k.proxy.Toxics.RemoveToxic(context.Background(), name)
	})
	if err == nil || errors.Is(err, toxiproxy.ErrToxicNotFound) {
		delete(k.toxics, name)
		return nil
	}
	return err
}

// restart closes every connection through k (stop), and listens again on
// the same address.
func restart(k *link) error {
	return bounded(k, "restart", func() error {
		stop(k)
		return k.proxy.Start()
	})
}

// stop closes k's listener and connections (toxiproxy's Stop), swallowing
// first whatever its streams still carry: a drop toxic goes at the end of
// both chains, and comes off once the proxy is stopped. toxiproxy's writer
// of a connection ends at its first failed write, and Stop closes both
// ends at once, so the last stage of a chain could be left sending to a
// writer that is gone, blocked for good (a goroutine leaked per such
// connection: TestFaultsUnderTraffic failed 2 of 15 runs so); the
// swallowing stage never sends, and reads until the connection's reader
// ends.
func stop(k *link) {
	for _, s := range []string{"upstream", "downstream"} {
		body, _ := json.Marshal(toxic{Name: "stop_" + s, Type: dropType, Stream: s, Toxicity: 1, Attributes: map[string]int64{"rate": 1_000_000}})
		_, _ = k.proxy.Toxics.AddToxicJson(bytes.NewReader(body)) // a failure leaves Stop as it was
	}
	k.proxy.Stop()
	for _, s := range []string{"upstream", "downstream"} {
		_ = k.proxy.Toxics.RemoveToxic(context.Background(), "stop_"+s)
	}
}

// Cut blocks data from -> to and breaks the connections between the two.
func (n *Net) Cut(from, to string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.check(); err != nil {
		return err
	}
	var errs []error
	for _, t := range n.targets(from, to) {
		errs = append(errs, n.cut(t))
	}
	for _, k := range n.between(from, to) {
		errs = append(errs, restart(k))
	}
	return errors.Join(errs...)
}

// cut puts the swallowing toxic on one stream, once.
func (n *Net) cut(t target) error {
	name := "cut_" + t.stream
	if t.l.toxics[name] {
		return nil
	}
	return n.add(t, toxic{Name: name, Type: dropType, Toxicity: 1, Attributes: map[string]int64{"rate": 1_000_000}})
}

// Partition cuts both ways between every two nodes of different groups and
// breaks the connections between them.
func (n *Net) Partition(groups [][]string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.check(); err != nil {
		return err
	}
	group := map[string]int{}
	for i, g := range groups {
		for _, node := range g {
			if node == "" {
				return errors.New("netproxy: partition: a group names an empty node")
			}
			if j, ok := group[node]; ok && j != i {
				return fmt.Errorf("netproxy: partition: %s is in groups %d and %d", node, j, i)
			}
			group[node] = i
		}
	}
	var errs []error
	for _, k := range n.links {
		i, ok1 := group[k.From]
		j, ok2 := group[k.To]
		if !ok1 || !ok2 || i == j {
			continue
		}
		errs = append(errs, n.cut(target{k, "upstream"}), n.cut(target{k, "downstream"}), restart(k))
	}
	return errors.Join(errs...)
}

// Heal removes every cut and partition; the connections that lost data to
// one are closed.
func (n *Net) Heal() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.check(); err != nil {
		return err
	}
	return n.heal()
}

func (n *Net) heal() error {
	var errs []error
	for _, k := range n.links {
		for _, name := range sorted(k.toxics) {
			if strings.HasPrefix(name, "cut_") {
				errs = append(errs, n.remove(k, name))
			}
		}
	}
	return errors.Join(errs...)
}

// Break closes every connection between a and b (either direction); new
// ones work at once.
func (n *Net) Break(a, b string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.check(); err != nil {
		return err
	}
	var errs []error
	for _, k := range n.between(a, b) {
		errs = append(errs, restart(k))
	}
	return errors.Join(errs...)
}

// Stall holds data from -> to for d, then lets it through in order.
func (n *Net) Stall(from, to string, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	return n.timed(from, to, d, toxic{Type: "latency", Toxicity: 1, Attributes: map[string]int64{"latency": millis(d)}})
}

// Delay adds a delay uniform in [0, amount) to data from -> to, for d.
func (n *Net) Delay(from, to string, amount, d time.Duration) error {
	if amount <= 0 || d <= 0 {
		return nil
	}
	ms := millis(amount)
	return n.timed(from, to, d, toxic{Type: "latency", Toxicity: 1, Attributes: map[string]int64{"latency": ms / 2, "jitter": ms - ms/2}})
}

// Loss loses, for d, each chunk of data from -> to with probability
// perMillion per million; a connection that lost one carries nothing more
// that way and is closed when the loss ends.
func (n *Net) Loss(from, to string, perMillion int64, d time.Duration) error {
	if perMillion < 0 || perMillion > 1_000_000 {
		return fmt.Errorf("netproxy: loss rate %d is not in [0, 1000000] per million", perMillion)
	}
	if perMillion == 0 || d <= 0 {
		return nil
	}
	return n.timed(from, to, d, toxic{Type: dropType, Toxicity: 1, Attributes: map[string]int64{"rate": perMillion}})
}

// timed puts x on every stream from -> to and removes it after d.
func (n *Net) timed(from, to string, d time.Duration, x toxic) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.check(); err != nil {
		return err
	}
	n.seq++
	id := n.seq
	b := &burst{name: fmt.Sprintf("%s#%d", x.Type, id)}
	var errs []error
	for _, t := range n.targets(from, to) {
		x.Name = b.name + "_" + t.stream
		if err := n.add(t, x); err != nil {
			errs = append(errs, err)
			continue
		}
		b.targets = append(b.targets, t)
	}
	n.bursts[id] = b
	n.timers.Add(1)
	b.timer = time.AfterFunc(d, func() {
		defer n.timers.Done()
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.bursts[id] == b {
			n.end(id) // a failure is the link's wedged error, reported by its next change
		}
	})
	return errors.Join(errs...)
}

// end removes a timed fault's toxics.
func (n *Net) end(id int) error {
	b := n.bursts[id]
	delete(n.bursts, id)
	var errs []error
	for _, t := range b.targets {
		errs = append(errs, n.remove(t.l, b.name+"_"+t.stream))
	}
	return errors.Join(errs...)
}

// HealAll removes every cut and partition and ends every timed fault now.
func (n *Net) HealAll() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.check(); err != nil {
		return err
	}
	errs := []error{n.heal()}
	ids := make([]int, 0, len(n.bursts))
	for id := range n.bursts {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		if n.bursts[id].timer.Stop() {
			n.timers.Done()
		}
		errs = append(errs, n.end(id))
	}
	return errors.Join(errs...)
}

// millis rounds d up to whole milliseconds, toxiproxy's unit.
func millis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

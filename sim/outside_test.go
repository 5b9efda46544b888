package sim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
)

// TestOutsideStepsAProgram drives a program as the live world's driver
// does: each step's effects come back to the driver, its crash points and
// its death reach the driver's hooks, and the disk says when what a crash
// keeps has changed.
func TestOutsideStepsAProgram(t *testing.T) {
	var points []string
	var died string
	var conns network.ConnID
	o := &sim.Outside{Self: "n",
		Dial:  func(network.Addr) network.ConnID { conns++; return conns },
		Point: func(e *sim.Env, label string) { points = append(points, label) },
		Die:   func(label string, restart time.Duration) { died = label },
	}
	disk := sim.NewDisk()
	disk.AutoSync = false
	node := sim.Program(func(p *sim.Proc) {
		assert.True(t, sim.Armed(p), "a driver with a Point hook listens at every crash point")
		p.Disk().Put("k", int64(1))
		c := p.Dial("peer")
		p.SendConn(c, "hello")
		p.Sync("k")
		p.Sleep(time.Second, "nap")
		p.Die("poison", 5*time.Second)
	})
	env := o.Env(0, 0, sim.NewPCG(1).Stream("n"), disk)
	v0 := disk.Version()
	node.Step(env, sim.Input{Kind: sim.Start})
	assert.Equal(t, []string{"dial peer", "sync k", "nap"}, points, "every blocking call is a crash point the driver sees")
	assert.Greater(t, disk.Version(), v0, "the sync made a write durable: the driver writes the disk out")
	assert.Equal(t, int64(1), disk.Snapshot()["k"])
	var kinds []sim.EffectKind
	var timer sim.Effect
	for _, e := range env.Effects() {
		kinds = append(kinds, e.Kind)
		if e.Kind == sim.EffTimer {
			timer = e
		}
	}
	assert.Equal(t, []sim.EffectKind{sim.EffDial, sim.EffSend, sim.EffTimer}, kinds, "the step's effects, for the driver to carry out")
	assert.False(t, env.Crashed())
	// The timer fires: the next step ends in Die, which reaches the hook.
	env = o.Env(clock.Time(time.Second), clock.Time(time.Second), sim.NewPCG(1).Stream("n"), disk)
	node.Step(env, sim.Input{Kind: sim.Timer, TimerID: timer.TimerID, Tag: timer.Tag})
	assert.Equal(t, "poison", died)
	assert.True(t, env.Crashed(), "the driver steps it no more")
	back := sim.LoadDisk(disk.Snapshot(), true)
	v, ok := back.Get("k")
	require.True(t, ok)
	assert.Equal(t, int64(1), v, "a disk loaded from its snapshot has what was durable")
}

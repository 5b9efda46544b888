package outbox

import (
	"testing"
)

func TestSmokeSeeds(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		o := RunSeed(Default(), DefaultWorkload(), seed)
		t.Logf("seed %d failed=%v settled=%v steps=%d trace=%d deliveries=%d charges=%d pubs=%d effects=%d gaveup=%d t=%v probes=%v",
			seed, o.Failed(), o.Metrics.Settled, o.Metrics.KernelSteps, o.Metrics.TraceEvents, o.Metrics.Deliveries, o.Metrics.Charges, o.Metrics.Publishes, o.Metrics.Effects, o.Metrics.GaveUp, o.Metrics.SimTime, o.Probes)
		if !o.OK() {
			t.Errorf("seed %d:\n%s", seed, o.Summary())
		}
	}
}

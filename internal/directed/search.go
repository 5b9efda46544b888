package directed

import (
	"fmt"
	"math"
	"sort"

	"github.com/fencesim/fencesim/sim"
)

// Config is a search's settings; zero fields take the defaults.
type Config struct {
	// Seed is the search's own seed: which seeds it picks, not what a run
	// does (every run is a plain seed that replays alone).
	Seed uint64
	// First is the first candidate seed; candidates are First, First+1, ...
	First uint64
	// Warmup runs are the first candidates in order, as uniform seeds
	// would be (default 16): the search starts where uniform starts.
	Warmup int
	// Pool is how many drawn candidates wait to be picked (default 256).
	Pool int
	// Refill is how many new candidates are drawn per pick (default 8):
	// the cost of the search is a world's draw (no play) per candidate.
	Refill int
	// Explore is the share of picks that take the oldest candidate, as
	// uniform seeds would (default 0.25): a floor under a signal that
	// misleads the search (the target code runs most in worlds where the
	// failure is not). The other picks are drawn worlds too, so a
	// misleading signal slows the search by far less than 1/Explore.
	Explore float64
	// Levers are the names of the system's levers, in the order of its
	// seed format (contract.Support.Levers), each the name of the world
	// feature it forces; none: the search picks plain seeds only.
	Levers []string
}

func (c Config) withDefaults() Config {
	if c.Warmup <= 0 {
		c.Warmup = 16
	}
	if c.Pool <= 0 {
		c.Pool = 256
	}
	if c.Refill <= 0 {
		c.Refill = 8
	}
	if c.Explore <= 0 {
		c.Explore = 0.25
	}
	return c
}

// Search picks seeds, favouring the world choices of runs that were
// rewarded. It is a Thompson-sampling bandit over the worlds' features
// (Features): each feature has a Beta posterior of the reward of runs
// whose world had it; a pick samples every posterior once and takes, among
// the candidate seeds drawn ahead, the one whose features' sampled rates
// beat the mean by the most (the sum of their log ratios, a naive Bayes
// score). A seed's world is drawn, not played, to know its features, so a
// candidate costs a draw and only picked seeds are run. The search is
// deterministic in its seed and the rewards it is given.
type Search struct {
	cfg      Config
	rng      sim.Rand
	features func(seed uint64) ([]string, error)
	next     uint64
	pool     []cand
	ids      map[string]int
	names    []string
	n, sum   []float64 // per feature: rewarded runs observed with it, reward total
	runs     float64   // every run observed
	total    float64   // every reward
	pending  map[uint64][]int
	picked   int
	steer    uint64 // the next steered seed's number
}

type cand struct {
	seed  uint64
	feats []int
}

// New starts a search; features names a seed's world (Features of the
// system's Draw).
func New(cfg Config, features func(seed uint64) ([]string, error)) *Search {
	cfg = cfg.withDefaults()
	return &Search{cfg: cfg, rng: sim.NewPCG(cfg.Seed).Stream("directed"), features: features,
		next: cfg.First, steer: cfg.First % sim.SteerBaseLimit, ids: map[string]int{}, pending: map[uint64][]int{}}
}

// draw adds the next plain candidate seed to the pool.
func (s *Search) draw() error {
	seed := s.next
	if seed == math.MaxUint64 {
		return fmt.Errorf("directed search: out of seeds")
	}
	s.next++
	return s.add(seed)
}

// drawSteered adds a steered candidate to the pool: the next steered
// number, with the levers whose features theta favours (a sampled reward
// rate above the mean) pulled; none when no lever's feature is favoured.
func (s *Search) drawSteered(theta []float64) error {
	if len(s.cfg.Levers) == 0 || len(s.cfg.Levers) > sim.MaxLevers || s.steer >= sim.SteerBaseLimit {
		return nil
	}
	var mask uint64
	for i, name := range s.cfg.Levers {
		if f, ok := s.ids[name]; ok && f < len(theta) && theta[f] > 0 {
			mask |= 1 << uint(i)
		}
	}
	if mask == 0 {
		return nil
	}
	seed := sim.SteerSeed(s.steer, mask)
	s.steer++
	return s.add(seed)
}

// add draws a candidate's world and adds it to the pool.
func (s *Search) add(seed uint64) error {
	names, err := s.features(seed)
	if err != nil {
		return fmt.Errorf("seed %d: %w", seed, err)
	}
	c := cand{seed: seed, feats: make([]int, len(names))}
	for i, f := range names {
		id, ok := s.ids[f]
		if !ok {
			id = len(s.names)
			s.ids[f] = id
			s.names = append(s.names, f)
			s.n, s.sum = append(s.n, 0), append(s.sum, 0)
		}
		c.feats[i] = id
	}
	s.pool = append(s.pool, c)
	if len(s.pool) > s.cfg.Pool {
		s.pool = s.pool[1:]
	}
	return nil
}

// Next picks k seeds to run.
func (s *Search) Next(k int) ([]uint64, error) {
	out := make([]uint64, 0, k)
	for range k {
		// One candidate a pick until there is something to steer by: the
		// picks are then exactly the seeds uniform would run, in order.
		refill := s.cfg.Refill
		if s.picked < s.cfg.Warmup || s.total == 0 {
			refill = 1
		}
		for range refill {
			if err := s.draw(); err != nil {
				return out, err
			}
		}
		// The oldest candidate is what uniform seeds would run: the
		// warm-up's picks, a share of the others, and every pick until
		// some run was rewarded (without a signal, sampling the posteriors
		// would only favour the worlds seen least: no better than
		// uniform, and worse where the failures lie in common worlds).
		i := s.oldestPlain()
		if s.picked >= s.cfg.Warmup && s.total > 0 && s.uniform() >= s.cfg.Explore {
			// The others are the best candidate by the sampled posteriors,
			// among the drawn seeds and, for a system with levers, seeds
			// steered to the favoured features: the search makes the
			// worlds the rewarded runs had instead of waiting for the
			// draws to offer them.
			theta := s.sample()
			for range refill {
				if err := s.drawSteered(theta); err != nil {
					return out, err
				}
			}
			i = s.best(theta)
		}
		c := s.pool[i]
		s.pool = append(s.pool[:i], s.pool[i+1:]...)
		s.pending[c.seed] = c.feats
		s.picked++
		out = append(out, c.seed)
	}
	return out, nil
}

// sample draws each feature's reward rate from its posterior, as its log
// ratio to the mean reward (Thompson sampling).
func (s *Search) sample() []float64 {
	mean := (s.total + 1) / (s.runs + 2)
	const strength = 2 // the prior's weight, in runs, at the mean
	theta := make([]float64, len(s.names))
	for f := range theta {
		a := mean*strength + s.sum[f]
		b := (1-mean)*strength + s.n[f] - s.sum[f]
		theta[f] = math.Log(s.beta(a, b)/mean + 1e-12)
	}
	return theta
}

// oldestPlain is the index of the oldest plain candidate (a steered one
// waits only for best).
func (s *Search) oldestPlain() int {
	for i, c := range s.pool {
		if mask, _ := sim.Steering(c.seed); mask == 0 {
			return i
		}
	}
	return 0
}

// best is the index of the candidate with the highest score by theta.
func (s *Search) best(theta []float64) int {
	bi, bs := 0, math.Inf(-1)
	for i, c := range s.pool {
		score := 0.0
		for _, f := range c.feats {
			if f < len(theta) { // a feature first seen since theta was drawn: at the mean
				score += theta[f]
			}
		}
		if score > bs {
			bi, bs = i, score
		}
	}
	return bi
}

// Observe gives the reward of a picked seed's run, in [0, 1]: 1 for what
// the search is after (a failure, the target reached), less for a run
// that came closer than most.
func (s *Search) Observe(seed uint64, reward float64) {
	feats, ok := s.pending[seed]
	if !ok {
		return
	}
	delete(s.pending, seed)
	reward = min(max(reward, 0), 1)
	s.runs++
	s.total += reward
	for _, f := range feats {
		s.n[f]++
		s.sum[f] += reward
	}
}

// Favoured lists the features whose runs were rewarded most above the
// mean, best first, with their reward rate and runs: what the search
// learned, for its report.
func (s *Search) Favoured(k int) []Feature {
	mean := (s.total + 1) / (s.runs + 2)
	var out []Feature
	for f, name := range s.names {
		if s.n[f] < 3 {
			continue
		}
		rate := (s.sum[f] + mean*2) / (s.n[f] + 2)
		if rate > mean {
			out = append(out, Feature{Name: name, Runs: int(s.n[f]), Rate: rate, Mean: mean})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Rate != out[j].Rate {
			return out[i].Rate > out[j].Rate
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// Feature is one learned world choice.
type Feature struct {
	Name string  `json:"name"`
	Runs int     `json:"runs"`
	Rate float64 `json:"reward_rate"`
	Mean float64 `json:"mean_reward"`
}

// uniform is a float in [0, 1).
func (s *Search) uniform() float64 {
	return float64(s.rng.Uint64n("u", 1<<53)) / (1 << 53)
}

// normal is a standard normal variate (Box-Muller).
func (s *Search) normal() float64 {
	u := max(s.uniform(), 1e-300)
	v := s.uniform()
	return math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*v)
}

// gamma is a Gamma(a, 1) variate (Marsaglia and Tsang).
func (s *Search) gamma(a float64) float64 {
	if a < 1 {
		return s.gamma(a+1) * math.Pow(max(s.uniform(), 1e-300), 1/a)
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := s.normal()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := s.uniform()
		if u < 1-0.0331*x*x*x*x || math.Log(max(u, 1e-300)) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// beta is a Beta(a, b) variate.
func (s *Search) beta(a, b float64) float64 {
	x := s.gamma(a)
	y := s.gamma(b)
	if x+y == 0 {
		return 0.5
	}
	return x / (x + y)
}

// Counts turns a run's value of something (a metric, executions of the
// target code) into a reward that is sharp at the top: the share p of
// earlier non-zero values it beats, to the fourth power (the top tenth
// of runs gets 0.66 and more, the median one 0.06); 0 for zero, and 0.5
// for the first non-zero values (fewer than 8 to compare with).
type Counts struct {
	vals []uint64 // sorted
}

// Reward scores x and remembers it.
func (c *Counts) Reward(x uint64) float64 {
	if x == 0 {
		return 0
	}
	lo := sort.Search(len(c.vals), func(i int) bool { return c.vals[i] >= x })
	hi := sort.Search(len(c.vals), func(i int) bool { return c.vals[i] > x })
	r := 0.5
	if len(c.vals) >= 8 {
		p := (float64(lo) + float64(hi-lo)/2) / float64(len(c.vals))
		r = p * p * p * p
	}
	c.vals = append(c.vals, 0)
	copy(c.vals[hi+1:], c.vals[hi:])
	c.vals[hi] = x
	return r
}

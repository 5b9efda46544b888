package db

// slab hands out zeroed values of T carved from chunks: a run's many small,
// long-lived engine structs (transactions, row versions, chains, index
// lists) are allocated 32 at a time. Nothing is ever handed out twice; a
// chunk lives as long as any of its values.
type slab[T any] struct{ free []T }

const slabChunk = 32

func (s *slab[T]) new() *T {
	if len(s.free) == 0 {
		s.free = make([]T, slabChunk)
	}
	p := &s.free[0]
	s.free = s.free[1:]
	return p
}

// ptrs hands out one-element slices of *T (capacity one: an append
// reallocates, never writes into a neighbour) carved from chunks.
type ptrs[T any] struct{ free []*T }

func (s *ptrs[T]) one(p *T) []*T {
	if len(s.free) == 0 {
		s.free = make([]*T, slabChunk)
	}
	out := s.free[0:1:1]
	s.free = s.free[1:]
	out[0] = p
	return out
}

package push

import "testing"

func TestDeque(t *testing.T) {
	var d deque
	next, want := 0, 0
	// Interleave pushes and pops across many chunk boundaries.
	for round := range 50 {
		for range round * 7 % 150 {
			d.push(item{attempts: int32(next)})
			next++
		}
		for range round * 5 % 120 {
			if d.len() == 0 {
				break
			}
			if got := int(d.front().attempts); got != want {
				t.Fatalf("front = %d, want %d", got, want)
			}
			if got := int(d.pop().attempts); got != want {
				t.Fatalf("pop = %d, want %d", got, want)
			}
			want++
		}
		if d.len() != next-want {
			t.Fatalf("len = %d, want %d", d.len(), next-want)
		}
	}
	n := 0
	d.clear(func(v item) {
		if int(v.attempts) != want+n {
			t.Fatalf("clear gave %d, want %d", v.attempts, want+n)
		}
		n++
	})
	if d.len() != 0 || n != next-want || d.head != nil || d.tail != nil {
		t.Fatalf("after clear: len %d, cleared %d of %d", d.len(), n, next-want)
	}
	d.push(item{attempts: 1})
	if d.pop().attempts != 1 || d.len() != 0 {
		t.Fatal("deque unusable after clear")
	}
}

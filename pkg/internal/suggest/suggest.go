package suggest

import (
	"strings"
	"unicode/utf8"
)

// Distance returns the number of edits between a and b, compared ignoring
// case: the optimal string alignment distance, in which a swap of two
// neighbouring characters counts as one edit.
func Distance(a, b string) int {
	ra, rb := []rune(strings.ToLower(a)), []rune(strings.ToLower(b))
	// Three rows of the dynamic programming table: i-2, i-1 and i.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d = min(d, prev2[j-2]+1)
			}
			cur[j] = d
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// Nearest returns the candidate nearest to name and its distance, the first
// of equally near ones; "" and -1 when there are no candidates.
func Nearest(name string, candidates []string) (string, int) {
	best, dist := "", -1
	for _, c := range candidates {
		if d := Distance(name, c); dist < 0 || d < dist {
			best, dist = c, d
		}
	}
	return best, dist
}

// Close returns the candidate nearest to name when it is near enough to be
// what was meant, else "": at most one edit for every four characters of
// the shorter name, and always at least one. Equal names (ignoring case)
// are not suggestions of each other.
func Close(name string, candidates []string) string {
	best, dist := Nearest(name, candidates)
	if dist <= 0 {
		return ""
	}
	shorter := min(utf8.RuneCountInString(name), utf8.RuneCountInString(best))
	if dist > max(1, shorter/4) {
		return ""
	}
	return best
}

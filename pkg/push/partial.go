package push

import "errors"

// PartialError is implemented by Sender errors of attempts in which the
// destination took the first Accepted() events of the batch, in order,
// before it failed: a destination that takes one event per request, as a
// storage queue does. The engine settles those events as delivered and
// retries only the rest, so nothing is sent twice.
type PartialError interface {
	error
	Accepted() int
}

// acceptedOf returns how many of a failed batch's first n events its
// destination took, by err's PartialError.
func acceptedOf(err error, n int) int {
	if err == nil {
		return 0 // and spares the heap the target errors.As needs
	}
	var pe PartialError
	if !errors.As(err, &pe) {
		return 0
	}
	return min(max(pe.Accepted(), 0), n)
}

package eventgrid_test

import (
	"strconv"
	"testing"
	"unsafe"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Every queued event holds an Event: DataAt sits in HasSubject's padding,
// so the struct is no larger than its strings, body and time need.
func TestEvent_Size(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Skip("the sizes below are a 64-bit platform's")
	}
	if got := unsafe.Sizeof(eventgrid.Event{}); got != 120 {
		t.Errorf("Event is %d bytes, want 120", got)
	}
}

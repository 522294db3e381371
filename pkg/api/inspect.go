package api

import (
	"encoding/json"
	"math"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

// The inspection API (docs/console.md#the-inspection-api): what a
// subscription holds, what it gave up on, history and live streams; the
// operator's actions are in actions.go. Views of the queues copy a bounded snapshot under the queue's lock
// and are encoded here, with no lock held.

// inspectionRoutes maps the inspection API, for a server with a Board. A
// subscription's views are reached through the paths subscriptionView
// rewrites.
func (s *Server) inspectionRoutes(edge echo.MiddlewareFunc) {
	const sub = "/topics/{topic}/eventSubscriptions/{sub}"
	s.handle(http.MethodGet, "/topics/{topic}/events", s.topicTail, edge)
	s.handle(http.MethodGet, "/topics/{topic}/history", s.topicHistory, edge)
	for view, h := range map[string]echo.HandlerFunc{
		"events": s.peek, "failures": s.failures, "deliveries": s.deliveries, "history": s.subHistory,
	} {
		s.handle(http.MethodGet, sub+"/"+view, h, requireView(view), edge)
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			s.handle(m, sub+"/"+view, methodNotAllowed, requireView(view))
		}
	}
	s.actionRoutes(edge)
}

type peekedEvent struct {
	Event         json.RawMessage `json:"event"`
	DeliveryState deliveryState   `json:"deliveryState"`
}

type deliveryState struct {
	Queue           string `json:"queue"`
	Attempts        int    `json:"attempts"`
	MaxAttempts     int    `json:"maxAttempts,omitempty"`
	EnqueuedTime    string `json:"enqueuedTime,omitempty"`
	NextAttemptTime string `json:"nextAttemptTime,omitempty"`
	LastError       string `json:"lastError,omitempty"`
}

// peek answers GET …/eventSubscriptions/{s}/events?top=N: the events the
// subscription holds, oldest first, untouched (docs/console.md#peek):
// {"value":[{"event":…,"deliveryState":…},…],"total":n,"truncated":b},
// written as it is read (jsonlist.go).
func (s *Server) peek(c echo.Context) error {
	top, err := intQuery(c, "top", 100, 1, 1000)
	if err != nil {
		return err
	}
	sub, err := s.resources.Subscription(c.Request().Context(), param(c, "topic"), param(c, "sub"))
	if err != nil {
		return err
	}
	if s.svc.Held == nil {
		return noRoute()
	}
	p, ok := s.svc.Held.Peek(sub, top)
	if !ok {
		return vanished(sub)
	}
	l := startList(c, "value")
	size, truncated := 0, false
	for _, w := range p.Events {
		if size += len(w.Body); size > inspect.MaxPeekBytes {
			truncated = true
			break
		}
		ds := deliveryState{Queue: w.Queue, Attempts: w.Attempts, MaxAttempts: w.MaxAttempts, EnqueuedTime: inspect.FormatTime(w.Enqueued),
			NextAttemptTime: inspect.FormatTime(w.Next), LastError: w.LastError}
		if !l.next() {
			break
		}
		if l.pretty {
			l.writeIndented(peekedEvent{Event: w.Body, DeliveryState: ds})
			continue
		}
		l.writeString(`{"event":`)
		l.writeCompact(w.Body)
		l.writeString(`,"deliveryState":`)
		l.writeJSON(ds)
		l.writeString("}")
	}
	s.logCut(c, l.end(member("total", p.Total), member("truncated", truncated)))
	return nil
}

// failure is an entry of the given-up list: the members before its event,
// whose JSON is written after them (failed).
type failure struct {
	Time           string `json:"time"`
	Outcome        string `json:"outcome"`
	Reason         string `json:"reason"`
	Attempts       int    `json:"attempts"`
	LastError      string `json:"lastError,omitempty"`
	LastStatusCode int    `json:"lastStatusCode,omitempty"`
	EventID        string `json:"eventId,omitempty"`
	EventBytes     int    `json:"eventBytes"`
	RedrivenTime   string `json:"redrivenTime,omitempty"`
}

// failureWithEvent is a failure and its event, indented whole (?pretty).
type failureWithEvent struct {
	failure
	Event json.RawMessage `json:"event,omitempty"`
}

// failures answers GET …/eventSubscriptions/{s}/failures?top=N: the latest
// events the broker gave up on, newest first (docs/console.md#given-up):
// {"value":[{…,"event":…},…],"total":n}, written as it is read
// (jsonlist.go).
func (s *Server) failures(c echo.Context) error {
	top, err := intQuery(c, "top", 100, 1, 1000)
	if err != nil {
		return err
	}
	rec, err := s.subRecord(c)
	if err != nil {
		return err
	}
	fs, total := rec.Failures(top)
	l := startList(c, "value")
	for _, f := range fs {
		outcome := inspect.OutcomeDropped
		if f.DeadLettered {
			outcome = inspect.OutcomeDeadLettered
		}
		head := failure{
			Time: inspect.FormatTime(f.Time), Outcome: outcome, Reason: f.Reason, Attempts: f.Attempts,
			LastError: f.LastError, LastStatusCode: f.LastStatus, EventID: f.EventID, EventBytes: f.EventBytes,
			RedrivenTime: inspect.FormatTime(f.Redriven),
		}
		if !l.next() {
			break
		}
		if l.pretty {
			l.writeIndented(failureWithEvent{head, f.Body})
			continue
		}
		if len(f.Body) == 0 {
			l.writeJSON(head)
			continue
		}
		b, err := json.Marshal(head)
		if err != nil {
			return err
		}
		l.writeBytes(b[:len(b)-1]) // without its closing brace
		l.writeString(`,"event":`)
		l.writeCompact(f.Body)
		l.writeString("}")
	}
	s.logCut(c, l.end(member("total", total)))
	return nil
}

// logCut logs, at debug level, an inspection answer the client did not
// read whole.
func (s *Server) logCut(c echo.Context, err error) {
	if err != nil {
		s.log.Debug().Err(err).Str("path", c.Request().URL.Path).Msg("an inspection answer was cut off before the client read it")
	}
}

type history[S any] struct {
	Start           string `json:"start"`
	IntervalSeconds int    `json:"intervalSeconds"`
	Series          S      `json:"series"`
}

type topicSeries struct {
	Received  []uint32 `json:"received"`
	Unmatched []uint32 `json:"unmatched"`
}

type subSeries struct {
	Delivered    []uint32   `json:"delivered"`
	Failed       []uint32   `json:"failed"`
	GivenUp      []uint32   `json:"givenUp"`
	Queued       []uint32   `json:"queued"`
	LatencyP50Ms []*float64 `json:"latencyP50Ms"`
	LatencyP99Ms []*float64 `json:"latencyP99Ms"`
}

// topicHistory answers GET /topics/{t}/history (docs/console.md#history).
func (s *Server) topicHistory(c echo.Context) error {
	t, err := s.resources.Topic(c.Request().Context(), param(c, "topic"))
	if err != nil {
		return err
	}
	rec := s.svc.Board.Topic(t.Name)
	if rec == nil {
		return eventgrid.Errorf(eventgrid.ETopicNotFound, "Topic %q does not exist.", t.Name)
	}
	h := rec.History()
	return c.JSON(http.StatusOK, history[topicSeries]{Start: inspect.FormatTime(h.Start), IntervalSeconds: int(inspect.Interval.Seconds()),
		Series: topicSeries{Received: h.Received[:], Unmatched: h.Unmatched[:]}})
}

// subHistory answers GET …/eventSubscriptions/{s}/history.
func (s *Server) subHistory(c echo.Context) error {
	rec, err := s.subRecord(c)
	if err != nil {
		return err
	}
	h := rec.History()
	return c.JSON(http.StatusOK, history[subSeries]{Start: inspect.FormatTime(h.Start), IntervalSeconds: int(inspect.Interval.Seconds()),
		Series: subSeries{Delivered: h.Delivered[:], Failed: h.Failed[:], GivenUp: h.GivenUp[:], Queued: h.Queued[:],
			LatencyP50Ms: orNull(h.LatencyP50Ms[:]), LatencyP99Ms: orNull(h.LatencyP99Ms[:])}})
}

// orNull turns NaN, no value, into null.
func orNull(vs []float64) []*float64 {
	out := make([]*float64, len(vs))
	for i := range vs {
		if !math.IsNaN(vs[i]) {
			out[i] = &vs[i]
		}
	}
	return out
}

// subRecord returns the record of the subscription of a view's path.
func (s *Server) subRecord(c echo.Context) (*inspect.Sub, error) {
	sub, err := s.resources.Subscription(c.Request().Context(), param(c, "topic"), param(c, "sub"))
	if err != nil {
		return nil, err
	}
	rec := s.svc.Board.Subscription(sub.UID)
	if rec == nil {
		return nil, vanished(sub)
	}
	return rec, nil
}

// topicResponse is a topic's response, with its statistics when the broker
// keeps them.
func (s *Server) topicResponse(t eventgrid.Topic, base string) resource.Topic {
	r := resource.NewTopic(t, s.opts.IDPrefix, base)
	if s.svc.Board != nil {
		if rec := s.svc.Board.Topic(t.Name); rec != nil {
			st := rec.Stats()
			r.Properties.Stats = &resource.TopicStats{Received: st.Received, Unmatched: st.Unmatched,
				PublishRequestsRefused: st.PublishRequestsRefused, LastReceivedTime: inspect.FormatTime(st.LastReceived)}
		}
	}
	return r
}

func noRoute() error { return eventgrid.Errorf(eventgrid.ENotFound, "No API matches this path.") }

// vanished is the answer about a subscription deleted while it was looked
// at.
func vanished(sub *eventgrid.EventSubscription) error {
	return eventgrid.Errorf(eventgrid.ESubscriptionMissing, "Event subscription %q does not exist in topic %q.", sub.Name, sub.Topic)
}

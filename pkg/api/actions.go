package api

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// The operator's actions on a subscription (docs/api.md#actions): retry
// now, redrive, pause, resume and purge, for push and queue subscriptions
// alike. Each takes the manage permission (permissions.go), is refused on
// a declared subscription as PUT is, answers what it did, logs one line
// and is counted (ActionMetrics).

// ActionMetrics is what Metrics implements when it counts the operator's
// actions: action is taken on sub, moving events events (0 for pause and
// resume). It must not block.
type ActionMetrics interface {
	Acted(sub *eventgrid.EventSubscription, action string, events int)
}

// The actions' names, as routes, logs and metrics name them.
const (
	actionRetryNow = "retryNow"
	actionRedrive  = "redrive"
	actionPause    = "pause"
	actionResume   = "resume"
	actionPurge    = "purge"
)

// actionRoutes maps the operator's actions, for a server with Held.
func (s *Server) actionRoutes(edge echo.MiddlewareFunc) {
	const sub = "/topics/{topic}/eventSubscriptions/{sub}"
	s.handle(http.MethodPost, sub+":"+actionRetryNow, s.retryNow, requireAction, edge)
	s.handle(http.MethodPost, sub+":"+actionRedrive, s.redrive, requireAction, edge)
	s.handle(http.MethodPost, sub+":"+actionPause, s.pause(true), requireAction, edge)
	s.handle(http.MethodPost, sub+":"+actionResume, s.pause(false), requireAction, edge)
	s.handle(http.MethodPost, sub+":"+actionPurge, s.purge, requireAction, edge)
}

// actionSubscription returns the subscription an action names, refusing a
// declared one as PUT does: its declaration alone changes it.
func (s *Server) actionSubscription(c echo.Context) (*eventgrid.EventSubscription, error) {
	sub, err := s.resources.Subscription(c.Request().Context(), param(c, "topic"), param(c, "sub"))
	if err != nil {
		return nil, err
	}
	if sub.Owner.Declared() {
		return nil, eventgrid.OwnerConflict(fmt.Sprintf("Event subscription %q of topic %q", sub.Name, sub.Topic), sub.Owner, eventgrid.Owner{})
	}
	if s.svc.Held == nil {
		return nil, noRoute()
	}
	return sub, nil
}

// acted counts an action that events moved and starts its log line, which
// the caller completes and sends.
func (s *Server) acted(sub *eventgrid.EventSubscription, action string, events int) *zerolog.Event {
	if m, ok := s.svc.Metrics.(ActionMetrics); ok {
		m.Acted(sub, action, events)
	}
	return s.log.Info().Str("topic", sub.Topic).Str("subscription", sub.Name).Str("action", action)
}

// retryNow answers POST …/eventSubscriptions/{s}:retryNow
// (docs/console.md#retry-now): {"moved": n, "atLastAttempt": k}.
func (s *Server) retryNow(c echo.Context) error {
	sub, err := s.actionSubscription(c)
	if err != nil {
		return err
	}
	moved, atLast, ok := s.svc.Held.RetryNow(sub)
	if !ok {
		return vanished(sub)
	}
	s.acted(sub, actionRetryNow, moved).Int("moved", moved).Int("atLastAttempt", atLast).
		Msg("retry now: events waiting to be retried made ready")
	return c.JSON(http.StatusOK, retryNowAnswer{Moved: moved, AtLastAttempt: atLast})
}

// retryNowAnswer is the answer of :retryNow: the events made ready, and
// how many of them were at their last attempt.
type retryNowAnswer struct {
	Moved         int `json:"moved"`
	AtLastAttempt int `json:"atLastAttempt"`
}

// pause answers POST …/eventSubscriptions/{s}:pause (paused) and :resume
// with the subscription, as GET does
// (docs/delivery.md#pause-and-resume).
func (s *Server) pause(paused bool) echo.HandlerFunc {
	action, msg := actionResume, "event subscription resumed"
	if paused {
		action, msg = actionPause, "event subscription paused"
	}
	return func(c echo.Context) error {
		sub, err := s.actionSubscription(c)
		if err != nil {
			return err
		}
		since, ok := s.svc.Held.Pause(sub, paused)
		if !ok {
			return vanished(sub)
		}
		l := s.acted(sub, action, 0)
		if paused {
			l = l.Str("pausedSince", inspect.FormatTime(since))
		}
		l.Msg(msg)
		return c.JSON(http.StatusOK, s.subscription(sub))
	}
}

// purge answers POST …/eventSubscriptions/{s}:purge: {"purged": n}
// (docs/delivery.md#purge).
func (s *Server) purge(c echo.Context) error {
	sub, err := s.actionSubscription(c)
	if err != nil {
		return err
	}
	n, ok := s.svc.Held.Purge(sub)
	if !ok {
		return vanished(sub)
	}
	s.acted(sub, actionPurge, n).Int("purged", n).Msg("event subscription purged: its waiting events were dropped")
	return c.JSON(http.StatusOK, map[string]int{"purged": n})
}

// notMoved is an event a redrive did not move, and why.
type notMoved struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// redriveAnswer is the answer of :redrive.
type redriveAnswer struct {
	Moved    int        `json:"moved"`
	NotMoved []notMoved `json:"notMoved"`
}

// redrive answers POST …/eventSubscriptions/{s}:redrive
// (docs/delivery.md#redrive): the events of the given-up list that the
// body chooses go back on the subscription, and on it alone, as if newly
// accepted, within the budget as a publish is: 413 when they could never
// fit, 503 with Retry-After when they do not fit now, and then none moves.
// {"moved": n, "notMoved": [{"id": "…", "reason": "…"}]}.
func (s *Server) redrive(c echo.Context) error {
	sub, err := s.actionSubscription(c)
	if err != nil {
		return err
	}
	body, err := s.readManagementBody(c)
	if err != nil {
		return err
	}
	f, err := decodeRedrive(body)
	if err != nil {
		return err
	}
	if s.svc.Board == nil {
		return noRoute()
	}
	rec := s.svc.Board.Subscription(sub.UID)
	if rec == nil {
		return vanished(sub)
	}
	picked, left := rec.ClaimRedrive(f, time.Now())
	bodies := make([][]byte, len(picked))
	for i := range picked {
		bodies[i] = picked[i].Body
	}
	if err := s.svc.Held.Redrive(c.Request().Context(), sub, bodies); err != nil {
		rec.UnclaimRedrive(picked)
		if eventgrid.ErrorCode(err) == eventgrid.EQueueFull {
			return s.queueFull(err)
		}
		return err
	}
	a := redriveAnswer{Moved: len(picked), NotMoved: make([]notMoved, len(left))}
	for i, l := range left {
		a.NotMoved[i] = notMoved(l)
	}
	s.acted(sub, actionRedrive, a.Moved).Int("moved", a.Moved).Int("notMoved", len(a.NotMoved)).
		Msg("given-up events redriven to their subscription")
	return c.JSON(http.StatusOK, a)
}

// redriveBody says what :redrive takes, for its refusals.
const redriveBody = `send {} for every event given up on, {"ids": ["…"]} or {"givenUpSince": "2026-01-01T10:00:00Z"}`

// decodeRedrive reads the body of :redrive: empty or {} (every event
// given up on), {"ids": ["…", …]} or {"givenUpSince": "RFC 3339 time"};
// anything else is 400 naming the member at fault.
func decodeRedrive(body []byte) (inspect.RedriveFilter, error) {
	var f inspect.RedriveFilter
	body = rawjson.TrimSpace(body)
	if len(body) == 0 {
		return f, nil
	}
	if err := checkStrict(body, redriveBody); err != nil {
		return f, err
	}
	if rawjson.KindOf(body) != rawjson.Object {
		return f, eventgrid.Errorf(eventgrid.EBadRequest, "The request body must be a JSON object; %s.", redriveBody)
	}
	var err error
	seen := 0
	rawjson.ObjectEach(body, func(key, value []byte) bool {
		seen++
		switch name := string(key); name {
		case "ids":
			f.IDs, err = redriveIDs(value)
		case "givenUpSince":
			f.Since, err = redriveSince(value)
		default:
			err = eventgrid.Errorf(eventgrid.EUnknownMember, "%s is not a member of :redrive's body; its members are ids and givenUpSince (%s).", strconv.Quote(name), redriveBody)
		}
		return err == nil
	})
	if err == nil && f.IDs != nil && !f.Since.IsZero() {
		err = eventgrid.Errorf(eventgrid.EBadRequest, "The request body gives both ids and givenUpSince; give one of them, or neither to redrive every event given up on.")
	}
	return f, err
}

// redriveIDs reads :redrive's ids: a non-empty array of strings.
func redriveIDs(v []byte) ([]string, error) {
	bad := eventgrid.Errorf(eventgrid.EBadRequest, "ids must be a JSON array of event ids (strings), such as [\"e1\", \"e2\"].")
	if rawjson.KindOf(v) != rawjson.Array {
		return nil, bad
	}
	ids := []string{}
	ok := true
	rawjson.ArrayEach(v, func(_ int, elem []byte) bool {
		id, isStr := rawjson.Unquote(elem)
		ok = isStr
		ids = append(ids, id)
		return ok
	})
	switch {
	case !ok:
		return nil, bad
	case len(ids) == 0:
		return nil, eventgrid.Errorf(eventgrid.EBadRequest, "ids holds no event id; name at least one, or send {} to redrive every event given up on.")
	}
	return ids, nil
}

// redriveSince reads :redrive's givenUpSince: an RFC 3339 time.
func redriveSince(v []byte) (time.Time, error) {
	text, ok := rawjson.Unquote(v)
	t, err := time.Parse(time.RFC3339Nano, text)
	if !ok || err != nil || t.IsZero() {
		return time.Time{}, eventgrid.Errorf(eventgrid.EBadRequest, "givenUpSince must be an RFC 3339 time as a JSON string, such as \"2026-01-01T10:00:00Z\"; got %s.", v)
	}
	return t, nil
}

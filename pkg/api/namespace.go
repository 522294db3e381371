package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/pull"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// The api-versions of the Event Grid namespace data plane: publish,
// receive and the settlements. renewLock came with 2024-06-01.
var (
	namespaceAPIVersions = []string{"2023-11-01", "2024-06-01"}
	renewAPIVersions     = []string{"2024-06-01"}
)

// namespaceActions are the operations written after a literal ':' at the
// end of a namespace path, by their lower-cased names.
var namespaceActions = map[string]string{
	"publish":     "publish",
	"receive":     "receive",
	"acknowledge": "acknowledge",
	"release":     "release",
	"reject":      "reject",
	"renewlock":   "renewLock",
}

// splitAction rewrites "/topics/{t}:publish" and
// "/topics/{t}/eventSubscriptions/{s}:receive" (and the other actions) to
// "/topics/$publish/{t}" and "/topics/{t}/eventSubscriptions/$receive/{s}",
// and notes that it did: echo's router cannot have a path parameter
// followed by a literal in one segment (nor route an escaped ':'
// reliably), so the action becomes a segment of its own. It goes before the
// name, so that the name stays the last segment of its routes. Topic and
// subscription names cannot hold a ':', so the last one starts the action.
func splitAction(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u := c.Request().URL
		if strings.HasPrefix(u.Path, "/topics/") {
			if i := strings.LastIndexByte(u.Path, ':'); i > 0 && u.Path[i-1] != '/' && !strings.Contains(u.Path[i:], "/") {
				if action, ok := namespaceActions[strings.ToLower(u.Path[i+1:])]; ok {
					j := strings.LastIndexByte(u.Path[:i], '/')
					u.Path = u.Path[:j] + "/$" + action + u.Path[j:i]
					u.RawPath = ""
					c.Set(actionKey, action)
				}
			}
		}
		return next(c)
	}
}

// actionKey marks, in the echo context, a request whose path splitAction
// rewrote.
const actionKey = "edgegrid.namespaceAction"

// requireAction answers 404 to a request that names a rewritten path
// itself: "$publish" is no path of the API.
func requireAction(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Get(actionKey) == nil {
			return eventgrid.Errorf(eventgrid.ENotFound, "No API matches this path.")
		}
		return next(c)
	}
}

// namespaceRoutes maps the Event Grid namespace data plane; see
// docs/pull-delivery.md.
func (s *Server) namespaceRoutes(auth echo.MiddlewareFunc) {
	e := s.echo
	e.Pre(splitAction)
	ns := requireAPIVersion(namespaceAPIVersions)
	const subs = "/topics/:topic/eventSubscriptions/"
	e.POST("/topics/$publish/:topic", s.namespacePublish, auth, requireAction, ns)
	e.POST(subs+"$receive/:sub", s.receive, auth, requireAction, ns)
	e.POST(subs+"$acknowledge/:sub", s.settle(pull.SettleAcknowledge), auth, requireAction, ns)
	e.POST(subs+"$release/:sub", s.settle(pull.SettleRelease), auth, requireAction, ns)
	e.POST(subs+"$reject/:sub", s.settle(pull.SettleReject), auth, requireAction, ns)
	e.POST(subs+"$renewLock/:sub", s.settle(pull.SettleRenewLock), auth, requireAction, requireAPIVersion(renewAPIVersions))
}

// namespacePublish takes CloudEvents: one, a batch, or one in binary mode.
// It answers {} as Event Grid namespaces do.
func (s *Server) namespacePublish(c echo.Context) error {
	start := time.Now()
	topic, routes, err := s.registry.Routes(param(c, "topic"))
	if err != nil {
		return err
	}
	if topic.InputSchema != eventgrid.CloudEventSchemaV1_0 {
		return eventgrid.Errorf(eventgrid.EInvalidSchema, "Topic %q takes %s events; :publish takes CloudEvents only, so it needs a topic whose inputSchema is %s.", topic.Name, topic.InputSchema, eventgrid.CloudEventSchemaV1_0)
	}
	if err := s.acceptMeasured(c, topic, routes, false, start); err != nil {
		return err
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, []byte("{}"))
}

// queueSubscription returns the subscription of the request's path, which
// must be a queue subscription.
func (s *Server) queueSubscription(c echo.Context) (*eventgrid.EventSubscription, error) {
	sub, err := s.registry.Subscription(c.Request().Context(), param(c, "topic"), param(c, "sub"))
	if err != nil {
		return nil, err
	}
	if !sub.IsQueue() {
		return nil, eventgrid.Errorf(eventgrid.EBadRequest, "Event subscription %q of topic %q delivers by push; receive, acknowledge, release, reject and renewLock apply to subscriptions whose deliveryConfiguration.deliveryMode is Queue.", sub.Name, sub.Topic)
	}
	if s.opts.Queues == nil {
		return nil, eventgrid.Errorf(eventgrid.EUnavailable, "Queue subscriptions are not available.")
	}
	return sub, nil
}

// intQuery reads an optional integer query parameter within [lo, hi].
func intQuery(c echo.Context, name string, def, lo, hi int) (int, error) {
	v := c.QueryParam(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < lo || n > hi {
		return 0, eventgrid.Errorf(eventgrid.EBadRequest, "The query parameter %s must be an integer between %d and %d; got %q.", name, lo, hi, v)
	}
	return n, nil
}

func (s *Server) receive(c echo.Context) error {
	maxEvents, err := intQuery(c, "maxEvents", 1, 1, 100)
	if err != nil {
		return err
	}
	waitSeconds, err := intQuery(c, "maxWaitTime", 60, 10, 120)
	if err != nil {
		return err
	}
	sub, err := s.queueSubscription(c)
	if err != nil {
		return err
	}
	wait := time.Duration(waitSeconds) * time.Second
	// A long poll outlasts the server's request timeout: this request gets
	// the wait on top of it.
	rc := http.NewResponseController(c.Response())
	deadline := time.Now().Add(wait + s.opts.RequestTimeout)
	_ = rc.SetReadDeadline(deadline)
	_ = rc.SetWriteDeadline(deadline)
	got, err := s.opts.Queues.Receive(c.Request().Context(), sub, maxEvents, wait)
	if err != nil {
		return err
	}
	out := make([]byte, 0, 64+len(got)*128)
	out = append(out, `{"value":[`...)
	for i, r := range got {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"brokerProperties":{"lockToken":`...)
		out = rawjson.AppendString(out, r.LockToken)
		out = append(out, `,"deliveryCount":`...)
		out = strconv.AppendInt(out, int64(r.DeliveryCount), 10)
		out = append(out, `},"event":`...)
		out = append(out, r.Body...)
		out = append(out, '}')
	}
	out = append(out, "]}"...)
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, out)
}

// settleRequest is the body of every settlement.
type settleRequest struct {
	LockTokens []string `json:"lockTokens"`
}

// settleResult is the answer of every settlement.
type settleResult struct {
	SucceededLockTokens []string        `json:"succeededLockTokens"`
	FailedLockTokens    []failedLockTok `json:"failedLockTokens"`
}

type failedLockTok struct {
	LockToken string      `json:"lockToken"`
	Error     failedError `json:"error"`
}

type failedError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// maxLockTokens bounds the tokens of one settlement.
const maxLockTokens = 1000

func (s *Server) settle(kind string) echo.HandlerFunc {
	return func(c echo.Context) error {
		var delay time.Duration
		if kind == pull.SettleRelease {
			d, err := releaseDelay(c)
			if err != nil {
				return err
			}
			delay = d
		}
		sub, err := s.queueSubscription(c)
		if err != nil {
			return err
		}
		body, err := s.readManagementBody(c)
		if err != nil {
			return err
		}
		var req settleRequest
		if err := json.Unmarshal(body, &req); err != nil {
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) {
				return eventgrid.Errorf(eventgrid.EBadRequest, "lockTokens must be a JSON array of strings.")
			}
			return eventgrid.Errorf(eventgrid.EInvalidJSON, "The request body is not valid JSON; send {\"lockTokens\": [\"…\"]}.")
		}
		if len(req.LockTokens) == 0 {
			return eventgrid.Errorf(eventgrid.EBadRequest, "lockTokens is required and must hold at least one lock token.")
		}
		if len(req.LockTokens) > maxLockTokens {
			return eventgrid.Errorf(eventgrid.EBadRequest, "lockTokens holds %d lock tokens; at most %d are accepted.", len(req.LockTokens), maxLockTokens)
		}
		var res pull.Result
		switch kind {
		case pull.SettleAcknowledge:
			res, err = s.opts.Queues.Acknowledge(sub, req.LockTokens)
		case pull.SettleRelease:
			res, err = s.opts.Queues.Release(sub, req.LockTokens, delay)
		case pull.SettleReject:
			res, err = s.opts.Queues.Reject(sub, req.LockTokens)
		default:
			res, err = s.opts.Queues.RenewLocks(sub, req.LockTokens)
		}
		if err != nil {
			return err
		}
		out := settleResult{SucceededLockTokens: res.Succeeded, FailedLockTokens: make([]failedLockTok, 0, len(res.Failed))}
		if out.SucceededLockTokens == nil {
			out.SucceededLockTokens = []string{}
		}
		for _, f := range res.Failed {
			out.FailedLockTokens = append(out.FailedLockTokens, failedLockTok{LockToken: f.LockToken, Error: failedError{Code: f.Code, Message: f.Message}})
		}
		status := http.StatusOK
		if len(res.Succeeded) == 0 {
			status = http.StatusBadRequest
		}
		return c.JSON(status, out)
	}
}

// releaseDelay reads releaseDelayInSeconds, one of pull.ReleaseDelays.
func releaseDelay(c echo.Context) (time.Duration, error) {
	v := strings.TrimSpace(c.QueryParam("releaseDelayInSeconds"))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err == nil {
		for _, d := range pull.ReleaseDelays {
			if n == d {
				return time.Duration(n) * time.Second, nil
			}
		}
	}
	return 0, eventgrid.Errorf(eventgrid.EBadRequest, "The query parameter releaseDelayInSeconds must be one of 0, 10, 60, 600 and 3600; got %q.", v)
}

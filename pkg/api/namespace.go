package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/queue"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// The api-versions of the Event Grid namespace data plane: publish,
// receive and the settlements. renewLock came with 2024-06-01.
var (
	namespaceAPIVersions = []string{"2023-11-01", "2024-06-01"}
	renewAPIVersions     = []string{"2024-06-01"}
)

// resourceKind is what a path names: a topic or an event subscription.
type resourceKind int

const (
	noResource resourceKind = iota
	topicResource
	subscriptionResource
)

// actions are the operations written after a literal ':' at the end of a
// resource's path, by the kind of resource: the namespace data plane's and
// the operator's (docs/api.md#actions). The answer to an unknown action
// lists them from here, so a new action is one entry here and its route.
var actions = map[resourceKind][]string{
	topicResource: {"publish"},
	subscriptionResource: {"receive", "acknowledge", "release", "reject", "renewLock",
		actionRetryNow, actionRedrive, actionPause, actionResume, actionPurge},
}

// resourceNames name the kinds of resource in messages.
var resourceNames = map[resourceKind]string{topicResource: "a topic", subscriptionResource: "an event subscription"}

// resourceOf returns the kind of resource the path p names:
// /topics/{t} or /topics/{t}/eventSubscriptions/{s}. A segment starting
// with '$' is no name but a path subscriptionView rewrote
// (…/eventSubscriptions/$getFullUrl for …/{s}/getFullUrl).
//
// It runs before the routes of every request under /topics/, publishes
// included, and so cuts the path in place rather than split it.
func resourceOf(p string) resourceKind {
	name := func(s string) bool { return s != "" && s[0] != '$' }
	rest, ok := strings.CutPrefix(p, "/")
	seg, rest, more := strings.Cut(rest, "/")
	if !ok || !more || !strings.EqualFold(seg, "topics") {
		return noResource
	}
	topic, rest, more := strings.Cut(rest, "/")
	switch {
	case !name(topic):
		return noResource
	case !more:
		return topicResource
	}
	seg, sub, more := strings.Cut(rest, "/")
	if !more || !strings.EqualFold(seg, "eventSubscriptions") || !name(sub) || strings.Contains(sub, "/") {
		return noResource
	}
	return subscriptionResource
}

// actionOf returns the action of kind named name, ignoring case, as it is
// spelled.
func actionOf(kind resourceKind, name string) (string, bool) {
	for _, a := range actions[kind] {
		if strings.EqualFold(a, name) {
			return a, true
		}
	}
	return "", false
}

// actionList lists kind's actions for a message: ":publish", or
// ":receive, :acknowledge … and :retryNow".
func actionList(kind resourceKind) string {
	as := actions[kind]
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = ":" + a
	}
	if len(out) == 1 {
		return out[0]
	}
	return strings.Join(out[:len(out)-1], ", ") + " and " + out[len(out)-1]
}

// splitAction rewrites "/topics/{t}:publish" and
// "/topics/{t}/eventSubscriptions/{s}:receive" (and the other actions) to
// "/topics/$publish/{t}" and "/topics/{t}/eventSubscriptions/$receive/{s}",
// and notes that it did: echo's router cannot have a path parameter
// followed by a literal in one segment (nor route an escaped ':'
// reliably), so the action becomes a segment of its own. It goes before the
// name, so that the name stays the last segment of its routes. Topic and
// subscription names cannot hold a ':', so the last one starts the action.
// Every action takes POST: another method gets 405 here, before a route
// could see (and name) the rewritten path. A POST of an action the
// resource does not have gets 400 UnknownAction listing those it has, and
// a POST that writes an action as a path segment
// (…/{s}/retryNow) gets 404 saying to write it after a colon.
func splitAction(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u := c.Request().URL
		if !strings.HasPrefix(u.Path, "/topics/") {
			return next(c)
		}
		post := c.Request().Method == http.MethodPost
		i := strings.LastIndexByte(u.Path, ':')
		if i <= 0 || u.Path[i-1] == '/' || strings.Contains(u.Path[i:], "/") {
			if j := strings.LastIndexByte(u.Path, '/'); post && j > 0 {
				if kind := resourceOf(u.Path[:j]); kind != noResource {
					if action, ok := actionOf(kind, u.Path[j+1:]); ok {
						return eventgrid.Errorf(eventgrid.ENotFound, "No API matches POST %s: %s is an action, written after a colon: POST %s:%s.", u.Path, action, u.Path[:j], action)
					}
				}
			}
			return next(c)
		}
		kind := resourceOf(u.Path[:i])
		action, ok := actionOf(kind, u.Path[i+1:])
		switch {
		case !ok && post && kind != noResource:
			return eventgrid.Errorf(eventgrid.EUnknownAction, "%q is not an action of %s; its actions are %s.", ":"+u.Path[i+1:], resourceNames[kind], actionList(kind))
		case !ok:
			return next(c)
		case !post:
			c.Response().Header().Set(echo.HeaderAllow, http.MethodPost)
			return eventgrid.Errorf(eventgrid.EMethodNotAllowed, ":%s takes POST only.", action)
		}
		j := strings.LastIndexByte(u.Path[:i], '/')
		u.Path = u.Path[:j] + "/$" + action + u.Path[j:i]
		u.RawPath = ""
		c.Set(actionKey, action)
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
func (s *Server) namespaceRoutes() {
	s.echo.Pre(splitAction)
	ns := requireAPIVersion(namespaceAPIVersions)
	const sub = "/topics/{topic}/eventSubscriptions/{sub}"
	s.handle(http.MethodPost, "/topics/{topic}:publish", s.namespacePublish, requireAction, ns)
	s.handle(http.MethodPost, sub+":receive", s.receive, requireAction, ns)
	s.handle(http.MethodPost, sub+":acknowledge", s.settle(queue.SettleAcknowledge), requireAction, ns)
	s.handle(http.MethodPost, sub+":release", s.settle(queue.SettleRelease), requireAction, ns)
	s.handle(http.MethodPost, sub+":reject", s.settle(queue.SettleReject), requireAction, ns)
	s.handle(http.MethodPost, sub+":renewLock", s.settle(queue.SettleRenewLock), requireAction, requireAPIVersion(renewAPIVersions))
}

// namespacePublish takes CloudEvents: one, a batch, or one in binary mode.
// It answers {} as Event Grid namespaces do.
func (s *Server) namespacePublish(c echo.Context) error {
	start := time.Now()
	topic, subs, err := s.publisher.Topic(param(c, "topic"))
	if err != nil {
		return err
	}
	if topic.InputSchema != eventgrid.CloudEventSchemaV1_0 {
		return eventgrid.Errorf(eventgrid.EInvalidSchema, "Topic %q takes %s events; :publish takes CloudEvents only, so it needs a topic whose inputSchema is %s.", topic.Name, topic.InputSchema, eventgrid.CloudEventSchemaV1_0)
	}
	if err := s.acceptMeasured(c, topic, subs, namespaceBatch, start); err != nil {
		return err
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, []byte("{}"))
}

// queueSubscription returns the subscription of the request's path, which
// must be a queue subscription.
func (s *Server) queueSubscription(c echo.Context) (*eventgrid.EventSubscription, error) {
	sub, err := s.resources.Subscription(c.Request().Context(), param(c, "topic"), param(c, "sub"))
	if err != nil {
		return nil, err
	}
	if !sub.IsQueue() {
		return nil, eventgrid.Errorf(eventgrid.EBadRequest, "Event subscription %q of topic %q delivers by push; receive, acknowledge, release, reject and renewLock apply to subscriptions whose deliveryConfiguration.deliveryMode is Queue.", sub.Name, sub.Topic)
	}
	if s.svc.Queues == nil {
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
		if kind == queue.SettleRelease {
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
		tokens, err := decodeLockTokens(body)
		if err != nil {
			return err
		}
		var res queue.Result
		switch kind {
		case queue.SettleAcknowledge:
			res, err = s.svc.Queues.Acknowledge(sub, tokens)
		case queue.SettleRelease:
			res, err = s.svc.Queues.Release(sub, tokens, delay)
		case queue.SettleReject:
			res, err = s.svc.Queues.Reject(sub, tokens)
		default:
			res, err = s.svc.Queues.RenewLocks(sub, tokens)
		}
		if err != nil {
			return err
		}
		// 200 whatever the tokens' fates, as Azure answers: each token's
		// outcome is in the lists.
		return writeSettled(c, res)
	}
}

// decodeLockTokens reads a settlement's body, {"lockTokens": ["…"]}: 400
// naming the field for anything else, a member named twice included.
func decodeLockTokens(body []byte) ([]string, error) {
	if tokens, ok := plainLockTokens(body); ok {
		return tokens, nil
	}
	if err := checkStrict(body, `send {"lockTokens": ["…"]}`); err != nil {
		return nil, err
	}
	if rawjson.KindOf(body) != rawjson.Object {
		return nil, eventgrid.Errorf(eventgrid.EBadRequest, "The request body must be a JSON object: {\"lockTokens\": [\"…\"]}.")
	}
	tokens, ok := lockTokens(body)
	if !ok {
		return nil, eventgrid.Errorf(eventgrid.EBadRequest, "lockTokens must be a JSON array of strings.")
	}
	if len(tokens) == 0 {
		return nil, eventgrid.Errorf(eventgrid.EBadRequest, "lockTokens is required and must hold at least one lock token.")
	}
	if len(tokens) > maxLockTokens {
		return nil, eventgrid.Errorf(eventgrid.EBadRequest, "lockTokens holds %d lock tokens; at most %d are accepted.", len(tokens), maxLockTokens)
	}
	return tokens, nil
}

// checkStrict returns nil for a body of valid JSON that names no member
// twice in one object, and otherwise the error that says what is wrong and
// where, ending with hint (what to send).
func checkStrict(body []byte, hint string) error {
	_, err := rawjson.ValidStrict(body)
	if err == nil {
		return nil
	}
	var se *rawjson.StrictError
	switch {
	case errors.As(err, &se) && se.Kind == rawjson.DuplicateName:
		return eventgrid.Errorf(eventgrid.EBadRequest, "The request body names %s more than once; %s.", strconv.Quote(se.Path), hint)
	case errors.As(err, &se):
		return eventgrid.Errorf(eventgrid.EInvalidJSON, "The request body is not valid: %v; %s.", err, hint)
	}
	if le := rawjson.Locate(body); le != nil {
		return eventgrid.Errorf(eventgrid.EInvalidJSON, "The request body is not valid JSON: %s; %s.", le, hint)
	}
	return eventgrid.Errorf(eventgrid.EInvalidJSON, "The request body is not valid JSON; %s.", hint)
}

// plainLockTokens reads a settlement's body of the usual form, the one
// every client sends: {"lockTokens": ["…", …]}, one member, spelt so, with
// at most maxLockTokens tokens of URL-safe base64 letters (as every lock
// token this broker makes), whitespace between the parts. ok is false for
// anything else, which decodeLockTokens then reads the long way: a body
// of this form is valid JSON, so the strict validation and the member's
// lookup would find what the scan does. The tokens are cut from one copy
// of the body.
func plainLockTokens(body []byte) (tokens []string, ok bool) {
	const member = `"lockTokens"`
	i := skipJSONSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, false
	}
	i = skipJSONSpace(body, i+1)
	if !bytes.HasPrefix(body[i:], []byte(member)) {
		return nil, false
	}
	i = skipJSONSpace(body, i+len(member))
	if i >= len(body) || body[i] != ':' {
		return nil, false
	}
	i = skipJSONSpace(body, i+1)
	if i >= len(body) || body[i] != '[' {
		return nil, false
	}
	var text string
	for {
		i = skipJSONSpace(body, i+1) // past '[' or ','
		if i >= len(body) || body[i] != '"' {
			return nil, false // an empty array, or not a string: the long way says which
		}
		end := i + 1
		for end < len(body) && tokenLetters[body[end]] {
			end++
		}
		if end == i+1 || end >= len(body) || body[end] != '"' || len(tokens) == maxLockTokens {
			return nil, false
		}
		if text == "" {
			text = string(body)
			tokens = make([]string, 0, min(100, maxLockTokens))
		}
		tokens = append(tokens, text[i+1:end])
		i = skipJSONSpace(body, end+1)
		if i < len(body) && body[i] == ',' {
			continue
		}
		if i >= len(body) || body[i] != ']' {
			return nil, false
		}
		break
	}
	i = skipJSONSpace(body, i+1)
	if i >= len(body) || body[i] != '}' || skipJSONSpace(body, i+1) != len(body) {
		return nil, false
	}
	return tokens, true
}

// skipJSONSpace returns the index of the first byte of b from i on that
// is not JSON whitespace.
func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// tokenLetters says which bytes are letters of URL-safe base64: a table,
// as a token's 22 letters are checked for every one acknowledged.
var tokenLetters = func() (t [256]bool) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") {
		t[c] = true
	}
	return t
}()

// lockTokens reads the lockTokens member of obj, a strictly valid JSON
// object, as encoding/json would into a []string: the member is matched
// exactly or else ignoring case (ValidStrict leaves at most one that
// matches), null or missing is none, and a null element is "". ok is
// false when the member is neither null nor an array of strings and nulls.
func lockTokens(obj []byte) (tokens []string, ok bool) {
	v, found := rawjson.Member(obj, "lockTokens")
	if !found || rawjson.KindOf(v) == rawjson.Null {
		return nil, true
	}
	if rawjson.KindOf(v) != rawjson.Array {
		return nil, false
	}
	ok = true
	tokens = make([]string, 0, 100)
	rawjson.ArrayEach(v, func(_ int, e []byte) bool {
		var t string
		switch rawjson.KindOf(e) {
		case rawjson.String:
			t, ok = rawjson.Unquote(e)
		case rawjson.Null:
		default:
			ok = false
		}
		tokens = append(tokens, t)
		return ok
	})
	return tokens, ok
}

// maxEchoedToken bounds the bytes of a failed lock token echoed in a
// settlement's answer: a lock token of this broker is 22 characters, and a
// client must not make the broker answer megabytes by sending them.
const maxEchoedToken = 64

// echoToken returns t as a failed token is echoed: cut after
// maxEchoedToken bytes (on a character boundary) and marked with "…".
func echoToken(t string) string {
	if len(t) <= maxEchoedToken {
		return t
	}
	n := maxEchoedToken
	for n > 0 && !utf8.RuneStart(t[n]) {
		n--
	}
	return t[:n] + "…"
}

// releaseDelay reads releaseDelayInSeconds, one of queue.ReleaseDelays.
func releaseDelay(c echo.Context) (time.Duration, error) {
	v := strings.TrimSpace(c.QueryParam("releaseDelayInSeconds"))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err == nil {
		for _, d := range queue.ReleaseDelays {
			if n == d {
				return time.Duration(n) * time.Second, nil
			}
		}
	}
	return 0, eventgrid.Errorf(eventgrid.EBadRequest, "The query parameter releaseDelayInSeconds must be one of 0, 10, 60, 600 and 3600; got %q.", v)
}

// writeSettled answers a settlement with res: the bytes c.JSON writes for
// a settleResult, encoded without reflection.
func writeSettled(c echo.Context, res queue.Result) error {
	pretty := c.Echo().Debug
	if !pretty && strings.Contains(c.Request().URL.RawQuery, "pretty") {
		// Parsed only then, sparing every other settlement a parse.
		_, pretty = c.QueryParams()["pretty"]
	}
	if pretty {
		return c.JSON(http.StatusOK, settledValue(res))
	}
	b := make([]byte, 0, 64+len(res.Succeeded)*(queue.TokenLen+3)+len(res.Failed)*160)
	b = append(b, `{"succeededLockTokens":[`...)
	for i, t := range res.Succeeded {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, t)
	}
	b = append(b, `],"failedLockTokens":[`...)
	for i, f := range res.Failed {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"lockToken":`...)
		b = appendJSONString(b, echoToken(f.LockToken))
		b = append(b, `,"error":{"code":`...)
		b = appendJSONString(b, f.Code)
		b = append(b, `,"message":`...)
		b = appendJSONString(b, f.Message)
		b = append(b, `}}`...)
	}
	b = append(b, "]}\n"...) // json.Encoder ends with a newline
	// With its length given, the answer goes out whole, not in chunks.
	c.Response().Header().Set(echo.HeaderContentLength, strconv.Itoa(len(b)))
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, b)
}

// settledValue is res as the settleResult that encoding/json writes.
func settledValue(res queue.Result) settleResult {
	out := settleResult{SucceededLockTokens: res.Succeeded, FailedLockTokens: make([]failedLockTok, 0, len(res.Failed))}
	if out.SucceededLockTokens == nil {
		out.SucceededLockTokens = []string{}
	}
	for _, f := range res.Failed {
		out.FailedLockTokens = append(out.FailedLockTokens, failedLockTok{LockToken: echoToken(f.LockToken), Error: failedError{Code: f.Code, Message: f.Message}})
	}
	return out
}

// appendJSONString appends s as encoding/json writes a string: a string of
// printable ASCII without the characters it escapes as it is, any other
// through encoding/json (which escapes <, > and &, and replaces invalid
// UTF-8).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

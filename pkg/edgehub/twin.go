package edgehub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/rs/zerolog"
)

// The module twin's MQTT topics, as IoT Hub documents them for devices and
// modules ("Use MQTT to communicate with an IoT hub: retrieve a device
// twin's properties, update reported properties, receive desired
// properties update notifications"); edgeHub serves the same to modules.
const (
	twinResponses   = "$iothub/twin/res/#"
	twinResPrefix   = "$iothub/twin/res/"
	twinDesired     = "$iothub/twin/PATCH/properties/desired/#"
	twinDesiredPfx  = "$iothub/twin/PATCH/properties/desired/"
	twinGet         = "$iothub/twin/GET/?$rid="
	twinReportedPfx = "$iothub/twin/PATCH/properties/reported/?$rid="
)

// TwinOptions configure FollowTwin.
type TwinOptions struct {
	// Apply is given the module twin's whole desired properties, a JSON
	// object with its $version, after each read of the twin and after each
	// patch merged into them, one call at a time. It returns the reported
	// properties that should hold afterwards; FollowTwin sends what differs
	// from the reported properties as a patch, members that are gone as
	// null, and nothing when nothing differs.
	Apply func(ctx context.Context, desired []byte) map[string]any
	// RequestTimeout bounds one twin request (a read or a reported patch)
	// waiting for its answer; zero means 30 seconds.
	RequestTimeout time.Duration
	// Retry is the wait before a failed request is tried again, doubling
	// up to the client's MaxReconnect; zero means the client's
	// MinReconnect.
	Retry time.Duration
	// Reapply, when it signals, has Apply called again with the current
	// desired properties and the result reported, as after a patch: the
	// caller's own retry of what failed for a passing reason.
	Reapply <-chan struct{}
}

// twinResponse is an answer on $iothub/twin/res/<status>/?$rid=<rid>.
type twinResponse struct {
	status int
	body   []byte
}

// twinPatch is a desired-properties patch.
type twinPatch struct {
	version int64
	body    []byte
}

// twin is the state of FollowTwin.
type twin struct {
	c   *Client
	o   TwinOptions
	log zerolog.Logger
	rid atomic.Uint64

	mu      sync.Mutex
	waiting map[string]chan twinResponse
	patches chan twinPatch
	lost    atomic.Bool // a patch was dropped: read the whole twin again

	desired  map[string]any // nil until the first read
	version  int64
	reported map[string]any // as IoT Hub holds them, as far as known
	applied  map[string]any // what Apply last returned
	patchErr string         // a patch that could not be merged, to report
}

// FollowTwin follows the module twin over c's connection until ctx is done
// or c is closed: it connects at once, reads the whole twin after every
// (re)connection, merges each desired-properties patch into the desired
// properties as twins do (a member set to null is removed, objects merge,
// anything else replaces), and hands the result to o.Apply, then patches
// the reported properties with what Apply returns. A patch whose version
// does not follow the last one makes it read the whole twin again; a patch
// that is not a JSON object is reported (errors.desiredPatch) and skipped.
func (c *Client) FollowTwin(ctx context.Context, o TwinOptions) {
	if o.Apply == nil {
		c.log.Error().Msg("FollowTwin without an Apply function: the module twin is not followed")
		return
	}
	setDefault(&o.RequestTimeout, 30*time.Second)
	setDefault(&o.Retry, c.o.MinReconnect)
	t := &twin{c: c, o: o, log: c.log.With().Str("twin", "module").Logger(), waiting: map[string]chan twinResponse{}, patches: make(chan twinPatch, 64)}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // Close ends the following too.
		select {
		case <-c.ctx.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	var conn mqtt.Client
	for ctx.Err() == nil {
		state, cur, changed := c.start()
		if state != stateUp || cur == conn {
			select {
			case <-changed:
			case <-ctx.Done():
			}
			continue
		}
		conn = cur
		t.follow(ctx, conn, changed)
	}
}

// start starts the client if nothing has yet, and returns its state, its
// connection and the channel closed at its next change of state.
func (c *Client) start() (int, mqtt.Client, chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == stateIdle {
		c.state = stateConnecting
		c.wg.Add(1)
		go c.run()
	}
	return c.state, c.cur, c.changed
}

// follow serves one connection until it changes (changed is closed) or ctx
// is done.
func (t *twin) follow(ctx context.Context, conn mqtt.Client, changed chan struct{}) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-changed:
			cancel()
		case <-ctx.Done():
		}
	}()
	backoff := t.o.Retry
	retry := func(what string, err error) bool {
		t.log.Warn().Err(err).Float64("retryInSeconds", backoff.Seconds()).Msg(what)
		tm := time.NewTimer(backoff)
		defer tm.Stop()
		backoff = min(2*backoff, t.c.o.MaxReconnect)
		select {
		case <-tm.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for {
		err := t.subscribe(ctx, conn)
		if err == nil {
			break
		}
		if !retry("cannot subscribe to the module twin's topics", err) {
			return
		}
	}
	backoff = t.o.Retry
	for {
		for {
			err := t.read(ctx, conn)
			if err == nil {
				break
			}
			if !retry("cannot read the module twin", err) {
				return
			}
		}
		backoff = t.o.Retry
		t.lost.Store(false)
		t.applyAndReport(ctx, conn)
		if !t.patchLoop(ctx, conn) {
			return
		}
	}
}

// patchLoop applies desired-properties patches as they come. It returns
// false when ctx is done, and true when the whole twin must be read again.
func (t *twin) patchLoop(ctx context.Context, conn mqtt.Client) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.o.Reapply:
			t.applyAndReport(ctx, conn)
			continue
		case p := <-t.patches:
			switch {
			case t.lost.Load():
				return true
			case p.version != 0 && p.version <= t.version:
				continue // already in what was read
			case p.version != 0 && p.version != t.version+1:
				t.log.Info().Int64("version", p.version).Int64("expected", t.version+1).Msg("desired-properties patch out of sequence; reading the whole twin again")
				return true
			}
			var patch map[string]any
			if err := json.Unmarshal(p.body, &patch); err != nil || patch == nil {
				t.patchErr = fmt.Sprintf("The desired-properties patch of version %d is not a JSON object; it was ignored.", p.version)
				t.log.Warn().Int64("version", p.version).Msg("desired-properties patch is not a JSON object; ignored")
				t.version = max(t.version, p.version)
				t.report(ctx, conn)
				continue
			}
			t.patchErr = ""
			merge(t.desired, patch)
			if p.version != 0 {
				t.version = p.version
			}
			t.desired["$version"] = t.version
			t.applyAndReport(ctx, conn)
		}
	}
}

// subscribe subscribes to the twin's answers and desired-properties
// patches; a clean session has no subscription to start with.
func (t *twin) subscribe(ctx context.Context, conn mqtt.Client) error {
	tok := conn.SubscribeMultiple(map[string]byte{twinResponses: 0, twinDesired: 0}, t.onMessage)
	select {
	case <-tok.Done():
		if err := tok.Error(); err != nil {
			return err
		}
		if st, ok := tok.(*mqtt.SubscribeToken); ok {
			for topic, code := range st.Result() {
				if code == 0x80 {
					return fmt.Errorf("subscription to %s refused", topic)
				}
			}
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// onMessage routes a message on the twin topics; it runs on the MQTT
// client's goroutines, so it only hands messages on.
func (t *twin) onMessage(_ mqtt.Client, m mqtt.Message) {
	topic, body := m.Topic(), m.Payload()
	switch {
	case strings.HasPrefix(topic, twinResPrefix):
		status, q, _ := strings.Cut(strings.TrimPrefix(topic, twinResPrefix), "/?")
		code, _ := strconv.Atoi(status)
		rid := query(q, "$rid")
		t.mu.Lock()
		ch := t.waiting[rid]
		delete(t.waiting, rid)
		t.mu.Unlock()
		if ch != nil {
			ch <- twinResponse{status: code, body: bytes.Clone(body)}
		}
	case strings.HasPrefix(topic, twinDesiredPfx):
		_, q, _ := strings.Cut(strings.TrimPrefix(topic, twinDesiredPfx), "?")
		v, _ := strconv.ParseInt(query(q, "$version"), 10, 64)
		if v == 0 {
			var meta struct {
				Version int64 `json:"$version"`
			}
			_ = json.Unmarshal(body, &meta)
			v = meta.Version
		}
		select {
		case t.patches <- twinPatch{version: v, body: bytes.Clone(body)}:
		default:
			t.lost.Store(true)
		}
	}
}

// query returns the value of key in the query string q ("" if absent).
func query(q, key string) string {
	for _, kv := range strings.Split(q, "&") {
		if k, v, _ := strings.Cut(kv, "="); k == key {
			if u, err := url.QueryUnescape(v); err == nil {
				return u
			}
			return v
		}
	}
	return ""
}

// request publishes body on topicPrefix + a new request id and waits for
// the answer.
func (t *twin) request(ctx context.Context, conn mqtt.Client, topicPrefix string, body []byte) (twinResponse, error) {
	rid := strconv.FormatUint(t.rid.Add(1), 10)
	ch := make(chan twinResponse, 1)
	t.mu.Lock()
	t.waiting[rid] = ch
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.waiting, rid)
		t.mu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(ctx, t.o.RequestTimeout)
	defer cancel()
	// At least once: IoT Hub answers a request id once, and a request
	// lost on the way is better retried by the broker than by the timeout.
	tok := conn.Publish(topicPrefix+rid, 1, false, body)
	select {
	case <-tok.Done():
		if err := tok.Error(); err != nil {
			return twinResponse{}, err
		}
	case <-ctx.Done():
		return twinResponse{}, ctx.Err()
	}
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		return twinResponse{}, fmt.Errorf("no answer from the twin: %w", ctx.Err())
	}
}

// read reads the whole twin: its desired and reported properties.
func (t *twin) read(ctx context.Context, conn mqtt.Client) error {
	r, err := t.request(ctx, conn, twinGet, nil)
	if err != nil {
		return err
	}
	if r.status != 200 {
		return fmt.Errorf("the twin read answered status %d", r.status)
	}
	var doc struct {
		Desired  map[string]any `json:"desired"`
		Reported map[string]any `json:"reported"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		return fmt.Errorf("the twin read answered something other than a twin: %w", err)
	}
	if doc.Desired == nil {
		doc.Desired = map[string]any{}
	}
	t.desired, t.reported = doc.Desired, doc.Reported
	t.version = 0
	if v, ok := doc.Desired["$version"].(float64); ok {
		t.version = int64(v)
	}
	t.patchErr = ""
	t.log.Debug().Int64("version", t.version).Msg("module twin read")
	return nil
}

// applyAndReport hands the desired properties to Apply and reports.
func (t *twin) applyAndReport(ctx context.Context, conn mqtt.Client) {
	b, err := json.Marshal(t.desired)
	if err != nil {
		t.log.Error().Err(err).Msg("desired properties cannot be encoded")
		return
	}
	t.applied = t.o.Apply(ctx, b)
	t.report(ctx, conn)
}

// report patches the reported properties with what differs from what
// Apply last returned, with the pending patch error if any.
func (t *twin) report(ctx context.Context, conn mqtt.Client) {
	want, err := normalise(t.applied)
	if err != nil {
		t.log.Error().Err(err).Msg("reported properties cannot be encoded")
		return
	}
	if want == nil {
		want = map[string]any{}
	}
	errs, _ := want["errors"].(map[string]any)
	if errs == nil {
		errs = map[string]any{}
		want["errors"] = errs
	}
	if t.patchErr != "" {
		errs["desiredPatch"] = t.patchErr
	}
	patch := diff(t.reported, want)
	if len(patch) == 0 {
		return
	}
	body, err := json.Marshal(patch)
	if err != nil {
		t.log.Error().Err(err).Msg("reported properties cannot be encoded")
		return
	}
	r, err := t.request(ctx, conn, twinReportedPfx, body)
	if err == nil && r.status/100 != 2 {
		err = fmt.Errorf("the reported-properties patch answered status %d", r.status)
	}
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			t.log.Warn().Err(err).Msg("reported properties not updated")
		}
		return
	}
	if t.reported == nil {
		t.reported = map[string]any{}
	}
	merge(t.reported, patch)
}

// normalise returns v as encoding/json decodes its encoding, so that it
// compares with what a twin read returns.
func normalise(v map[string]any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}

// merge applies patch to doc as twin patches apply: a member set to null
// is removed, an object merges into an object, anything else replaces.
func merge(doc, patch map[string]any) {
	for k, v := range patch {
		if v == nil {
			delete(doc, k)
			continue
		}
		if pv, ok := v.(map[string]any); ok {
			if dv, ok := doc[k].(map[string]any); ok {
				merge(dv, pv)
				continue
			}
			nv := map[string]any{}
			merge(nv, pv)
			doc[k] = nv
			continue
		}
		doc[k] = v
	}
}

// diff returns the patch that turns from into to: members of from missing
// from to become null ($-prefixed metadata aside).
func diff(from, to map[string]any) map[string]any {
	out := map[string]any{}
	for k, tv := range to {
		fv, ok := from[k]
		tm, tIsMap := tv.(map[string]any)
		fm, fIsMap := fv.(map[string]any)
		switch {
		case ok && tIsMap && fIsMap:
			if d := diff(fm, tm); len(d) > 0 {
				out[k] = d
			}
		case tIsMap && len(tm) == 0 && !ok:
			// Nothing to clear, nothing to add.
		case !ok || !reflect.DeepEqual(fv, tv):
			out[k] = tv
		}
	}
	for k := range from {
		if _, ok := to[k]; !ok && !strings.HasPrefix(k, "$") {
			out[k] = nil
		}
	}
	return out
}

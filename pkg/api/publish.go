package api

import (
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
	"github.com/edgegrid/edgegrid/pkg/schema"
)

// decodeMode says how a publish body is read.
type decodeMode int

const (
	decodeBatch  decodeMode = iota // a JSON array of events
	decodeOne                      // one JSON object
	decodeAny                      // an array or one object (CloudEvents under application/json)
	decodeBinary                   // a CloudEvent in HTTP binary mode
)

const (
	mediaJSON        = "application/json"
	mediaCloudEvent  = "application/cloudevents+json"
	mediaCloudEvents = "application/cloudevents-batch+json"
)

// publishMode decides how to read a publish request from the topic's schema,
// its media type, whether it carries ce-* attributes and whether it came to
// the single-event route (docs/design.md#content-types and
// docs/design.md#publish-validation).
func publishMode(s eventgrid.InputSchema, mt string, binary, single bool) (decodeMode, error) {
	if s != eventgrid.CloudEventSchemaV1_0 {
		if mt != mediaJSON {
			return 0, eventgrid.Errorf(eventgrid.EUnsupportedMedia, "Content-Type %q is not supported for topics of schema %s; send %s.", mt, s, mediaJSON)
		}
		if single {
			return decodeOne, nil
		}
		return decodeBatch, nil
	}
	switch {
	case mt == mediaCloudEvent:
		return decodeOne, nil
	case mt == mediaCloudEvents && single:
		return 0, eventgrid.Errorf(eventgrid.EUnsupportedMedia, "This route takes one event; send it as %s, or post the batch to /topics/{topic}/events.", mediaCloudEvent)
	case mt == mediaCloudEvents:
		return decodeBatch, nil
	case binary:
		return decodeBinary, nil
	case mt == mediaJSON && single:
		return decodeOne, nil
	case mt == mediaJSON:
		return decodeAny, nil
	}
	return 0, eventgrid.Errorf(eventgrid.EUnsupportedMedia, "Content-Type %q is not supported for topics of schema %s; send %s, %s, %s, or a binary-mode CloudEvent with ce-* headers.", mt, s, mediaCloudEvent, mediaCloudEvents, mediaJSON)
}

// publishRoute is the route a publish request came by.
type publishRoute int

const (
	edgeBatch      publishRoute = iota // POST /topics/{t}/events
	edgeOne                            // POST /topics/{t}/events/{id}
	cloudBatch                         // POST /topics/{t}/api/events
	namespaceBatch                     // POST /topics/{t}:publish
)

// single reports whether the route takes one event.
func (r publishRoute) single() bool { return r == edgeOne }

// asOriginal reports whether the route is the original module's, whose
// application/json bodies are read as it read them
// (docs/design.md#the-original-modules-examples).
func (r publishRoute) asOriginal() bool { return r == edgeBatch || r == edgeOne }

func (s *Server) publishBatch(c echo.Context) error { return s.publish(c, edgeBatch) }
func (s *Server) publishOne(c echo.Context) error   { return s.publish(c, edgeOne) }
func (s *Server) publishCloud(c echo.Context) error { return s.publish(c, cloudBatch) }

func (s *Server) publish(c echo.Context, route publishRoute) error {
	start := time.Now()
	topic, subs, err := s.publisher.Topic(param(c, "topic"))
	if err != nil {
		return err // unknown topics are not measured: their names are the client's
	}
	if err := s.acceptMeasured(c, topic, subs, route, start); err != nil {
		return err
	}
	return c.NoContent(http.StatusOK)
}

// acceptMeasured is accept, with the request counted in the publish
// metrics by its answer's status, and in the topic's record.
func (s *Server) acceptMeasured(c echo.Context, topic eventgrid.Topic, subs eventgrid.Subscribers, route publishRoute, start time.Time) error {
	var rec *inspect.Topic
	if s.svc.Board != nil {
		rec = s.svc.Board.Topic(topic.Name)
	}
	received, unmatched, err := s.accept(c, topic, subs, route, start, rec)
	status := http.StatusOK
	if err != nil {
		status = statusOf(err)
	}
	s.svc.Metrics.Published(topic.Name, status, time.Since(start), received, unmatched)
	rec.Published(received, unmatched, err != nil, start)
	return err
}

// accept decodes a publish request's events and hands them to the
// publisher, and to the topic's live tails if anyone watches. It returns
// how many events were accepted and how many of those matched nothing.
func (s *Server) accept(c echo.Context, topic eventgrid.Topic, subs eventgrid.Subscribers, route publishRoute, now time.Time, rec *inspect.Topic) (received, unmatched int, err error) {
	req, err := s.admit(c, topic, subs, route)
	if err != nil {
		return 0, 0, err
	}
	body, release, err := s.readPooledBody(c)
	if err != nil {
		if reason := eventgrid.RefusalReason(err); reason != "" {
			s.svc.Metrics.Rejected(reason)
		}
		return 0, 0, err
	}
	// The events keep nothing of the body, but it stays counted against
	// api__maxBodyBytesInFlight until they are queued: a request the
	// publisher holds for room (docs/delivery.md#bounded-queues) keeps
	// its share of the memory that bounds.
	defer release()
	scratch := scratchPool.Get().(*publishScratch)
	defer scratch.release()
	// When every subscription takes CloudEvents the events are built as
	// theirs, written once rather than once more when converted; the
	// console's tail, which shows events as published, takes them as
	// published.
	watching := rec.Watching()
	scratch.ToCloudEvents = subs.CloudEventsOnly && !watching
	events, err := req.decode(c, scratch, topic, body, now)
	if err != nil {
		return 0, 0, err
	}
	unmatched, err = s.publisher.Publish(c.Request().Context(), topic, events)
	if err != nil {
		if eventgrid.ErrorCode(err) == eventgrid.EQueueFull {
			return 0, 0, s.queueFull(err)
		}
		return 0, 0, err
	}
	if watching {
		for _, ev := range events {
			rec.Accepted(ev.Body, now)
		}
	}
	return len(events), unmatched, nil
}

// publishRequest is how a publish request's body is to be read.
type publishRequest struct {
	mode decodeMode
	// asOriginal: the original module's routes read application/json as
	// it did (docs/design.md#the-original-modules-examples).
	asOriginal bool
}

// admit works out how c's body is to be read, and takes it only when the
// broker has room for it. A topic without subscriptions queues nothing,
// so it is never refused for a full broker. One whose body alone is more
// than the broker ever queues gets 413, however empty the broker: 503
// would have the publisher retry it for ever.
func (s *Server) admit(c echo.Context, topic eventgrid.Topic, subs eventgrid.Subscribers, route publishRoute) (publishRequest, error) {
	mt, err := mediaType(c)
	if err != nil {
		return publishRequest{}, err
	}
	binary := schema.IsBinary(c.Request().Header)
	mode, err := publishMode(topic.InputSchema, mt, binary, route.single())
	if err != nil {
		return publishRequest{}, err
	}
	// The CloudEvents media types and binary mode keep the CloudEvents
	// rules on every route.
	req := publishRequest{mode: mode, asOriginal: route.asOriginal() && mt == mediaJSON && !binary}
	if s.svc.Admitter != nil && subs.Any {
		if err := s.svc.Admitter.Admit(c.Request().Context(), max(c.Request().ContentLength, 0)); err != nil {
			if eventgrid.ErrorCode(err) == eventgrid.EQueueFull {
				err = s.queueFull(err)
			}
			return publishRequest{}, err
		}
	}
	return req, nil
}

// decode decodes body's events as req says.
func (req publishRequest) decode(c echo.Context, scratch *publishScratch, topic eventgrid.Topic, body []byte, now time.Time) ([]*eventgrid.Event, error) {
	scratch.FoldExtensionNames = req.asOriginal
	h := c.Request().Header
	events, err := decode(scratch, req.mode, topic, body, h, param(c, "id"), now)
	if err != nil && req.asOriginal && eventgrid.ErrorCode(err) == eventgrid.EInvalidJSON {
		// Json.NET took a comma after a last member or element; the
		// refusal is of the body as sent, should more than that be wrong.
		if fixed, ok := rawjson.WithoutTrailingCommas(body); ok && rawjson.Valid(fixed) {
			events, err = decode(scratch, req.mode, topic, fixed, h, param(c, "id"), now)
		}
	}
	return events, err
}

// queueFull adds the Retry-After advice to a queue-full error.
func (s *Server) queueFull(err error) error {
	return &retryAfterError{err: err, seconds: s.retryAfterSeconds()}
}

// retryAfterSeconds is the Retry-After of a refusal for full queues.
func (s *Server) retryAfterSeconds() int { return int(math.Ceil(s.opts.RetryAfter.Seconds())) }

// publishScratch is the memory one publish request reuses from an earlier
// one: its Event structs. The publisher keeps only the events' bodies, so
// all of it is free again once Publish returns.
type publishScratch struct {
	schema.Scratch
	single [1]*eventgrid.Event
}

var scratchPool = sync.Pool{New: func() any { return new(publishScratch) }}

// release clears the scratch, so it pins no event memory, and pools it.
func (p *publishScratch) release() {
	p.Reset()
	p.ToCloudEvents, p.FoldExtensionNames = false, false
	p.single[0] = nil
	scratchPool.Put(p)
}

func decode(scratch *publishScratch, mode decodeMode, topic eventgrid.Topic, body []byte, h http.Header, id string, now time.Time) ([]*eventgrid.Event, error) {
	if mode == decodeAny {
		mode = decodeOne
		if rawjson.KindOf(body) == rawjson.Array {
			mode = decodeBatch
		}
	}
	var (
		ev  *eventgrid.Event
		err error
	)
	switch mode {
	case decodeBatch:
		return scratch.DecodeBatch(topic.InputSchema, topic.Name, body, now)
	case decodeBinary:
		ev, err = schema.DecodeBinary(h, body, id, now)
	default:
		ev, err = scratch.DecodeOne(topic.InputSchema, topic.Name, body, id, now)
	}
	if err != nil {
		return nil, err
	}
	scratch.single[0] = ev
	return scratch.single[:], nil
}

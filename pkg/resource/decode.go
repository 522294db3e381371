package resource

import (
	"errors"
	"strings"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// DecodeTopic reads the body of PUT /topics/{name}. The body may be empty.
// A name in the body must equal the URL's name, ignoring case.
func DecodeTopic(body []byte, name string) (eventgrid.Topic, error) {
	root, err := parseBody(body)
	if err != nil {
		return eventgrid.Topic{}, err
	}
	if err := root.check(topicShape); err != nil {
		return eventgrid.Topic{}, err
	}
	if err := checkName(root, name, "topic"); err != nil {
		return eventgrid.Topic{}, err
	}
	propsRaw, _, _ := root.get("properties")
	props, err := parseObject(propsRaw, "properties", eventgrid.EBadRequest)
	if err != nil {
		return eventgrid.Topic{}, err
	}
	return DecodeTopicProperties(props.raw, "properties", name)
}

// DecodeTopicProperties reads a topic's properties object, as found in the
// API body and in the module twin's "topics" map. prefix is the field path
// used in error messages.
func DecodeTopicProperties(props []byte, prefix, name string) (eventgrid.Topic, error) {
	o, err := parseObject(props, prefix, eventgrid.EBadRequest)
	if err != nil {
		return eventgrid.Topic{}, err
	}
	if err := o.check(topicPropertiesShape); err != nil {
		return eventgrid.Topic{}, err
	}
	t := eventgrid.Topic{Name: name, InputSchema: eventgrid.EventGridSchema}
	s, ok, err := o.str(eventgrid.EInvalidSchema, "inputSchema")
	if err != nil {
		return t, err
	}
	if ok {
		schema, valid := eventgrid.ParseInputSchema(s)
		if !valid {
			return t, eventgrid.Errorf(eventgrid.EInvalidSchema, "%s %q is not valid; accepted values are %s.", o.field("inputSchema"), s, eventgrid.SchemaNames)
		}
		t.InputSchema = schema
	}
	return t, nil
}

// DecodeSubscription reads the body of PUT
// /topics/{topic}/eventSubscriptions/{name}. A name in the body must equal
// the URL's; a topic or topicName in the properties must equal the URL's
// topic. The returned subscription's EventDeliverySchema is empty when the
// client did not set it.
func DecodeSubscription(body []byte, topic, name string) (eventgrid.EventSubscription, error) {
	return DecodeSubscriptionUpdate(body, topic, name, nil)
}

// DecodeSubscriptionUpdate is DecodeSubscription for a PUT that replaces
// stored, the subscription as it is (nil when there is none): the secrets
// GET does not return, left out of body, are taken from stored
// (docs/api.md#secrets), so that a PUT of what GET returned changes nothing.
func DecodeSubscriptionUpdate(body []byte, topic, name string, stored *eventgrid.EventSubscription) (eventgrid.EventSubscription, error) {
	root, err := parseBody(body)
	if err != nil {
		return eventgrid.EventSubscription{}, err
	}
	if err := root.check(subscriptionShape); err != nil {
		return eventgrid.EventSubscription{}, err
	}
	if err := checkName(root, name, "event subscription"); err != nil {
		return eventgrid.EventSubscription{}, err
	}
	propsRaw, _, ok := root.get("properties")
	if !ok {
		return eventgrid.EventSubscription{}, eventgrid.Errorf(eventgrid.EInvalidDestination, "properties.destination is required.")
	}
	return decodeSubscriptionProperties(propsRaw, "properties", topic, name, stored, false)
}

// DecodeSubscriptionProperties reads a declared subscription's properties
// object, as found (with its "topic" member) in the module twin's
// "eventSubscriptions" map: the API body's properties, and "paused", which
// only a declaration states (docs/live-config.md). When topic is empty, the
// properties must name it.
func DecodeSubscriptionProperties(props []byte, prefix, topic, name string) (eventgrid.EventSubscription, error) {
	return decodeSubscriptionProperties(props, prefix, topic, name, nil, true)
}

func decodeSubscriptionProperties(props []byte, prefix, topic, name string, stored *eventgrid.EventSubscription, declared bool) (eventgrid.EventSubscription, error) {
	sub := eventgrid.EventSubscription{Topic: topic, Name: name}
	var k kept
	o, err := parseObject(props, prefix, eventgrid.EBadRequest)
	if err != nil {
		return sub, err
	}
	shape := subscriptionPropertiesShape
	if declared {
		shape = declaredSubscriptionPropertiesShape
		if sub.Paused, _, err = o.boolean(eventgrid.EBadRequest, "paused"); err != nil {
			return sub, err
		}
	}
	if err := o.check(shape); err != nil {
		return sub, err
	}
	if sub.Topic, err = subscriptionTopic(o, topic); err != nil {
		return sub, err
	}
	queue, queueDeadLetter, err := decodeDeliveryConfiguration(o, &k)
	if err != nil {
		return sub, err
	}
	sub.Queue = queue
	if queue == nil {
		if sub.Destination, err = decodeDestination(o, &k); err != nil {
			return sub, err
		}
	}
	if sub.EventDeliverySchema, err = decodeDeliverySchema(o); err != nil {
		return sub, err
	}
	if err := decodeLegacyDeliveryPolicy(o, &sub.Destination); err != nil {
		return sub, err
	}
	if sub.RetryPolicy, err = decodeRetryPolicy(o); err != nil {
		return sub, err
	}
	if sub.PersistencePolicy, err = decodePersistencePolicy(o); err != nil {
		return sub, err
	}
	if sub.Filter, err = decodeFilter(o); err != nil {
		return sub, err
	}
	if sub.DeadLetter, err = decodeDeadLetter(o, &k); err != nil {
		return sub, err
	}
	if queueDeadLetter != nil {
		sub.DeadLetter = queueDeadLetter
	}
	if sub.Filter == nil {
		if sub.Filter, err = decodeFiltersConfiguration(o); err != nil {
			return sub, err
		}
	}
	return sub, k.apply(&sub, stored)
}

// subscriptionTopic returns the topic of a subscription's properties o: the
// one they name (topic or topicName), which must equal topic, ignoring
// case, when topic is not empty.
func subscriptionTopic(o object, topic string) (string, error) {
	t, tname, err := o.namedStr(eventgrid.ETopicNameMismatch, "topic", "topicName")
	switch {
	case err != nil:
		return topic, err
	case tname != "" && topic == "":
		return t, nil
	case tname != "" && !strings.EqualFold(t, topic):
		return topic, eventgrid.Errorf(eventgrid.ETopicNameMismatch, "%s is %q but the request is for topic %q.", o.field(tname), t, topic)
	case topic == "":
		return topic, eventgrid.Errorf(eventgrid.ETopicNameMismatch, "%s is required.", o.field("topic"))
	}
	return topic, nil
}

func parseBody(raw []byte) (object, error) {
	body := rawjson.TrimSpace(raw)
	if len(body) == 0 {
		return object{}, nil
	}
	_, err := rawjson.ValidStrict(body)
	var se *rawjson.StrictError
	switch {
	case errors.As(err, &se) && se.Kind == rawjson.DuplicateName:
		// Which of the two would be read is a guess; say so rather than
		// store one.
		return object{}, eventgrid.Errorf(eventgrid.EInvalidJSON, "%s is given more than once; member names must be unique, compared ignoring case.", se.Path)
	case se != nil:
		return object{}, eventgrid.Errorf(eventgrid.EInvalidJSON, "The request body is not valid UTF-8 text (at byte offset %d).", se.Offset)
	case err != nil:
		if se := rawjson.Locate(raw); se != nil {
			return object{}, eventgrid.Errorf(eventgrid.EInvalidJSON, "The request body is not valid JSON: %s.", se)
		}
		return object{}, eventgrid.Errorf(eventgrid.EInvalidJSON, "The request body is not valid JSON.")
	}
	return parseObject(body, "", eventgrid.EInvalidJSON)
}

func checkName(root object, want, what string) error {
	n, ok, err := root.str(eventgrid.EInvalidName, "name")
	if err != nil {
		return err
	}
	if ok && !strings.EqualFold(n, want) {
		return eventgrid.Errorf(eventgrid.EInvalidName, "name is %q but the request is for %s %q.", n, what, want)
	}
	return nil
}

func decodeDestination(o object, k *kept) (eventgrid.Destination, error) {
	var d eventgrid.Destination
	raw, _, ok := o.get("destination")
	if !ok {
		return d, eventgrid.Errorf(eventgrid.EInvalidDestination, "%s is required.", o.field("destination"))
	}
	dst, err := parseObject(raw, o.field("destination"), eventgrid.EInvalidDestination)
	if err != nil {
		return d, err
	}
	if err := dst.check(destinationShape); err != nil {
		return d, err
	}
	typ, ok, err := dst.str(eventgrid.EInvalidDestination, "endpointType")
	if err != nil {
		return d, err
	}
	if !ok {
		return d, eventgrid.Errorf(eventgrid.EInvalidDestination, "%s is required.", dst.field("endpointType"))
	}
	et, known := eventgrid.ParseEndpointType(typ)
	const supported = "WebHook, EventGrid, EdgeHub, EventHub, ServiceBusQueue, ServiceBusTopic and StorageQueue"
	switch {
	case !known:
		return d, eventgrid.Errorf(eventgrid.EInvalidDestination, "%s %q is not valid; supported values are %s.", dst.field("endpointType"), typ, supported)
	}
	d.EndpointType = et
	propsRaw, _, _ := dst.get("properties")
	p, err := parseObject(propsRaw, dst.field("properties"), eventgrid.EInvalidDestination)
	if err != nil {
		return d, err
	}
	if err := p.check(destinationShapes[et]); err != nil {
		return d, err
	}
	k.dest = p.path
	if err := decodeTypeMembers(p, &d, k); err != nil {
		return d, err
	}
	if err := decodeWebhookInterop(p, &d); err != nil {
		return d, err
	}
	k.signingSecret = !p.has("signingSecret")
	if err := decodeDeliveryAttributes(p, &d, k); err != nil {
		return d, err
	}
	if d.MaxEventsPerBatch, _, err = p.positiveInt(eventgrid.EInvalidDelivery, "maxEventsPerBatch"); err != nil {
		return d, err
	}
	if d.PreferredBatchSizeInKilobytes, _, err = p.positiveInt(eventgrid.EInvalidDelivery, "preferredBatchSizeInKilobytes"); err != nil {
		return d, err
	}
	return d, nil
}

// decodeDeliverySchema reads eventDeliverySchema from the properties or, as
// some documents show it, from the destination's properties.
func decodeDeliverySchema(o object) (eventgrid.InputSchema, error) {
	where := o
	if _, _, ok := o.get("eventDeliverySchema"); !ok {
		if dst, _, ok := o.get("destination"); ok {
			d, _ := parseObject(dst, o.field("destination"), eventgrid.EInvalidDestination)
			if p, _, ok := d.get("properties"); ok {
				where, _ = parseObject(p, d.field("properties"), eventgrid.EInvalidDestination)
			}
		}
	}
	s, ok, err := where.str(eventgrid.EInvalidSchema, "eventDeliverySchema")
	if err != nil || !ok {
		return "", err
	}
	schema, valid := eventgrid.ParseInputSchema(s)
	if !valid {
		return "", eventgrid.Errorf(eventgrid.EInvalidSchema, "%s %q is not valid; accepted values are %s.", where.field("eventDeliverySchema"), s, eventgrid.SchemaNames)
	}
	return schema, nil
}

// decodeLegacyDeliveryPolicy applies the module twin's older batching shape,
// {"deliveryPolicy": {"approxBatchSizeInBytes": n, "maxEventsPerBatch": m}},
// where the destination does not set the newer properties.
func decodeLegacyDeliveryPolicy(o object, d *eventgrid.Destination) error {
	raw, _, ok := o.get("deliveryPolicy")
	if !ok {
		return nil
	}
	p, err := parseObject(raw, o.field("deliveryPolicy"), eventgrid.EInvalidDelivery)
	if err != nil {
		return err
	}
	if err := p.check(deliveryPolicyShape); err != nil {
		return err
	}
	n, ok, err := p.positiveInt(eventgrid.EInvalidDelivery, "maxEventsPerBatch")
	if err != nil {
		return err
	}
	if ok && d.MaxEventsPerBatch == 0 {
		d.MaxEventsPerBatch = n
	}
	b, ok, err := p.positiveInt(eventgrid.EInvalidDelivery, "approxBatchSizeInBytes")
	if err != nil {
		return err
	}
	if ok && d.PreferredBatchSizeInKilobytes == 0 {
		d.PreferredBatchSizeInKilobytes = max(1, b/1024)
	}
	return nil
}

func decodeRetryPolicy(o object) (*eventgrid.RetryPolicy, error) {
	raw, _, ok := o.get("retryPolicy")
	if !ok {
		return nil, nil
	}
	p, err := parseObject(raw, o.field("retryPolicy"), eventgrid.EInvalidRetryPolicy)
	if err != nil {
		return nil, err
	}
	if err := p.check(retryPolicyShape); err != nil {
		return nil, err
	}
	var rp eventgrid.RetryPolicy
	if rp.MaxDeliveryAttempts, _, err = p.positiveInt(eventgrid.EInvalidRetryPolicy, "maxDeliveryAttempts"); err != nil {
		return nil, err
	}
	if rp.EventExpiryInMinutes, _, err = p.positiveInt(eventgrid.EInvalidRetryPolicy, "eventExpiryInMinutes", "eventTimeToLiveInMinutes"); err != nil {
		return nil, err
	}
	if rp.Schedule, err = decodeSchedule(p); err != nil {
		return nil, err
	}
	return &rp, nil
}

// decodePersistencePolicy accepts the three documented shapes: "true",
// {"isPersisted": "true"} and {"isPersisted": true}.
func decodePersistencePolicy(o object) (*eventgrid.PersistencePolicy, error) {
	raw, name, ok := o.get("persistencePolicy")
	if !ok {
		return nil, nil
	}
	if b, ok := parseBool(raw); ok {
		return &eventgrid.PersistencePolicy{IsPersisted: b}, nil
	}
	p, err := parseObject(raw, o.field(name), eventgrid.EInvalidPersistence)
	if err != nil {
		return nil, eventgrid.Errorf(eventgrid.EInvalidPersistence, "%s must be true, false or {\"isPersisted\": true|false}.", o.field(name))
	}
	if err := p.check(persistencePolicyShape); err != nil {
		return nil, err
	}
	b, _, err := p.boolean(eventgrid.EInvalidPersistence, "isPersisted")
	if err != nil {
		return nil, err
	}
	return &eventgrid.PersistencePolicy{IsPersisted: b}, nil
}

// decodeSchedule reads retryPolicy.schedule, the delivery profile
// (docs/design.md#delivery-profiles),
// matched case-insensitively.
func decodeSchedule(p object) (eventgrid.RetrySchedule, error) {
	s, ok, err := p.str(eventgrid.EInvalidRetryPolicy, "schedule")
	if err != nil || !ok {
		return "", err
	}
	for _, v := range []eventgrid.RetrySchedule{eventgrid.EdgeQueues, eventgrid.CloudExponential} {
		if strings.EqualFold(strings.TrimSpace(s), string(v)) {
			return v, nil
		}
	}
	return "", eventgrid.Errorf(eventgrid.EInvalidRetryPolicy, "%s %q is not valid; accepted values are %s and %s.", p.field("schedule"), s, eventgrid.EdgeQueues, eventgrid.CloudExponential)
}

package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/kelseyhightower/envconfig"
)

// redaction says how Fields reports a value.
type redaction int

const (
	shown    redaction = iota
	secret             // "<redacted>" when set, "" when not
	sizeOnly           // "<N bytes>"
)

// key is one environment key in its documented spelling.
type key struct {
	name    string   // documented spelling; upper-cased, it is the envconfig tag
	aliases []string // other spellings found in the documentation
	redact  redaction
}

// keyTable lists every key the broker reads, each exactly once, in its
// documented spelling. It drives the normalisation of the environment, names
// keys in error messages and in Fields. The package panics at start-up if
// the table and the envconfig tags disagree.
var keyTable = []key{
	// 7.1 inbound server TLS
	{name: "inbound__serverAuth__tlsPolicy"},
	{name: "inbound__serverAuth__serverCert__source"},
	{name: "inbound__serverAuth__serverCert__certFile"},
	{name: "inbound__serverAuth__serverCert__keyFile"},
	{name: "inbound__serverAuth__serverCert__caFile"},
	// 7.2 inbound client authentication
	{name: "inbound__clientAuth__clientCert__enabled"},
	{name: "inbound__clientAuth__clientCert__source"},
	{name: "inbound__clientAuth__clientCert__caFile"},
	{name: "inbound__clientAuth__clientCert__allowUnknownCA"},
	{name: "inbound__clientAuth__sasKeys__enabled"},
	{name: "inbound__clientAuth__sasKeys__key1", redact: secret},
	{name: "inbound__clientAuth__sasKeys__key2", redact: secret},
	// 7.3 outbound client identity
	{name: "outbound__clientAuth__clientCert__enabled"},
	{name: "outbound__clientAuth__clientCert__source"},
	{name: "outbound__clientAuth__clientCert__certFile"},
	{name: "outbound__clientAuth__clientCert__keyFile"},
	// 7.4 outbound destination policy
	{name: "outbound__webhook__httpsOnly"},
	{name: "outbound__webhook__skipServerCertValidation"},
	{name: "outbound__webhook__allowUnknownCA"},
	{name: "outbound__webhook__skipEventGridUrlValidation"},
	{name: "outbound__eventgrid__httpsOnly"},
	{name: "outbound__eventgrid__allowInvalidHostnames"},
	// 7.5 broker
	{name: "broker__defaultMaxDeliveryAttempts", aliases: []string{"brokers__defaultMaxDeliveryAttempts"}},
	{name: "broker__defaultEventTimeToLiveInSeconds"},
	{name: "broker__defaultMaxBatchSizeInBytes"},
	{name: "broker__defaultMaxEventsPerBatch"},
	{name: "broker__logDeliverySuccess"},
	{name: "broker__logDeliveryFailure"},
	{name: "broker__logEventExpiry"},
	{name: "broker__deliverTimeoutInSeconds"},
	{name: "broker__maxConcurrentDeliveries"},
	{name: "broker__maxReadBatchSize"},
	{name: "broker__backoffIntervals"},
	{name: "broker__maxSubscriptionCacheStalenessInSeconds"},
	{name: "broker__defaultIsPersisted"},
	{name: "broker__backoffIsPersisted"},
	{name: "broker__startTimeoutInSeconds"},
	{name: "broker__stopTimeoutInSeconds"},
	// 7.5 API limits
	{name: "api__deliveryPolicyLimits__maxEventsPerBatch"},
	{name: "api__deliveryPolicyLimits__maxPreferredBatchSizeInKilobytes"},
	{name: "api__deliveryPolicyLimits__maxBatchSizeInBytes"}, // legacy, in bytes
	{name: "api__retryPolicyLimits__minExpirationTimeInMinutes"},
	{name: "api__retryPolicyLimits__maxExpirationTimeInMinutes"},
	{name: "api__retryPolicyLimits__maxDeliveryAttempts"},
	{name: "api__maxTopicNameLength"},
	{name: "api__maxContentLengthInBytes"},
	{name: "api__requestTimeoutInSeconds"},
	{name: "api__httpPort"},
	{name: "api__httpsPort"},
	{name: "api__health__httpProbe__enabled"},
	// 7.6 metrics
	{name: "metrics__reporterType"},
	{name: "metrics__reportingIntervalInSeconds"},
	// 2.6 declared topics and subscriptions (pkg/desired)
	{name: "desired_config", redact: sizeOnly},
	{name: "desired_config_file"},
	{name: "desired_config_pollIntervalInSeconds"},
	{name: "desired_config_maxRetryIntervalInSeconds"},
	// 7.7 IoT Edge runtime
	{name: "IOTEDGE_MODULEID"},
	{name: "IOTEDGE_DEVICEID"},
	{name: "IOTEDGE_IOTHUBHOSTNAME"},
	{name: "IOTEDGE_MODULEGENERATIONID"},
	{name: "IOTEDGE_GATEWAYHOSTNAME"},
	{name: "IOTEDGE_APIVERSION"},
	{name: "IOTEDGE_WORKLOADURI"},
	// edgegrid extensions
	{name: "api__bindAddress"},
	{name: "api__publicHost"},
	{name: "api__maxDiscardBytes"},
	{name: "api__maxBodyBytesInFlight"},
	{name: "api__maxHeaderBytes"},
	{name: "api__readHeaderTimeoutInSeconds"},
	{name: "broker__maxTopics"},
	{name: "broker__replicas"},
	{name: "broker__maxSubscriptionsPerTopic"},
	{name: "broker__maxQueuedEvents"},
	{name: "broker__maxQueuedBytes"},
	{name: "broker__maxQueuedEventsPerSubscription"},
	{name: "broker__maxQueuedBytesPerSubscription"},
	{name: "broker__publishHoldInMilliseconds"},
	{name: "broker__defaultRetrySchedule"},
	{name: "broker__exponentialScale"},
	{name: "broker__queueTimeScale"},
	{name: "broker__maxWaitingReceives"},
	{name: "broker__probationAfterFailures"},
	{name: "broker__deadLetterFlushIntervalInSeconds"},
	{name: "broker__deadLetterMaxWaitInSeconds"},
	{name: "broker__maxConcurrentDeliveriesPerSubscription"},
	{name: "broker__maxFailuresPerSubscription"},
	{name: "broker__maxFailureBytesPerSubscription"},
	{name: "api__maxEventStreams"},
	{name: "api__eventStreamHeartbeatIntervalInSeconds"},
	{name: "api__maxConnections"},
	{name: "console__enabled"},
	{name: "api__filterLimits__maxAdvancedFilters"},
	{name: "api__filterLimits__maxValuesPerFilter"},
	{name: "api__filterLimits__maxStringLength"},
	{name: "api__filterLimits__maxIncludedEventTypes"},
	{name: "log__format"},
	{name: "log__level"},
	{name: "debug__pprofAddress"},
	{name: "edgehub__mqttUrl"},
	{name: "edgehub__deviceId"},
	{name: "edgehub__moduleId"},
	{name: "edgehub__clientId"},
	{name: "edgehub__username"},
	{name: "edgehub__password", redact: secret},
	{name: "edgehub__caFile"},
	{name: "edgehub__tokenLifetimeInSeconds"},
	{name: "edgehub__maxReconnectIntervalInSeconds"},
	{name: "edgehub__twin"},
}

// valueKind says how a key's value is parsed, normalised and compared.
type valueKind int

const (
	kindText    valueKind = iota // taken verbatim, compared exactly
	kindBool                     // case-insensitive true/false
	kindInt                      // decimal integer
	kindDecoded                  // an envconfig.Decoder, case-insensitive
)

// keyInfo is a table entry joined with the field that reads it.
type keyInfo struct {
	key
	env  string // canonical environment name, the envconfig tag
	kind valueKind
}

// byEnv indexes keyInfo by canonical environment name; bySpelling by every
// accepted spelling, upper-cased with ':' written as "__".
var byEnv, bySpelling = mustIndex()

// mustIndex joins keyTable with the envconfig tags of loadSpec. It panics if a
// tag has no table entry, an entry has no tag, or a spelling is listed twice:
// all are programming errors that any test run reveals.
func mustIndex() (map[string]*keyInfo, map[string]*keyInfo) {
	kinds := map[string]valueKind{}
	for _, f := range taggedFields(reflect.TypeFor[loadSpec]()) {
		kinds[f.Tag.Get("envconfig")] = kindOf(f.Type)
	}
	env := make(map[string]*keyInfo, len(keyTable))
	spelling := make(map[string]*keyInfo, len(keyTable))
	for _, k := range keyTable {
		canon := strings.ToUpper(k.name)
		kind, ok := kinds[canon]
		if !ok {
			panic(fmt.Sprintf("config: key %s has no envconfig tag", k.name))
		}
		info := &keyInfo{key: k, env: canon, kind: kind}
		env[canon] = info
		for _, s := range append([]string{k.name}, k.aliases...) {
			s = strings.ToUpper(s)
			if spelling[s] != nil {
				panic(fmt.Sprintf("config: spelling %s listed twice", s))
			}
			spelling[s] = info
		}
	}
	for tag := range kinds {
		if env[tag] == nil {
			panic(fmt.Sprintf("config: envconfig tag %s missing from the key table", tag))
		}
	}
	return env, spelling
}

// taggedFields returns the fields of struct type t that carry an envconfig
// tag, descending into embedded structs.
func taggedFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		switch {
		case f.Anonymous && f.Type.Kind() == reflect.Struct:
			out = append(out, taggedFields(f.Type)...)
		case f.Tag.Get("envconfig") != "":
			out = append(out, f)
		}
	}
	return out
}

var decoderType = reflect.TypeFor[envconfig.Decoder]()

func kindOf(t reflect.Type) valueKind {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case reflect.PointerTo(t).Implements(decoderType):
		return kindDecoded
	case t.Kind() == reflect.Bool:
		return kindBool
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		return kindInt
	default:
		return kindText
	}
}

// docName returns the documented spelling of a canonical environment name.
func docName(env string) string {
	if info := byEnv[env]; info != nil {
		return info.name
	}
	return env
}

// normaliseValue prepares a value for envconfig: booleans are lower-cased
// ("True" becomes "true"), integers lose surrounding space and leading zeros
// (envconfig would read "010" as octal).
func (k valueKind) normaliseValue(v string) string {
	switch k {
	case kindBool:
		return strings.ToLower(strings.TrimSpace(v))
	case kindInt:
		v = strings.TrimSpace(v)
		sign, d := "", v
		if strings.HasPrefix(d, "-") || strings.HasPrefix(d, "+") {
			sign, d = d[:1], d[1:]
		}
		if _, ok := digits(d, 2, len(d)); !ok {
			return v
		}
		if d = strings.TrimLeft(d, "0"); d == "" {
			d = "0"
		}
		return sign + d
	default:
		return v
	}
}

// sameValue reports whether two spellings of one key agree.
func (k valueKind) sameValue(a, b string) bool {
	if k == kindText {
		return a == b
	}
	return strings.EqualFold(strings.TrimSpace(k.normaliseValue(a)), strings.TrimSpace(k.normaliseValue(b)))
}

// setting is one environment entry that spells a known key.
type setting struct{ name, value string }

// normalised is the environment reduced to known keys.
type normalised struct {
	values    map[string]string // canonical name → value for envconfig
	originals map[string]string // canonical name → value as it was set
	errs      []error           // conflicting spellings
}

// normalise finds every entry of environ ("NAME=value" strings) whose name,
// upper-cased with ':' replaced by "__", spells a known key. Keys spelled
// more than once with different values are reported and left out.
func normalise(environ []string) normalised {
	found := map[string][]setting{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		info := bySpelling[strings.ToUpper(strings.ReplaceAll(name, ":", "__"))]
		if info != nil {
			found[info.env] = append(found[info.env], setting{name, value})
		}
	}
	n := normalised{values: map[string]string{}, originals: map[string]string{}}
	for _, env := range slices.Sorted(maps.Keys(found)) {
		info, list := byEnv[env], found[env]
		slices.SortFunc(list, func(a, b setting) int { return strings.Compare(a.name, b.name) })
		if err := conflict(info, list); err != nil {
			n.errs = append(n.errs, err)
			continue
		}
		n.values[env] = info.kind.normaliseValue(list[0].value)
		n.originals[env] = list[0].value
	}
	return n
}

// conflict returns an error naming the first two spellings in list whose
// values differ, without the values when the key is secret.
func conflict(info *keyInfo, list []setting) error {
	for _, s := range list[1:] {
		if info.kind.sameValue(list[0].value, s.value) {
			continue
		}
		if info.redact != shown {
			return fmt.Errorf("conflicting values for %s: %s and %s are both set and differ",
				info.name, list[0].name, s.name)
		}
		return fmt.Errorf("conflicting values for %s: %s=%q and %s=%q",
			info.name, list[0].name, list[0].value, s.name, s.value)
	}
	return nil
}

package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
)

// unbounded marks an integer range with no upper limit.
const unbounded = math.MaxInt64

// The upper bounds of keys whose large values would break the arithmetic
// of durations: ten years, well inside the 292 years of time.Duration,
// beyond which a value overflows into a negative duration (an immediate
// timeout or retry, over and over).
const (
	maxSeconds = 10 * 365 * 24 * 60 * 60
	maxMinutes = maxSeconds / 60
	// maxExponentialScale keeps the longest CloudExponential delay (12 h)
	// under 600 days.
	maxExponentialScale = 1000
	// maxQueueTimeScale keeps queue subscriptions' times within what
	// Azure allows (a lock of at most 300 s, a renewal up to one hour
	// after the receive) and away from the overflow of a time to live of
	// years, which would drop every event on arrival: the scale is for
	// tests, to make times shorter.
	maxQueueTimeScale = 1
	// maxPublishHoldMilliseconds keeps a publish request held for room
	// within a minute: past that, a publisher is better told to retry.
	maxPublishHoldMilliseconds = 60000
)

// The bounds of the inspection API's keys (docs/console.md#configuration):
// what the given-up lists keep is memory per subscription, and every event
// stream holds a connection and up to 4 MiB waiting for its reader. A
// given-up list can hold as many entries as a subscription's share of the
// budget holds events by default, since a redrive puts them back there;
// its bytes bound its events, and each entry takes some 200 bytes more.
const (
	maxFailures         = 100000
	maxFailureBytes     = 1 << 30
	maxEventStreams     = 10000
	maxHeartbeatSeconds = 300
)

// maxConnections bounds api__maxConnections: a connection holds a
// goroutine and its buffers, tens of KB, and a file descriptor.
const maxConnections = 1000000

// intRange is the accepted range of one integer key.
type intRange struct {
	env      string // canonical environment name
	value    int64
	min, max int64
}

// accepted describes the range for error messages.
func (r intRange) accepted() string {
	if r.max == unbounded {
		return fmt.Sprintf("accepted range is at least %d", r.min)
	}
	return fmt.Sprintf("accepted range is %d to %d", r.min, r.max)
}

// intRanges lists every integer setting with its accepted range; some ranges
// depend on other settings.
func (c Config) intRanges() []intRange {
	r := func(env string, v, lo, hi int) intRange { return intRange{env, int64(v), int64(lo), int64(hi)} }
	atLeast := func(env string, v, lo int) intRange { return intRange{env, int64(v), int64(lo), unbounded} }
	seconds := func(env string, v, lo int) intRange { return r(env, v, lo, maxSeconds) }
	return []intRange{
		// DefaultMaxDeliveryAttempts may go up to 30, or to the subscription
		// limit when that is raised above 30.
		r("BROKER__DEFAULTMAXDELIVERYATTEMPTS", c.DefaultMaxDeliveryAttempts, 1, max(30, c.RetryMaxDeliveryAttempts)),
		seconds("BROKER__DEFAULTEVENTTIMETOLIVEINSECONDS", c.DefaultEventTTLSeconds, 1),
		atLeast("BROKER__DEFAULTMAXBATCHSIZEINBYTES", c.DefaultMaxBatchSizeInBytes, 1),
		r("BROKER__DEFAULTMAXEVENTSPERBATCH", c.DefaultMaxEventsPerBatch, 1, max(1, c.MaxEventsPerBatchLimit)),
		seconds("BROKER__DELIVERTIMEOUTINSECONDS", c.DeliverTimeoutSeconds, 1),
		atLeast("BROKER__MAXCONCURRENTDELIVERIES", c.MaxConcurrentDeliveries, 1),
		atLeast("BROKER__MAXREADBATCHSIZE", c.MaxReadBatchSize, 1),
		seconds("BROKER__MAXSUBSCRIPTIONCACHESTALENESSINSECONDS", c.MaxSubscriptionCacheStalenessSeconds, 0),
		seconds("BROKER__STARTTIMEOUTINSECONDS", c.StartTimeoutSeconds, 1),
		seconds("BROKER__STOPTIMEOUTINSECONDS", c.StopTimeoutSeconds, 0),
		atLeast("API__DELIVERYPOLICYLIMITS__MAXEVENTSPERBATCH", c.MaxEventsPerBatchLimit, 1),
		atLeast("API__DELIVERYPOLICYLIMITS__MAXPREFERREDBATCHSIZEINKILOBYTES", c.MaxPreferredBatchSizeKBLimit, 1),
		r("API__RETRYPOLICYLIMITS__MINEXPIRATIONTIMEINMINUTES", c.RetryMinExpirationMinutes, 1, maxMinutes),
		r("API__RETRYPOLICYLIMITS__MAXEXPIRATIONTIMEINMINUTES", c.RetryMaxExpirationMinutes, max(1, c.RetryMinExpirationMinutes), maxMinutes),
		atLeast("API__RETRYPOLICYLIMITS__MAXDELIVERYATTEMPTS", c.RetryMaxDeliveryAttempts, 1),
		atLeast("API__MAXTOPICNAMELENGTH", c.MaxTopicNameLength, 1),
		atLeast("API__MAXCONTENTLENGTHINBYTES", c.MaxContentLength, 1),
		seconds("API__REQUESTTIMEOUTINSECONDS", c.RequestTimeoutSeconds, 1),
		r("API__HTTPPORT", c.HTTPPort, 0, 65535),
		r("API__HTTPSPORT", c.HTTPSPort, 0, 65535),
		seconds("METRICS__REPORTINGINTERVALINSECONDS", c.MetricsReportingIntervalSeconds, 1),
		atLeast("API__MAXHEADERBYTES", c.MaxHeaderBytes, 4097), // net/http cannot cap below it
		{"API__MAXDISCARDBYTES", c.MaxDiscardBytes, 0, unbounded},
		{"API__MAXBODYBYTESINFLIGHT", c.MaxBodyBytesInFlight, 0, unbounded},
		seconds("API__READHEADERTIMEOUTINSECONDS", c.ReadHeaderTimeoutSeconds, 1),
		atLeast("BROKER__MAXTOPICS", c.MaxTopics, 1),
		atLeast("BROKER__MAXSUBSCRIPTIONSPERTOPIC", c.MaxSubscriptionsPerTopic, 1),
		atLeast("BROKER__MAXQUEUEDEVENTS", c.MaxQueuedEvents, 1),
		{"BROKER__MAXQUEUEDBYTES", c.MaxQueuedBytes, 1, unbounded},
		atLeast("BROKER__MAXQUEUEDEVENTSPERSUBSCRIPTION", c.MaxQueuedEventsPerSubscription, 1),
		{"BROKER__MAXQUEUEDBYTESPERSUBSCRIPTION", c.MaxQueuedBytesPerSubscription, 1, unbounded},
		r("BROKER__PUBLISHHOLDINMILLISECONDS", c.PublishHoldMilliseconds, 0, maxPublishHoldMilliseconds),
		atLeast("BROKER__PROBATIONAFTERFAILURES", c.ProbationAfterFailures, 1),
		seconds("BROKER__DEADLETTERFLUSHINTERVALINSECONDS", c.DeadLetterFlushIntervalSeconds, 1),
		seconds("BROKER__DEADLETTERMAXWAITINSECONDS", c.DeadLetterMaxWaitSeconds, 1),
		atLeast("BROKER__MAXCONCURRENTDELIVERIESPERSUBSCRIPTION", c.MaxDeliveriesPerSubscription, 1),
		atLeast("BROKER__MAXWAITINGRECEIVES", c.MaxWaitingReceives, 1),
		r("BROKER__MAXFAILURESPERSUBSCRIPTION", c.MaxFailuresPerSubscription, 0, maxFailures),
		{"BROKER__MAXFAILUREBYTESPERSUBSCRIPTION", c.MaxFailureBytesPerSubscription, 0, maxFailureBytes},
		r("API__MAXEVENTSTREAMS", c.MaxEventStreams, 0, maxEventStreams),
		r("API__EVENTSTREAMHEARTBEATINTERVALINSECONDS", c.EventStreamHeartbeatSeconds, 1, maxHeartbeatSeconds),
		r("API__MAXCONNECTIONS", c.MaxConnections, 1, maxConnections),
		atLeast("API__FILTERLIMITS__MAXADVANCEDFILTERS", c.MaxAdvancedFilters, 1),
		atLeast("API__FILTERLIMITS__MAXVALUESPERFILTER", c.MaxFilterValues, 1),
		atLeast("API__FILTERLIMITS__MAXSTRINGLENGTH", c.MaxFilterStringLength, 1),
		atLeast("API__FILTERLIMITS__MAXINCLUDEDEVENTTYPES", c.MaxIncludedEventTypes, 1),
		seconds("EDGEHUB__TOKENLIFETIMEINSECONDS", c.EdgeHubTokenLifetimeSeconds, 5),
		seconds("EDGEHUB__MAXRECONNECTINTERVALINSECONDS", c.EdgeHubMaxReconnectSeconds, 1),
		seconds("DESIRED_CONFIG_POLLINTERVALINSECONDS", c.DesiredConfigPollSeconds, 1),
		seconds("DESIRED_CONFIG_MAXRETRYINTERVALINSECONDS", c.DesiredConfigMaxRetrySeconds, 1),
		atLeast("BROKER__REPLICAS", c.Replicas, 1),
	}
}

// Validate checks every enum value, integer range and cross-field rule and
// returns all violations joined with errors.Join, or nil. Each message names
// the key in its documented spelling and what it accepts, e.g.
//
//	invalid value 70000 for api__httpPort: accepted range is 0 to 65535
//
// Validate does not touch the environment or the file system: it checks that
// certificate files are named, not that they exist.
func (c Config) Validate() error {
	var errs []error
	bad := func(env string, value any, accepted string) {
		errs = append(errs, fmt.Errorf("invalid value %v for %s: %s", value, docName(env), accepted))
	}
	enum := func(env string, ok bool, value, accepted string) {
		if !ok {
			bad(env, fmt.Sprintf("%q", value), accepted)
		}
	}
	enum("INBOUND__SERVERAUTH__TLSPOLICY", slices.Contains(tlsPolicies, c.TLSPolicy), string(c.TLSPolicy), acceptedValues(tlsPolicies))
	enum("INBOUND__SERVERAUTH__SERVERCERT__SOURCE", slices.Contains(certSources, c.ServerCertSource), string(c.ServerCertSource), acceptedValues(certSources))
	enum("INBOUND__CLIENTAUTH__CLIENTCERT__SOURCE", slices.Contains(certSources, c.ClientCertSource), string(c.ClientCertSource), acceptedValues(certSources))
	enum("OUTBOUND__CLIENTAUTH__CLIENTCERT__SOURCE", slices.Contains(certSources, c.OutboundClientCertSource), string(c.OutboundClientCertSource), acceptedValues(certSources))
	enum("METRICS__REPORTERTYPE", slices.Contains(reporterTypes, c.MetricsReporterType), string(c.MetricsReporterType), acceptedValues(reporterTypes))
	enum("BROKER__DEFAULTRETRYSCHEDULE", slices.Contains(retrySchedules, c.DefaultRetrySchedule), string(c.DefaultRetrySchedule), acceptedValues(retrySchedules))
	enum("LOG__FORMAT", slices.Contains(logFormats, c.LogFormat), c.LogFormat, acceptedValues(logFormats))
	enum("LOG__LEVEL", slices.Contains(logLevels, c.LogLevel), c.LogLevel, acceptedValues(logLevels))
	enum("EDGEHUB__TWIN", slices.Contains(twinModes, c.EdgeHubTwin), c.EdgeHubTwin, acceptedValues(twinModes))
	enum("BROKER__BACKOFFINTERVALS", c.BackoffIntervals.valid(), c.BackoffIntervals.String(), intervalsAccepted)
	enum("API__PUBLICHOST", validPublicHost(c.PublicHost), c.PublicHost, "a host name or IP address, optionally with :port, without scheme or path (e.g. eventgridmodule or gateway.example:4438)")
	if c.ExponentialScale > maxExponentialScale {
		bad("BROKER__EXPONENTIALSCALE", float64(c.ExponentialScale), fmt.Sprintf("accepted values are positive numbers up to %d such as 1 or 0.01", maxExponentialScale))
	}
	if c.QueueTimeScale > maxQueueTimeScale {
		bad("BROKER__QUEUETIMESCALE", float64(c.QueueTimeScale), fmt.Sprintf("accepted values are positive numbers up to %d such as 1 or 0.02 (it shortens queue subscriptions' times for tests)", maxQueueTimeScale))
	}

	for _, r := range c.intRanges() {
		if r.value < r.min || r.value > r.max {
			bad(r.env, r.value, r.accepted())
		}
	}
	return errors.Join(append(errs, c.crossFieldErrors()...)...)
}

// validPublicHost reports whether s is empty or a host[:port] that can
// stand in a URL's authority.
func validPublicHost(s string) bool {
	if s == "" {
		return true
	}
	host := s
	if h, port, err := net.SplitHostPort(s); err == nil {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return false
		}
		host = h
	} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		host = s[1 : len(s)-1]
	}
	if host == "" {
		return false
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.To4() != nil || strings.HasPrefix(s, "[")
	}
	for _, r := range host {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return false
		}
	}
	return true
}

// crossFieldErrors checks the rules that tie settings together.
func (c Config) crossFieldErrors() []error {
	var errs []error
	require := func(env, value, when string) {
		if value == "" {
			errs = append(errs, fmt.Errorf("missing %s: required when %s", docName(env), when))
		}
	}
	if c.SASKeysEnabled && c.SASKey1 == "" && c.SASKey2 == "" {
		errs = append(errs, fmt.Errorf("missing %s or %s: at least one key is required when %s is true",
			docName("INBOUND__CLIENTAUTH__SASKEYS__KEY1"), docName("INBOUND__CLIENTAUTH__SASKEYS__KEY2"),
			docName("INBOUND__CLIENTAUTH__SASKEYS__ENABLED")))
	}
	if c.ServerCertSource == CertSourceFile {
		when := docName("INBOUND__SERVERAUTH__SERVERCERT__SOURCE") + " is File"
		require("INBOUND__SERVERAUTH__SERVERCERT__CERTFILE", c.ServerCertFile, when)
		require("INBOUND__SERVERAUTH__SERVERCERT__KEYFILE", c.ServerKeyFile, when)
	}
	if c.ClientCertEnabled && c.ClientCertSource == CertSourceFile {
		when := docName("INBOUND__CLIENTAUTH__CLIENTCERT__SOURCE") + " is File and " +
			docName("INBOUND__CLIENTAUTH__CLIENTCERT__ENABLED") + " is true"
		require("INBOUND__CLIENTAUTH__CLIENTCERT__CAFILE", c.ClientCertCAFile, when)
	}
	if c.OutboundClientCertEnabled && c.OutboundClientCertSource == CertSourceFile {
		when := docName("OUTBOUND__CLIENTAUTH__CLIENTCERT__SOURCE") + " is File and " +
			docName("OUTBOUND__CLIENTAUTH__CLIENTCERT__ENABLED") + " is true"
		require("OUTBOUND__CLIENTAUTH__CLIENTCERT__CERTFILE", c.OutboundClientCertFile, when)
		require("OUTBOUND__CLIENTAUTH__CLIENTCERT__KEYFILE", c.OutboundClientKeyFile, when)
	}
	if c.TLSPolicy == TLSEnabled && c.HTTPPort != 0 && c.HTTPPort == c.HTTPSPort {
		errs = append(errs, fmt.Errorf("%s and %s are both %d: they must differ when %s is enabled",
			docName("API__HTTPPORT"), docName("API__HTTPSPORT"), c.HTTPPort, docName("INBOUND__SERVERAUTH__TLSPOLICY")))
	}
	if c.MaxBodyBytesInFlight > 0 && c.MaxBodyBytesInFlight < int64(c.MaxContentLength) {
		errs = append(errs, fmt.Errorf("invalid value %d for %s: it must be 0 or at least %s (%d), or no body of that size could ever be read",
			c.MaxBodyBytesInFlight, docName("API__MAXBODYBYTESINFLIGHT"), docName("API__MAXCONTENTLENGTHINBYTES"), c.MaxContentLength))
	}
	if c.DesiredConfig != "" && c.DesiredConfigFile != "" {
		errs = append(errs, fmt.Errorf("%s and %s are both set: set at most one",
			docName("DESIRED_CONFIG"), docName("DESIRED_CONFIG_FILE")))
	}
	return errs
}

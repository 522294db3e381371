package config

import (
	"fmt"
	"reflect"
	"strconv"

	"github.com/kelseyhightower/envconfig"
)

// Config holds every setting the broker reads from its environment. The
// envconfig tags name each key's canonical upper-case environment variable
// and its default; the comments give the documented spelling. A Config is a
// plain value: copy it freely; its methods are safe for concurrent use.
type Config struct {
	// TLSPolicy is inbound__serverAuth__tlsPolicy: which listeners open.
	TLSPolicy TLSPolicy `envconfig:"INBOUND__SERVERAUTH__TLSPOLICY" default:"strict"`
	// ServerCertSource is inbound__serverAuth__serverCert__source.
	ServerCertSource CertSource `envconfig:"INBOUND__SERVERAUTH__SERVERCERT__SOURCE" default:"IoTEdge"`
	// ServerCertFile is inbound__serverAuth__serverCert__certFile, a PEM
	// certificate read when ServerCertSource is File.
	ServerCertFile string `envconfig:"INBOUND__SERVERAUTH__SERVERCERT__CERTFILE"`
	// ServerKeyFile is inbound__serverAuth__serverCert__keyFile, its PEM key.
	ServerKeyFile string `envconfig:"INBOUND__SERVERAUTH__SERVERCERT__KEYFILE"`
	// ServerCAFile is inbound__serverAuth__serverCert__caFile, an optional
	// PEM chain served after the certificate.
	ServerCAFile string `envconfig:"INBOUND__SERVERAUTH__SERVERCERT__CAFILE"`

	// ClientCertEnabled is inbound__clientAuth__clientCert__enabled.
	ClientCertEnabled bool `envconfig:"INBOUND__CLIENTAUTH__CLIENTCERT__ENABLED" default:"true"`
	// ClientCertSource is inbound__clientAuth__clientCert__source, the trust
	// source for client certificates.
	ClientCertSource CertSource `envconfig:"INBOUND__CLIENTAUTH__CLIENTCERT__SOURCE" default:"IoTEdge"`
	// ClientCertCAFile is inbound__clientAuth__clientCert__caFile, the PEM
	// trust bundle used when ClientCertSource is File.
	ClientCertCAFile string `envconfig:"INBOUND__CLIENTAUTH__CLIENTCERT__CAFILE"`
	// ClientCertAllowUnknownCA is inbound__clientAuth__clientCert__allowUnknownCA.
	ClientCertAllowUnknownCA bool `envconfig:"INBOUND__CLIENTAUTH__CLIENTCERT__ALLOWUNKNOWNCA" default:"true"`
	// SASKeysEnabled is inbound__clientAuth__sasKeys__enabled.
	SASKeysEnabled bool `envconfig:"INBOUND__CLIENTAUTH__SASKEYS__ENABLED" default:"false"`
	// SASKey1 is inbound__clientAuth__sasKeys__key1, a secret.
	SASKey1 string `envconfig:"INBOUND__CLIENTAUTH__SASKEYS__KEY1"`
	// SASKey2 is inbound__clientAuth__sasKeys__key2, a secret.
	SASKey2 string `envconfig:"INBOUND__CLIENTAUTH__SASKEYS__KEY2"`

	// OutboundClientCertEnabled is outbound__clientAuth__clientCert__enabled.
	OutboundClientCertEnabled bool `envconfig:"OUTBOUND__CLIENTAUTH__CLIENTCERT__ENABLED" default:"true"`
	// OutboundClientCertSource is outbound__clientAuth__clientCert__source.
	OutboundClientCertSource CertSource `envconfig:"OUTBOUND__CLIENTAUTH__CLIENTCERT__SOURCE" default:"IoTEdge"`
	// OutboundClientCertFile is outbound__clientAuth__clientCert__certFile.
	OutboundClientCertFile string `envconfig:"OUTBOUND__CLIENTAUTH__CLIENTCERT__CERTFILE"`
	// OutboundClientKeyFile is outbound__clientAuth__clientCert__keyFile.
	OutboundClientKeyFile string `envconfig:"OUTBOUND__CLIENTAUTH__CLIENTCERT__KEYFILE"`

	// WebhookHTTPSOnly is outbound__webhook__httpsOnly.
	WebhookHTTPSOnly bool `envconfig:"OUTBOUND__WEBHOOK__HTTPSONLY" default:"true"`
	// WebhookSkipServerCertValidation is outbound__webhook__skipServerCertValidation.
	WebhookSkipServerCertValidation bool `envconfig:"OUTBOUND__WEBHOOK__SKIPSERVERCERTVALIDATION" default:"false"`
	// WebhookAllowUnknownCA is outbound__webhook__allowUnknownCA.
	WebhookAllowUnknownCA bool `envconfig:"OUTBOUND__WEBHOOK__ALLOWUNKNOWNCA" default:"true"`
	// WebhookSkipEventGridURLValidation is outbound__webhook__skipEventGridUrlValidation.
	WebhookSkipEventGridURLValidation bool `envconfig:"OUTBOUND__WEBHOOK__SKIPEVENTGRIDURLVALIDATION" default:"false"`
	// EventGridHTTPSOnly is outbound__eventgrid__httpsOnly.
	EventGridHTTPSOnly bool `envconfig:"OUTBOUND__EVENTGRID__HTTPSONLY" default:"true"`
	// EventGridAllowInvalidHostnames is outbound__eventgrid__allowInvalidHostnames.
	EventGridAllowInvalidHostnames bool `envconfig:"OUTBOUND__EVENTGRID__ALLOWINVALIDHOSTNAMES" default:"false"`

	// DefaultMaxDeliveryAttempts is broker__defaultMaxDeliveryAttempts (also
	// read as brokers__defaultMaxDeliveryAttempts).
	DefaultMaxDeliveryAttempts int `envconfig:"BROKER__DEFAULTMAXDELIVERYATTEMPTS" default:"30"`
	// DefaultEventTTLSeconds is broker__defaultEventTimeToLiveInSeconds.
	DefaultEventTTLSeconds int `envconfig:"BROKER__DEFAULTEVENTTIMETOLIVEINSECONDS" default:"7200"`
	// DefaultMaxBatchSizeInBytes is broker__defaultMaxBatchSizeInBytes.
	DefaultMaxBatchSizeInBytes int `envconfig:"BROKER__DEFAULTMAXBATCHSIZEINBYTES" default:"1058576"`
	// DefaultMaxEventsPerBatch is broker__defaultMaxEventsPerBatch.
	DefaultMaxEventsPerBatch int `envconfig:"BROKER__DEFAULTMAXEVENTSPERBATCH" default:"10"`
	// LogDeliverySuccess is broker__logDeliverySuccess.
	LogDeliverySuccess bool `envconfig:"BROKER__LOGDELIVERYSUCCESS" default:"false"`
	// LogDeliveryFailure is broker__logDeliveryFailure.
	LogDeliveryFailure bool `envconfig:"BROKER__LOGDELIVERYFAILURE" default:"true"`
	// LogEventExpiry is broker__logEventExpiry.
	LogEventExpiry bool `envconfig:"BROKER__LOGEVENTEXPIRY" default:"true"`
	// DeliverTimeoutSeconds is broker__deliverTimeoutInSeconds.
	DeliverTimeoutSeconds int `envconfig:"BROKER__DELIVERTIMEOUTINSECONDS" default:"60"`
	// MaxConcurrentDeliveries is broker__maxConcurrentDeliveries.
	MaxConcurrentDeliveries int `envconfig:"BROKER__MAXCONCURRENTDELIVERIES" default:"100"`
	// MaxReadBatchSize is broker__maxReadBatchSize.
	MaxReadBatchSize int `envconfig:"BROKER__MAXREADBATCHSIZE" default:"200"`
	// BackoffIntervals is broker__backoffIntervals.
	BackoffIntervals Intervals `envconfig:"BROKER__BACKOFFINTERVALS" default:"00:01:00,00:10:00"`
	// MaxSubscriptionCacheStalenessSeconds is broker__maxSubscriptionCacheStalenessInSeconds.
	MaxSubscriptionCacheStalenessSeconds int `envconfig:"BROKER__MAXSUBSCRIPTIONCACHESTALENESSINSECONDS" default:"3"`
	// DefaultIsPersisted is broker__defaultIsPersisted. Events stay in
	// memory whatever it says; the caller warns when it is true.
	DefaultIsPersisted bool `envconfig:"BROKER__DEFAULTISPERSISTED" default:"false"`
	// BackoffIsPersisted is broker__backoffIsPersisted, treated likewise.
	BackoffIsPersisted bool `envconfig:"BROKER__BACKOFFISPERSISTED" default:"false"`
	// StartTimeoutSeconds is broker__startTimeoutInSeconds.
	StartTimeoutSeconds int `envconfig:"BROKER__STARTTIMEOUTINSECONDS" default:"120"`
	// StopTimeoutSeconds is broker__stopTimeoutInSeconds.
	StopTimeoutSeconds int `envconfig:"BROKER__STOPTIMEOUTINSECONDS" default:"120"`

	// MaxEventsPerBatchLimit is api__deliveryPolicyLimits__maxEventsPerBatch.
	MaxEventsPerBatchLimit int `envconfig:"API__DELIVERYPOLICYLIMITS__MAXEVENTSPERBATCH" default:"50"`
	// MaxPreferredBatchSizeKBLimit is
	// api__deliveryPolicyLimits__maxPreferredBatchSizeInKilobytes. When only
	// the legacy api__deliveryPolicyLimits__maxBatchSizeInBytes is set, Load
	// sets it to that many bytes divided by 1024, rounded down, at least 1.
	MaxPreferredBatchSizeKBLimit int `envconfig:"API__DELIVERYPOLICYLIMITS__MAXPREFERREDBATCHSIZEINKILOBYTES" default:"1033"`
	// RetryMinExpirationMinutes is api__retryPolicyLimits__minExpirationTimeInMinutes.
	RetryMinExpirationMinutes int `envconfig:"API__RETRYPOLICYLIMITS__MINEXPIRATIONTIMEINMINUTES" default:"1"`
	// RetryMaxExpirationMinutes is api__retryPolicyLimits__maxExpirationTimeInMinutes.
	RetryMaxExpirationMinutes int `envconfig:"API__RETRYPOLICYLIMITS__MAXEXPIRATIONTIMEINMINUTES" default:"1440"`
	// RetryMaxDeliveryAttempts is api__retryPolicyLimits__maxDeliveryAttempts.
	RetryMaxDeliveryAttempts int `envconfig:"API__RETRYPOLICYLIMITS__MAXDELIVERYATTEMPTS" default:"30"`
	// MaxTopicNameLength is api__maxTopicNameLength.
	MaxTopicNameLength int `envconfig:"API__MAXTOPICNAMELENGTH" default:"128"`
	// MaxContentLength is api__maxContentLengthInBytes.
	MaxContentLength int `envconfig:"API__MAXCONTENTLENGTHINBYTES" default:"1058576"`
	// RequestTimeoutSeconds is api__requestTimeoutInSeconds.
	RequestTimeoutSeconds int `envconfig:"API__REQUESTTIMEOUTINSECONDS" default:"30"`
	// HTTPPort is api__httpPort; 0 picks any free port.
	HTTPPort int `envconfig:"API__HTTPPORT" default:"5888"`
	// HTTPSPort is api__httpsPort; 0 picks any free port.
	HTTPSPort int `envconfig:"API__HTTPSPORT" default:"4438"`
	// HealthProbeEnabled is api__health__httpProbe__enabled.
	HealthProbeEnabled bool `envconfig:"API__HEALTH__HTTPPROBE__ENABLED" default:"true"`

	// MetricsReporterType is metrics__reporterType.
	MetricsReporterType ReporterType `envconfig:"METRICS__REPORTERTYPE" default:"none"`
	// MetricsReportingIntervalSeconds is metrics__reportingIntervalInSeconds.
	MetricsReportingIntervalSeconds int `envconfig:"METRICS__REPORTINGINTERVALINSECONDS" default:"60"`

	// DesiredConfig is desired_config: topics and subscriptions as inline
	// JSON. It may hold secrets; never log its content.
	DesiredConfig string `envconfig:"DESIRED_CONFIG"`
	// DesiredConfigFile is desired_config_file: a path to the same JSON.
	DesiredConfigFile string `envconfig:"DESIRED_CONFIG_FILE"`
	// DesiredConfigPollSeconds is desired_config_pollIntervalInSeconds
	// (edgegrid extension): how often desired_config_file is read again;
	// a change of content is applied live.
	DesiredConfigPollSeconds int `envconfig:"DESIRED_CONFIG_POLLINTERVALINSECONDS" default:"5"`
	// DesiredConfigMaxRetrySeconds is
	// desired_config_maxRetryIntervalInSeconds (edgegrid extension): the
	// longest wait before a source whose entries failed for a passing
	// reason is applied again (the wait starts at a second and doubles).
	DesiredConfigMaxRetrySeconds int `envconfig:"DESIRED_CONFIG_MAXRETRYINTERVALINSECONDS" default:"60"`
	// Replicas is broker__replicas (edgegrid extension): how many brokers
	// run side by side behind one Service, as the Helm chart sets it. Each
	// holds its own queues, so with more than one the broker warns about
	// its queue subscriptions.
	Replicas int `envconfig:"BROKER__REPLICAS" default:"1"`

	// IoTEdgeModuleID is IOTEDGE_MODULEID, set by the IoT Edge runtime.
	IoTEdgeModuleID string `envconfig:"IOTEDGE_MODULEID"`
	// IoTEdgeDeviceID is IOTEDGE_DEVICEID.
	IoTEdgeDeviceID string `envconfig:"IOTEDGE_DEVICEID"`
	// IoTEdgeHubHostName is IOTEDGE_IOTHUBHOSTNAME.
	IoTEdgeHubHostName string `envconfig:"IOTEDGE_IOTHUBHOSTNAME"`
	// IoTEdgeGenerationID is IOTEDGE_MODULEGENERATIONID.
	IoTEdgeGenerationID string `envconfig:"IOTEDGE_MODULEGENERATIONID"`
	// IoTEdgeGatewayHostName is IOTEDGE_GATEWAYHOSTNAME.
	IoTEdgeGatewayHostName string `envconfig:"IOTEDGE_GATEWAYHOSTNAME"`
	// IoTEdgeAPIVersion is IOTEDGE_APIVERSION, the workload API version.
	IoTEdgeAPIVersion string `envconfig:"IOTEDGE_APIVERSION"`
	// IoTEdgeWorkloadURI is IOTEDGE_WORKLOADURI; empty outside IoT Edge.
	IoTEdgeWorkloadURI string `envconfig:"IOTEDGE_WORKLOADURI"`

	// BindAddress is api__bindAddress (edgegrid extension): the listeners'
	// host; empty means all interfaces.
	BindAddress string `envconfig:"API__BINDADDRESS"`
	// PublicHost is api__publicHost (edgegrid extension): the host, or
	// host:port, that topics' endpoint URLs name. Empty means the module's
	// name (IOTEDGE_MODULEID, else eventgridmodule), the name other modules
	// reach it by; without a port the serving listener's port is added.
	// Endpoint URLs never echo a request's Host header.
	PublicHost string `envconfig:"API__PUBLICHOST"`
	// MaxDiscardBytes is api__maxDiscardBytes (edgegrid extension): how much
	// of a refused request's body is read and discarded so that the client
	// reads the refusal.
	MaxDiscardBytes int64 `envconfig:"API__MAXDISCARDBYTES" default:"16777216"`
	// MaxBodyBytesInFlight is api__maxBodyBytesInFlight (edgegrid
	// extension): the memory request bodies being read may hold together;
	// a body that would pass it is refused with 503. 0 means a quarter of
	// broker__maxQueuedBytes, at least api__maxContentLengthInBytes.
	MaxBodyBytesInFlight int64 `envconfig:"API__MAXBODYBYTESINFLIGHT" default:"0"`
	// MaxHeaderBytes is api__maxHeaderBytes (edgegrid extension).
	MaxHeaderBytes int `envconfig:"API__MAXHEADERBYTES" default:"16384"`
	// ReadHeaderTimeoutSeconds is api__readHeaderTimeoutInSeconds (edgegrid extension).
	ReadHeaderTimeoutSeconds int `envconfig:"API__READHEADERTIMEOUTINSECONDS" default:"10"`
	// MaxTopics is broker__maxTopics (edgegrid extension).
	MaxTopics int `envconfig:"BROKER__MAXTOPICS" default:"100"`
	// MaxSubscriptionsPerTopic is broker__maxSubscriptionsPerTopic (edgegrid extension).
	MaxSubscriptionsPerTopic int `envconfig:"BROKER__MAXSUBSCRIPTIONSPERTOPIC" default:"500"`
	// MaxQueuedEvents is broker__maxQueuedEvents (edgegrid extension): queued
	// (event, subscription) pairs across the broker.
	MaxQueuedEvents int `envconfig:"BROKER__MAXQUEUEDEVENTS" default:"100000"`
	// MaxQueuedBytes is broker__maxQueuedBytes (edgegrid extension): bytes of
	// queued event bodies across the broker.
	MaxQueuedBytes int64 `envconfig:"BROKER__MAXQUEUEDBYTES" default:"268435456"`
	// MaxQueuedEventsPerSubscription is
	// broker__maxQueuedEventsPerSubscription (edgegrid extension): one
	// subscription's share of the queued events.
	MaxQueuedEventsPerSubscription int `envconfig:"BROKER__MAXQUEUEDEVENTSPERSUBSCRIPTION" default:"25000"`
	// MaxQueuedBytesPerSubscription is
	// broker__maxQueuedBytesPerSubscription (edgegrid extension): one
	// subscription's share of the queued bytes.
	MaxQueuedBytesPerSubscription int64 `envconfig:"BROKER__MAXQUEUEDBYTESPERSUBSCRIPTION" default:"67108864"`
	// PublishHoldMilliseconds is broker__publishHoldInMilliseconds
	// (edgegrid extension): the longest a publish request that does not
	// fit the queued-event bounds now is held for room while the
	// subscribers it waits for take deliveries; 0 refuses it at once.
	PublishHoldMilliseconds int `envconfig:"BROKER__PUBLISHHOLDINMILLISECONDS" default:"1000"`
	// DefaultRetrySchedule is broker__defaultRetrySchedule (edgegrid
	// extension): the delivery profile of subscriptions that name none.
	DefaultRetrySchedule RetrySchedule `envconfig:"BROKER__DEFAULTRETRYSCHEDULE" default:"EdgeQueues"`
	// ExponentialScale is broker__exponentialScale (edgegrid extension): a
	// factor on the CloudExponential delays and probation lengths.
	ExponentialScale Factor `envconfig:"BROKER__EXPONENTIALSCALE" default:"1"`
	// QueueTimeScale is broker__queueTimeScale (edgegrid extension, for
	// tests): a factor on queue subscriptions' lock durations, release
	// delays, the renew limit and the events' time to live; at most 1.
	QueueTimeScale Factor `envconfig:"BROKER__QUEUETIMESCALE" default:"1"`
	// MaxWaitingReceives is broker__maxWaitingReceives (edgegrid
	// extension): the receives of queue subscriptions that may wait for
	// events at once (long polls), across the broker.
	MaxWaitingReceives int `envconfig:"BROKER__MAXWAITINGRECEIVES" default:"1000"`
	// DeadLetterFlushIntervalSeconds is
	// broker__deadLetterFlushIntervalInSeconds (edgegrid extension): the
	// longest a subscription's dead letters wait for a blob that is not
	// full; a full blob's worth is written at once.
	DeadLetterFlushIntervalSeconds int `envconfig:"BROKER__DEADLETTERFLUSHINTERVALINSECONDS" default:"60"`
	// DeadLetterMaxWaitSeconds is broker__deadLetterMaxWaitInSeconds
	// (edgegrid extension): how long dead letters wait for storage.
	DeadLetterMaxWaitSeconds int `envconfig:"BROKER__DEADLETTERMAXWAITINSECONDS" default:"14400"`
	// ProbationAfterFailures is broker__probationAfterFailures (edgegrid
	// extension): consecutive failed attempts before probation.
	ProbationAfterFailures int `envconfig:"BROKER__PROBATIONAFTERFAILURES" default:"10"`
	// MaxDeliveriesPerSubscription is
	// broker__maxConcurrentDeliveriesPerSubscription (edgegrid extension).
	MaxDeliveriesPerSubscription int `envconfig:"BROKER__MAXCONCURRENTDELIVERIESPERSUBSCRIPTION" default:"16"`
	// MaxFailuresPerSubscription is broker__maxFailuresPerSubscription
	// (edgegrid extension): how many of the events a subscription gave up on
	// the inspection API keeps (docs/console.md#given-up); 0 keeps none.
	MaxFailuresPerSubscription int `envconfig:"BROKER__MAXFAILURESPERSUBSCRIPTION" default:"100"`
	// MaxFailureBytesPerSubscription is
	// broker__maxFailureBytesPerSubscription (edgegrid extension): the
	// bytes of events that list keeps.
	MaxFailureBytesPerSubscription int64 `envconfig:"BROKER__MAXFAILUREBYTESPERSUBSCRIPTION" default:"1048576"`
	// MaxEventStreams is api__maxEventStreams (edgegrid extension): the live
	// tails and delivery outcome streams open at once, across the broker;
	// 0 refuses them all.
	MaxEventStreams int `envconfig:"API__MAXEVENTSTREAMS" default:"32"`
	// EventStreamHeartbeatSeconds is
	// api__eventStreamHeartbeatIntervalInSeconds (edgegrid extension): how
	// often an idle event stream gets a keep-alive comment.
	EventStreamHeartbeatSeconds int `envconfig:"API__EVENTSTREAMHEARTBEATINTERVALINSECONDS" default:"15"`
	// MaxConnections is api__maxConnections (edgegrid extension): the
	// client connections open at once, across the API's listeners; at the
	// bound a new connection takes the place of the one idle the longest,
	// or is refused with 503 when none is idle.
	MaxConnections int `envconfig:"API__MAXCONNECTIONS" default:"2048"`
	// ConsoleEnabled is console__enabled (edgegrid extension): whether the
	// console page is served at /console/. The inspection API stays either
	// way.
	ConsoleEnabled bool `envconfig:"CONSOLE__ENABLED" default:"true"`
	// MaxAdvancedFilters is api__filterLimits__maxAdvancedFilters (edgegrid extension).
	MaxAdvancedFilters int `envconfig:"API__FILTERLIMITS__MAXADVANCEDFILTERS" default:"25"`
	// MaxFilterValues is api__filterLimits__maxValuesPerFilter (edgegrid extension).
	MaxFilterValues int `envconfig:"API__FILTERLIMITS__MAXVALUESPERFILTER" default:"25"`
	// MaxFilterStringLength is api__filterLimits__maxStringLength (edgegrid extension).
	MaxFilterStringLength int `envconfig:"API__FILTERLIMITS__MAXSTRINGLENGTH" default:"512"`
	// MaxIncludedEventTypes is api__filterLimits__maxIncludedEventTypes
	// (edgegrid extension): the most entries a subscription's
	// includedEventTypes may have. Azure documents no such limit; 1000 is
	// well past any list seen in practice and keeps a subscription small.
	MaxIncludedEventTypes int `envconfig:"API__FILTERLIMITS__MAXINCLUDEDEVENTTYPES" default:"1000"`
	// LogFormat is log__format (edgegrid extension): auto (console lines when
	// the log goes to a terminal outside IoT Edge, JSON otherwise), json or
	// console.
	LogFormat string `envconfig:"LOG__FORMAT" default:"auto"`
	// LogLevel is log__level (edgegrid extension): trace, debug, info, warn
	// or error.
	LogLevel string `envconfig:"LOG__LEVEL" default:"info"`
	// PprofAddress is debug__pprofAddress (edgegrid extension): when set,
	// Go's profiling endpoints are served there, without authentication, so
	// keep it on loopback (e.g. 127.0.0.1:6060). Empty, the default, serves
	// nothing.
	PprofAddress string `envconfig:"DEBUG__PPROFADDRESS"`

	// The edgehub__* keys (edgegrid extensions): the MQTT endpoint,
	// identity and credentials EdgeHub destinations publish with. Under IoT Edge
	// every one may stay empty: the endpoint is mqtts://IOTEDGE_GATEWAYHOSTNAME:8883,
	// the identity the module's and the password a SAS token the workload API
	// signs. Outside IoT Edge, edgehub__mqttUrl (with a device and module id)
	// lets EdgeHub destinations publish to any MQTT 3.1.1 broker.
	//
	// EdgeHubMQTTURL is edgehub__mqttUrl: mqtts://host:port or
	// mqtt://host:port.
	EdgeHubMQTTURL string `envconfig:"EDGEHUB__MQTTURL"`
	// EdgeHubDeviceID is edgehub__deviceId; empty means IOTEDGE_DEVICEID.
	EdgeHubDeviceID string `envconfig:"EDGEHUB__DEVICEID"`
	// EdgeHubModuleID is edgehub__moduleId; empty means IOTEDGE_MODULEID.
	EdgeHubModuleID string `envconfig:"EDGEHUB__MODULEID"`
	// EdgeHubClientID is edgehub__clientId; empty means <deviceId>/<moduleId>.
	EdgeHubClientID string `envconfig:"EDGEHUB__CLIENTID"`
	// EdgeHubUsername is edgehub__username; empty means, under IoT Edge,
	// <IOTEDGE_IOTHUBHOSTNAME>/<deviceId>/<moduleId>/?api-version=2018-06-30.
	EdgeHubUsername string `envconfig:"EDGEHUB__USERNAME"`
	// EdgeHubPassword is edgehub__password, a secret; empty means, under IoT
	// Edge, a SAS token signed by the workload API.
	EdgeHubPassword string `envconfig:"EDGEHUB__PASSWORD"`
	// EdgeHubCAFile is edgehub__caFile: PEM certificates to verify the
	// broker with; empty means the IoT Edge trust bundle, or the system's
	// roots outside IoT Edge.
	EdgeHubCAFile string `envconfig:"EDGEHUB__CAFILE"`
	// EdgeHubTokenLifetimeSeconds is edgehub__tokenLifetimeInSeconds: how long
	// a SAS token lasts; the connection is renewed after four fifths of it.
	EdgeHubTokenLifetimeSeconds int `envconfig:"EDGEHUB__TOKENLIFETIMEINSECONDS" default:"3600"`
	// EdgeHubMaxReconnectSeconds is edgehub__maxReconnectIntervalInSeconds:
	// the longest wait between connection attempts.
	EdgeHubMaxReconnectSeconds int `envconfig:"EDGEHUB__MAXRECONNECTINTERVALINSECONDS" default:"30"`
	// EdgeHubTwin is edgehub__twin: whether the module twin's desired
	// properties are followed live over the edgeHub connection. auto
	// follows them under IoT Edge only; enabled also with edgehub__mqttUrl
	// (the broker there must answer the twin requests); disabled never.
	EdgeHubTwin string `envconfig:"EDGEHUB__TWIN" default:"auto"`
}

// Default returns the configuration with every default applied and nothing
// read from the environment. The defaults come from the struct tags, the same
// ones Load uses. Each call returns a fresh value.
func Default() Config {
	var c Config
	v := reflect.ValueOf(&c).Elem()
	for i := range v.NumField() {
		def, ok := v.Type().Field(i).Tag.Lookup("default")
		if !ok {
			continue
		}
		if err := setDefault(v.Field(i), def); err != nil {
			panic(fmt.Sprintf("config: bad default tag on %s: %v", v.Type().Field(i).Name, err))
		}
	}
	return c
}

// setDefault parses a default tag the way envconfig would.
func setDefault(f reflect.Value, def string) error {
	if d, ok := f.Addr().Interface().(envconfig.Decoder); ok {
		return d.Decode(def)
	}
	switch kindOf(f.Type()) {
	case kindBool:
		b, err := strconv.ParseBool(def)
		f.SetBool(b)
		return err
	case kindInt:
		n, err := strconv.ParseInt(def, 10, f.Type().Bits())
		f.SetInt(n)
		return err
	default:
		f.SetString(def)
		return nil
	}
}

// Fields returns the effective configuration for the start-up log line, keyed
// by documented spelling (e.g. inbound__serverAuth__tlsPolicy). Values are
// string, bool, int or int64; BackoffIntervals is TimeSpan text. The SAS keys
// read "<redacted>" when set and "" when not; DesiredConfig reads
// "<N bytes>" (its length), never its content.
func (c Config) Fields() map[string]any {
	v := reflect.ValueOf(c)
	out := make(map[string]any, v.NumField())
	for i := range v.NumField() {
		info := byEnv[v.Type().Field(i).Tag.Get("envconfig")]
		f := v.Field(i)
		var val any
		switch {
		case info.redact == secret && f.String() != "":
			val = "<redacted>"
		case info.redact == sizeOnly:
			val = fmt.Sprintf("<%d bytes>", f.Len())
		case f.Type() == reflect.TypeFor[Intervals]():
			val = c.BackoffIntervals.String()
		case f.Kind() == reflect.String:
			val = f.String()
		case f.Kind() == reflect.Bool:
			val = f.Bool()
		case f.Kind() == reflect.Int64:
			val = f.Int()
		case f.Kind() == reflect.Float64:
			val = f.Float()
		default:
			val = int(f.Int())
		}
		out[info.name] = val
	}
	return out
}

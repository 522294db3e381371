package config_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/config"
)

func TestConfig_Validate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*config.Config)
		want   []string // substrings of the error; none means valid
	}{
		{"Defaults", func(*config.Config) {}, nil},
		{"PersistedFlagsAccepted", func(c *config.Config) { c.DefaultIsPersisted, c.BackoffIsPersisted = true, true }, nil},
		{"PortsZero", func(c *config.Config) { c.HTTPPort, c.HTTPSPort = 0, 0 }, nil},
		{"PortTooHigh", func(c *config.Config) { c.HTTPPort = 65536 },
			[]string{"invalid value 65536 for api__httpPort: accepted range is 0 to 65535"}},
		{"PortNegative", func(c *config.Config) { c.HTTPSPort = -1 },
			[]string{"invalid value -1 for api__httpsPort: accepted range is 0 to 65535"}},
		{"SamePortsWhenBothListen", func(c *config.Config) { c.TLSPolicy = config.TLSEnabled; c.HTTPPort = 4438 },
			[]string{"api__httpPort and api__httpsPort are both 4438"}},
		{"SamePortsStrict", func(c *config.Config) { c.HTTPPort = 4438 }, nil},
		{"BadTLSPolicy", func(c *config.Config) { c.TLSPolicy = "Strict" },
			[]string{`invalid value "Strict" for inbound__serverAuth__tlsPolicy: accepted values are strict, enabled, disabled`}},
		{"EmptyCertSource", func(c *config.Config) { c.ClientCertSource = "" },
			[]string{`invalid value "" for inbound__clientAuth__clientCert__source: accepted values are IoTEdge, File`}},
		{"BadReporter", func(c *config.Config) { c.MetricsReporterType = "telegraf" },
			[]string{"metrics__reporterType: accepted values are none, prometheus, console"}},
		{"BadLogFormat", func(c *config.Config) { c.LogFormat = "text" },
			[]string{`invalid value "text" for log__format: accepted values are auto, json, console`}},
		{"BadLogLevel", func(c *config.Config) { c.LogLevel = "verbose" },
			[]string{`invalid value "verbose" for log__level: accepted values are trace, debug, info, warn, error`}},
		{"OneInterval", func(c *config.Config) { c.BackoffIntervals = c.BackoffIntervals[:1] },
			[]string{`invalid value "00:01:00" for broker__backoffIntervals`}},
		{"ZeroInterval", func(c *config.Config) { c.BackoffIntervals = config.Intervals{0, 1} },
			[]string{"broker__backoffIntervals: accepted values are two comma-separated positive durations"}},
		{"MaxDeliveryAttemptsAbove30", func(c *config.Config) { c.DefaultMaxDeliveryAttempts = 31 },
			[]string{"invalid value 31 for broker__defaultMaxDeliveryAttempts: accepted range is 1 to 30"}},
		{"MaxDeliveryAttemptsRaisedLimit", func(c *config.Config) { c.DefaultMaxDeliveryAttempts, c.RetryMaxDeliveryAttempts = 50, 50 }, nil},
		{"MaxDeliveryAttemptsZero", func(c *config.Config) { c.DefaultMaxDeliveryAttempts = 0 },
			[]string{"broker__defaultMaxDeliveryAttempts: accepted range is 1 to 30"}},
		{"EventsPerBatchAboveLimit", func(c *config.Config) { c.DefaultMaxEventsPerBatch = 51 },
			[]string{"invalid value 51 for broker__defaultMaxEventsPerBatch: accepted range is 1 to 50"}},
		{"EventsPerBatchLoweredLimit", func(c *config.Config) { c.MaxEventsPerBatchLimit = 5 },
			[]string{"invalid value 10 for broker__defaultMaxEventsPerBatch: accepted range is 1 to 5"}},
		{"ExpirationMaxBelowMin", func(c *config.Config) { c.RetryMinExpirationMinutes, c.RetryMaxExpirationMinutes = 10, 5 },
			[]string{"invalid value 5 for api__retryPolicyLimits__maxExpirationTimeInMinutes: accepted range is 10 to 5256000"}},
		{"StopTimeoutZeroFine", func(c *config.Config) { c.StopTimeoutSeconds = 0 }, nil},
		{"PublishHoldZeroRefusesAtOnce", func(c *config.Config) { c.PublishHoldMilliseconds = 0 }, nil},
		{"PublishHoldAboveAMinute", func(c *config.Config) { c.PublishHoldMilliseconds = 60001 },
			[]string{"invalid value 60001 for broker__publishHoldInMilliseconds: accepted range is 0 to 60000"}},
		{"PublishHoldNegative", func(c *config.Config) { c.PublishHoldMilliseconds = -1 },
			[]string{"broker__publishHoldInMilliseconds: accepted range is 0 to 60000"}},
		{"TTLAboveTenYears", func(c *config.Config) { c.DefaultEventTTLSeconds = 400_000_000 },
			[]string{"invalid value 400000000 for broker__defaultEventTimeToLiveInSeconds: accepted range is 1 to 315360000"}},
		{"TTLTenYearsFine", func(c *config.Config) { c.DefaultEventTTLSeconds = 315360000 }, nil},
		{"DeliverTimeoutOverflows", func(c *config.Config) { c.DeliverTimeoutSeconds = 1 << 30 },
			[]string{"broker__deliverTimeoutInSeconds: accepted range is 1 to 315360000"}},
		{"ExpirationLimitAboveTenYears", func(c *config.Config) { c.RetryMaxExpirationMinutes = 6_000_000 },
			[]string{"invalid value 6000000 for api__retryPolicyLimits__maxExpirationTimeInMinutes: accepted range is 1 to 5256000"}},
		{"IntervalAboveTenYears", func(c *config.Config) { c.BackoffIntervals = config.Intervals{time.Minute, 3651 * 24 * time.Hour} },
			[]string{"broker__backoffIntervals: accepted values are two comma-separated positive durations of at most 3650 days"}},
		{"ExponentialScaleOverflows", func(c *config.Config) { c.ExponentialScale = 1e9 },
			[]string{"invalid value 1e+09 for broker__exponentialScale: accepted values are positive numbers up to 1000"}},
		{"ExponentialScale1000Fine", func(c *config.Config) { c.ExponentialScale = 1000 }, nil},
		{"QueueTimeScaleAboveOne", func(c *config.Config) { c.QueueTimeScale = 1e6 },
			[]string{"invalid value 1e+06 for broker__queueTimeScale: accepted values are positive numbers up to 1"}},
		{"QueueTimeScaleShorterFine", func(c *config.Config) { c.QueueTimeScale = 0.02 }, nil},
		{"NoWaitingReceives", func(c *config.Config) { c.MaxWaitingReceives = 0 },
			[]string{"invalid value 0 for broker__maxWaitingReceives: accepted range is at least 1"}},
		{"InspectionZerosFine", func(c *config.Config) {
			c.MaxFailuresPerSubscription, c.MaxFailureBytesPerSubscription, c.MaxEventStreams = 0, 0, 0
		}, nil},
		{"TooManyFailuresKept", func(c *config.Config) { c.MaxFailuresPerSubscription = 100001 },
			[]string{"invalid value 100001 for broker__maxFailuresPerSubscription: accepted range is 0 to 100000"}},
		{"FailureBytesAboveGiB", func(c *config.Config) { c.MaxFailureBytesPerSubscription = 1<<30 + 1 },
			[]string{"invalid value 1073741825 for broker__maxFailureBytesPerSubscription: accepted range is 0 to 1073741824"}},
		{"NegativeEventStreams", func(c *config.Config) { c.MaxEventStreams = -1 },
			[]string{"invalid value -1 for api__maxEventStreams: accepted range is 0 to 10000"}},
		{"HeartbeatZero", func(c *config.Config) { c.EventStreamHeartbeatSeconds = 0 },
			[]string{"invalid value 0 for api__eventStreamHeartbeatIntervalInSeconds: accepted range is 1 to 300"}},
		{"HeartbeatTooRare", func(c *config.Config) { c.EventStreamHeartbeatSeconds = 301 },
			[]string{"invalid value 301 for api__eventStreamHeartbeatIntervalInSeconds: accepted range is 1 to 300"}},
		{"NoConnections", func(c *config.Config) { c.MaxConnections = 0 },
			[]string{"invalid value 0 for api__maxConnections: accepted range is 1 to 1000000"}},
		{"OneConnectionFine", func(c *config.Config) { c.MaxConnections = 1 }, nil},
		{"DeliverTimeoutZero", func(c *config.Config) { c.DeliverTimeoutSeconds = 0 },
			[]string{"invalid value 0 for broker__deliverTimeoutInSeconds: accepted range is 1 to 315360000"}},
		{"SASWithoutKeys", func(c *config.Config) { c.SASKeysEnabled = true },
			[]string{"missing inbound__clientAuth__sasKeys__key1 or inbound__clientAuth__sasKeys__key2: at least one key is required when inbound__clientAuth__sasKeys__enabled is true"}},
		{"SASWithKey2", func(c *config.Config) { c.SASKeysEnabled, c.SASKey2 = true, "k" }, nil},
		{"SASKeysWithoutEnabled", func(c *config.Config) { c.SASKey1 = "k" }, nil},
		{"ServerCertFileMissing", func(c *config.Config) { c.ServerCertSource = config.CertSourceFile },
			[]string{
				"missing inbound__serverAuth__serverCert__certFile: required when inbound__serverAuth__serverCert__source is File",
				"missing inbound__serverAuth__serverCert__keyFile",
			}},
		{"ServerCertFileGiven", func(c *config.Config) {
			c.ServerCertSource, c.ServerCertFile, c.ServerKeyFile = config.CertSourceFile, "server.pem", "server.key"
		}, nil},
		{"ClientCAFileMissing", func(c *config.Config) { c.ClientCertSource = config.CertSourceFile },
			[]string{"missing inbound__clientAuth__clientCert__caFile: required when inbound__clientAuth__clientCert__source is File and inbound__clientAuth__clientCert__enabled is true"}},
		{"ClientCAFileNotNeededWhenDisabled", func(c *config.Config) {
			c.ClientCertSource, c.ClientCertEnabled = config.CertSourceFile, false
		}, nil},
		{"OutboundFilesMissing", func(c *config.Config) { c.OutboundClientCertSource = config.CertSourceFile },
			[]string{"missing outbound__clientAuth__clientCert__certFile", "missing outbound__clientAuth__clientCert__keyFile"}},
		{"OutboundFilesNotNeededWhenDisabled", func(c *config.Config) {
			c.OutboundClientCertSource, c.OutboundClientCertEnabled = config.CertSourceFile, false
		}, nil},
		{"BothDesiredConfigs", func(c *config.Config) { c.DesiredConfig, c.DesiredConfigFile = "{}", "/etc/eg.json" },
			[]string{"desired_config and desired_config_file are both set"}},
		{"PublicHostName", func(c *config.Config) { c.PublicHost = "eventgridmodule" }, nil},
		{"PublicHostWithPort", func(c *config.Config) { c.PublicHost = "gateway.example:4438" }, nil},
		{"PublicHostIPv4", func(c *config.Config) { c.PublicHost = "10.0.0.4" }, nil},
		{"PublicHostIPv6", func(c *config.Config) { c.PublicHost = "[fd00::4]:4438" }, nil},
		{"PublicHostURL", func(c *config.Config) { c.PublicHost = "https://gateway.example" },
			[]string{`invalid value "https://gateway.example" for api__publicHost: a host name or IP address`}},
		{"PublicHostPath", func(c *config.Config) { c.PublicHost = "gateway/x" }, []string{"api__publicHost"}},
		{"PublicHostBadPort", func(c *config.Config) { c.PublicHost = "gateway:99999" }, []string{"api__publicHost"}},
		{"PublicHostBareIPv6", func(c *config.Config) { c.PublicHost = "fd00::4" }, []string{"api__publicHost"}},
		{"BodyBudgetBelowOneBody", func(c *config.Config) { c.MaxBodyBytesInFlight = 1000 },
			[]string{"invalid value 1000 for api__maxBodyBytesInFlight: it must be 0 or at least api__maxContentLengthInBytes (1058576)"}},
		{"BodyBudgetOneBody", func(c *config.Config) { c.MaxBodyBytesInFlight = 1058576 }, nil},
		{"SeveralAtOnce", func(c *config.Config) { c.HTTPPort, c.MaxTopics, c.LogLevel = -5, 0, "loud" },
			[]string{"api__httpPort", "broker__maxTopics", "log__level"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Default()
			tt.modify(&c)
			err := c.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate accepted the config")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestConfig_Validate_EveryIntegerKey checks that every integer setting has a
// range: -1 is rejected with a message naming the documented key.
func TestConfig_Validate_EveryIntegerKey(t *testing.T) {
	docNames := map[string]string{}
	for k := range config.Default().Fields() {
		docNames[strings.ToUpper(k)] = k
	}
	typ := reflect.TypeFor[config.Config]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Type.Kind() != reflect.Int && f.Type.Kind() != reflect.Int64 {
			continue
		}
		key := docNames[f.Tag.Get("envconfig")]
		t.Run(key, func(t *testing.T) {
			c := config.Default()
			reflect.ValueOf(&c).Elem().Field(i).SetInt(-1)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), "invalid value -1 for "+key+": accepted range is ") {
				t.Fatalf("Validate() = %v, want a range error for %s", err, key)
			}
		})
	}
}

// TestConfig_Validate_EveryStringEnum checks that every enum-valued string
// setting rejects an unknown value with a message naming the documented key.
func TestConfig_Validate_EveryStringEnum(t *testing.T) {
	docNames := map[string]string{}
	for k := range config.Default().Fields() {
		docNames[strings.ToUpper(k)] = k
	}
	typ := reflect.TypeFor[config.Config]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Type.Kind() != reflect.String || (f.Type.PkgPath() == "" && f.Name != "LogFormat" && f.Name != "LogLevel") {
			continue
		}
		key := docNames[f.Tag.Get("envconfig")]
		t.Run(key, func(t *testing.T) {
			c := config.Default()
			reflect.ValueOf(&c).Elem().Field(i).SetString("bogus")
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), `invalid value "bogus" for `+key+": accepted values are ") {
				t.Fatalf("Validate() = %v, want an accepted-values error for %s", err, key)
			}
		})
	}
}

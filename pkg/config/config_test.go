package config_test

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/config"
)

// MustCleanEnv unsets, for the duration of the test, every variable that
// spells a configuration key, in any case or separator style.
func MustCleanEnv(tb testing.TB) {
	tb.Helper()
	known := map[string]bool{
		"BROKERS__DEFAULTMAXDELIVERYATTEMPTS":            true,
		"API__DELIVERYPOLICYLIMITS__MAXBATCHSIZEINBYTES": true,
	}
	for k := range config.Default().Fields() {
		known[strings.ToUpper(k)] = true
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if known[strings.ToUpper(strings.ReplaceAll(name, ":", "__"))] {
			tb.Setenv(name, "") // restores the original value after the test
			if err := os.Unsetenv(name); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// MustLoad calls config.Load and fails the test on error.
func MustLoad(tb testing.TB) config.Config {
	tb.Helper()
	c, err := config.Load()
	if err != nil {
		tb.Fatalf("Load: %v", err)
	}
	return c
}

// specDefaults is the default configuration written out by hand from the
// original module's documented defaults and the edgegrid extensions
// (docs/configuration.md).
var specDefaults = config.Config{
	TLSPolicy:                            "strict",
	ServerCertSource:                     "IoTEdge",
	ClientCertEnabled:                    true,
	ClientCertSource:                     "IoTEdge",
	ClientCertAllowUnknownCA:             true,
	SASKeysEnabled:                       false,
	OutboundClientCertEnabled:            true,
	OutboundClientCertSource:             "IoTEdge",
	WebhookHTTPSOnly:                     true,
	WebhookSkipServerCertValidation:      false,
	WebhookAllowUnknownCA:                true,
	WebhookSkipEventGridURLValidation:    false,
	EventGridHTTPSOnly:                   true,
	EventGridAllowInvalidHostnames:       false,
	DefaultMaxDeliveryAttempts:           30,
	DefaultEventTTLSeconds:               7200,
	DefaultMaxBatchSizeInBytes:           1058576,
	DefaultMaxEventsPerBatch:             10,
	LogDeliverySuccess:                   false,
	LogDeliveryFailure:                   true,
	LogEventExpiry:                       true,
	DeliverTimeoutSeconds:                60,
	MaxConcurrentDeliveries:              100,
	MaxReadBatchSize:                     200,
	BackoffIntervals:                     config.Intervals{time.Minute, 10 * time.Minute},
	MaxSubscriptionCacheStalenessSeconds: 3,
	DefaultIsPersisted:                   false,
	BackoffIsPersisted:                   false,
	StartTimeoutSeconds:                  120,
	StopTimeoutSeconds:                   120,
	MaxEventsPerBatchLimit:               50,
	MaxPreferredBatchSizeKBLimit:         1033,
	RetryMinExpirationMinutes:            1,
	RetryMaxExpirationMinutes:            1440,
	RetryMaxDeliveryAttempts:             30,
	MaxTopicNameLength:                   128,
	MaxContentLength:                     1058576,
	RequestTimeoutSeconds:                30,
	HTTPPort:                             5888,
	HTTPSPort:                            4438,
	HealthProbeEnabled:                   true,
	MetricsReporterType:                  "none",
	MetricsReportingIntervalSeconds:      60,
	MaxHeaderBytes:                       16384,
	MaxDiscardBytes:                      16777216,
	ReadHeaderTimeoutSeconds:             10,
	MaxTopics:                            100,
	MaxSubscriptionsPerTopic:             500,
	MaxQueuedEvents:                      100000,
	MaxQueuedBytes:                       268435456,
	MaxQueuedEventsPerSubscription:       25000,
	MaxQueuedBytesPerSubscription:        67108864,
	PublishHoldMilliseconds:              1000,
	DefaultRetrySchedule:                 "EdgeQueues",
	ExponentialScale:                     1,
	QueueTimeScale:                       1,
	MaxWaitingReceives:                   1000,
	ProbationAfterFailures:               10,
	DeadLetterFlushIntervalSeconds:       60,
	DeadLetterMaxWaitSeconds:             14400,
	MaxDeliveriesPerSubscription:         16,
	MaxFailuresPerSubscription:           100,
	MaxFailureBytesPerSubscription:       1048576,
	MaxEventStreams:                      32,
	EventStreamHeartbeatSeconds:          15,
	MaxConnections:                       2048,
	ConsoleEnabled:                       true,
	MaxAdvancedFilters:                   25,
	MaxFilterValues:                      25,
	MaxFilterStringLength:                512,
	MaxIncludedEventTypes:                1000,
	LogFormat:                            "auto",
	LogLevel:                             "info",
	EdgeHubTokenLifetimeSeconds:          3600,
	EdgeHubMaxReconnectSeconds:           30,
	DesiredConfigPollSeconds:             5,
	DesiredConfigMaxRetrySeconds:         60,
	Replicas:                             1,
	EdgeHubTwin:                          "auto",
}

func TestDefaults(t *testing.T) {
	MustCleanEnv(t)
	t.Run("Default", func(t *testing.T) {
		if got := config.Default(); !reflect.DeepEqual(got, specDefaults) {
			t.Fatalf("Default() differs from the spec:\n%s", diff(got, specDefaults))
		}
	})
	t.Run("LoadEmptyEnvironment", func(t *testing.T) {
		if got := MustLoad(t); !reflect.DeepEqual(got, specDefaults) {
			t.Fatalf("Load() differs from the spec:\n%s", diff(got, specDefaults))
		}
	})
	t.Run("DefaultValidates", func(t *testing.T) {
		if err := config.Default().Validate(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("DefaultIsFresh", func(t *testing.T) {
		a := config.Default()
		a.BackoffIntervals[0] = time.Hour
		if b := config.Default(); b.BackoffIntervals[0] != time.Minute {
			t.Fatal("Default shares its BackoffIntervals slice between calls")
		}
	})
}

// diff lists the fields where got and want differ.
func diff(got, want config.Config) string {
	var b strings.Builder
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range g.NumField() {
		if !reflect.DeepEqual(g.Field(i).Interface(), w.Field(i).Interface()) {
			fmt.Fprintf(&b, "  %s = %v, want %v\n", g.Type().Field(i).Name, g.Field(i), w.Field(i))
		}
	}
	return b.String()
}

func TestConfig_Fields(t *testing.T) {
	c := config.Default()
	c.SASKeysEnabled = true
	c.SASKey1 = "sekrit-key-one"
	c.DesiredConfig = `{"topics":{"t":{}},"eventSubscriptions":{"s":{"topic":"t","destination":{"properties":{"sasKey":"hunter2"}}}}}`
	f := c.Fields()

	t.Run("EveryFieldOnce", func(t *testing.T) {
		if n := reflect.TypeFor[config.Config]().NumField(); len(f) != n {
			t.Fatalf("Fields() has %d keys, Config has %d fields", len(f), n)
		}
		for i := range reflect.TypeFor[config.Config]().NumField() {
			tag := reflect.TypeFor[config.Config]().Field(i).Tag.Get("envconfig")
			found := false
			for k := range f {
				found = found || strings.ToUpper(k) == tag
			}
			if !found {
				t.Errorf("Fields() has no key for %s", tag)
			}
		}
	})
	t.Run("NoSecretAnywhere", func(t *testing.T) {
		s := fmt.Sprint(f)
		for _, secret := range []string{"sekrit", "hunter2", "eventSubscriptions"} {
			if strings.Contains(s, secret) {
				t.Errorf("Fields() output contains %q: %s", secret, s)
			}
		}
	})
	tests := []struct {
		key  string
		want any
	}{
		{"inbound__clientAuth__sasKeys__key1", "<redacted>"},
		{"inbound__clientAuth__sasKeys__key2", ""},
		{"desired_config", fmt.Sprintf("<%d bytes>", len(c.DesiredConfig))},
		{"inbound__serverAuth__tlsPolicy", "strict"},
		{"inbound__serverAuth__serverCert__source", "IoTEdge"},
		{"broker__backoffIntervals", "00:01:00,00:10:00"},
		{"broker__defaultMaxDeliveryAttempts", 30},
		{"broker__maxQueuedBytes", int64(268435456)},
		{"inbound__clientAuth__sasKeys__enabled", true},
		{"api__deliveryPolicyLimits__maxPreferredBatchSizeInKilobytes", 1033},
		{"IOTEDGE_WORKLOADURI", ""},
		{"log__level", "info"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if got, ok := f[tt.key]; !ok || got != tt.want {
				t.Fatalf("Fields()[%q] = %#v (present %v), want %#v", tt.key, got, ok, tt.want)
			}
		})
	}
	t.Run("EmptyDesiredConfig", func(t *testing.T) {
		if got := config.Default().Fields()["desired_config"]; got != "<0 bytes>" {
			t.Fatalf("desired_config = %#v, want <0 bytes>", got)
		}
	})
}

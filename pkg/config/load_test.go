package config_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/config"
)

func TestLoad_Spellings(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		check func(config.Config) bool
	}{
		{"MixedCase", map[string]string{"inbound__serverAuth__tlsPolicy": "enabled"},
			func(c config.Config) bool { return c.TLSPolicy == config.TLSEnabled }},
		{"ColonForm", map[string]string{"inbound:serverAuth:tlsPolicy": "disabled"},
			func(c config.Config) bool { return c.TLSPolicy == config.TLSDisabled }},
		{"UpperCase", map[string]string{"INBOUND__SERVERAUTH__TLSPOLICY": "enabled"},
			func(c config.Config) bool { return c.TLSPolicy == config.TLSEnabled }},
		{"OddCase", map[string]string{"InBound__ServerAuth__TLSPolicy": "enabled"},
			func(c config.Config) bool { return c.TLSPolicy == config.TLSEnabled }},
		{"MixedSeparators", map[string]string{"broker:defaultMaxDeliveryAttempts": "7", "api__httpPort": "8080"},
			func(c config.Config) bool { return c.DefaultMaxDeliveryAttempts == 7 && c.HTTPPort == 8080 }},
		{"BrokersAlias", map[string]string{"brokers__defaultMaxDeliveryAttempts": "12"},
			func(c config.Config) bool { return c.DefaultMaxDeliveryAttempts == 12 }},
		{"SameValueTwice", map[string]string{"broker__defaultMaxDeliveryAttempts": "5", "BROKERS__DEFAULTMAXDELIVERYATTEMPTS": "05"},
			func(c config.Config) bool { return c.DefaultMaxDeliveryAttempts == 5 }},
		{"BoolCaseOnlyDiffers", map[string]string{"broker__logDeliverySuccess": "True", "BROKER__LOGDELIVERYSUCCESS": "true"},
			func(c config.Config) bool { return c.LogDeliverySuccess }},
		{"DesiredConfigLowerCase", map[string]string{"desired_config": `{"topics":{}}`},
			func(c config.Config) bool { return c.DesiredConfig == `{"topics":{}}` }},
		{"IoTEdgeVariables", map[string]string{"IOTEDGE_MODULEID": "eventgridmodule", "IOTEDGE_WORKLOADURI": "unix:///var/run/iotedge/workload.sock"},
			func(c config.Config) bool {
				return c.IoTEdgeModuleID == "eventgridmodule" && c.IoTEdgeWorkloadURI == "unix:///var/run/iotedge/workload.sock"
			}},
		{"DecimalWithLeadingZeros", map[string]string{"api__httpsPort": " 010 "},
			func(c config.Config) bool { return c.HTTPSPort == 10 }},
		{"Extensions", map[string]string{"api__bindAddress": "127.0.0.1", "broker__maxQueuedBytes": "1073741824", "log__format": "Console", "log__level": "DEBUG"},
			func(c config.Config) bool {
				return c.BindAddress == "127.0.0.1" && c.MaxQueuedBytes == 1<<30 && c.LogFormat == "console" && c.LogLevel == "debug"
			}},
		{"InspectionDefaults", map[string]string{},
			func(c config.Config) bool {
				return c.ConsoleEnabled && c.MaxFailuresPerSubscription == 100 && c.MaxFailureBytesPerSubscription == 1<<20 &&
					c.MaxEventStreams == 32 && c.EventStreamHeartbeatSeconds == 15
			}},
		{"ConsoleOff", map[string]string{"CONSOLE:ENABLED": "False", "api__maxEventStreams": "0"},
			func(c config.Config) bool { return !c.ConsoleEnabled && c.MaxEventStreams == 0 }},
		{"ManifestDevVariant", map[string]string{
			"inbound__clientAuth__clientCert__enabled": "false",
			"outbound__webhook__httpsOnly":             "false",
			"inbound__serverAuth__tlsPolicy":           "enabled",
		}, func(c config.Config) bool {
			return !c.ClientCertEnabled && !c.WebhookHTTPSOnly && c.TLSPolicy == config.TLSEnabled
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			MustCleanEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			if c := MustLoad(t); !tt.check(c) {
				t.Fatalf("unexpected config:\n%s", diff(c, specDefaults))
			}
		})
	}
}

func TestLoad_CaseInsensitiveValues(t *testing.T) {
	tests := []struct {
		key, value string
		check      func(config.Config) bool
	}{
		{"inbound__serverAuth__tlsPolicy", "STRICT", func(c config.Config) bool { return c.TLSPolicy == config.TLSStrict }},
		{"inbound__serverAuth__tlsPolicy", " Enabled ", func(c config.Config) bool { return c.TLSPolicy == config.TLSEnabled }},
		{"inbound__clientAuth__clientCert__source", "iotedge", func(c config.Config) bool { return c.ClientCertSource == config.CertSourceIoTEdge }},
		{"outbound__clientAuth__clientCert__source", "IOTEDGE", func(c config.Config) bool { return c.OutboundClientCertSource == config.CertSourceIoTEdge }},
		{"metrics__reporterType", "Prometheus", func(c config.Config) bool { return c.MetricsReporterType == config.ReporterPrometheus }},
		{"inbound__clientAuth__clientCert__enabled", "False", func(c config.Config) bool { return !c.ClientCertEnabled }},
		{"inbound__clientAuth__clientCert__enabled", "FALSE", func(c config.Config) bool { return !c.ClientCertEnabled }},
		{"broker__logDeliverySuccess", "tRuE", func(c config.Config) bool { return c.LogDeliverySuccess }},
		{"broker__defaultIsPersisted", "True", func(c config.Config) bool { return c.DefaultIsPersisted }},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			MustCleanEnv(t)
			t.Setenv(tt.key, tt.value)
			if c := MustLoad(t); !tt.check(c) {
				t.Fatalf("unexpected config:\n%s", diff(c, specDefaults))
			}
		})
	}
}

func TestLoad_Errors(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want []string // substrings of the error message
	}{
		{"BadEnum", map[string]string{"inbound__serverAuth__tlsPolicy": "strikt"},
			[]string{`invalid value "strikt" for inbound__serverAuth__tlsPolicy: accepted values are strict, enabled, disabled`}},
		{"BadEnumUpperCaseKey", map[string]string{"INBOUND__SERVERAUTH__SERVERCERT__SOURCE": "Disk"},
			[]string{`invalid value "Disk" for inbound__serverAuth__serverCert__source: accepted values are IoTEdge, File`}},
		{"BadReporter", map[string]string{"metrics__reporterType": "telegraf"},
			[]string{`invalid value "telegraf" for metrics__reporterType: accepted values are none, prometheus, console`}},
		{"BadBool", map[string]string{"outbound__webhook__httpsOnly": "Yes"},
			[]string{`invalid value "Yes" for outbound__webhook__httpsOnly: accepted values are true, false`}},
		{"BadInt", map[string]string{"api__httpPort": "http"},
			[]string{`invalid value "http" for api__httpPort: expected an integer; accepted range is 0 to 65535`}},
		{"EmptyInt", map[string]string{"broker__maxTopics": ""},
			[]string{`invalid value "" for broker__maxTopics: expected an integer; accepted range is at least 1`}},
		{"IntOutOfRange", map[string]string{"api__httpsPort": "70000"},
			[]string{`invalid value 70000 for api__httpsPort: accepted range is 0 to 65535`}},
		{"BadIntervals", map[string]string{"broker__backoffIntervals": "00:01:00"},
			[]string{`invalid value "00:01:00" for broker__backoffIntervals: accepted values are two comma-separated positive durations`}},
		{"Conflict", map[string]string{"inbound__serverAuth__tlsPolicy": "enabled", "inbound:serverAuth:tlsPolicy": "strict"},
			[]string{"conflicting values for inbound__serverAuth__tlsPolicy", "inbound__serverAuth__tlsPolicy=", "inbound:serverAuth:tlsPolicy="}},
		{"ConflictWithAlias", map[string]string{"brokers__defaultMaxDeliveryAttempts": "20", "BROKER__DEFAULTMAXDELIVERYATTEMPTS": "30"},
			[]string{"conflicting values for broker__defaultMaxDeliveryAttempts", `BROKER__DEFAULTMAXDELIVERYATTEMPTS="30"`, `brokers__defaultMaxDeliveryAttempts="20"`}},
		{"ConflictingSecret", map[string]string{"inbound__clientAuth__sasKeys__key1": "sekrit-a", "INBOUND__CLIENTAUTH__SASKEYS__KEY1": "sekrit-b"},
			[]string{"conflicting values for inbound__clientAuth__sasKeys__key1", "INBOUND__CLIENTAUTH__SASKEYS__KEY1 and inbound__clientAuth__sasKeys__key1"}},
		{"SeveralAtOnce", map[string]string{"inbound__serverAuth__tlsPolicy": "strikt", "api__httpPort": "x", "broker__logEventExpiry": "maybe"},
			[]string{"inbound__serverAuth__tlsPolicy", "api__httpPort", "broker__logEventExpiry"}},
		{"ValidateAfterLoad", map[string]string{"inbound__clientAuth__sasKeys__enabled": "TRUE"},
			[]string{"at least one key is required when inbound__clientAuth__sasKeys__enabled is true"}},
		{"LegacyBatchBytesNotPositive", map[string]string{"api__deliveryPolicyLimits__maxBatchSizeInBytes": "0"},
			[]string{"invalid value 0 for api__deliveryPolicyLimits__maxBatchSizeInBytes: accepted range is at least 1"}},
		{"LegacyBatchBytesNotInteger", map[string]string{"api__deliveryPolicyLimits__maxBatchSizeInBytes": "1MB"},
			[]string{`invalid value "1MB" for api__deliveryPolicyLimits__maxBatchSizeInBytes: expected an integer`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			MustCleanEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			c, err := config.Load()
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "sekrit") {
				t.Errorf("error reveals a secret: %v", err)
			}
			if c.TLSPolicy != "" {
				t.Errorf("Load returned a non-zero Config with its error")
			}
		})
	}
}

func TestLoad_LegacyMaxBatchSizeInBytes(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want int
	}{
		{"LegacyOnly", map[string]string{"api__deliveryPolicyLimits__maxBatchSizeInBytes": "1058576"}, 1033},
		{"LegacyRoundsDown", map[string]string{"API__DELIVERYPOLICYLIMITS__MAXBATCHSIZEINBYTES": "2047"}, 1},
		{"LegacyBelowOneKB", map[string]string{"api__deliveryPolicyLimits__maxBatchSizeInBytes": "100"}, 1},
		{"LegacyLarge", map[string]string{"api__deliveryPolicyLimits__maxBatchSizeInBytes": "2097152"}, 2048},
		{"KilobytesWins", map[string]string{
			"api__deliveryPolicyLimits__maxBatchSizeInBytes":              "2097152",
			"api__deliveryPolicyLimits__maxpreferredBatchSizeInKilobytes": "64",
		}, 64},
		{"KilobytesEqualToDefaultStillWins", map[string]string{
			"api__deliveryPolicyLimits__maxBatchSizeInBytes":              "2097152",
			"api__deliveryPolicyLimits__maxPreferredBatchSizeInKilobytes": "1033",
		}, 1033},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			MustCleanEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			if got := MustLoad(t).MaxPreferredBatchSizeKBLimit; got != tt.want {
				t.Fatalf("MaxPreferredBatchSizeKBLimit = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestLoad_Intervals(t *testing.T) {
	MustCleanEnv(t)
	t.Setenv("Broker__BackoffIntervals", "30s, 00:00:01.5")
	want := config.Intervals{30 * time.Second, 1500 * time.Millisecond}
	if got := MustLoad(t).BackoffIntervals; got.String() != want.String() {
		t.Fatalf("BackoffIntervals = %v, want %v", got, want)
	}
}

func TestLoad_RestoresEnvironment(t *testing.T) {
	MustCleanEnv(t)
	t.Setenv("inbound__serverAuth__tlsPolicy", "Enabled")
	t.Setenv("BROKER__LOGEVENTEXPIRY", "FALSE")
	t.Setenv("api__httpPort", "x") // fails, so Load unsets its canonical form
	t.Setenv("API__HTTPPORT", "x")
	if _, err := config.Load(); err == nil {
		t.Fatal("Load succeeded")
	}
	for name, want := range map[string]string{
		"inbound__serverAuth__tlsPolicy": "Enabled",
		"BROKER__LOGEVENTEXPIRY":         "FALSE",
		"API__HTTPPORT":                  "x",
	} {
		if got, ok := os.LookupEnv(name); !ok || got != want {
			t.Errorf("%s = %q (set %v) after Load, want %q", name, got, ok, want)
		}
	}
	if v, ok := os.LookupEnv("INBOUND__SERVERAUTH__TLSPOLICY"); ok {
		t.Errorf("Load left INBOUND__SERVERAUTH__TLSPOLICY=%q behind", v)
	}
	// A later change of the mixed-case spelling is seen, not shadowed.
	t.Setenv("inbound__serverAuth__tlsPolicy", "disabled")
	os.Unsetenv("API__HTTPPORT")
	os.Unsetenv("api__httpPort")
	if c := MustLoad(t); c.TLSPolicy != config.TLSDisabled || c.LogEventExpiry {
		t.Fatalf("TLSPolicy = %q, LogEventExpiry = %v", c.TLSPolicy, c.LogEventExpiry)
	}
}

func BenchmarkLoad(b *testing.B) {
	MustCleanEnv(b)
	b.Setenv("inbound__serverAuth__tlsPolicy", "enabled")
	b.Setenv("inbound:clientAuth:clientCert:enabled", "False")
	b.Setenv("brokers__defaultMaxDeliveryAttempts", "10")
	b.Setenv("broker__backoffIntervals", "30s,00:05:00")
	b.Setenv("IOTEDGE_MODULEID", "eventgridmodule")
	for b.Loop() {
		if _, err := config.Load(); err != nil {
			b.Fatal(err)
		}
	}
}

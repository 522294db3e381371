package config_test

import (
	"reflect"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/config"
)

// Variables under the broker's prefixes that spell no key are reported,
// each with the nearest key; known keys in any accepted spelling, and
// variables of other programs, are not.
func TestUnknownKeys(t *testing.T) {
	environ := []string{
		"broker__defaultMaxDeliveryAtempts=3",
		"api__port=5899",
		"BROKER__DEFAULTMAXDELIVERYATTEMPTS=3",    // known, upper case
		"inbound:serverAuth:tlsPolicy=enabled",    // known, colons
		"brokers__defaultMaxDeliveryAttempts=3",   // the documented misspelling
		"Inbound__ServerAuth__TlsPolicyy=enabled", // misspelt, mixed case
		"outbound:webhook:httpOnly=false",         // misspelt, colons
		"metrics__reporter=prometheus",            // misspelt
		"desired_config_files=/etc/x.json",        // misspelt
		"DESIRED_CONFIG_FILE=/etc/x.json",         // known
		"console__enabled=true",                   // a prefix with no keys yet
		"brokers__maxTopic=3",                     // the misspelt prefix, misspelt key
		"PATH=/usr/bin", "HOME=/root", "IOTEDGE_MODULEID=m", "apiport=1", "logger__x=1",
		"noequals", "=x",
	}
	want := []config.Unknown{
		{"Inbound__ServerAuth__TlsPolicyy", "inbound__serverAuth__tlsPolicy"},
		{"api__port", "api__httpPort"},
		{"broker__defaultMaxDeliveryAtempts", "broker__defaultMaxDeliveryAttempts"},
		{"brokers__maxTopic", "broker__maxTopics"},
		{"console__enabled", ""},
		{"desired_config_files", "desired_config_file"},
		{"metrics__reporter", "metrics__reporterType"},
		{"outbound:webhook:httpOnly", "outbound__webhook__httpsOnly"},
	}
	if got := config.UnknownKeys(environ); !reflect.DeepEqual(got, want) {
		t.Errorf("UnknownKeys\n got %+v\nwant %+v", got, want)
	}
}

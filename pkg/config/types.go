package config

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/kelseyhightower/envconfig"
)

var (
	_ envconfig.Decoder = (*TLSPolicy)(nil)
	_ envconfig.Decoder = (*CertSource)(nil)
	_ envconfig.Decoder = (*ReporterType)(nil)
	_ envconfig.Decoder = (*Intervals)(nil)
	_ envconfig.Decoder = (*RetrySchedule)(nil)
	_ envconfig.Decoder = (*Factor)(nil)
)

// Factor is a positive decimal number such as 0.01, for
// broker__exponentialScale.
type Factor float64

// Decode implements envconfig.Decoder.
func (f *Factor) Decode(value string) error {
	v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
	if err != nil || v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return errors.New("accepted values are positive numbers such as 1 or 0.01")
	}
	*f = Factor(v)
	return nil
}

// RetrySchedule is broker__defaultRetrySchedule: the delivery profile of
// subscriptions whose retryPolicy names none. Values use the canonical
// spelling.
type RetrySchedule string

var retrySchedules = []RetrySchedule{"EdgeQueues", "CloudExponential"}

// Decode implements envconfig.Decoder. It matches value case-insensitively
// and stores the canonical spelling.
func (s *RetrySchedule) Decode(value string) error { return decodeEnum(s, retrySchedules, value) }

// TLSPolicy is inbound__serverAuth__tlsPolicy: which listeners the broker
// opens. Values are canonical lower-case.
type TLSPolicy string

// The accepted TLS policies.
const (
	// TLSStrict serves HTTPS only.
	TLSStrict TLSPolicy = "strict"
	// TLSEnabled serves both HTTPS and plain HTTP.
	TLSEnabled TLSPolicy = "enabled"
	// TLSDisabled serves plain HTTP only.
	TLSDisabled TLSPolicy = "disabled"
)

var tlsPolicies = []TLSPolicy{TLSStrict, TLSEnabled, TLSDisabled}

// Decode implements envconfig.Decoder. It matches value case-insensitively,
// ignoring surrounding white space, stores the canonical spelling and returns
// an error listing the accepted values when nothing matches.
func (p *TLSPolicy) Decode(value string) error { return decodeEnum(p, tlsPolicies, value) }

// CertSource says where a certificate or trust bundle comes from. Values use
// the canonical spelling IoTEdge or File.
type CertSource string

// The accepted certificate sources.
const (
	// CertSourceIoTEdge takes certificates from the IoT Edge workload API.
	CertSourceIoTEdge CertSource = "IoTEdge"
	// CertSourceFile reads PEM files named by configuration.
	CertSourceFile CertSource = "File"
)

var certSources = []CertSource{CertSourceIoTEdge, CertSourceFile}

// Decode implements envconfig.Decoder. It matches value case-insensitively,
// ignoring surrounding white space, stores the canonical spelling and returns
// an error listing the accepted values when nothing matches.
func (s *CertSource) Decode(value string) error { return decodeEnum(s, certSources, value) }

// ReporterType is metrics__reporterType: where metrics go. Values are
// canonical lower-case.
type ReporterType string

// The accepted metrics reporters.
const (
	// ReporterNone turns metrics off.
	ReporterNone ReporterType = "none"
	// ReporterPrometheus exposes GET /metrics in the Prometheus text format.
	ReporterPrometheus ReporterType = "prometheus"
	// ReporterConsole writes metrics to the log periodically.
	ReporterConsole ReporterType = "console"
)

var reporterTypes = []ReporterType{ReporterNone, ReporterPrometheus, ReporterConsole}

// Decode implements envconfig.Decoder. It matches value case-insensitively,
// ignoring surrounding white space, stores the canonical spelling and returns
// an error listing the accepted values when nothing matches.
func (r *ReporterType) Decode(value string) error { return decodeEnum(r, reporterTypes, value) }

// The values of edgehub__twin.
const (
	TwinAuto     = "auto"
	TwinEnabled  = "enabled"
	TwinDisabled = "disabled"
)

// Accepted values of the string settings that are not enum types.
var (
	logFormats = []string{"auto", "json", "console"}
	logLevels  = []string{"trace", "debug", "info", "warn", "error"}
	// twinModes are the values of edgehub__twin.
	twinModes = []string{TwinAuto, TwinEnabled, TwinDisabled}
)

// decodeEnum sets *dst to the member of values equal to value, ignoring case
// and surrounding white space.
func decodeEnum[T ~string](dst *T, values []T, value string) error {
	value = strings.TrimSpace(value)
	for _, v := range values {
		if strings.EqualFold(string(v), value) {
			*dst = v
			return nil
		}
	}
	return errors.New(acceptedValues(values))
}

// acceptedValues returns "accepted values are a, b, c".
func acceptedValues[T ~string](values []T) string {
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = string(v)
	}
	return "accepted values are " + strings.Join(s, ", ")
}

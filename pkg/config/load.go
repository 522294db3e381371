package config

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/kelseyhightower/envconfig"
)

// loadSpec is what Load hands to envconfig: the Config plus keys that only
// feed other fields.
type loadSpec struct {
	Config
	// LegacyMaxBatchSizeInBytes is api__deliveryPolicyLimits__maxBatchSizeInBytes,
	// the older byte-valued form of MaxPreferredBatchSizeKBLimit.
	LegacyMaxBatchSizeInBytes *int `envconfig:"API__DELIVERYPOLICYLIMITS__MAXBATCHSIZEINBYTES"`
}

const (
	legacyBatchBytesEnv = "API__DELIVERYPOLICYLIMITS__MAXBATCHSIZEINBYTES"
	batchKBEnv          = "API__DELIVERYPOLICYLIMITS__MAXPREFERREDBATCHSIZEINKILOBYTES"
)

// Load reads the process environment, applies the defaults and validates the
// result.
//
// Key names match case-insensitively, with ':' or "__" between segments
// (inbound__serverAuth__tlsPolicy, inbound:serverAuth:tlsPolicy and
// INBOUND__SERVERAUTH__TLSPOLICY are one key); enum and boolean values match
// case-insensitively too. Load copies each key to its canonical upper-case
// variable for envconfig and restores the environment before returning, so
// it must not run concurrently with other changes to the environment.
//
// On failure Load returns the zero Config and every problem it found, joined
// with errors.Join: a key spelled twice with different values, a value that
// does not parse, or a Validate error. Each message names the key in its
// documented spelling, e.g.
//
//	invalid value "strikt" for inbound__serverAuth__tlsPolicy: accepted values are strict, enabled, disabled
func Load() (Config, error) {
	norm := normalise(os.Environ())
	var env envPatch
	defer env.restore()
	for _, info := range byEnv {
		want, wantSet := norm.values[info.env]
		have, haveSet := os.LookupEnv(info.env)
		var err error
		switch {
		case wantSet && (!haveSet || have != want):
			err = env.set(info.env, want)
		case !wantSet && haveSet:
			err = env.unset(info.env) // a conflicting key falls back to its default
		}
		if err != nil {
			return Config{}, fmt.Errorf("config: setting %s: %w", info.env, err)
		}
	}

	spec, parseErrs, err := process(&env)
	if err != nil {
		return Config{}, err
	}
	errs := norm.errs
	for _, pe := range parseErrs {
		errs = append(errs, parseError(spec.Config, pe, norm.originals))
	}
	if spec.LegacyMaxBatchSizeInBytes != nil {
		bytes := *spec.LegacyMaxBatchSizeInBytes
		_, kbSet := norm.values[batchKBEnv]
		switch {
		case bytes < 1:
			errs = append(errs, fmt.Errorf("invalid value %d for %s: %s",
				bytes, docName(legacyBatchBytesEnv), legacyRange.accepted()))
		case !kbSet:
			spec.MaxPreferredBatchSizeKBLimit = max(1, bytes/1024)
		}
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}

	c := spec.Config
	c.LogFormat = strings.ToLower(strings.TrimSpace(c.LogFormat))
	c.LogLevel = strings.ToLower(strings.TrimSpace(c.LogLevel))
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// legacyRange is the accepted range of the legacy byte-valued batch limit.
var legacyRange = intRange{env: legacyBatchBytesEnv, min: 1, max: unbounded}

// process runs envconfig until it succeeds, unsetting each key it cannot
// parse so that every bad key is found, not only the first.
func process(env *envPatch) (loadSpec, []*envconfig.ParseError, error) {
	var parseErrs []*envconfig.ParseError
	for range len(byEnv) + 1 {
		var spec loadSpec
		err := envconfig.Process("", &spec)
		var pe *envconfig.ParseError
		switch {
		case err == nil:
			return spec, parseErrs, nil
		case !errors.As(err, &pe):
			return loadSpec{}, nil, fmt.Errorf("config: %w", err)
		}
		parseErrs = append(parseErrs, pe)
		if err := env.unset(pe.KeyName); err != nil {
			return loadSpec{}, nil, fmt.Errorf("config: unsetting %s: %w", pe.KeyName, err)
		}
	}
	return loadSpec{}, nil, errors.New("config: environment keeps failing to parse")
}

// parseError turns an envconfig.ParseError into a message naming the key's
// documented spelling, the value as it was set and what the key accepts.
func parseError(c Config, pe *envconfig.ParseError, originals map[string]string) error {
	info := byEnv[pe.KeyName]
	value, ok := originals[pe.KeyName]
	if !ok {
		value = pe.Value
	}
	shownValue := fmt.Sprintf("%q", value)
	if info != nil && info.redact != shown {
		shownValue = "<redacted>"
	}
	return fmt.Errorf("invalid value %s for %s: %s", shownValue, docName(pe.KeyName), accepted(c, info, pe))
}

// accepted describes what a key accepts, for a value that failed to parse.
func accepted(c Config, info *keyInfo, pe *envconfig.ParseError) string {
	if info == nil {
		return pe.Err.Error()
	}
	switch info.kind {
	case kindBool:
		return "accepted values are true, false"
	case kindInt:
		for _, r := range append(c.intRanges(), legacyRange) {
			if r.env == info.env {
				return "expected an integer; " + r.accepted()
			}
		}
		return "expected an integer"
	default:
		return pe.Err.Error() // the Decode methods describe what they accept
	}
}

// envPatch changes environment variables and remembers how to undo it.
type envPatch struct {
	saved map[string]*string // original value, nil when unset
}

func (p *envPatch) remember(k string) {
	if p.saved == nil {
		p.saved = map[string]*string{}
	}
	if _, done := p.saved[k]; done {
		return
	}
	if v, ok := os.LookupEnv(k); ok {
		p.saved[k] = &v
	} else {
		p.saved[k] = nil
	}
}

func (p *envPatch) set(k, v string) error {
	p.remember(k)
	return os.Setenv(k, v)
}

func (p *envPatch) unset(k string) error {
	p.remember(k)
	return os.Unsetenv(k)
}

// restore puts every changed variable back as it was.
func (p *envPatch) restore() {
	for k, v := range p.saved {
		if v == nil {
			_ = os.Unsetenv(k)
		} else {
			_ = os.Setenv(k, *v)
		}
	}
}

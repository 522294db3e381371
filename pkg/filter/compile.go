package filter

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// Limits bound what a filter may contain. A zero or negative field means
// the value of DefaultLimits.
type Limits struct {
	MaxAdvancedFilters, MaxValuesPerFilter, MaxStringLength int
	// MaxIncludedEventTypes bounds includedEventTypes.
	MaxIncludedEventTypes int
}

// DefaultLimits are 25 advanced filters, 25 values per filter and 512
// characters per string value, as Azure Event Grid has them, and 1000
// included event types, for which Azure documents no limit.
var DefaultLimits = Limits{MaxAdvancedFilters: 25, MaxValuesPerFilter: 25, MaxStringLength: 512, MaxIncludedEventTypes: 1000}

func (l Limits) withDefaults() Limits {
	if l.MaxAdvancedFilters <= 0 {
		l.MaxAdvancedFilters = DefaultLimits.MaxAdvancedFilters
	}
	if l.MaxValuesPerFilter <= 0 {
		l.MaxValuesPerFilter = DefaultLimits.MaxValuesPerFilter
	}
	if l.MaxStringLength <= 0 {
		l.MaxStringLength = DefaultLimits.MaxStringLength
	}
	if l.MaxIncludedEventTypes <= 0 {
		l.MaxIncludedEventTypes = DefaultLimits.MaxIncludedEventTypes
	}
	return l
}

// envelopeKeys are the EventGridSchema keys an advanced filter may name
// besides data and data.<path>, lower-cased.
var envelopeKeys = map[string]bool{
	"id": true, "topic": true, "subject": true, "eventtype": true,
	"dataversion": true, "eventtime": true, "metadataversion": true,
}

const envelopeKeyList = "id, topic, subject, eventType, dataVersion, eventTime, metadataVersion, data or data.<property path>"

// Compile checks f for a topic of the given schema and returns a Matcher.
// f may be nil, which matches everything. An empty schema means
// EventGridSchema. For CustomEventSchema, includedEventTypes and the subject
// filters are ignored (neither checked nor applied), as custom events have
// neither.
//
// Compile returns an *eventgrid.Error with Code eventgrid.EInvalidFilter and
// a message naming the offending part of the filter and why, for example
// `filter.advancedFilters[2] (NumberIn on "data.x"): values[1] must be a
// number`. It does not keep references to f or its slices.
func Compile(f *eventgrid.Filter, schema eventgrid.InputSchema, lim Limits) (*Matcher, error) {
	m := &Matcher{}
	switch schema {
	case "":
		schema = eventgrid.EventGridSchema
	case eventgrid.EventGridSchema, eventgrid.CloudEventSchemaV1_0, eventgrid.CustomEventSchema:
	default:
		return nil, invalid("filter: unknown input schema %q; use one of %s", schema, eventgrid.SchemaNames)
	}
	if f == nil {
		return m, nil
	}
	lim = lim.withDefaults()
	if schema != eventgrid.CustomEventSchema {
		if err := m.compileEnvelope(f, lim); err != nil {
			return nil, err
		}
	}
	if n := len(f.AdvancedFilters); n > lim.MaxAdvancedFilters {
		return nil, invalid("filter.advancedFilters: %d filters exceed the limit of %d advanced filters per subscription",
			n, lim.MaxAdvancedFilters)
	}
	for i := range f.AdvancedFilters {
		c, err := compileAdvanced(i, &f.AdvancedFilters[i], schema, lim, f.EnableAdvancedFilteringOnArrays)
		if err != nil {
			return nil, err
		}
		m.conds = append(m.conds, c)
	}
	sortConds(m.conds)
	return m, nil
}

// compileEnvelope compiles includedEventTypes and the subject filters.
func (m *Matcher) compileEnvelope(f *eventgrid.Filter, lim Limits) error {
	if n := len(f.IncludedEventTypes); n > lim.MaxIncludedEventTypes {
		return invalid("filter.includedEventTypes: %d event types exceed the limit of %d per subscription (api__filterLimits__maxIncludedEventTypes)",
			n, lim.MaxIncludedEventTypes)
	}
	all := len(f.IncludedEventTypes) == 0
	types := make(map[uint64][]pattern, len(f.IncludedEventTypes))
	for i, t := range f.IncludedEventTypes {
		if n := utf8.RuneCountInString(t); n > lim.MaxStringLength {
			return invalid("filter.includedEventTypes[%d] is %d characters long, over the limit of %d characters",
				i, n, lim.MaxStringLength)
		}
		if strings.EqualFold(t, "all") {
			all = true
		}
		h := foldHash(t)
		types[h] = append(types[h], newPattern(t))
	}
	if !all {
		m.types = types
	}
	for _, s := range []struct {
		name string
		val  string
		dst  **pattern
	}{
		{"subjectBeginsWith", f.SubjectBeginsWith, &m.begin},
		{"subjectEndsWith", f.SubjectEndsWith, &m.end},
	} {
		if s.val == "" {
			continue
		}
		if n := utf8.RuneCountInString(s.val); n > lim.MaxStringLength {
			return invalid("filter.%s is %d characters long, over the limit of %d characters", s.name, n, lim.MaxStringLength)
		}
		p := newPattern(s.val)
		*s.dst = &p
	}
	m.caseSensitive = f.IsSubjectCaseSensitive
	return nil
}

// literal is one configured value and the field it came from, for errors.
type literal struct {
	field string
	raw   []byte
}

func compileAdvanced(i int, af *eventgrid.AdvancedFilter, schema eventgrid.InputSchema, lim Limits, arrays bool) (cond, error) {
	o, ok := parseOp(af.OperatorType)
	switch {
	case ok:
	case strings.TrimSpace(af.OperatorType) == "":
		return cond{}, invalid("filter.advancedFilters[%d]: operatorType is required; use one of %s", i, operatorList)
	default:
		return cond{}, invalid("filter.advancedFilters[%d]: unknown operator %q; use one of %s", i, af.OperatorType, operatorList)
	}
	where := fmt.Sprintf("filter.advancedFilters[%d] (%s on %q)", i, o, af.Key)
	info := o.info()
	c := cond{op: info.base, fam: info.fam, neg: info.neg, arrays: arrays,
		// With the newer operators a missing key matches the Not… string
		// operators and IsNullOrUndefined (docs/design.md#newer-filter-operators);
		// with the original twelve it never matches (docs/design.md#filters).
		missing: o == opIsNullOrUndefined || (info.newer && info.neg && info.fam == famString)}
	path, msg := parseKey(af.Key, schema)
	if msg != "" {
		return cond{}, invalid("%s: %s", where, msg)
	}
	c.path = path
	if info.noValu {
		if len(rawjson.TrimSpace(af.Value)) > 0 || af.Values != nil {
			return cond{}, invalid("%s: %s takes no value or values", where, o)
		}
		return c, nil
	}
	lits, msg := literals(o, af, lim)
	if msg != "" {
		return cond{}, invalid("%s: %s", where, msg)
	}
	for _, l := range lits {
		if msg := c.addValue(l, lim); msg != "" {
			return cond{}, invalid("%s: %s", where, msg)
		}
	}
	return c, nil
}

// parseKey splits key into path segments and checks it is a key the schema
// allows. It returns a message saying why when it is not.
func parseKey(key string, schema eventgrid.InputSchema) ([]string, string) {
	if key == "" {
		return nil, "key is required"
	}
	path := strings.Split(key, ".")
	for _, seg := range path {
		if seg == "" {
			return nil, fmt.Sprintf("key %q has an empty segment", key)
		}
	}
	if schema == eventgrid.EventGridSchema && !strings.EqualFold(path[0], "data") &&
		(len(path) > 1 || !envelopeKeys[strings.ToLower(path[0])]) {
		return nil, fmt.Sprintf("key %q is not allowed for EventGridSchema; use %s", key, envelopeKeyList)
	}
	return path, ""
}

// literals returns the values the operator compares with. A single-value
// operator takes value, or values with exactly one element; a multi-value
// operator takes values, or value as a one-element list. Each prefers the
// field it expects when both are set. A value holding a JSON array counts as
// that list.
func literals(o op, af *eventgrid.AdvancedFilter, lim Limits) ([]literal, string) {
	var lits []literal
	switch value := rawjson.TrimSpace(af.Value); {
	case o.multi() && len(af.Values) > 0:
		lits = fromValues(af.Values)
	case len(value) > 0 && rawjson.KindOf(value) == rawjson.Array && json.Valid(value):
		rawjson.ArrayEach(value, func(i int, v []byte) bool {
			lits = append(lits, literal{fmt.Sprintf("value[%d]", i), v})
			return true
		})
		if len(lits) == 0 {
			return nil, "value must not be an empty array"
		}
	case len(value) > 0:
		lits = append(lits, literal{"value", value})
	case len(af.Values) > 0:
		lits = fromValues(af.Values)
	case af.Values != nil:
		return nil, "values must not be empty"
	case o.multi():
		return nil, "values is required"
	default:
		return nil, "value is required"
	}
	if !o.multi() && len(lits) > 1 {
		return nil, fmt.Sprintf("%s takes a single value, got %d", o, len(lits))
	}
	if len(lits) > lim.MaxValuesPerFilter {
		return nil, fmt.Sprintf("%d values exceed the limit of %d values per filter", len(lits), lim.MaxValuesPerFilter)
	}
	return lits, ""
}

func fromValues(values []json.RawMessage) []literal {
	lits := make([]literal, len(values))
	for i, v := range values {
		lits[i] = literal{fmt.Sprintf("values[%d]", i), v}
	}
	return lits
}

// addValue checks one literal against the operator's type and records it in
// its compiled form. It returns a message saying why when it does not fit.
func (c *cond) addValue(l literal, lim Limits) string {
	raw := rawjson.TrimSpace(l.raw)
	if len(raw) == 0 || !json.Valid(raw) {
		return l.field + " is not valid JSON"
	}
	kind := rawjson.KindOf(raw)
	if kind == rawjson.Null {
		return l.field + " must not be null"
	}
	switch c.fam {
	case famNumber:
		d, msg := number(l.field, raw)
		if msg != "" {
			return msg
		}
		c.nums = append(c.nums, d)
	case famRange:
		var bounds []rawjson.Decimal
		var msg string
		if kind == rawjson.Array {
			rawjson.ArrayEach(raw, func(i int, v []byte) bool {
				var d rawjson.Decimal
				if d, msg = number(fmt.Sprintf("%s[%d]", l.field, i), rawjson.TrimSpace(v)); msg != "" {
					return false
				}
				bounds = append(bounds, d)
				return true
			})
		}
		switch {
		case msg != "":
			return msg
		case len(bounds) != 2:
			return l.field + " must be a [low, high] pair of numbers"
		case bounds[0].Compare(bounds[1]) > 0:
			return l.field + " has its low bound above its high bound"
		}
		c.nums = append(c.nums, bounds...)
	case famBool:
		switch s, _ := rawjson.Unquote(raw); {
		case kind == rawjson.Bool:
			c.b = raw[0] == 't'
		case kind == rawjson.String && (strings.EqualFold(s, "true") || strings.EqualFold(s, "false")):
			c.b = strings.EqualFold(s, "true")
		default:
			return l.field + " must be true or false"
		}
	default:
		s, ok := rawjson.Unquote(raw)
		if kind != rawjson.String || !ok {
			return l.field + " must be a string"
		}
		if n := utf8.RuneCountInString(s); n > lim.MaxStringLength {
			return fmt.Sprintf("%s is %d characters long, over the limit of %d characters", l.field, n, lim.MaxStringLength)
		}
		c.strs = append(c.strs, newPattern(s))
	}
	return ""
}

// number reads a number literal. A string is refused, even one holding a
// number, as every numeric property of a subscription refuses one: the
// API's operators take numbers.
func number(field string, raw []byte) (rawjson.Decimal, string) {
	switch rawjson.KindOf(raw) {
	case rawjson.String:
		return rawjson.Decimal{}, fmt.Sprintf("%s must be a number, not a string (got %s)", field, raw)
	case rawjson.Number:
	default:
		return rawjson.Decimal{}, field + " must be a number"
	}
	d, ok := rawjson.ParseDecimal(raw)
	if !ok {
		return rawjson.Decimal{}, field + " must be a number"
	}
	return d, ""
}

func invalid(format string, args ...any) error {
	return eventgrid.Errorf(eventgrid.EInvalidFilter, format, args...)
}

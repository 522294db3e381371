package resource

import (
	"encoding/json"
	"fmt"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// decodeFilter reads properties.filter: event types (also spelled
// eventTypes, and as a JSON string in module twins), subject prefix and
// suffix, and the advanced filters.
func decodeFilter(o object) (*eventgrid.Filter, error) {
	raw, _, ok := o.get("filter")
	if !ok {
		return nil, nil
	}
	p, err := parseObject(raw, o.field("filter"), eventgrid.EInvalidFilter)
	if err != nil {
		return nil, err
	}
	if err := p.check(filterShape); err != nil {
		return nil, err
	}
	f := &eventgrid.Filter{}
	types, _, err := p.array(eventgrid.EInvalidFilter, "includedEventTypes", "eventTypes")
	if err != nil {
		return nil, err
	}
	for i, t := range types {
		s, ok := rawjson.Unquote(t)
		if !ok {
			return nil, eventgrid.Errorf(eventgrid.EInvalidFilter, "%s[%d] must be a string.", p.field("includedEventTypes"), i)
		}
		f.IncludedEventTypes = append(f.IncludedEventTypes, s)
	}
	if f.SubjectBeginsWith, _, err = p.str(eventgrid.EInvalidFilter, "subjectBeginsWith"); err != nil {
		return nil, err
	}
	if f.SubjectEndsWith, _, err = p.str(eventgrid.EInvalidFilter, "subjectEndsWith"); err != nil {
		return nil, err
	}
	if f.IsSubjectCaseSensitive, _, err = p.boolean(eventgrid.EInvalidFilter, "isSubjectCaseSensitive"); err != nil {
		return nil, err
	}
	if f.EnableAdvancedFilteringOnArrays, _, err = p.boolean(eventgrid.EInvalidFilter, "enableAdvancedFilteringOnArrays"); err != nil {
		return nil, err
	}
	afs, _, err := p.array(eventgrid.EInvalidFilter, "advancedFilters")
	if err != nil {
		return nil, err
	}
	for i, a := range afs {
		if rawjson.KindOf(a) != rawjson.Object {
			continue // the original SDK's parser skips elements that are not objects
		}
		af, err := decodeAdvancedFilter(object{raw: a, path: fmt.Sprintf("%s[%d]", p.field("advancedFilters"), i)})
		if err != nil {
			return nil, err
		}
		f.AdvancedFilters = append(f.AdvancedFilters, af)
	}
	return f, nil
}

func decodeAdvancedFilter(o object) (eventgrid.AdvancedFilter, error) {
	var af eventgrid.AdvancedFilter
	if err := o.check(advancedFilterShape); err != nil {
		return af, err
	}
	var ok bool
	var err error
	if af.OperatorType, ok, err = o.str(eventgrid.EInvalidFilter, "operatorType"); err != nil {
		return af, err
	} else if !ok {
		return af, eventgrid.Errorf(eventgrid.EInvalidFilter, "%s is required.", o.field("operatorType"))
	}
	if af.Key, ok, err = o.str(eventgrid.EInvalidFilter, "key"); err != nil {
		return af, err
	} else if !ok {
		return af, eventgrid.Errorf(eventgrid.EInvalidFilter, "%s is required.", o.field("key"))
	}
	if v, _, ok := o.get("value"); ok {
		af.Value = json.RawMessage(v)
	}
	vals, _, err := o.array(eventgrid.EInvalidFilter, "values")
	if err != nil {
		return af, err
	}
	for _, v := range vals {
		af.Values = append(af.Values, json.RawMessage(v))
	}
	return af, nil
}

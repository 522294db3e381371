package filter

import "strings"

// op is one of the advanced-filter operators: the twelve of the edge API,
// then the newer ones of the cloud API (docs/design.md#newer-filter-operators).
type op uint8

const (
	opNumberGreaterThan op = iota
	opNumberGreaterThanOrEquals
	opNumberLessThan
	opNumberLessThanOrEquals
	opNumberIn
	opNumberNotIn
	opBoolEquals
	opStringIn
	opStringNotIn
	opStringBeginsWith
	opStringEndsWith
	opStringContains
	// The cloud API's newer operators.
	opStringNotContains
	opStringNotBeginsWith
	opStringNotEndsWith
	opNumberInRange
	opNumberNotInRange
	opIsNullOrUndefined
	opIsNotNull
	numOps
)

// family is what kind of values an operator compares.
type family uint8

const (
	famNumber family = iota
	famBool
	famString
	famRange // [low, high] pairs of numbers
	famNull  // no value: only whether the key holds one
)

// opInfo describes an operator. A negated operator matches a value of the
// right type that its base operator does not match.
type opInfo struct {
	name   string
	fam    family
	multi  bool // takes a list of values
	base   op   // the operator a negated one negates; itself otherwise
	neg    bool
	newer  bool // of the cloud API (docs/design.md#newer-filter-operators): a missing key matches the Not… string operators and IsNullOrUndefined
	noValu bool
}

var ops = [numOps]opInfo{
	opNumberGreaterThan:         {name: "NumberGreaterThan", fam: famNumber, base: opNumberGreaterThan},
	opNumberGreaterThanOrEquals: {name: "NumberGreaterThanOrEquals", fam: famNumber, base: opNumberGreaterThanOrEquals},
	opNumberLessThan:            {name: "NumberLessThan", fam: famNumber, base: opNumberLessThan},
	opNumberLessThanOrEquals:    {name: "NumberLessThanOrEquals", fam: famNumber, base: opNumberLessThanOrEquals},
	opNumberIn:                  {name: "NumberIn", fam: famNumber, multi: true, base: opNumberIn},
	opNumberNotIn:               {name: "NumberNotIn", fam: famNumber, multi: true, base: opNumberIn, neg: true},
	opBoolEquals:                {name: "BoolEquals", fam: famBool, base: opBoolEquals},
	opStringIn:                  {name: "StringIn", fam: famString, multi: true, base: opStringIn},
	opStringNotIn:               {name: "StringNotIn", fam: famString, multi: true, base: opStringIn, neg: true},
	opStringBeginsWith:          {name: "StringBeginsWith", fam: famString, multi: true, base: opStringBeginsWith},
	opStringEndsWith:            {name: "StringEndsWith", fam: famString, multi: true, base: opStringEndsWith},
	opStringContains:            {name: "StringContains", fam: famString, multi: true, base: opStringContains},
	opStringNotContains:         {name: "StringNotContains", fam: famString, multi: true, base: opStringContains, neg: true, newer: true},
	opStringNotBeginsWith:       {name: "StringNotBeginsWith", fam: famString, multi: true, base: opStringBeginsWith, neg: true, newer: true},
	opStringNotEndsWith:         {name: "StringNotEndsWith", fam: famString, multi: true, base: opStringEndsWith, neg: true, newer: true},
	opNumberInRange:             {name: "NumberInRange", fam: famRange, multi: true, base: opNumberInRange, newer: true},
	opNumberNotInRange:          {name: "NumberNotInRange", fam: famRange, multi: true, base: opNumberInRange, neg: true, newer: true},
	opIsNullOrUndefined:         {name: "IsNullOrUndefined", fam: famNull, base: opIsNullOrUndefined, newer: true, noValu: true},
	opIsNotNull:                 {name: "IsNotNull", fam: famNull, base: opIsNotNull, newer: true, noValu: true},
}

// opsByLower maps each lower-cased operator name to its op.
var opsByLower = func() map[string]op {
	m := make(map[string]op, numOps)
	for i := range ops {
		m[strings.ToLower(ops[i].name)] = op(i)
	}
	return m
}()

// operatorList is the canonical names joined for error messages.
var operatorList = func() string {
	names := make([]string, numOps)
	for i := range ops {
		names[i] = ops[i].name
	}
	return strings.Join(names, ", ")
}()

func parseOp(name string) (op, bool) {
	o, ok := opsByLower[strings.ToLower(name)]
	return o, ok
}

// CanonicalOperator returns the canonical spelling of the advanced-filter
// operator name, matched case-insensitively (for example "numberin" gives
// "NumberIn"), and whether it is an operator edgegrid knows: the twelve of
// the edge API or the newer ones of the cloud API. For any other name it
// returns "" and false.
func CanonicalOperator(name string) (string, bool) {
	o, ok := parseOp(name)
	if !ok {
		return "", false
	}
	return ops[o].name, true
}

func (o op) info() *opInfo { return &ops[o] }

// multi reports whether the operator takes a list of values.
func (o op) multi() bool { return ops[o].multi }

func (o op) String() string { return ops[o].name }

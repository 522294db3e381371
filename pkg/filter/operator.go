package filter

import "strings"

// op is one of the twelve advanced-filter operators.
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
	numOps
)

// opNames holds the canonical spelling of each operator, indexed by op.
var opNames = [numOps]string{
	"NumberGreaterThan",
	"NumberGreaterThanOrEquals",
	"NumberLessThan",
	"NumberLessThanOrEquals",
	"NumberIn",
	"NumberNotIn",
	"BoolEquals",
	"StringIn",
	"StringNotIn",
	"StringBeginsWith",
	"StringEndsWith",
	"StringContains",
}

// opsByLower maps each lower-cased operator name to its op.
var opsByLower = func() map[string]op {
	m := make(map[string]op, numOps)
	for i, name := range opNames {
		m[strings.ToLower(name)] = op(i)
	}
	return m
}()

// newerOps are operators of later cloud API versions, which the edge API
// (2019-01-01-preview) does not have. They get a clearer error than an
// unknown name.
var newerOps = map[string]bool{
	"stringnotcontains":   true,
	"stringnotbeginswith": true,
	"stringnotendswith":   true,
	"numberinrange":       true,
	"numbernotinrange":    true,
	"isnullorundefined":   true,
	"isnotnull":           true,
}

// operatorList is the canonical names joined for error messages.
var operatorList = strings.Join(opNames[:], ", ")

func parseOp(name string) (op, bool) {
	o, ok := opsByLower[strings.ToLower(name)]
	return o, ok
}

// CanonicalOperator returns the canonical spelling of the advanced-filter
// operator name, matched case-insensitively (for example "numberin" gives
// "NumberIn"), and whether it is one of the twelve operators of the edge
// API. For any other name it returns "" and false.
func CanonicalOperator(name string) (string, bool) {
	o, ok := parseOp(name)
	if !ok {
		return "", false
	}
	return opNames[o], true
}

// The operator's family decides how its values are checked and compared.
func (o op) isNumber() bool { return o <= opNumberNotIn }
func (o op) isString() bool { return o >= opStringIn }

// multi reports whether the operator takes a list of values.
func (o op) multi() bool {
	switch o {
	case opNumberIn, opNumberNotIn, opStringIn, opStringNotIn,
		opStringBeginsWith, opStringEndsWith, opStringContains:
		return true
	}
	return false
}

func (o op) String() string { return opNames[o] }

package push

import "github.com/edgegrid/edgegrid/pkg/budget"

// BudgetOf returns the budget e's events count in (Options.Budget), for
// the tests' dispatchers, which claim it as the broker's dispatcher claims
// the one the module gives both.
func BudgetOf(e *Engine) *budget.Budget { return e.budget }

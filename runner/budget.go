package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// BudgetOutError is a run stopped because its budget (Options.Budget) ran
// out. The budget is a deadline on the run's context, set as Run begins:
// every phase waits under it (the builds, the starts with their health
// checks and a stack's setup, the gRPC checks, the pre-flight commands,
// the agreement probe, the rounds), so a target that never answers ends
// the run at the deadline rather than at its timeouts. The run keeps the
// rungs it measured, its status "cancelled"; the targets are stopped as
// after any error.
type BudgetOutError struct {
	Budget time.Duration
	Phase  string // what the run was doing: "the agreement probe"
	Rungs  int    // the rungs measured by then
}

func (e *BudgetOutError) Error() string {
	return fmt.Sprintf("the budget of %v ran out during %s, after %d rungs", e.Budget, e.Phase, e.Rungs)
}

// Unwrap makes a budget that ran out a deadline that passed.
func (e *BudgetOutError) Unwrap() error { return context.DeadlineExceeded }

// budgetClock is a run's budget: its deadline and the phase the run is
// in, which a BudgetOutError names. It is the cause of the deadline on the
// run's context, so whatever sees the context end can tell the budget
// from a cancellation (budgetOut). A nil *budgetClock is no budget.
type budgetClock struct {
	budget   time.Duration
	deadline time.Time
	mu       sync.Mutex
	phase    string
}

// withBudget bounds ctx by budget from now on, unless budget is 0; with
// noDeadline (tests only) the clock is kept but the context is not
// bounded. cancel releases the deadline's timer.
func withBudget(ctx context.Context, budget time.Duration, noDeadline bool) (context.Context, *budgetClock, context.CancelFunc) {
	if budget <= 0 {
		return ctx, nil, func() {}
	}
	b := &budgetClock{budget: budget, deadline: time.Now().Add(budget), phase: "the run's set-up"}
	if noDeadline {
		return ctx, b, func() {}
	}
	ctx, cancel := context.WithDeadlineCause(ctx, b.deadline, b)
	return ctx, b, cancel
}

// Error is the context's cause when the deadline passes.
func (b *budgetClock) Error() string { return fmt.Sprintf("the budget of %v ran out", b.budget) }

// enter records the phase the run is now in.
func (b *budgetClock) enter(phase string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.phase = phase
	b.mu.Unlock()
}

// left is the time until the deadline, never below 0.
func (b *budgetClock) left() time.Duration { return max(0, time.Until(b.deadline)) }

// budgetOut is the *BudgetOutError of a run whose context ended because
// its budget ran out, after rungs rungs; nil when the context lives or
// ended otherwise.
func budgetOut(ctx context.Context, rungs int) error {
	var b *budgetClock
	if ctx.Err() == nil || !errors.As(context.Cause(ctx), &b) {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return &BudgetOutError{Budget: b.budget, Phase: b.phase, Rungs: rungs}
}

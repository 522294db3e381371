package push_test

import (
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/push"
)

// attemptTimes runs NextAttempt from the first attempt on, every attempt
// failing with last, and returns when each attempt was made (as offsets
// from acceptance) and why the event was dropped.
func attemptTimes(p push.Policy, last push.Result) ([]time.Duration, outcome.Reason) {
	accepted := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := accepted
	var times []time.Duration
	for attempts := 1; ; attempts++ {
		times = append(times, now.Sub(accepted))
		d := push.NextAttempt(p, attempts, accepted, now, last, 0)
		if d.Drop != "" {
			return times, d.Drop
		}
		now = d.Due
	}
}

func edgeDefaults() push.Policy {
	o := push.DefaultOptions()
	return push.Policy{Schedule: eventgrid.EdgeQueues, MaxAttempts: o.DefaultMaxDeliveryAttempts, TTL: o.DefaultTTL, Backoff: o.Backoff, Scale: 1}
}

func minutes(ms ...int) []time.Duration {
	out := make([]time.Duration, len(ms))
	for i, m := range ms {
		out[i] = time.Duration(m) * time.Minute
	}
	return out
}

func TestNextAttempt_EdgeQueues(t *testing.T) {
	fail := push.Result{Outcome: push.OutcomeAborted, StatusCode: 500}
	tests := []struct {
		name   string
		policy func(*push.Policy)
		want   []time.Duration
		reason outcome.Reason
	}{
		{"ProductionDefaults", nil, minutes(0, 1, 11, 21, 31, 41, 51, 61, 71, 81, 91, 101, 111), outcome.TimeToLiveExceeded},
		{"TTL1440Minutes", func(p *push.Policy) { p.TTL = 1440 * time.Minute },
			minutes(0, 1, 11, 21, 31, 41, 51, 61, 71, 81, 91, 101, 111, 121, 131, 141, 151, 161, 171, 181, 191, 201, 211, 221, 231, 241, 251, 261, 271, 281),
			outcome.MaxDeliveryAttemptsExceeded},
		{"ThreeAttempts", func(p *push.Policy) { p.MaxAttempts = 3 }, minutes(0, 1, 11), outcome.MaxDeliveryAttemptsExceeded},
		{"OneAttempt", func(p *push.Policy) { p.MaxAttempts = 1 }, minutes(0), outcome.MaxDeliveryAttemptsExceeded},
		{"TTLBeforeFirstRetry", func(p *push.Policy) { p.TTL = 30 * time.Second }, minutes(0), outcome.TimeToLiveExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := edgeDefaults()
			if tt.policy != nil {
				tt.policy(&p)
			}
			got, reason := attemptTimes(p, fail)
			if len(got) != len(tt.want) || reason != tt.reason {
				t.Fatalf("attempts at %v then %s; want %v then %s", got, reason, tt.want, tt.reason)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("attempt %d at %v, want %v (all: %v)", i+1, got[i], tt.want[i], got)
				}
			}
		})
	}
	t.Run("EveryStatusRetries", func(t *testing.T) {
		for _, code := range []int{400, 401, 403, 404, 410, 413} {
			d := push.NextAttempt(edgeDefaults(), 1, time.Now(), time.Now(), push.Result{Outcome: push.OutcomeBadRequest, StatusCode: code}, 0)
			if d.Drop != "" {
				t.Errorf("status %d dropped (%s) under EdgeQueues, which retries every failure", code, d.Drop)
			}
		}
	})
}

func cloudDefaults() push.Policy {
	p := edgeDefaults()
	p.Schedule, p.TTL = eventgrid.CloudExponential, 1440*time.Minute
	return p
}

func TestNextAttempt_CloudExponential(t *testing.T) {
	s := time.Second
	t.Run("Schedule", func(t *testing.T) {
		got, reason := attemptTimes(cloudDefaults(), push.Result{Outcome: push.OutcomeAborted, StatusCode: 500})
		// 10 s, 30 s, 1 min, 5 min, 10 min, 30 min, 1 h, 3 h, 6 h, then every
		// 12 h: the attempt after the one at 22 h 46 min 40 s would come past
		// the 24 h TTL.
		want := []time.Duration{0, 10 * s, 40 * s, 100 * s, 400 * s, 1000 * s, 2800 * s, 6400 * s, 17200 * s, 38800 * s, 38800*s + 12*time.Hour}
		if reason != outcome.TimeToLiveExceeded || len(got) != len(want) {
			t.Fatalf("attempts at %v then %s; want %v then expired", got, reason, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("attempt %d at %v, want %v", i+1, got[i], want[i])
			}
		}
	})
	t.Run("Jitter", func(t *testing.T) {
		now := time.Now()
		last := push.Result{Outcome: push.OutcomeAborted}
		lo := push.NextAttempt(cloudDefaults(), 5, now, now, last, -1).Due.Sub(now)
		hi := push.NextAttempt(cloudDefaults(), 5, now, now, last, 1).Due.Sub(now)
		if lo != 8*time.Minute || hi != 12*time.Minute {
			t.Errorf("10 min ± 20%% = [%v, %v], want [8m, 12m]", lo, hi)
		}
	})
	t.Run("StatusClasses", func(t *testing.T) {
		now := time.Now()
		tests := []struct {
			code       int
			outcome    push.Outcome
			retryAfter time.Duration
			drop       outcome.Reason
			delay      time.Duration
		}{
			{400, push.OutcomeBadRequest, 0, "UndeliverableDueToHttpBadRequest", 0},
			{401, push.OutcomeUnauthorized, 0, "UndeliverableDueToHttpUnauthorized", 0},
			{403, push.OutcomeForbidden, 0, "UndeliverableDueToHttpForbidden", 0},
			{404, push.OutcomeNotFound, 0, "UndeliverableDueToHttpNotFound", 0},
			{410, push.OutcomeNotFound, 0, "UndeliverableDueToHttpNotFound", 0},
			{413, push.OutcomePayloadTooLarge, 0, "UndeliverableDueToHttpPayloadTooLarge", 0},
			{408, push.OutcomeTimedOut, 0, "", 2 * time.Minute},
			{503, push.OutcomeBusy, 0, "", 30 * s},
			{503, push.OutcomeBusy, 5 * time.Minute, "", 5 * time.Minute},
			{429, push.OutcomeBusy, 0, "", 10 * s},
			{429, push.OutcomeBusy, 90 * s, "", 90 * s},
			{429, push.OutcomeBusy, 5 * time.Hour, "", time.Hour},
			{500, push.OutcomeAborted, 5 * time.Minute, "", 10 * s},
			{0, push.OutcomeSocketError, 0, "", 10 * s},
			{0, push.OutcomeTimedOut, 0, "", 10 * s},
		}
		for _, tt := range tests {
			d := push.NextAttempt(cloudDefaults(), 1, now, now, push.Result{Outcome: tt.outcome, StatusCode: tt.code, RetryAfter: tt.retryAfter}, 0)
			if d.Drop != tt.drop || (tt.drop == "" && d.Due.Sub(now) != tt.delay) {
				t.Errorf("%d %s Retry-After %v: drop %q, next in %v; want drop %q, next in %v", tt.code, tt.outcome, tt.retryAfter, d.Drop, d.Due.Sub(now), tt.drop, tt.delay)
			}
		}
	})
	t.Run("RetryAfterNeverPastTTL", func(t *testing.T) {
		now := time.Now()
		p := cloudDefaults()
		p.TTL = 10 * time.Minute
		d := push.NextAttempt(p, 1, now, now, push.Result{Outcome: push.OutcomeBusy, StatusCode: 429, RetryAfter: 30 * time.Minute}, 0)
		if d.Drop != outcome.TimeToLiveExceeded {
			t.Errorf("Retry-After past the TTL: %+v, want expired", d)
		}
	})
	t.Run("Scale", func(t *testing.T) {
		p := cloudDefaults()
		p.Scale = 0.01
		now := time.Now()
		d := push.NextAttempt(p, 1, now, now, push.Result{Outcome: push.OutcomeAborted}, 0)
		if got := d.Due.Sub(now); got != 100*time.Millisecond {
			t.Errorf("first retry with scale 0.01 in %v, want 100ms", got)
		}
	})
}

func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		want push.Outcome
	}{
		{nil, push.OutcomeDelivered},
		{statusErr{code: 400}, push.OutcomeBadRequest},
		{statusErr{code: 410}, push.OutcomeNotFound},
		{statusErr{code: 429}, push.OutcomeBusy},
		{statusErr{code: 500}, push.OutcomeAborted},
		{errFail, push.OutcomeAborted},
	}
	for _, tt := range tests {
		if got := push.Classify(tt.err).Outcome; got != tt.want {
			t.Errorf("Classify(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
	if r := push.Classify(statusErr{code: 503, retryAfter: time.Minute}); r.RetryAfter != time.Minute || r.StatusCode != 503 {
		t.Errorf("Classify kept %+v of a 503 with Retry-After", r)
	}
}

// statusErr is a Sender error carrying a status and a Retry-After.
type statusErr struct {
	code       int
	retryAfter time.Duration
}

func (e statusErr) Error() string             { return "status" }
func (e statusErr) StatusCode() int           { return e.code }
func (e statusErr) RetryAfter() time.Duration { return e.retryAfter }

// TestNextAttempt_LargeScale: a scale large enough to overflow a
// time.Duration gives the longest delay, not a negative one (a hot retry
// loop): the event outlives its TTL and is dropped.
func TestNextAttempt_LargeScale(t *testing.T) {
	p := cloudDefaults()
	p.Scale = 1e9
	now := time.Now()
	for attempts := 1; attempts <= 10; attempts++ {
		d := push.NextAttempt(p, attempts, now, now, push.Result{Outcome: push.OutcomeAborted, StatusCode: 500}, 1)
		if d.Drop == "" && !d.Due.After(now) {
			t.Fatalf("after %d attempts: due %v, not after now", attempts, d.Due.Sub(now))
		}
		if d.Drop != outcome.TimeToLiveExceeded {
			t.Errorf("after %d attempts with scale 1e9: %+v, want expired", attempts, d)
		}
	}
}

package api

import "time"

// Metrics receives the API's measurements of publish requests. Implementations
// must be safe for concurrent use and must not block.
type Metrics interface {
	// Published reports one publish request to an existing topic: the HTTP
	// status it was answered with, how long it took, how many events it
	// brought that the broker accepted, and how many of those matched no
	// subscription (and were dropped, as the original module did).
	Published(topic string, status int, latency time.Duration, received, unmatched int)
	// TopicDeleted reports that a topic is gone, so its series can go too.
	TopicDeleted(topic string)
	// AuthFailed reports a request refused with 401 or 403; reason is the
	// kind of refusal (package auth's Fail* kinds, or UnknownAuthFailure).
	AuthFailed(reason string)
	// Rejected reports a publish request the API itself refused for room
	// (eventgrid.RefusedBodiesInFlight); those the budget refuses are the
	// dispatcher's to report.
	Rejected(reason string)
}

type nopMetrics struct{}

func (nopMetrics) Rejected(string) {}

func (nopMetrics) Published(string, int, time.Duration, int, int) {}
func (nopMetrics) TopicDeleted(string)                            {}
func (nopMetrics) AuthFailed(string)                              {}

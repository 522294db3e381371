// Command bench measures the broker end to end on loopback:
//
//	go run ./scripts/bench [-scenarios a,ar,b,br,c,d,e,f] [-size 1024] [-out file.json]
//
// It builds the broker binary (go build ./module, or runs the one given with
// -broker), starts it as a child process with a fresh configuration for
// every scenario, and drives it with a load generator and a webhook sink,
// both in this process. The sink answers 200 and records the receive time of
// every event; each published event carries its publish time in its data
// ({"bt":<Unix ns>,"pad":"…"}, padded to -size bytes), so the latency is
// publish → receive on the same clock. The broker is stopped by its PID with
// SIGTERM at the end of each scenario. Linux only: the broker's CPU time and
// memory come from /proc/<pid>/stat and /proc/<pid>/status.
//
// Scenarios:
//
//	a  one event per publish request, unbatched delivery, 1 subscription
//	b  100-event publish requests, delivery batches of 50, 1 subscription
//	c  fan-out: as b, but one topic with 10 subscriptions
//	d  as c, with one subscriber that never answers (deliveries time out
//	   after -hang-timeout); the other nine are compared with c
//	e  backlog: -backlog events queued for a dead subscriber (connection
//	   refused, one-hour back-off) with broker__maxQueuedEvents at the same
//	   number, then -overflow publish requests past that limit, in rounds
//	   after each of which the broker collects its garbage (asked through
//	   its profiling endpoints), so that its live heap shows what it keeps
//	f  latency: one event per request at a fixed rate (-rate), open loop,
//	   unbatched delivery
//	ar, br  a and b through a bare Go relay instead of the broker: this
//	   program run again as a child process, which forwards each publish
//	   request to the sink before answering it, as the requests the broker
//	   sends (one in, one out; two of 50 out in br). a and b are judged
//	   against them: at least 0.9 times the relay.
//	g  pull delivery (receive + acknowledge); only when asked for. Its
//	   events are converted to CloudEvents on the way, which b's are not:
//	bc b with its subscription asking for CloudEvents, so that g/bc
//	   compares pull with push doing the same conversion; only when asked
//	   for
//	h  a faulty sink: -chaos-subs subscriptions on one topic, every other
//	   one batched by -chaos-batch, get -chaos-events events with back-off
//	   intervals of 1 s and 2 s; once fault-free (h0), then once per -chaos
//	   spec (h1, h2, …): a fraction of the delivery requests fail (500, 408,
//	   a dropped connection, no answer before the delivery timeout, 503,
//	   429 with Retry-After), each run compared with h0. The sink keeps
//	   every event id it accepted, so lost and duplicated deliveries are
//	   counted. Only when asked for: its faulty runs take minutes.
//	i  the console's cost: b's flow with nobody watching, then with a live
//	   tail, the delivery outcomes and a page polling the inspection API
//	   every second, alternating -console-rounds times; the console should
//	   cost under 5 % of the delivered events per second
//	j  inspection memory: about 64 MiB of 60 KB events held for a dead
//	   subscriber, then 3 rounds of 64 concurrent peeks of the top 1,000
//	   (GET …/events?top=1000), each read whole; the broker's RSS, sampled
//	   every 10 ms, should rise by less than 64 MiB. Only when asked for
//	k  idle clients: 5,000 connections that each send one request and hold
//	   their connection open, idle after a GET /healthz, then (on a new
//	   broker) waiting on a long poll (:receive, maxWaitTime=60); the
//	   sockets the broker holds and its RSS once all have their answer or
//	   wait: at most api__maxConnections sockets. Only when asked for
//	l  a crowd at one slow receiver: 101 subscriptions of one topic, all
//	   to one receiver (a path each) that is what Python's http.server is
//	   by default (a listen backlog of 5, connections accepted one at a
//	   time, requests handled one at a time), in batches of 16; 101 events
//	   published in one request make 707 delivery requests at once. It
//	   reports the connections the receiver accepted and the time until
//	   every delivery arrived (every event within 1 s is its target);
//	   only when asked for
//	m  redrive against publish: -redrive-events events (100,000) given up
//	   on by a subscriber that answers 503 (one attempt allowed), then,
//	   the subscriber fixed, one :redrive of them all (m), and as many
//	   published afresh on the same broker (mp), both delivered in batches
//	   of 50; m's broker CPU per 1,000 events must be at most mp's. Only
//	   when asked for
//
// a and b publish for -duration (or -events), c and d publish
// -fanout-events, all with -publishers closed-loop publishers.
//
// For every scenario it reports events per second end to end (events
// received by the sink ÷ time from the first publish to the last receive),
// latency percentiles, broker CPU seconds per 1,000 delivered events, broker
// RSS and peak RSS, and the CPU taken meanwhile by this process and by other
// processes on the machine. It prints a table and writes the same figures,
// with more detail, as JSON to -out (by default edgegrid-bench.json in the
// temporary directory).
//
// The load generator, the sink and the broker share the machine's cores, as
// on a gateway. On a machine shared with other work, -wait-idle waits for
// the machine to be idle before each scenario and -retry-busy runs a
// scenario again when other processes took CPU during it. -perf DIR records
// a perf profile of the broker for each scenario. -env KEY=VALUE adds to the
// broker's environment (for example GOGC) in every scenario.
package main

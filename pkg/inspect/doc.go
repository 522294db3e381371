// Package inspect keeps what the inspection API shows of the broker beyond
// the queues themselves (docs/console.md): every topic's and subscription's
// totals since it was created in this process, their history over the last
// 15 minutes at 5-second resolution, each subscription's latest events
// given up on, and the live streams of accepted events and of delivery
// outcomes.
//
// A Board holds one record per topic (Topic) and per subscription (Sub),
// created and ended as the registry reports them (it is a topic and
// subscription observer). The publish path and the two delivery modes
// report to the records where they already know what happened: an accepted
// request, the end of a delivery attempt, an event given up on. Reporting
// costs a few atomic additions and one short lock per request; the streams
// cost nothing until someone watches, which the reporters ask first
// (Watching is one atomic load), so that no event is copied and nothing is
// allocated for a stream nobody reads.
//
// Memory is bounded: a subscription's history takes under 4 KiB (fixed-size
// arrays; a test measures them), its given-up list at most the configured
// count and bytes, and a stream at most MaxStreamItems and MaxStreamBytes
// waiting for its reader, beyond which the oldest go and the reader is
// told how many.
//
// The package also holds the shapes the delivery modes answer a peek with
// (Waiting, Peek), so that the API reads both modes alike.
package inspect

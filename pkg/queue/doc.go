// Package queue keeps the events of queue subscriptions (Azure Event Grid
// namespace "pull delivery") until applications receive and settle them.
// Events arrive through Enqueue, from the publish path (package dispatch),
// which has claimed their room in the broker's budget; the store gives it
// back as each event leaves.
//
// A receive locks each event it hands out for the subscription's lock
// duration under an unguessable lock token; acknowledge removes the event,
// release makes it available again (after a delay), reject dead-letters or
// drops it, and renewLock extends the lock. A lock that expires makes the
// event available again. An event delivered maxDeliveryCount times, or past
// its time to live, is dead-lettered or dropped: every event ends
// acknowledged, rejected, dead-lettered or counted as dropped.
//
// Each subscription's queue has one timer, armed for its earliest lock
// expiry, delayed release or time to live, and long-polling receives wait in
// a list, oldest first: whatever makes events available (a publish, a
// release, an expired lock or delay, a receive that noticed one) wakes one
// waiting receive per event, so nothing runs per waiting receive. A cap
// bounds the receives waiting at once. See docs/pull-delivery.md.
package queue

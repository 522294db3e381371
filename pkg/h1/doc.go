// Package h1 is the HTTP/1.1 client of webhook deliveries: a Client posts
// a request and reads its answer on the caller's goroutine, over
// connections it keeps alive between requests.
//
// Why not net/http's Transport: the Transport reads each connection from
// a goroutine of its own and writes from another, so each request crossed
// three goroutines and their channels, and its bookkeeping (the pool's
// wants, the request's cancellation, the header sorted to be written)
// came to about a quarter of the broker's CPU per unbatched event
// (docs/performance.md#delivery-connections). What is kept of net/http:
// the answer is read by http.ReadResponse, header names and values are
// checked as the Transport checks them, and connections are dialled as it
// dials them (the caller's dialer, its TLS dialing or the same TLS
// handshake).
//
// The contract:
//
//   - Post writes one POST with a Content-Length body and returns the
//     answer's status and header; its body is read up to 64 KiB and
//     dropped (Body is http.NoBody). A longer body, an answer that says
//     Connection: close or is HTTP/1.0 without keep-alive, bytes past the
//     answer (a body sent with a 204, say), a failed request and one cut
//     short by its context close the connection; any other is kept for
//     the next request to the same address, whatever its path.
//   - 1xx answers are skipped. A 101 is the answer, as the Transport
//     returns it, and its connection is closed unread. Status lines and
//     headers that do not end within MaxHeaderBytes (1 MiB, the 1xx
//     answers' counted with the final one's) are an error.
//   - The context bounds the whole request, its wait for a connection
//     included; when it ends, Post returns its error (context.Cause), as
//     the Transport does.
//   - At most MaxConnsPerHost connections are open or being dialled to one
//     address. A request that finds no idle connection waits for the first
//     of a connection given back and a dial of its own, as with the
//     Transport; a dial is started only while fewer dials are in flight
//     than requests wait; one whose request was served meanwhile carries
//     on, and its connection serves the next request or is kept idle. A
//     dial has DialTimeout (45 s), the TLS handshake included. So a burst
//     of requests to an endpoint that accepts connections slowly (a small
//     listen backlog whose dropped SYNs are retransmitted a second later)
//     is served on the connections that are there, and never opens more
//     connections than the Transport does for the same work.
//   - A connection idle for IdleTimeout (90 s) is closed; one idle for
//     more than 50 ms is checked (on Linux, a non-blocking peek) before it
//     carries a request, so that one the endpoint closed meanwhile costs a
//     new connection, not a failed request. The Transport learns of such
//     a close at once, as it always reads; here a request written on a
//     connection the endpoint closed less than 50 ms after its last
//     answer fails (an endpoint that closes connections should say
//     Connection: close), as a peek before every request would cost a
//     system call each.
//   - Close closes the idle connections, cancels the dials in flight,
//     stops the sweep of idle connections and waits for all of it; a
//     connection in use is closed when its request ends. Requests after
//     Close fail with ErrClosed.
//
// A Client is safe for concurrent use. Proxies are not its concern: a
// request that needs one goes through net/http.
package h1

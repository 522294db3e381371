package edgehub

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/edgehub/mqtttopic"
	"github.com/edgegrid/edgegrid/pkg/push"
)

// ErrClosed is returned by Send after Close.
var ErrClosed = errors.New("edgehub: client closed")

// Options configure a Client.
type Options struct {
	// URL is the MQTT endpoint: mqtts://host:port (TLS; also ssl:// and
	// tls://) or mqtt://host:port (plain; also tcp://).
	URL string
	// DeviceID and ModuleID name the module in the topic.
	DeviceID string
	ModuleID string
	// ClientID is the MQTT client id; empty means <DeviceID>/<ModuleID>.
	ClientID string
	// Username is the MQTT user name; empty sends none.
	Username string
	// Password, when set, is sent as is. Otherwise, with Signer set, each
	// connection gets a fresh SAS token for HubHostName's module identity.
	Password    string
	Signer      Signer
	HubHostName string
	// TLSConfig returns the TLS configuration of a new connection (called
	// for each, so that a renewed trust bundle applies); nil means Go's
	// defaults with the URL's host as server name.
	TLSConfig func(ctx context.Context) (*tls.Config, error)
	// TokenLifetime is a SAS token's validity; the connection is renewed
	// after four fifths of it. Zero means one hour.
	TokenLifetime time.Duration
	// ConnectTimeout bounds one connection attempt; zero means 30 seconds.
	ConnectTimeout time.Duration
	// MinReconnect and MaxReconnect bound the back-off between failed
	// attempts, which doubles from the first to the second; zero means one
	// and thirty seconds.
	MinReconnect time.Duration
	MaxReconnect time.Duration
	// KeepAlive is the MQTT keep-alive; zero means 30 seconds.
	KeepAlive time.Duration
	// Now returns the current time, for token expiry; nil means time.Now.
	Now func() time.Time
	Log zerolog.Logger
}

// Connection states.
const (
	stateIdle       = iota // no Send yet: nothing started
	stateConnecting        // an attempt is under way: Sends wait for it
	stateUp                // connected
	stateDown              // the last attempt failed: Sends fail at once
	stateClosed
)

// Client is the module's one connection to edgeHub. It connects at the first
// Send and keeps the connection, reconnecting with back-off, until Close.
// It is safe for concurrent use.
type Client struct {
	o       Options
	broker  string
	useTLS  bool
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	log     zerolog.Logger
	backoff time.Duration

	mu      sync.Mutex
	state   int
	cur     mqtt.Client
	lastErr error
	changed chan struct{} // closed at every state change
}

var _ push.Sender = (*Client)(nil)

// New checks o and returns a Client; it does not connect.
func New(o Options) (*Client, error) {
	u, err := url.Parse(o.URL)
	if err != nil || u.Host == "" || u.Port() == "" {
		return nil, errors.New("edgehub: the MQTT URL must be mqtts://host:port or mqtt://host:port")
	}
	c := &Client{o: o, changed: make(chan struct{}), log: o.Log.With().Str("component", "edgehub").Logger()}
	switch strings.ToLower(u.Scheme) {
	case "mqtts", "ssl", "tls":
		c.broker, c.useTLS = "ssl://"+u.Host, true
	case "mqtt", "tcp":
		c.broker = "tcp://" + u.Host
	default:
		return nil, fmt.Errorf("edgehub: unsupported MQTT URL scheme %q (want mqtts or mqtt)", u.Scheme)
	}
	if o.DeviceID == "" || o.ModuleID == "" {
		return nil, errors.New("edgehub: the device id and module id are required")
	}
	if o.Password == "" && o.Signer != nil && o.HubHostName == "" {
		return nil, errors.New("edgehub: the IoT hub host name is required for SAS tokens")
	}
	if c.o.ClientID == "" {
		c.o.ClientID = o.DeviceID + "/" + o.ModuleID
	}
	setDefault(&c.o.TokenLifetime, time.Hour)
	setDefault(&c.o.ConnectTimeout, 30*time.Second)
	setDefault(&c.o.MinReconnect, time.Second)
	setDefault(&c.o.MaxReconnect, 30*time.Second)
	setDefault(&c.o.KeepAlive, 30*time.Second)
	if c.o.Now == nil {
		c.o.Now = time.Now
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

func setDefault(d *time.Duration, def time.Duration) {
	if *d <= 0 {
		*d = def
	}
}

// Error is a failed send to edgeHub. It never holds the password.
type Error struct {
	Err error
	// Status is 400 for a message that can never be sent as it is (its
	// topic is not a valid PUBLISH topic), 0 otherwise.
	Status int
}

func (e *Error) Error() string { return "edgehub: " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// StatusCode implements push.StatusError: 400 for a message that can
// never be sent, 0 (no answer) otherwise.
func (e *Error) StatusCode() int { return e.Status }

// Send implements push.Sender: one message on the subscription's output
// whose body is the batch's JSON array. It returns nil once edgeHub
// acknowledged the message (PUBACK), and an error when the connection is
// down, the publish fails, or ctx ends first.
func (c *Client) Send(ctx context.Context, b *push.Batch) error {
	dst := &b.Subscription.Destination
	var first []byte
	if len(b.Bodies) > 0 {
		first = b.Bodies[0]
	}
	topic := mqtttopic.ModuleOutput(c.o.DeviceID, c.o.ModuleID, dst.OutputName, properties(dst.DeliveryAttributes, first)...)
	// A topic the broker must refuse would make edgeHub close the
	// connection every subscription shares: never publish it.
	if err := mqtttopic.Check(topic); err != nil {
		return &Error{Err: fmt.Errorf("message not sent: %w", err), Status: 400}
	}
	cl, err := c.connection(ctx)
	if err != nil {
		return err
	}
	// A context already done sends nothing: once published, the message
	// may be acknowledged before the select below sees the context end.
	if err := ctx.Err(); err != nil {
		return &Error{Err: fmt.Errorf("message not sent: %w", err)}
	}
	tok := cl.Publish(topic, 1, false, payload(b.Bodies))
	select {
	case <-tok.Done():
		if err := tok.Error(); err != nil {
			return &Error{Err: fmt.Errorf("publish: %w", err)}
		}
		return nil
	case <-ctx.Done():
		return &Error{Err: fmt.Errorf("no PUBACK from edgeHub before the delivery timeout: %w", ctx.Err())}
	}
}

// connection returns the live connection, starting the client on first use
// and waiting while an attempt is under way.
func (c *Client) connection(ctx context.Context) (mqtt.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == stateIdle {
		c.state = stateConnecting
		c.wg.Add(1)
		go c.run()
	}
	for {
		switch c.state {
		case stateUp:
			return c.cur, nil
		case stateDown:
			return nil, &Error{Err: fmt.Errorf("not connected to edgeHub: %w", c.lastErr)}
		case stateClosed:
			return nil, ErrClosed
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			c.mu.Lock()
			return nil, &Error{Err: fmt.Errorf("still connecting to edgeHub at the delivery timeout: %w", ctx.Err())}
		}
		c.mu.Lock()
	}
}

func (c *Client) setState(state int, cl mqtt.Client, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == stateClosed {
		return
	}
	c.state, c.cur, c.lastErr = state, cl, err
	close(c.changed)
	c.changed = make(chan struct{})
}

// Close disconnects and stops reconnecting, and waits for its goroutine.
// Sends in flight fail. It always returns nil.
func (c *Client) Close(context.Context) error {
	c.cancel()
	c.wg.Wait()
	c.setState(stateClosed, nil, ErrClosed)
	return nil
}

// run keeps the connection: connect, wait for its loss, its renewal time or
// Close, and start over, backing off after failures.
func (c *Client) run() {
	defer c.wg.Done()
	backoff := c.o.MinReconnect
	for {
		c.setState(stateConnecting, nil, nil)
		cl, lost, renew, err := c.connect()
		if err != nil {
			if c.ctx.Err() != nil {
				return
			}
			c.setState(stateDown, nil, err)
			c.log.Warn().Err(err).Float64("retryInSeconds", backoff.Seconds()).Msg("cannot connect to edgeHub")
			if !c.sleep(backoff) {
				return
			}
			backoff = min(2*backoff, c.o.MaxReconnect)
			continue
		}
		backoff = c.o.MinReconnect
		c.setState(stateUp, cl, nil)
		c.log.Info().Str("clientId", c.o.ClientID).Msg("connected to edgeHub")
		var renewC <-chan time.Time
		var renewT *time.Timer
		if renew > 0 {
			renewT = time.NewTimer(renew)
			renewC = renewT.C
		}
		select {
		case err := <-lost:
			c.setState(stateDown, nil, err)
			c.log.Warn().Err(err).Msg("lost the connection to edgeHub")
			if !c.sleep(backoff) {
				return
			}
		case <-renewC:
			c.log.Info().Msg("renewing the edgeHub connection before its token expires")
			c.setState(stateConnecting, nil, nil)
			cl.Disconnect(250)
		case <-c.ctx.Done():
			cl.Disconnect(250)
			return
		}
		if renewT != nil {
			renewT.Stop()
		}
	}
}

func (c *Client) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.ctx.Done():
		return false
	}
}

// connect makes one connection attempt. renew is when to reconnect with a
// fresh token, 0 for never.
func (c *Client) connect() (mqtt.Client, <-chan error, time.Duration, error) {
	ctx, cancel := context.WithTimeout(c.ctx, c.o.ConnectTimeout)
	defer cancel()
	password, renew := c.o.Password, time.Duration(0)
	if password == "" && c.o.Signer != nil {
		var err error
		expiry := c.o.Now().Add(c.o.TokenLifetime)
		if password, err = SASToken(ctx, c.o.Signer, c.o.HubHostName, c.o.DeviceID, c.o.ModuleID, expiry); err != nil {
			return nil, nil, 0, fmt.Errorf("making the SAS token: %w", err)
		}
		renew = c.o.TokenLifetime - c.o.TokenLifetime/5
	}
	opts := mqtt.NewClientOptions().
		AddBroker(c.broker).
		SetClientID(c.o.ClientID).
		SetUsername(c.o.Username).
		SetPassword(password).
		SetProtocolVersion(4).
		SetCleanSession(true).
		SetAutoReconnect(false).
		SetConnectRetry(false).
		SetOrderMatters(false).
		SetConnectTimeout(c.o.ConnectTimeout).
		SetKeepAlive(c.o.KeepAlive)
	if c.useTLS {
		cfg := &tls.Config{}
		if c.o.TLSConfig != nil {
			var err error
			if cfg, err = c.o.TLSConfig(ctx); err != nil {
				return nil, nil, 0, fmt.Errorf("TLS configuration: %w", err)
			}
		}
		opts.SetTLSConfig(cfg)
	}
	lost := make(chan error, 1)
	opts.SetConnectionLostHandler(func(_ mqtt.Client, err error) {
		select {
		case lost <- err:
		default:
		}
	})
	cl := mqtt.NewClient(opts)
	tok := cl.Connect()
	select {
	case <-tok.Done():
	case <-ctx.Done():
		cl.Disconnect(0)
		return nil, nil, 0, fmt.Errorf("connecting: %w", ctx.Err())
	}
	if err := tok.Error(); err != nil {
		return nil, nil, 0, err
	}
	return cl, lost, renew, nil
}

// TrustSource returns the certificates to trust: the workload API's trust
// bundle (workload.Client).
type TrustSource interface {
	TrustBundle(ctx context.Context) ([]*x509.Certificate, error)
}

// TrustBundleTLS returns a TLSConfig function for Options that verifies
// edgeHub's certificate for serverName against src's certificates, fetched
// anew for every connection.
func TrustBundleTLS(src TrustSource, serverName string) func(context.Context) (*tls.Config, error) {
	return func(ctx context.Context) (*tls.Config, error) {
		certs, err := src.TrustBundle(ctx)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		for _, c := range certs {
			pool.AddCert(c)
		}
		return &tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS12}, nil
	}
}

// FileTLS returns a TLSConfig function for Options that verifies the
// broker's certificate for serverName against the PEM certificates in
// caFile, read anew for every connection (so a replaced file applies).
func FileTLS(caFile, serverName string) func(context.Context) (*tls.Config, error) {
	return func(context.Context) (*tls.Config, error) {
		data, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
		}
		return &tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS12}, nil
	}
}

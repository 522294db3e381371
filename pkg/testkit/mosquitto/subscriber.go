package mosquitto

import (
	"fmt"
	"sync"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// ModuleMessages is the topic filter of every IoT Edge module message.
const ModuleMessages = "devices/+/modules/+/messages/events/#"

// Message is one message a Subscriber received.
type Message struct {
	Topic   string
	Payload string
	QoS     byte
}

// Subscriber is an MQTT client on the broker that records every message on
// a topic filter, at QoS 1. Its session is persistent and it reconnects, so
// with a broker started with Persistence it misses nothing across a
// restart.
type Subscriber struct {
	mu   sync.Mutex
	msgs []Message
}

// Subscribe connects a Subscriber to b (trusting ca when b serves TLS) as
// user with pass (empty for an anonymous broker) and subscribes to filter.
// It disconnects when the test ends.
func Subscribe(tb testing.TB, b *Broker, ca *testpki.CA, user, pass, filter string) *Subscriber {
	tb.Helper()
	s := &Subscriber{}
	handler := func(_ mqtt.Client, m mqtt.Message) {
		s.mu.Lock()
		s.msgs = append(s.msgs, Message{m.Topic(), string(m.Payload()), m.Qos()})
		s.mu.Unlock()
	}
	broker := "tcp://" + b.Addr()
	if b.tls {
		broker = "ssl://" + b.Addr()
	}
	opts := mqtt.NewClientOptions().AddBroker(broker).SetClientID(fmt.Sprintf("checker-%d", time.Now().UnixNano())).
		SetUsername(user).SetPassword(pass).SetTLSConfig(b.TLSConfig(ca)).
		SetCleanSession(false).SetProtocolVersion(4).SetAutoReconnect(true).
		SetMaxReconnectInterval(200 * time.Millisecond).SetConnectRetry(true).SetConnectRetryInterval(200 * time.Millisecond)
	opts.SetDefaultPublishHandler(handler)
	opts.SetOnConnectHandler(func(c mqtt.Client) { c.Subscribe(filter, 1, handler) })
	c := mqtt.NewClient(opts)
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		tb.Fatalf("mosquitto: subscriber connect: %v", tok.Error())
	}
	if tok := c.Subscribe(filter, 1, handler); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		tb.Fatalf("mosquitto: subscribe: %v", tok.Error())
	}
	tb.Cleanup(func() { c.Disconnect(100) })
	return s
}

// Messages returns what arrived so far, in order.
func (s *Subscriber) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// WaitFor waits up to ten seconds for a message with payload and returns
// it.
func (s *Subscriber) WaitFor(tb testing.TB, payload string) Message {
	tb.Helper()
	var got Message
	brokertest.Eventually(tb, 10*time.Second, func() error {
		msgs := s.Messages()
		for _, m := range msgs {
			if m.Payload == payload {
				got = m
				return nil
			}
		}
		return fmt.Errorf("no message %s yet; %d others", payload, len(msgs))
	})
	return got
}

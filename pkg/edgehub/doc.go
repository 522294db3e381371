// Package edgehub delivers events as IoT Edge module messages: MQTT 3.1.1
// publishes at QoS 1 to edgeHub, on the module output a subscription names,
// so that edgeHub routes (FROM /messages/modules/<module>/outputs/<output>
// INTO ...) take them on.
//
// Under IoT Edge the module connects over TLS to <IOTEDGE_GATEWAYHOSTNAME>:8883,
// verifies edgeHub's certificate against the workload API's trust bundle,
// and authenticates as <deviceId>/<moduleId> with a SAS token whose
// signature the workload API makes (the module key never leaves the
// security daemon); the token is renewed, by reconnecting, before it
// expires. Outside IoT Edge the same client talks to any MQTT 3.1.1 broker
// with an identity and credentials from configuration.
//
// One connection serves the module. A Send waits for edgeHub's PUBACK and
// fails when it does not come before the context ends, so that events wait
// in their retry schedule while edgeHub is away.
package edgehub

// Package mqtttopic builds and checks the MQTT topics of IoT Edge module
// messages, with no dependency beyond the standard library, so that
// subscriptions can be validated without the EdgeHub sender.
package mqtttopic

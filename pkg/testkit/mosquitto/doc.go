// Package mosquitto runs a real mosquitto MQTT broker for tests: on a free
// loopback port, from a configuration file the test writes, with TLS from a
// CA made in the test and, optionally, a password file that checks user
// names and passwords. The broker is stopped by its pid when the test ends.
package mosquitto

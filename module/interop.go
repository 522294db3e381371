package main

import (
	"os"

	"github.com/edgegrid/edgegrid/pkg/config"
	"github.com/edgegrid/edgegrid/pkg/webhook"
)

// interopOptions configures the webhook validation handshakes: the origin
// the broker names in WebHook-Request-Origin is the IoT Edge gateway's host
// name, or this machine's outside IoT Edge.
func interopOptions(cfg config.Config) webhook.InteropOptions {
	host, _ := os.Hostname()
	return webhook.InteropOptions{Origin: or(cfg.IoTEdgeGatewayHostName, or(host, "edgegrid"))}
}

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/config"
	"github.com/edgegrid/edgegrid/pkg/edgehub"
	"github.com/edgegrid/edgegrid/pkg/workload"
)

// edgeHubMQTTPort is where edgeHub serves MQTT over TLS.
const edgeHubMQTTPort = "8883"

// underIoTEdge reports whether the IoT Edge runtime gave the module what it
// needs to reach edgeHub as itself.
func underIoTEdge(cfg config.Config) bool {
	return cfg.IoTEdgeWorkloadURI != "" && cfg.IoTEdgeGatewayHostName != "" && cfg.IoTEdgeHubHostName != "" &&
		cfg.IoTEdgeDeviceID != "" && cfg.IoTEdgeModuleID != "" && cfg.IoTEdgeGenerationID != ""
}

// edgeHubAvailable reports whether EdgeHub destinations can be used: under
// IoT Edge, or with an MQTT endpoint configured.
func edgeHubAvailable(cfg config.Config) bool {
	return underIoTEdge(cfg) || cfg.EdgeHubMQTTURL != ""
}

// newEdgeHub returns the client EdgeHub destinations publish with, or nil
// when EdgeHub is not available. It does not connect: the first delivery
// does.
func newEdgeHub(cfg config.Config, log zerolog.Logger) (*edgehub.Client, error) {
	if !edgeHubAvailable(cfg) {
		return nil, nil
	}
	edge := underIoTEdge(cfg)
	o := edgehub.Options{
		URL:           cfg.EdgeHubMQTTURL,
		DeviceID:      or(cfg.EdgeHubDeviceID, cfg.IoTEdgeDeviceID),
		ModuleID:      or(cfg.EdgeHubModuleID, cfg.IoTEdgeModuleID),
		ClientID:      cfg.EdgeHubClientID,
		Username:      cfg.EdgeHubUsername,
		Password:      cfg.EdgeHubPassword,
		HubHostName:   cfg.IoTEdgeHubHostName,
		TokenLifetime: time.Duration(cfg.EdgeHubTokenLifetimeSeconds) * time.Second,
		MaxReconnect:  time.Duration(cfg.EdgeHubMaxReconnectSeconds) * time.Second,
		Log:           log,
	}
	if o.URL == "" {
		o.URL = "mqtts://" + net.JoinHostPort(cfg.IoTEdgeGatewayHostName, edgeHubMQTTPort)
	}
	if o.DeviceID == "" || o.ModuleID == "" {
		return nil, errors.New("edgehub__mqttUrl is set but the device and module ids are not: set edgehub__deviceId and edgehub__moduleId")
	}
	u, err := url.Parse(o.URL)
	if err != nil {
		return nil, errors.New("edgehub__mqttUrl must be mqtts://host:port or mqtt://host:port")
	}
	var wl *workload.Client
	if edge {
		if wl, err = workload.New(cfg.IoTEdgeWorkloadURI, or(cfg.IoTEdgeAPIVersion, defaultWorkloadAPIVersion), cfg.IoTEdgeModuleID, cfg.IoTEdgeGenerationID); err != nil {
			return nil, fmt.Errorf("IOTEDGE_WORKLOADURI: %w", err)
		}
		if o.Username == "" {
			o.Username = cfg.IoTEdgeHubHostName + "/" + o.DeviceID + "/" + o.ModuleID + "/?api-version=2018-06-30"
		}
		if o.Password == "" {
			o.Signer = wl
		}
	}
	switch {
	case cfg.EdgeHubCAFile != "":
		o.TLSConfig = edgehub.FileTLS(cfg.EdgeHubCAFile, u.Hostname())
	case wl != nil:
		o.TLSConfig = edgehub.TrustBundleTLS(wl, u.Hostname())
	default:
		host := u.Hostname()
		o.TLSConfig = func(context.Context) (*tls.Config, error) {
			return &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}, nil
		}
	}
	c, err := edgehub.New(o)
	if err != nil {
		return nil, fmt.Errorf("edgehub__mqttUrl: %w", err)
	}
	log.Info().Str("component", "edgehub").Str("url", o.URL).Str("clientId", or(o.ClientID, o.DeviceID+"/"+o.ModuleID)).
		Bool("iotEdgeIdentity", o.Signer != nil).Msg("EdgeHub destinations publish here; connecting at the first delivery")
	return c, nil
}

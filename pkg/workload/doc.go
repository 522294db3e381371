// Package workload is a client for the IoT Edge workload API, the HTTP API
// the IoT Edge security daemon serves to modules (normally on the unix socket
// named by IOTEDGE_WORKLOADURI). It fetches the trust bundle, the module's
// identity certificate and server certificates signed by the Edge CA.
//
// Every call carries ?api-version=IOTEDGE_APIVERSION. Certificates and
// private keys arrive as PEM text in JSON; they are returned parsed, as
// x509 certificates and tls.Certificate values, and are never logged.
package workload

package servicebus

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// ConnectionString is the parsed form of an entity-scoped Event Hubs or
// Service Bus connection string:
//
//	Endpoint=sb://<namespace>/;SharedAccessKeyName=<name>;SharedAccessKey=<key>;EntityPath=<entity>
//
// Key is a secret.
type ConnectionString struct {
	// Host is the namespace's host name, with a port when the endpoint had
	// one.
	Host       string
	KeyName    string
	Key        string
	EntityPath string
}

// ParseConnectionString parses s. Keys match case-insensitively and values
// may contain '='. Endpoint (sb://, https:// or amqps:// with a host),
// SharedAccessKeyName, SharedAccessKey and EntityPath are required. Error
// texts name the missing or malformed part, never a value.
func ParseConnectionString(s string) (ConnectionString, error) {
	var c ConnectionString
	var endpoint string
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return c, errors.New("every part must be Key=Value")
		}
		v = strings.TrimSpace(v)
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "endpoint":
			endpoint = v
		case "sharedaccesskeyname":
			c.KeyName = v
		case "sharedaccesskey":
			c.Key = v
		case "entitypath":
			c.EntityPath = strings.Trim(v, "/")
		}
	}
	if endpoint == "" {
		return c, errors.New("Endpoint is missing")
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || u.User != nil {
		return c, errors.New("Endpoint must be sb://<namespace host>/")
	}
	switch strings.ToLower(u.Scheme) {
	case "sb", "https", "amqps":
	default:
		return c, errors.New("Endpoint must be sb://<namespace host>/")
	}
	if h := u.Hostname(); h == "" || strings.ContainsAny(h, " %") || (strings.Contains(u.Host, ":") && !hasValidPort(u.Host)) {
		return c, errors.New("Endpoint must be sb://<namespace host>/")
	}
	c.Host = u.Host
	switch {
	case c.KeyName == "":
		return c, errors.New("SharedAccessKeyName is missing")
	case c.Key == "":
		return c, errors.New("SharedAccessKey is missing")
	case c.EntityPath == "":
		return c, errors.New("EntityPath is missing: the connection string must be scoped to the event hub, queue or topic, not to the namespace")
	case strings.ContainsAny(c.EntityPath, "?#") || strings.Contains(c.EntityPath, "//"):
		return c, errors.New("EntityPath is not a valid entity name")
	}
	return c, nil
}

func hasValidPort(hostport string) bool {
	_, port, err := net.SplitHostPort(hostport)
	return err == nil && port != ""
}

// resource is the entity's https URI: the SAS token's audience and the base
// of the send URL.
func (c ConnectionString) resource() string {
	return "https://" + c.Host + "/" + c.EntityPath
}

package azconn

import (
	"encoding/base64"
	"errors"
	"net"
	"net/url"
	"strings"
)

// Parse splits a connection string into its settings, keyed by lower-cased
// name. Empty segments (a trailing ';') are allowed.
func Parse(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, errors.New("is not a connection string: want name=value pairs separated by ';'")
		}
		out[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	if len(out) == 0 {
		return nil, errors.New("is empty")
	}
	return out, nil
}

// Storage is a storage account connection string.
type Storage struct {
	AccountName string
	AccountKey  string
	// BlobEndpoint and QueueEndpoint are the services' base URLs, given or
	// made from the protocol, account and endpoint suffix.
	BlobEndpoint  string
	QueueEndpoint string
}

// ParseStorage reads a storage account connection string. Its errors say
// what is missing, never what is there.
func ParseStorage(s string) (Storage, error) {
	kv, err := Parse(s)
	if err != nil {
		return Storage{}, err
	}
	st := Storage{AccountName: kv["accountname"], AccountKey: kv["accountkey"]}
	switch {
	case st.AccountName == "":
		return st, errors.New("has no AccountName")
	case st.AccountKey == "":
		return st, errors.New("has no AccountKey (shared access signatures are not supported)")
	}
	if _, err := base64.StdEncoding.DecodeString(st.AccountKey); err != nil {
		return st, errors.New("has an AccountKey that is not base64")
	}
	proto := strings.ToLower(kv["defaultendpointsprotocol"])
	if proto == "" {
		proto = "https"
	}
	if proto != "http" && proto != "https" {
		return st, errors.New("has a DefaultEndpointsProtocol other than http or https")
	}
	suffix := kv["endpointsuffix"]
	if suffix == "" {
		suffix = "core.windows.net"
	}
	// An endpoint made from the account and the suffix is checked as a
	// given one is: a string accepted here must work when events are sent.
	endpoint := func(given, service string) (string, error) {
		if given == "" {
			host := st.AccountName + "." + service + "." + suffix
			if !hostName(host) {
				return "", errors.New("has an AccountName or EndpointSuffix that does not make a valid host name")
			}
			return proto + "://" + host, nil
		}
		u, err := url.Parse(given)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", errors.New("has a " + service + " endpoint that is not an http or https URL")
		}
		// The clients add the queue or container to the URL's path, so a
		// query or fragment would end up before it.
		if strings.ContainsAny(given, "?#") {
			return "", errors.New("has a " + service + " endpoint with a query or fragment; give the service's base URL")
		}
		return strings.TrimRight(given, "/"), nil
	}
	if st.BlobEndpoint, err = endpoint(kv["blobendpoint"], "blob"); err != nil {
		return st, err
	}
	if st.QueueEndpoint, err = endpoint(kv["queueendpoint"], "queue"); err != nil {
		return st, err
	}
	return st, nil
}

// ConnectionString writes s in the form the Azure SDK clients read: keys in
// their documented case, no spaces, both endpoints given. The SDKs match
// keys exactly, so a string ParseStorage accepts (keys in any case, spaces
// around them, empty segments) is handed to them in this form.
func (s Storage) ConnectionString() string {
	return "AccountName=" + s.AccountName + ";AccountKey=" + s.AccountKey +
		";BlobEndpoint=" + s.BlobEndpoint + ";QueueEndpoint=" + s.QueueEndpoint
}

// Entity is an entity-scoped Event Hubs or Service Bus connection string:
//
//	Endpoint=sb://<namespace>/;SharedAccessKeyName=<name>;SharedAccessKey=<key>;EntityPath=<entity>
//
// Key is a secret.
type Entity struct {
	// Host is the namespace's host name, with a port when the endpoint had
	// one.
	Host       string
	KeyName    string
	Key        string
	EntityPath string
}

// ParseEntity reads an entity-scoped Event Hubs or Service Bus connection
// string. Names match case-insensitively and values may contain '='.
// Endpoint (sb://, https:// or amqps:// with a host), SharedAccessKeyName,
// SharedAccessKey and EntityPath are required. Its errors say what is
// missing or malformed, never what is there.
func ParseEntity(s string) (Entity, error) {
	kv, err := Parse(s)
	if err != nil {
		return Entity{}, err
	}
	e := Entity{KeyName: kv["sharedaccesskeyname"], Key: kv["sharedaccesskey"], EntityPath: strings.Trim(kv["entitypath"], "/")}
	endpoint := kv["endpoint"]
	if endpoint == "" {
		return e, errors.New("has no Endpoint")
	}
	if e.Host, err = namespaceHost(endpoint); err != nil {
		return e, err
	}
	switch {
	case e.KeyName == "":
		return e, errors.New("has no SharedAccessKeyName")
	case e.Key == "":
		return e, errors.New("has no SharedAccessKey")
	case e.EntityPath == "":
		return e, errors.New("has no EntityPath: it must be scoped to the event hub, queue or topic, not to the namespace")
	case !validEntityPath(e.EntityPath):
		return e, errors.New("has an EntityPath that is not a valid entity name (letters, digits, '.', '-', '_', and '/' between names)")
	}
	return e, nil
}

// validEntityPath reports whether p is an entity name the services take,
// as a path of the REST URLs: letters, digits, '.', '-' and '_', with '/'
// between names (a topic's subscription is "topic/subscriptions/name").
func validEntityPath(p string) bool {
	if strings.Contains(p, "//") {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' || c == '/') {
			return false
		}
	}
	return true
}

// hostName reports whether h, made from an AccountName and an
// EndpointSuffix, is a host name of letters, digits, '.', '-' and '_': a
// '/', '?', '#', '@' or ':' in either would send events elsewhere.
func hostName(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return h != ""
}

// Resource is the entity's https URI: the audience of its SAS tokens and
// the base of its REST URLs.
func (e Entity) Resource() string {
	return "https://" + e.Host + "/" + e.EntityPath
}

// namespaceHost returns the host[:port] of an Endpoint value.
func namespaceHost(endpoint string) (string, error) {
	bad := errors.New("has an Endpoint that is not sb://<namespace host>/")
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || u.User != nil {
		return "", bad
	}
	switch strings.ToLower(u.Scheme) {
	case "sb", "https", "amqps":
	default:
		return "", bad
	}
	// A placeholder left in ("sb://<namespace>.servicebus.windows.net/")
	// passes url.Parse but never resolves.
	if h := u.Hostname(); !hostName(h) && net.ParseIP(h) == nil {
		return "", bad
	}
	if strings.Contains(u.Host, ":") {
		if _, port, err := net.SplitHostPort(u.Host); err != nil || port == "" {
			return "", bad
		}
	}
	return u.Host, nil
}

package azconn_test

import (
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/azconn"
)

const key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

func TestParseStorage(t *testing.T) {
	tests := []struct {
		in         string
		blob, errs string
	}{
		{"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + key + ";BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;",
			"http://127.0.0.1:10000/devstoreaccount1", ""},
		{"AccountName=acct;AccountKey=" + key + ";EndpointSuffix=core.chinacloudapi.cn", "https://acct.blob.core.chinacloudapi.cn", ""},
		{"defaultendpointsprotocol=HTTPS; accountname=acct ; accountkey=" + key, "https://acct.blob.core.windows.net", ""},
		{"AccountKey=" + key, "", "no AccountName"},
		{"AccountName=a;SharedAccessSignature=sv=x", "", "no AccountKey"},
		{"AccountName=a;AccountKey=not base64!", "", "not base64"},
		{"AccountName=a;AccountKey=" + key + ";BlobEndpoint=ftp://x", "", "not an http or https URL"},
		{"AccountName=a;AccountKey=" + key + ";QueueEndpoint=http://127.0.0.1:?0001/a", "", "queue endpoint with a query or fragment"},
		{"AccountName=a;AccountKey=" + key + ";BlobEndpoint=https://h/a#x", "", "blob endpoint with a query or fragment"},
		{"AccountName=a;AccountKey=" + key + ";DefaultEndpointsProtocol=gopher", "", "DefaultEndpointsProtocol"},
		{"AccountName=a;AccountKey=" + key + ";EndpointSuffix=%", "", "does not make a valid host name"},
		{"AccountName=my account;AccountKey=" + key, "", "does not make a valid host name"},
		{"AccountName=evil.example/x?;AccountKey=" + key, "", "does not make a valid host name"},
		{"AccountName=acct;AccountKey=" + key + ";EndpointSuffix=evil.example#", "", "does not make a valid host name"},
		{"AccountName=my account;AccountKey=" + key + ";BlobEndpoint=http://h/a;QueueEndpoint=http://h/a", "http://h/a", ""},
		{"nonsense", "", "not a connection string"},
		{"", "", "empty"},
	}
	for _, tt := range tests {
		st, err := azconn.ParseStorage(tt.in)
		switch {
		case tt.errs == "" && (err != nil || st.BlobEndpoint != tt.blob):
			t.Errorf("ParseStorage(%q) = %+v, %v; want blob endpoint %s", tt.in, st, err, tt.blob)
		case tt.errs != "" && (err == nil || !strings.Contains(err.Error(), tt.errs)):
			t.Errorf("ParseStorage(%q) error %v, want one saying %q", tt.in, err, tt.errs)
		case err != nil && strings.Contains(err.Error(), key):
			t.Errorf("an error holds the key: %v", err)
		}
	}
}

func TestParseEntity(t *testing.T) {
	ok := []struct{ in, host, keyName, key, entity, resource string }{
		{"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=ab==;EntityPath=hub",
			"ns.servicebus.windows.net", "send", "ab==", "hub", "https://ns.servicebus.windows.net/hub"},
		{" endpoint = sb://ns.example:5671 ; sharedaccesskeyname=n;SHAREDACCESSKEY=k=;entitypath=/q/;",
			"ns.example:5671", "n", "k=", "q", "https://ns.example:5671/q"},
		{"Endpoint=https://127.0.0.1:4443/;SharedAccessKeyName=n;SharedAccessKey=k;EntityPath=topic/sub",
			"127.0.0.1:4443", "n", "k", "topic/sub", "https://127.0.0.1:4443/topic/sub"},
		{"Endpoint=amqps://ns.example/;SharedAccessKeyName=n;SharedAccessKey=k;EntityPath=e", "ns.example", "n", "k", "e", "https://ns.example/e"},
	}
	for _, c := range ok {
		got, err := azconn.ParseEntity(c.in)
		if err != nil || got.Host != c.host || got.KeyName != c.keyName || got.Key != c.key || got.EntityPath != c.entity || got.Resource() != c.resource {
			t.Errorf("ParseEntity(%q) = %+v, %v", c.in, got, err)
		}
	}
	bad := []struct{ in, mention string }{
		{"", "empty"},
		{"SharedAccessKeyName=n;SharedAccessKey=secretkey;EntityPath=e", "no Endpoint"},
		{"Endpoint=sb://ns/;SharedAccessKeyName=n;SharedAccessKey=secretkey", "no EntityPath"},
		{"Endpoint=sb://ns/;SharedAccessKeyName=n;EntityPath=e", "no SharedAccessKey"},
		{"Endpoint=sb://ns/;SharedAccessKey=secretkey;EntityPath=e", "no SharedAccessKeyName"},
		{"Endpoint=ftp://ns/;SharedAccessKeyName=n;SharedAccessKey=secretkey;EntityPath=e", "Endpoint that is not"},
		{"Endpoint=sb:///;SharedAccessKeyName=n;SharedAccessKey=secretkey;EntityPath=e", "Endpoint that is not"},
		{"Endpoint=sb://user:secretkey@ns/;SharedAccessKeyName=n;SharedAccessKey=secretkey;EntityPath=e", "Endpoint that is not"},
		{"Endpoint=sb://ns:/;SharedAccessKeyName=n;SharedAccessKey=secretkey;EntityPath=e", "Endpoint that is not"},
		{"Endpoint=sb://ns/;secretkey;EntityPath=e", "name=value"},
		{"Endpoint=sb://ns/;SharedAccessKeyName=n;SharedAccessKey=secretkey;EntityPath=e?x", "EntityPath that is not"},
		{"Endpoint=sb://ns/;SharedAccessKeyName=n;SharedAccessKey=secretkey;EntityPath=a//b", "EntityPath that is not"},
		{"Endpoint=sb://ns/;SharedAccessKeyName=n;SharedAccessKey=secretkey;EntityPath=50%", "EntityPath that is not"},
		{"Endpoint=sb://ns/;SharedAccessKeyName=n;SharedAccessKey=secretkey;EntityPath=a b", "EntityPath that is not"},
		// A placeholder left in an example: url.Parse takes it, no resolver does.
		{"Endpoint=sb://<namespace>.servicebus.windows.net/;SharedAccessKeyName=n;SharedAccessKey=secretkey;EntityPath=e", "Endpoint that is not"},
	}
	for _, c := range bad {
		_, err := azconn.ParseEntity(c.in)
		if err == nil || !strings.Contains(err.Error(), c.mention) || strings.Contains(err.Error(), "secretkey") {
			t.Errorf("ParseEntity(%q): %v; want an error saying %q and no secret", c.in, err, c.mention)
		}
	}
}

func TestPlaceholder(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"<your-storage-account-connection-string>", "<your-storage-account-connection-string>"},
		{"DefaultEndpointsProtocol=https;AccountName=<account>;AccountKey=<key>;EndpointSuffix=core.windows.net", "<account>"},
		{"Endpoint=sb://<namespace>.servicebus.windows.net/;SharedAccessKeyName=<policy>;SharedAccessKey=<key>;EntityPath=<queue>", "<namespace>"},
		{"https://<topic>.<region>-1.eventgrid.azure.net/api/events?api-version=2018-01-01", "<topic>"},
		{"<webhook_url>", "<webhook_url>"}, {"a<<b>", "<b>"}, {"…", "…"}, {" ... ", "..."},
	} {
		if got, ok := azconn.Placeholder(c.in); !ok || got != c.want {
			t.Errorf("Placeholder(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
	for _, in := range []string{"", "AccountName=a;AccountKey=QUJD", "a<b", "a>b<", "<>", "<a;b>", "<" + strings.Repeat("x", 65) + ">", "x…y"} {
		if got, ok := azconn.Placeholder(in); ok {
			t.Errorf("Placeholder(%q) = %q, true; want none", in, got)
		}
	}
}

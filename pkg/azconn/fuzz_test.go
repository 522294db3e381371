package azconn_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/azconn"
)

// marker stands for a key in the fuzzed strings: no error may repeat it.
const marker = "U2VjcmV0TWFya2VyLTQy"

// mustNotRepeatKey fails t if parse, given s with its key replaced by the
// marker, returns an error that repeats the key.
func mustNotRepeatKey(t *testing.T, s, name string, parse func(string) error) {
	t.Helper()
	if err := parse(s + ";" + name + "=" + marker); err != nil && strings.Contains(err.Error(), marker) {
		t.Fatalf("the error %q repeats the key", err)
	}
}

// FuzzParseStorage reads arbitrary storage connection strings: an error
// never repeats the key, a secret, and what is
// accepted has an account, a base64 key and two http(s) endpoints, and
// reads back the same when written out again.
func FuzzParseStorage(f *testing.F) {
	for _, s := range []string{
		"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + key + ";BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;",
		"AccountName=acct;AccountKey=" + key + ";EndpointSuffix=core.chinacloudapi.cn",
		"defaultendpointsprotocol=HTTPS; accountname=acct ; accountkey=" + key,
		"AccountName=a;SharedAccessSignature=sv=x", "AccountName=a;AccountKey=not base64!", ";;", "=", "a=b=c",
		"AccountName=a;AccountKey=a2V5;QueueEndpoint=https://q.example/a/?sv=1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		mustNotRepeatKey(t, s, "AccountKey", func(s string) error { _, err := azconn.ParseStorage(s); return err })
		st, err := azconn.ParseStorage(s)
		if err != nil {
			return
		}
		if st.AccountName == "" || st.AccountKey == "" {
			t.Fatalf("accepted without an account or a key: %+v", st)
		}
		for _, e := range []string{st.BlobEndpoint, st.QueueEndpoint} {
			if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				t.Fatalf("endpoint %q is not an http(s) URL", e)
			}
		}
		again, err := azconn.ParseStorage("AccountName=" + st.AccountName + ";AccountKey=" + st.AccountKey +
			";BlobEndpoint=" + st.BlobEndpoint + ";QueueEndpoint=" + st.QueueEndpoint)
		if err != nil || again != st {
			t.Fatalf("%+v written out reads back as %+v, %v", st, again, err)
		}
	})
}

// FuzzParseEntity reads arbitrary Event Hubs and Service Bus connection
// strings: an error never repeats the key, and what is
// accepted names a host and an entity, makes an https resource URI for its
// tokens, and reads back the same when written out again.
func FuzzParseEntity(f *testing.F) {
	for _, s := range []string{
		"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=" + key + ";EntityPath=orders",
		"endpoint=https://127.0.0.1:5671;sharedaccesskeyname=a;sharedaccesskey=b=c;entitypath=/q/",
		"Endpoint=sb://ns/;SharedAccessKeyName=a;SharedAccessKey=k", "Endpoint=amqps://u@h/;EntityPath=e",
		"Endpoint=sb://h:x/;SharedAccessKeyName=a;SharedAccessKey=k;EntityPath=e?x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		mustNotRepeatKey(t, s, "SharedAccessKey", func(s string) error { _, err := azconn.ParseEntity(s); return err })
		e, err := azconn.ParseEntity(s)
		if err != nil {
			return
		}
		if e.Host == "" || e.EntityPath == "" || e.KeyName == "" || e.Key == "" {
			t.Fatalf("accepted with a part missing: %+v", e)
		}
		if u, err := url.Parse(e.Resource()); err != nil || u.Scheme != "https" || u.Host != e.Host {
			t.Fatalf("resource %q of %+v is not an https URI of its host (%v)", e.Resource(), e, err)
		}
		again, err := azconn.ParseEntity("Endpoint=sb://" + e.Host + "/;SharedAccessKeyName=" + e.KeyName +
			";SharedAccessKey=" + e.Key + ";EntityPath=" + e.EntityPath)
		if err != nil || again != e {
			t.Fatalf("%+v written out reads back as %+v, %v", e, again, err)
		}
	})
}

package storagequeue_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/edgegrid/edgegrid/pkg/azconn"
)

// validName is Azure's rule for queue and container names, but the
// length.
var validName = regexp.MustCompile(`^[a-z0-9]([a-z0-9]|-[a-z0-9]){2,}$`)

// FuzzConnectionStringAgreement holds the two readers of a storage
// connection string to agreement: every string azconn accepts, which is
// what a PUT checks, the Azure SDK clients that send queue messages and
// write dead letters must take too, reaching the endpoints azconn read, so
// that no subscription is accepted that cannot deliver.
func FuzzConnectionStringAgreement(f *testing.F) {
	const key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	for _, s := range []string{
		"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + key + ";QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;",
		"AccountName=acct;AccountKey=" + key + ";EndpointSuffix=core.chinacloudapi.cn",
		"defaultendpointsprotocol=HTTPS; accountname=acct ; accountkey=" + key,
		"AccountName=a;;AccountKey=a2V5",
		"AccountName=a;AccountKey=a2V5;QueueEndpoint=https://q.example/a/",
	} {
		f.Add(s, "events")
	}
	f.Fuzz(func(t *testing.T, s, name string) {
		st, err := azconn.ParseStorage(s)
		if err != nil || !validName.MatchString(name) || len(name) > 63 {
			return // a PUT refuses these; queue and container names share the rules
		}
		cs := st.ConnectionString()
		q, err := azqueue.NewQueueClientFromConnectionString(cs, name, nil)
		if err != nil {
			t.Fatalf("azconn accepts %q, the queue client refuses it as %q: %v", s, cs, err)
		}
		if want := strings.TrimRight(st.QueueEndpoint, "/") + "/" + name; q.URL() != want {
			t.Fatalf("%q: the queue client sends to %q, azconn read %q", s, q.URL(), want)
		}
		c, err := container.NewClientFromConnectionString(cs, name, nil)
		if err != nil {
			t.Fatalf("azconn accepts %q, the blob client refuses it as %q: %v", s, cs, err)
		}
		if want := strings.TrimRight(st.BlobEndpoint, "/") + "/" + name; c.URL() != want {
			t.Fatalf("%q: the blob client writes to %q, azconn read %q", s, c.URL(), want)
		}
	})
}

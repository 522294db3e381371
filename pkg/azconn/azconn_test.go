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
		{"AccountName=a;AccountKey=" + key + ";DefaultEndpointsProtocol=gopher", "", "DefaultEndpointsProtocol"},
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
